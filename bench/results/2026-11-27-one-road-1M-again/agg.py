"""Compare two py-spy raw profiles (collapsed stacks): `python agg.py BEFORE.txt AFTER.txt`.

Prints the samples of each, by thread, and the functions whose inclusive and self samples differ most.
"""

from __future__ import annotations

import re
import sys
from collections import Counter


def _name(frame: str) -> str:
    """`function (path/to/module.py:line)` -> `function (module.py)`."""
    return re.sub(r"\(([^()]*/)?([^/()]*?)(:\d+)?\)$", r"(\2)", frame)


def load(path: str) -> tuple[int, Counter[str], Counter[str], Counter[str]]:
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    threads: Counter[str] = Counter()
    total = 0
    with open(path) as lines:
        for line in lines:
            stack, _, count = line.rstrip().rpartition(" ")
            samples = int(count)
            total += samples
            frames = stack.split(";")
            threads[frames[0][:40]] += samples
            names = [_name(frame) for frame in frames[1:]]
            if names:
                own[names[-1]] += samples
            for name in set(names):
                inclusive[name] += samples
    return total, own, inclusive, threads


def main(before_path: str, after_path: str) -> None:
    total_a, own_a, incl_a, threads_a = load(before_path)
    total_b, own_b, incl_b, threads_b = load(after_path)
    print("total samples", total_a, total_b)
    print("threads before", threads_a.most_common(8))
    print("threads after", threads_b.most_common(8))
    for title, a, b, top in (("inclusive", incl_a, incl_b, 40), ("self", own_a, own_b, 30)):
        print(f"--- {title}, biggest differences (after - before)")
        for key in sorted(set(a) | set(b), key=lambda k: (-abs(b[k] - a[k]), k))[:top]:
            print(f"{a[key]:7d} {b[key]:7d} {b[key] - a[key]:+7d} {key[:150]}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
