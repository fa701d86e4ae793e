"""The run's cron jobs: a table kept in ``cron.json`` in the run directory.

The cron tools (:mod:`coterie.tools.cron`) add, list and delete jobs; the
scheduler actor (:mod:`coterie.actors.scheduler`) fires the due ones as
prompts to the lead. The rules of the table are pure functions over a
:class:`CronBook` value, with the time passed in; :func:`load_book` and
:func:`save_book` are the only I/O (the file replaced atomically and synced,
so a kill -9 leaves the old table or the new one, and a resumed run has its
jobs).

As in Claude Code: a job's id is 8 hex digits; a one-shot job fires once and
is gone; a recurring one fires at each matching minute until deleted or until
it is :data:`RECURRING_DAYS` days old (its last fire is delivered, then it is
gone); a run holds at most :data:`MAX_JOBS`. Missed fires are not replayed: a
recurring job that was due while the run was down fires once, then goes on
from the next matching minute.
"""

from __future__ import annotations

import json
import secrets
from typing import TYPE_CHECKING, Any

import attrs

from coterie.fsutil import atomic_write
from coterie.tools.cronspec import parse_cron

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "BOOK_FILE",
    "MAX_JOBS",
    "RECURRING_DAYS",
    "CronBook",
    "CronJob",
    "load_book",
    "save_book",
]

BOOK_FILE = "cron.json"
MAX_JOBS = 50
RECURRING_DAYS = 30
_DAY = 86_400.0


@attrs.frozen
class CronJob:
    """One scheduled prompt."""

    id: str
    cron: str
    prompt: str
    recurring: bool
    durable: bool
    created_at: float
    #: When it fires next (POSIX time).
    next_fire: float
    #: How many times it has fired (the next fire's prompt id is ``cron.<id>.<fires + 1>``).
    fires: int = 0
    #: The agent that created it.
    agent: str = "lead"

    @property
    def expires_at(self) -> float | None:
        """When a recurring job stops (None: a one-shot job, gone after its fire)."""
        return self.created_at + RECURRING_DAYS * _DAY if self.recurring else None

    @property
    def next_prompt_id(self) -> str:
        """The id of the prompt its next fire sends: fixed by the job and the fire, so a
        fire sent again after a crash is the same request to the lead."""
        return f"cron.{self.id}.{self.fires + 1}"


@attrs.frozen
class CronBook:
    """Every job of a run, in creation order."""

    jobs: tuple[CronJob, ...] = ()

    def get(self, job_id: str) -> CronJob | None:
        """The job *job_id*, if there is one."""
        return next((j for j in self.jobs if j.id == job_id), None)

    def add(
        self,
        cron: str,
        prompt: str,
        *,
        recurring: bool,
        durable: bool,
        now: float,
        agent: str = "lead",
        job_id: str | None = None,
    ) -> tuple[CronBook, CronJob]:
        """The book with a new job, and the job; ``ValueError`` (a
        :class:`~coterie.tools.cronspec.CronError` for the expression) if it cannot be."""
        if len(self.jobs) >= MAX_JOBS:
            raise ValueError(f"too many scheduled jobs (at most {MAX_JOBS}): delete one first")
        if not prompt.strip():
            raise ValueError("the prompt is empty")
        spec = parse_cron(cron)
        due = spec.next_after(now)
        if due is None:
            raise ValueError(f"{spec.text!r} names no time in the years ahead")
        ids = {j.id for j in self.jobs}
        new_id = job_id or _fresh_id(ids)
        job = CronJob(new_id, spec.text, prompt, recurring, durable, now, due, agent=agent)
        return attrs.evolve(self, jobs=(*self.jobs, job)), job

    def delete(self, job_id: str) -> CronBook | None:
        """The book without job *job_id*; None if it has no such job."""
        if self.get(job_id) is None:
            return None
        return attrs.evolve(self, jobs=tuple(j for j in self.jobs if j.id != job_id))

    def due(self, now: float) -> CronJob | None:
        """The job to fire first at *now* (the earliest due), if any."""
        ready = [j for j in self.jobs if j.next_fire <= now]
        return min(ready, key=lambda j: j.next_fire) if ready else None

    def next_due(self) -> float | None:
        """When the next job is due (None: no jobs)."""
        return min((j.next_fire for j in self.jobs), default=None)

    def fired(self, job_id: str, now: float) -> CronBook:
        """The book after job *job_id* fired at *now*: a one-shot or expired job gone, a
        recurring one due again at its next matching minute after *now*."""
        job = self.get(job_id)
        if job is None:
            return self  # deleted while it ran
        expires = job.expires_at
        following = parse_cron(job.cron).next_after(now) if job.recurring else None
        if following is None or (expires is not None and following > expires):
            return attrs.evolve(self, jobs=tuple(j for j in self.jobs if j.id != job_id))
        again = attrs.evolve(job, next_fire=following, fires=job.fires + 1)
        return attrs.evolve(self, jobs=tuple(again if j.id == job_id else j for j in self.jobs))


def _fresh_id(taken: set[str]) -> str:
    while True:
        candidate = secrets.token_hex(4)
        if candidate not in taken:
            return candidate


def load_book(run_dir: Path) -> CronBook:
    """The run's jobs (none if it has no ``cron.json``; a damaged one counts as none)."""
    try:
        data: dict[str, Any] = json.loads((run_dir / BOOK_FILE).read_text())
        return CronBook(tuple(CronJob(**job) for job in data["jobs"]))
    except FileNotFoundError:
        return CronBook()
    except (ValueError, TypeError, KeyError):
        return CronBook()


def save_book(run_dir: Path, book: CronBook) -> None:
    """Replace the run's ``cron.json`` with *book*, atomically and synced."""
    data = {"jobs": [attrs.asdict(job) for job in book.jobs]}
    atomic_write(run_dir / BOOK_FILE, json.dumps(data, indent=1).encode(), sync=True)
