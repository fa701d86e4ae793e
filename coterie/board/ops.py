"""The board's operations as closures over a :class:`Txn`, shared by both faces.

Each builder checks its arguments at once (before any lock is taken) and
returns ``op(txn)``, which ``Board._run`` calls under the exclusive locks on
the caught-up state (``RedisBoard`` on a copy of its state, then appends
only if no one wrote meanwhile): it decides by the rules and applies the
resulting records through the transaction, which queues them for one
append. Readers (``lookup``, ``all_tasks``) look at the caught-up state
(``Board._read``).
"""

from __future__ import annotations

import json
import math
import time
from typing import TYPE_CHECKING, Any

from coterie.board import _rules as rules
from coterie.board._errors import BoardError, InvalidTaskField
from coterie.board._rules import UNSET, Unset
from coterie.board._task import MAX_TASKS, Lease, Task, TaskStatus, check_task_id
from coterie.journal import encode

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from coterie.board.state import BoardState

TaskList = list[Task]


class Txn:
    """The records one operation writes: applied to the state at once, appended together."""

    def __init__(self, state: BoardState, *, frame: Callable[[bytes], bytes] = encode) -> None:
        self.state = state
        #: How a record's JSON is wrapped for the log: the journal's framing
        #: for the file log; tagged with the attempt's nonce for Redis.
        self._frame = frame
        self.chunks: list[bytes] = []
        self.touched = False  # the state no longer matches the log until appended
        self._time = time.time()

    def apply(self, record: dict[str, Any]) -> Task:
        """Apply *record* (numbering it) and queue it for the log; returns the task."""
        record = {"s": self.state.last_seq + 1, "t": self._time, **record}
        # The same JSON a reader will decode; default ensure_ascii keeps lone
        # surrogates in user text round-tripping instead of failing to encode.
        chunk = self._frame(json.dumps(record, separators=(",", ":")).encode())
        self.touched = True
        task = self.state.apply(record)
        self.chunks.append(chunk)
        return task

    def expired(self, now: float) -> list[Task]:
        """Tasks whose lease ran out; the caller applies their expiry."""
        self.touched = True
        return self.state.pop_expired(now)


def _check_now(now: object) -> float | None:
    if now is None:
        return None
    if isinstance(now, bool) or not isinstance(now, int | float) or not math.isfinite(now):
        raise InvalidTaskField(f"now must be a finite number of seconds, got {now!r}")
    return float(now)


def create(
    subject: str, description: str, blocked_by: Iterable[str], owner: str | None
) -> Callable[[Txn], Task]:
    """Add the next task (blockers must exist)."""
    subject = rules.check_text("subject", subject, empty=False)
    description = rules.check_text("description", description)
    blockers = rules.check_ids("blocked_by", blocked_by)
    owner = rules.check_owner(owner)

    def op(txn: Txn) -> Task:
        if txn.state.last_number >= MAX_TASKS:
            raise BoardError(f"the board is full ({MAX_TASKS} tasks)")
        return txn.apply(rules.create(txn.state, subject, description, blockers, owner))

    return op


def update(
    task_id: str,
    status: TaskStatus | str | None,
    owner: str | Unset | None,
    add_blocked_by: Iterable[str],
    result: str | None,
    lease_seconds: float | None,
    now: float | None,
) -> Callable[[Txn], Task]:
    """The lead's general change (``TaskUpdate``), by the rules of ``_rules.update``."""
    task_id = check_task_id(task_id)
    new_status = None if status is None else rules.check_status(status)
    new_owner = owner if owner is UNSET else rules.check_owner(owner)
    blockers = rules.check_ids("add_blocked_by", add_blocked_by)
    result = None if result is None else rules.check_text("result", result)
    lease = None if lease_seconds is None else rules.check_lease_seconds(lease_seconds)
    at = _check_now(now)

    def op(txn: Txn) -> Task:
        record = rules.update(
            txn.state,
            task_id,
            status=new_status,
            owner=new_owner,
            add_blocked_by=blockers,
            result=result,
            lease_seconds=lease,
            now=time.time() if at is None else at,
        )
        return rules.lookup(txn.state, task_id) if record is None else txn.apply(record)

    return op


def claim(worker: str, lease_seconds: float, now: float | None) -> Callable[[Txn], Task | None]:
    """Expire run-out leases, then give *worker* its next ready task, if any."""
    worker = rules.check_worker(worker)
    lease = rules.check_lease_seconds(lease_seconds)
    at = _check_now(now)

    def op(txn: Txn) -> Task | None:
        t = time.time() if at is None else at
        # A crashed worker's tasks come back before choosing, so an idle
        # worker picks them up without anyone calling expire_leases.
        for expired in txn.expired(t):
            txn.apply(rules.expire(expired))
        task = txn.state.next_ready(worker)
        return None if task is None else txn.apply(rules.claim(task, worker, t, lease))

    return op


def _worker(task_id: str, worker: str, name: str, **fields: Any) -> Callable[[Txn], Task]:
    """Set *fields* on a task *worker* holds, recording operation *name*."""
    task_id = check_task_id(task_id)
    worker = rules.check_worker(worker)

    def op(txn: Txn) -> Task:
        task = rules.held(txn.state, task_id, worker)
        return txn.apply(rules.change(task, name, **fields))

    return op


def renew(
    task_id: str, worker: str, lease_seconds: float, now: float | None
) -> Callable[[Txn], Task]:
    """Extend the lease of a task *worker* holds."""
    lease = rules.check_lease_seconds(lease_seconds)
    at = _check_now(now)
    task_id = check_task_id(task_id)
    worker = rules.check_worker(worker)

    def op(txn: Txn) -> Task:
        task = rules.held(txn.state, task_id, worker)
        t = time.time() if at is None else at
        return txn.apply(rules.change(task, "renew", lease=Lease(worker, t + lease)))

    return op


def complete(task_id: str, worker: str, result: str) -> Callable[[Txn], Task]:
    """Complete a task *worker* holds."""
    result = rules.check_text("result", result)
    return _worker(
        task_id, worker, "complete", status=TaskStatus.COMPLETED, result=result, lease=None
    )


def fail(task_id: str, worker: str, reason: str) -> Callable[[Txn], Task]:
    """Fail a task *worker* holds; *reason* becomes its result."""
    reason = rules.check_text("reason", reason)
    return _worker(task_id, worker, "fail", status=TaskStatus.FAILED, result=reason, lease=None)


def release(task_id: str, worker: str) -> Callable[[Txn], Task]:
    """Hand a task *worker* holds back to everyone."""
    return _worker(
        task_id,
        worker,
        "release",
        status=TaskStatus.PENDING,
        owner=None,
        assigned=False,
        lease=None,
    )


def expire(now: float | None) -> Callable[[Txn], TaskList]:
    """Return every task whose lease ran out by *now* to ``pending``."""
    at = _check_now(now)

    def op(txn: Txn) -> TaskList:
        expired = txn.expired(time.time() if at is None else at)
        return [txn.apply(rules.expire(task)) for task in expired]

    return op


def lookup(task_id: str) -> Callable[[BoardState], Task]:
    """Read one task (the id is checked at once)."""
    task_id = check_task_id(task_id)
    return lambda state: rules.lookup(state, task_id)


def all_tasks(state: BoardState) -> TaskList:
    """Read every task, in creation order."""
    return list(state.tasks.values())  # creation order: numbers only grow
