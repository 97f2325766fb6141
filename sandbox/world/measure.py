"""Measure how fast the world builds pages: `python -m sandbox.world.measure --scale 1000000`.

For each listing it builds `--pages` pages of 100 records at offsets spread over the listing (so caches
do not help) and prints records/s and pages/s, in CPU time (the machine may be shared), then the scans
that back filtered listings and the process's peak RSS.
"""

from __future__ import annotations

import argparse
import resource
import time
from collections.abc import Callable
from datetime import timedelta
from typing import TypeVar

from .api import Listing, Record
from .clock import DAY, to_datetime
from .world import SyntheticWorld

PAGE = 100
T = TypeVar("T")


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


def pages_of(listing: Listing, pages: int) -> Callable[[], list[list[Record]]]:
    n = len(listing)
    step = max(PAGE, n // max(1, pages))
    offsets = [min(k * step, max(0, n - PAGE)) for k in range(pages)]
    return lambda: [listing.page(o, PAGE) for o in offsets]


def sale_pages(world: SyntheticWorld, pages: int) -> Callable[[], list[list[Record]]]:
    n = world.sales.count_at(world.now)
    step = max(PAGE, n // max(1, pages))
    starts = [min(k * step, max(0, n - PAGE)) for k in range(pages)]
    return lambda: [[world.sale(str(100_000_000 + s + i)) for i in range(min(PAGE, n))] for s in starts]


def report(name: str, seconds: float, built: list[list[Record]]) -> None:
    records = sum(len(p) for p in built)
    seconds = max(seconds, 1e-9)
    print(
        f"{name:<34} {records / seconds:>10,.0f} records/s {len(built) / seconds:>9,.1f} pages/s "
        f"{1000 * seconds / max(1, len(built)):>8.2f} ms/page"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pages", type=int, default=20)
    args = parser.parse_args(argv)

    seconds, world = timed(lambda: SyntheticWorld(args.seed, args.scale))
    print(f"world seed={args.seed} scale={args.scale:,}: built in {seconds:.3f} s (CPU)")
    seconds, _ = timed(lambda: world.affiliations(None))
    print(f"product extras (campaigns, partners, affiliations) warmed in {seconds:.3f} s")
    end = world.clock
    start = end - timedelta(days=30)
    scans: list[tuple[str, Callable[[], Listing]]] = [
        ("subscriptions filterBy=update (all)", lambda: world.subscriptions(None, None, "update")),
        ("fiscal documents, 30 days", lambda: world.fiscal_documents(start, end)),
        ("lesson comments status=rejected", lambda: world.lesson_comments(status="rejected")),
        (
            "lesson comments answered=false",
            lambda: world.lesson_comments(course_id=world.courses.ids[0], answered=False),
        ),
    ]
    listings: list[tuple[str, Callable[[], list[list[Record]]]]] = [
        ("sales (sale details)", sale_pages(world, args.pages)),
        ("subscriptions by creation", pages_of(world.subscriptions(None, None, "creation"), args.pages)),
        ("transfers", pages_of(world.transfers(), args.pages)),
        ("products", pages_of(world.products(), args.pages)),
        ("affiliations", pages_of(world.affiliations(None), args.pages)),
        ("lesson comments", pages_of(world.lesson_comments(), args.pages)),
    ]
    print("\npages of 100 (offsets spread over the listing)")
    for name, build in listings:
        seconds, built = timed(build)
        report(name, seconds, built)
    print("\nscans behind filtered listings (first page), then their pages")
    for name, make in scans:
        seconds, listing = timed(make)
        print(f"{name:<34} scan {seconds:7.3f} s for {len(listing):,} hits")
        seconds, built = timed(pages_of(listing, args.pages))
        report("  " + name, seconds, built)
    event = world.catalog()["events"][-3]["id"]
    seconds, attendees = timed(lambda: world.attendees(event))
    print(f"{'attendees of one event':<34} built {seconds:7.3f} s for {len(attendees):,} attendees")
    community = world.communities.items[0].id
    seconds, members = timed(lambda: world.community_commenters(community, 30))
    print(f"{'community commenters, 30 days':<34} built {seconds:7.3f} s for {len(members):,} members")
    world.advance(DAY // 1000)
    seconds, _ = timed(sale_pages(world, args.pages))
    print(f"\nafter advance(1 day): sale pages {1000 * seconds / args.pages:.2f} ms/page")
    print(f"clock {to_datetime(world.now).isoformat()}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.1f} MB")


if __name__ == "__main__":
    main()
