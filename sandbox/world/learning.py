"""Courses with lessons and their comments; schools with students, enrollments and deliveries.

Comment c belongs to course c % C and, within it, to lesson (c // C) % L (L lessons in that course), so
a course or lesson filter is an arithmetic progression of indices; status, flag and e-mail filters scan
that progression with a cheap per-comment function and cache the hits per (query, clock).
Each comment lives: inModeration -> approved/rejected within 3 days; read, answered, fixed and
favourited at their own times (or never).
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass

from .api import Record, WorldError
from .clock import DAY, H0, HOUR, T0, iso
from .listing import KeyListing, RangeListing, RecordListing, ScanCache
from .people import People
from .products import TOPICS
from .rng import Rng, Stream, entity_key, record_key, step

COMMENT_BASE = 500_000_000
NEVER = 1 << 62
INV16 = 1.0 / 65536
TEXTS = (
    "Ótima aula, muito clara!",
    "Não consegui baixar o material complementar.",
    "Poderia explicar melhor o exemplo?",
    "Obrigado, professor!",
    "O vídeo trava no minuto 5.",
    "Qual a bibliografia recomendada?",
    "Excelente conteúdo, já estou aplicando.",
    "Tem exercício para esta aula?",
)
PLATFORMS = ("platform", "externalA", "externalB", "externalC", "externalD", "api")
SCHOOL_WORDS = ("saber", "aprender")


@dataclass(slots=True)
class CommentLife:
    created: int
    author: int  # person id
    status_at: int  # moderation decision (NEVER: stays inModeration)
    final: str
    read_at: int
    answered_at: int
    fixed_at: int
    favorite_at: int
    html: bool
    text: str


class Courses:
    def __init__(self, seed: int, scale: int, people: People, pool: int):
        self.people = people
        self.pool = pool
        self.key = entity_key(seed, "comment")
        rng = Rng(entity_key(seed, "course"))
        self.ids = [8001 + n for n in range(min(8, 3 + scale // 200_000))]
        self.lessons = [
            [90_000 + n * 100 + m for m in range(rng.between(5, 12))] for n in range(len(self.ids))
        ]
        self.names = [f"Curso {TOPICS[n % len(TOPICS)]}" for n in range(len(self.ids))]
        self.lesson_pos = {lid: (n, m) for n, ls in enumerate(self.lessons) for m, lid in enumerate(ls)}
        self.stream = Stream(seed, "comment", H0, T0, max(60, scale // 2))
        self.cache = ScanCache(32)

    def life(self, c: int) -> CommentLife:
        # Bit fields of three hashes (status and flag filters scan every comment of a course).
        h1 = record_key(self.key, c)
        h2 = step(h1)
        h3 = step(h2)
        created = self.stream.created(c)
        u = (h1 & 0xFFFF) * INV16
        final = "approved" if u < 0.85 else "rejected" if u < 0.95 else "inModeration"
        if c < 3:
            final = ("approved", "rejected", "inModeration")[c]
        decided = created + HOUR + (h1 >> 16) % (3 * DAY - HOUR) if final != "inModeration" else NEVER
        read = created + HOUR + (h2 & 0xFFFFFFFF) % (5 * DAY) if (h1 >> 48) % 100 < 80 else NEVER
        answered = created + 2 * HOUR + (h2 >> 32) % (7 * DAY) if (h1 >> 56) % 2 else NEVER
        fixed = created + DAY + (h3 & 0xFFFFFFFF) % (9 * DAY) if (h1 >> 57) % 20 == 0 or c == 0 else NEVER
        favorite = created + HOUR + (h3 >> 32) % (10 * DAY) if (h1 >> 40) % 10 == 0 or c == 0 else NEVER
        html = c % 3 == 1 or (h2 >> 60) < 3
        return CommentLife(
            created,
            1 + (h3 >> 8) % self.pool,
            decided,
            final,
            min(read, answered),
            answered,
            fixed,
            favorite,
            html,
            TEXTS[(h2 >> 56) % len(TEXTS)],
        )

    def record(self, c: int, t: int) -> Record:
        life = self.life(c)
        n = c % len(self.ids)
        lessons = self.lessons[n]
        text = f"<p>{life.text}</p>" if life.html else life.text
        return {
            "id": COMMENT_BASE + c,
            "text": text,
            "isRead": life.read_at <= t,
            "isFavorite": life.favorite_at <= t,
            "isFixed": life.fixed_at <= t,
            "isAnswered": life.answered_at <= t,
            "createdAt": iso(life.created),
            "status": life.final if life.status_at <= t else "inModeration",
            "type": "html" if life.html else "text",
            "author": self.people.get(life.author).name,
            "lessonId": lessons[(c // len(self.ids)) % len(lessons)],
        }

    def comments(
        self,
        t: int,
        course_id: int | None,
        lesson_id: int | None,
        status: str | None,
        flags: tuple[bool | None, bool | None, bool | None, bool | None],
        email: str | None,
    ) -> RangeListing | KeyListing[int]:
        count = self.stream.count_at(t)
        c_n = len(self.ids)
        start, step = 0, 1
        if course_id is not None:
            if course_id not in self.ids:
                return RangeListing(0, 0, lambda c: {})
            start, step = self.ids.index(course_id), c_n
        if lesson_id is not None:
            pos = self.lesson_pos.get(lesson_id)
            if pos is None or (course_id is not None and self.ids[pos[0]] != course_id):
                return RangeListing(0, 0, lambda c: {})
            start, step = pos[0] + c_n * pos[1], c_n * len(self.lessons[pos[0]])
        size = max(0, (count - start + step - 1) // step)
        if status is None and flags == (None, None, None, None) and email is None:
            return RangeListing(start, size, lambda c: self.record(c, t), step)
        query = ("comments", t, start, step, size, status, flags, (email or "").casefold())
        hits = self.cache.get(
            query, lambda: self._scan(t, range(start, start + size * step, step), status, flags, email)
        )
        return KeyListing(hits, lambda c: self.record(c, t))

    def _scan(
        self,
        t: int,
        indices: range,
        status: str | None,
        flags: tuple[bool | None, bool | None, bool | None, bool | None],
        email: str | None,
    ) -> array[int]:
        favorite, answered, read, fixed = flags
        email_l = email.casefold() if email else None
        out = array("q")
        for c in indices:
            life = self.life(c)
            if status is not None and (life.final if life.status_at <= t else "inModeration") != status:
                continue
            if (
                (favorite is not None and (life.favorite_at <= t) != favorite)
                or (answered is not None and (life.answered_at <= t) != answered)
                or (read is not None and (life.read_at <= t) != read)
                or (fixed is not None and (life.fixed_at <= t) != fixed)
            ):
                continue
            if email_l is not None and self.people.get(life.author).email.casefold() != email_l:
                continue
            out.append(c)
        return out


class Schools:
    """Two schools; each student's enrollments progress linearly until done (or until they stop)."""

    def __init__(self, seed: int, scale: int, people: People, course_names: list[str]):
        self.people = people
        self.key = entity_key(seed, "school")
        self.course_names = course_names + [
            f"Curso {t}" for t in TOPICS[len(course_names) : len(course_names) + 6]
        ]
        n_students = max(5, scale // 2000)
        self.slugs = [f"escola-{w}" for w in SCHOOL_WORDS]
        self.students: list[list[str]] = []
        self.deliveries: list[dict[int, Record]] = []
        for s in range(len(self.slugs)):
            rng = Rng(record_key(self.key, s))
            names = []
            for n in range(n_students):
                first = people.get(5_000_000 + s * 1_000_000 + n).name.split()[0].lower()
                names.append(f"{first.encode('ascii', 'ignore').decode() or 'aluno'}-{s}{n:05d}")
            self.students.append(names)
            self.deliveries.append(
                {d["id"]: d for d in (self._delivery(s, n, rng) for n in range(rng.between(3, 5)))}
            )

    def _delivery(self, s: int, n: int, rng: Rng) -> Record:
        platform = PLATFORMS[s * 3 + n] if n < 3 else rng.pick(PLATFORMS)
        return {
            "id": 700 + s * 100 + n,
            "name": f"Entrega {n + 1} - {self.slugs[s]}",
            "platform": platform,
            "platformProductId": str(4_100_000 + n),
            "platformOfferId": rng.token(8) if rng.chance(0.5) else None,
            "isActive": n != 2 or rng.chance(0.5),
            "isSubscription": n % 2 == 1,
            "autoRemoveAccess": rng.chance(0.5),
            "tags": ["turma-" + str(n + 1)] + (["vip"] if rng.chance(0.3) else []),
            "endsAfter": rng.pick((0, 180, 365)),
        }

    def school(self, team_slug: str) -> int:
        if team_slug not in self.slugs:
            raise WorldError(404, "not_found", "school not found")
        return self.slugs.index(team_slug)

    def enrollments(self, team_slug: str, student_slug: str, t: int) -> RecordListing:
        s = self.school(team_slug)
        if student_slug not in self.students[s]:
            raise WorldError(404, "not_found", "student not found")
        n = self.students[s].index(student_slug)
        rng = Rng(record_key(self.key, 1_000 + s * 1_000_000 + n))
        out = []
        start = H0 + rng.below(T0 - H0)
        for e in range(rng.between(1, 5)):
            created = start + e * rng.between(5, 90) * DAY
            if created > t:
                break
            days = rng.between(20, 200)  # time to finish at this student's pace
            stop = 100 if rng.chance(0.7) else rng.between(5, 95)  # some never finish
            progress = min(stop, (t - created) * 100 // (days * DAY))
            course = self.course_names[(n + e) % len(self.course_names)]
            cert = f"https://school.platform.example/{team_slug}/certificates/{student_slug}-{e}.pdf"
            out.append(
                {
                    "createdAt": iso(created),
                    "certificateUrl": cert if progress >= 100 else None,
                    "progress": progress,
                    "course": {"name": course},
                }
            )
        return RecordListing(out)

    def delivery(self, team_slug: str, delivery_id: int) -> Record:
        d = self.deliveries[self.school(team_slug)].get(delivery_id)
        if d is None:
            raise WorldError(404, "not_found", "delivery not found")
        return d
