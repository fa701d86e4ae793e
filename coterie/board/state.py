"""The board in memory: tasks plus the indexes that make a claim O(log n).

Theory of operation
-------------------
The log (``_log.py``) is the truth; this is a cache of it that only ever
moves forward by :meth:`BoardState.apply`, one record at a time, whether the
record was just written by this process or read from the tail of the log
after another process wrote it. Records carry *after-images*: a ``create``
holds the whole new task, any other record the fields it sets. So applying
needs no rules and replay reproduces exactly the state the writer saw; the
rules live in ``_rules.py`` and run only before a record is written.

Indexes, kept up to date by ``apply`` and never trusted blindly:

* ``_unmet[n]``: how many of task *n*'s blockers are not completed yet.
  Completing a task decrements its dependents', so readiness costs O(1).
* ``_ready[owner]``: a min-heap of task numbers that became ready (pending,
  ``_unmet == 0``) for that owner (``None``: unassigned). Entries go stale when
  a task is claimed or reassigned; they are dropped lazily, when they reach the
  top, after re-checking the task itself. Pushing too much is harmless;
  every transition *into* readiness pushes, so nothing ready is missed.
* ``_leases``: a min-heap of ``(expires_at, n)`` for in-progress tasks, stale
  entries (renewed, finished) dropped the same way.

Nothing here does I/O.
"""

from __future__ import annotations

import heapq
from typing import Any

from coterie.board._task import (
    Task,
    TaskStatus,
    check_task_id,
    fields_from_json,
    replace,
    task_number,
)


class BadRecord(ValueError):
    """A checksummed record that still makes no sense (reported, then skipped)."""


