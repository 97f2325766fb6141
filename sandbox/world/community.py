"""Communities: three of them, each with a stream of posts whose comments arrive over 14 days.

Post p has F comments (fixed at birth); comment q arrives at created + ceil(14 days * (q+1) / (F+1)), so
the count at T is arithmetic and `updatedAt` is the last arrival. Comment q's author is a member drawn
from (post, q). A post's window is its creation time: top posts are those created in the last `days`
days; commenters are members with a comment arriving in the last `days` days.
"""

from __future__ import annotations

from .api import Record, WorldError
from .clock import DAY, H0, T0, iso
from .listing import RecordListing
from .people import People
from .rng import MASK, Rng, Stream, entity_key, mix64, record_key

COMMUNITIES = ((9101, "Comunidade Alunos"), (9102, "Clube de Membros"), (9103, "Mentoria em Grupo"))
SPACES = ("Boas-vindas", "Dúvidas", "Conquistas", "Avisos")
TITLES = (
    "Como vocês organizam os estudos?",
    "Minha primeira venda!",
    "Dúvida sobre o módulo 3",
    "Compartilhando meu projeto",
    "Live de amanhã",
    "Material extra da semana",
    "Apresentação",
)
SPREAD = 14 * DAY
POST_BASE = 600_000_000
MEMBER_BASE = 700_000_000


class Community:
    def __init__(self, seed: int, scale: int, n: int, people: People, pool: int):
        self.id, self.name = COMMUNITIES[n]
        self.n = n
        self.people = people
        self.pool = pool
        self.key = entity_key(seed, f"community.{n}")
        self.stream = Stream(seed, f"community.{n}.post", H0, T0, max(120, scale // 200))
        self.members = max(20, scale // 300)

    def post_life(self, p: int) -> tuple[int, int, int, int]:
        """(created, final comments F, final likes, author member) of post p."""
        rng = Rng(record_key(self.key, p))
        f = 0 if rng.chance(0.2) else rng.between(1, 30)
        return self.stream.created(p), f, rng.between(0, 80), rng.below(self.members)

    def comments_at(self, created: int, f: int, t: int) -> int:
        return 0 if t < created else min(f, (t - created) * (f + 1) // SPREAD)

    def comment_time(self, created: int, f: int, q: int) -> int:
        return created + -(-SPREAD * (q + 1) // (f + 1))

    def member(self, m: int) -> Record:
        person = self.people.get(1 + mix64(self.key ^ (m & MASK)) % self.pool)
        return {"id": MEMBER_BASE + self.n * 10_000_000 + m, "name": person.name, "email": person.email}

    def post(self, p: int, t: int) -> Record:
        created, f, likes, author = self.post_life(p)
        count = self.comments_at(created, f, t)
        updated = self.comment_time(created, f, count - 1) if count else created
        spread = max(1, min(t - created, SPREAD))
        m = self.member(author)
        return {
            "id": POST_BASE + self.n * 50_000_000 + p,
            "title": TITLES[p % len(TITLES)],
            "createdAt": iso(created),
            "updatedAt": iso(updated),
            "totalComments": count,
            "totalLikes": likes * spread // SPREAD,
            "member": {"id": m["id"], "email": m["email"]},
            "space": {"id": 9500 + self.n * 10 + p % len(SPACES), "name": SPACES[p % len(SPACES)]},
            "tags": ["destaque"] if f > 20 else [],
        }

    def top(self, days: int, t: int) -> list[Record]:
        first = self.stream.first_at_or_after(t - days * DAY)
        ranked = []
        for p in range(first, self.stream.count_at(t)):
            created, f, _, _ = self.post_life(p)
            count = self.comments_at(created, f, t)
            if count:
                ranked.append((-count, p))
        if not ranked:
            raise WorldError(404, "not_found", "no posts with comments to show")
        return [self.post(p, t) for _, p in sorted(ranked)[:5]]

    def commenters(self, days: int, t: int) -> RecordListing:
        lo = t - days * DAY
        posts: dict[int, list[int]] = {}
        for p in range(self.stream.first_at_or_after(lo - SPREAD), self.stream.count_at(t)):
            created, f, _, _ = self.post_life(p)
            for q in range(self.comments_at(created, f, t)):
                if self.comment_time(created, f, q) >= lo:
                    m = mix64(self.key ^ ((p << 8 | q) & MASK) ^ 0xC0) % self.members
                    if p not in posts.setdefault(m, []):
                        posts[m].append(p)
        out = []
        for m in sorted(posts):
            rec = self.member(m)
            rec["posts"] = [
                {"id": POST_BASE + self.n * 50_000_000 + p, "title": TITLES[p % len(TITLES)]}
                for p in posts[m]
            ]
            out.append(rec)
        return RecordListing(out)


class Communities:
    def __init__(self, seed: int, scale: int, people: People, pool: int):
        self.items = [Community(seed, scale, n, people, pool) for n in range(len(COMMUNITIES))]

    def get(self, community_id: int) -> Community:
        for c in self.items:
            if c.id == community_id:
                return c
        raise WorldError(403, "forbidden", "the community does not belong to the user")