class BoardState:
    """Tasks by number, the sequence number of the last record, and indexes."""

    def __init__(self) -> None:
        self.tasks: dict[int, Task] = {}
        self.last_number = 0
        self.last_seq = 0
        self.counts: dict[TaskStatus, int] = dict.fromkeys(TaskStatus, 0)
        self._dependents: dict[int, list[int]] = {}
        self._unmet: dict[int, int] = {}
        self._ready: dict[str | None, list[int]] = {}
        self._leases: list[tuple[float, int]] = []

    def copy(self) -> BoardState:
        """An independent copy (tasks are immutable and shared): what a writer
        that may lose a race decides on, so that losing costs no rebuild."""
        new = BoardState()
        new.tasks = dict(self.tasks)
        new.last_number = self.last_number
        new.last_seq = self.last_seq
        new.counts = dict(self.counts)
        new._dependents = dict(self._dependents)  # lists never change in place
        new._unmet = dict(self._unmet)
        new._ready = {k: list(h) for k, h in self._ready.items()}
        new._leases = list(self._leases)
        return new

    # -- reading -------------------------------------------------------------

    def get(self, task_id: str) -> Task | None:
        """The task with this (well-formed) id, if it exists."""
        return self.tasks.get(task_number(task_id))

    def unmet_blockers(self, task: Task) -> list[Task]:
        """The blockers of *task* that are not completed."""
        return [
            b
            for b in (self.tasks[task_number(i)] for i in task.blocked_by)
            if b.status is not TaskStatus.COMPLETED
        ]

    def next_ready(self, worker: str) -> Task | None:
        """The ready task *worker* should claim: its own first, then an unassigned one;
        the lowest id within each."""
        for key in (worker, None):
            heap = self._ready.get(key)
            while heap:
                n = heap[0]
                task = self.tasks[n]
                if task.status is TaskStatus.PENDING and task.owner == key and not self._unmet[n]:
                    return task
                heapq.heappop(heap)  # stale: claimed, reassigned or blocked since
        return None

    def pop_expired(self, now: float) -> list[Task]:
        """In-progress tasks whose lease expired at or before *now*, by expiry.

        Pops them from the lease index: the caller must apply their expiry
        (or rebuild the state) before anything else reads it.
        """
        out: list[Task] = []
        seen: set[int] = set()
        while self._leases and self._leases[0][0] <= now:
            expires_at, n = heapq.heappop(self._leases)
            task = self.tasks[n]
            if (
                n not in seen
                and task.status is TaskStatus.IN_PROGRESS
                and task.lease is not None
                and task.lease.expires_at == expires_at
            ):
                seen.add(n)
                out.append(task)
        return out

    def path_between(self, start: str, goal: str) -> list[str] | None:
        """A chain of ``blocked_by`` links from *start* to *goal*, if there is one.

        Used before adding *start* as a blocker of *goal*: a path back means
        the new link would close a cycle.
        """
        parent: dict[str, str | None] = {start: None}
        stack = [start]
        while stack:
            current = stack.pop()
            if current == goal:
                path = [current]
                while (prev := parent[path[-1]]) is not None:
                    path.append(prev)
                return path[::-1]
            for b in self.tasks[task_number(current)].blocked_by:
                if b not in parent:
                    parent[b] = current
                    stack.append(b)
        return None

    # -- applying records ----------------------------------------------------

    def apply(self, record: dict[str, Any]) -> Task:
        """Apply one decoded log record; returns the task as it now stands.

        Raises :class:`BadRecord` (leaving the state unchanged) for a record
        that does not fit: a duplicate id, an unknown task or blocker, a field
        of the wrong type.
        """
        try:
            seq = record["s"]
            if not isinstance(seq, int) or seq <= self.last_seq:
                raise BadRecord(f"sequence number {seq!r} does not follow {self.last_seq}")
            if record["op"] == "create":
                task = self._create(Task.from_json(record["task"]))
            else:
                n = task_number(check_task_id(record["id"]))
                if n not in self.tasks:
                    raise BadRecord(f"{record['id']} does not exist")
                task = self._change(n, fields_from_json(record["set"]))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            if isinstance(exc, BadRecord):
                raise
            raise BadRecord(f"malformed record: {exc!r}") from None
        self.last_seq = seq
        return task

    def _check_blockers(self, n: int, blockers: tuple[str, ...]) -> None:
        for b in blockers:
            bn = task_number(b)
            if bn not in self.tasks or bn == n:
                raise BadRecord(f"task_{n} blocked by unknown task {b}")

    def _create(self, task: Task) -> Task:
        n = task_number(task.id)
        if n <= self.last_number:
            raise BadRecord(f"{task.id} already exists")
        self._check_blockers(n, task.blocked_by)
        self.tasks[n] = task
        self.last_number = n
        self.counts[task.status] += 1
        self._dependents[n] = []
        self._unmet[n] = 0
        self._link(n, task.blocked_by)
        self._index(n)
        return task

    def _change(self, n: int, fields: dict[str, Any]) -> Task:
        old = self.tasks[n]
        new = replace(old, fields)
        added = tuple(b for b in new.blocked_by if b not in old.blocked_by)
        if len(set(new.blocked_by)) != len(new.blocked_by) or set(old.blocked_by) - set(
            new.blocked_by
        ):
            raise BadRecord(f"{old.id}: blockers can only be added, once each")
        self._check_blockers(n, added)
        self.tasks[n] = new
        self.counts[old.status] -= 1
        self.counts[new.status] += 1
        self._link(n, added)
        if new.status is TaskStatus.COMPLETED and old.status is not TaskStatus.COMPLETED:
            for d in self._dependents[n]:
                self._unmet[d] -= 1
                if not self._unmet[d]:
                    self._index(d)
        self._index(n)
        return new

    def _link(self, n: int, blockers: tuple[str, ...]) -> None:
        for b in blockers:
            bn = task_number(b)
            # A new list, not an append: copies of the state share these lists.
            self._dependents[bn] = [*self._dependents[bn], n]
            if self.tasks[bn].status is not TaskStatus.COMPLETED:
                self._unmet[n] += 1

    def _index(self, n: int) -> None:
        task = self.tasks[n]
        if task.status is TaskStatus.PENDING and not self._unmet[n]:
            heapq.heappush(self._ready.setdefault(task.owner, []), n)
        elif task.status is TaskStatus.IN_PROGRESS and task.lease is not None:
            heapq.heappush(self._leases, (task.lease.expires_at, n))
