"""The rules of the board: which changes are allowed, as records to write.

Each function reads a :class:`BoardState`, checks one request against the
rules of docs/teams.md and returns the log record(s) that carry it out (without
sequence number or time), or raises one of the errors of ``_errors.py``
naming what is wrong. Nothing here writes or mutates anything.

Status transitions allowed (anything else is :class:`InvalidTransition`)::

    pending     -> in_progress   claim, or update with an owner; only when ready
    pending     -> failed        update (the lead cancels a task)
    in_progress -> completed     complete, or update
    in_progress -> failed        fail, or update
    in_progress -> pending       release, lease expiry, or update

``completed`` and ``failed`` are final: a failed task is retried by creating a
new one, so that no completed task is ever redone and a finished task's
dependents never see it change.

Owners: an explicit assignment (``owner`` at creation or by update) survives
a lease expiry, so a crashed teammate restarted by its supervisor gets its
task back; a task taken by a claim goes back to everyone. ``release`` always
clears the owner: a worker that hands a task back is saying it will not do it.
"""

from __future__ import annotations

import enum
import math
from typing import TYPE_CHECKING, Any

from coterie.board._errors import (
    InvalidOwnerName,
    InvalidTaskField,
    InvalidTransition,
    NotTaskOwner,
    TaskCycle,
    UnknownTask,
)
from coterie.board._task import (
    Lease,
    Task,
    TaskStatus,
    check_task_id,
    fields_to_json,
    task_id_for,
)
from coterie.errors import InvalidActorName
from coterie.messages import check_actor_name

if TYPE_CHECKING:
    from coterie.board.state import BoardState

Record = dict[str, Any]

P, R, C, F = (
    TaskStatus.PENDING,
    TaskStatus.IN_PROGRESS,
    TaskStatus.COMPLETED,
    TaskStatus.FAILED,
)
TRANSITIONS = frozenset({(P, R), (P, F), (R, C), (R, F), (R, P)})


class Unset(enum.Enum):
    """Type of :data:`UNSET`."""

    UNSET = "UNSET"


UNSET = Unset.UNSET
"""Default of ``update(owner=...)``: leave the owner alone (``None`` unassigns)."""


# -- checking arguments (before any lock is taken) ----------------------------


def check_text(name: str, value: object, *, empty: bool = True) -> str:
    """*value* if it is a string (non-blank unless *empty*), else :class:`InvalidTaskField`."""
    if not isinstance(value, str):
        raise InvalidTaskField(f"{name} must be a string, got {type(value).__name__}")
    if not empty and not value.strip():
        raise InvalidTaskField(f"{name} must not be empty")
    return value


def check_ids(name: str, value: object) -> tuple[str, ...]:
    """A list of task ids, each checked, duplicates dropped (first one kept)."""
    if isinstance(value, str | bytes) or not hasattr(value, "__iter__"):
        raise InvalidTaskField(f"{name} must be a list of task ids, got {value!r}")
    return tuple(dict.fromkeys(check_task_id(v) for v in value))


def check_lease_seconds(value: object) -> float:
    """A positive, finite number of seconds."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise InvalidTaskField(f"lease_seconds must be a positive number, got {value!r}")
    if not math.isfinite(value):
        raise InvalidTaskField("lease_seconds must be finite")
    return float(value)


def check_owner(value: object) -> str | None:
    """``None`` or a valid actor name."""
    return None if value is None else check_worker(value)


def check_worker(value: object) -> str:
    """A valid actor name, else :class:`InvalidOwnerName` (a board refusal)."""
    try:
        return check_actor_name(value)
    except InvalidActorName as exc:
        raise InvalidOwnerName(str(exc)) from None


def check_status(value: object) -> TaskStatus:
    """A :class:`TaskStatus` or its name."""
    try:
        return TaskStatus(value)  # type: ignore[arg-type]  # any value is tried, bad ones refused
    except ValueError:
        names = ", ".join(s.value for s in TaskStatus)
        raise InvalidTaskField(f"unknown status {value!r}: use one of {names}") from None


# -- reading the state ---------------------------------------------------------


def lookup(state: BoardState, task_id: str) -> Task:
    """The task, or :class:`UnknownTask` naming how many tasks there are."""
    task = state.get(task_id)
    if task is None:
        raise UnknownTask(
            f"no task {task_id} on this board (it holds task_1..task_{state.last_number})"
            if state.last_number
            else f"no task {task_id}: the board is empty"
        )
    return task


def _check_new_blockers(state: BoardState, task_id: str, blockers: tuple[str, ...]) -> None:
    for b in blockers:
        lookup(state, b)
        path = state.path_between(b, task_id)
        if path is not None:
            cycle = " -> ".join([task_id, *path])
            raise TaskCycle(f"{task_id} cannot be blocked by {b}: that makes a cycle {cycle}")


def _describe_unmet(state: BoardState, task: Task) -> str:
    return ", ".join(f"{b.id} ({b.status.value})" for b in state.unmet_blockers(task))


def change(task: Task, op: str, **fields: Any) -> Record:
    """The record setting *fields* on *task*."""
    return {"op": op, "id": task.id, "set": fields_to_json(fields)}


# -- the operations --------------------------------------------------------------


def create(
    state: BoardState,
    subject: str,
    description: str,
    blocked_by: tuple[str, ...],
    owner: str | None,
) -> Record:
    """The record creating the next task (blockers must exist; no cycle is possible yet)."""
    for b in blocked_by:
        lookup(state, b)
    task = Task(
        id=task_id_for(state.last_number + 1),
        subject=subject,
        description=description,
        owner=owner,
        assigned=owner is not None,
        blocked_by=blocked_by,
    )
    return {"op": "create", "task": task.to_json()}


def claim(task: Task, worker: str, now: float, lease_seconds: float) -> Record:
    """The record giving the ready *task* to *worker* under a fresh lease."""
    return change(task, "claim", status=R, owner=worker, lease=Lease(worker, now + lease_seconds))


def expire(task: Task) -> Record:
    """The record returning an in-progress task whose lease ran out to ``pending``."""
    owner = task.owner if task.assigned else None
    return change(task, "expire", status=P, owner=owner, lease=None)


def held(state: BoardState, task_id: str, worker: str) -> Task:
    """The task, if *worker* holds it (in progress, owned by *worker*)."""
    task = lookup(state, task_id)
    if task.status.finished:
        raise InvalidTransition(f"{task_id} is already {task.status.value}")
    if task.status is not R or task.owner != worker:
        now = (
            f"in progress under {task.owner}"
            if task.status is R
            else "pending" + (f", assigned to {task.owner}" if task.owner else "")
        )
        raise NotTaskOwner(f"{worker} does not hold {task_id}: it is {now} (did its lease expire?)")
    return task


def update(
    state: BoardState,
    task_id: str,
    *,
    status: TaskStatus | None,
    owner: str | Unset | None,
    add_blocked_by: tuple[str, ...],
    result: str | None,
    lease_seconds: float | None,
    now: float,
) -> Record | None:
    """The record for a general update (the lead's ``TaskUpdate``), or ``None`` if
    nothing would change."""
    task = lookup(state, task_id)
    new_status = task.status if status is None else status
    fields: dict[str, Any] = {}
    if task.status.finished:
        if new_status is task.status and owner is UNSET and not add_blocked_by and result is None:
            return None
        raise InvalidTransition(f"{task_id} is {task.status.value}: a finished task cannot change")
    if new_status is not task.status and (task.status, new_status) not in TRANSITIONS:
        hint = "; claim it first" if new_status is C else ""
        raise InvalidTransition(
            f"{task_id} cannot go from {task.status.value} to {new_status.value}{hint}"
        )
    if lease_seconds is not None and not (task.status is P and new_status is R):
        raise InvalidTaskField("lease_seconds applies only when an update starts a task")

    if owner is not UNSET and (owner != task.owner or (owner is not None and not task.assigned)):
        if task.status is R and new_status is not P and owner != task.owner:
            raise InvalidTransition(
                f"{task_id} is in progress under {task.owner}: it must be released "
                "(or its lease expire) before it is reassigned"
            )
        fields["owner"] = owner
        fields["assigned"] = owner is not None

    # Blockers it has already are no change (a repeated update is harmless).
    fresh = tuple(b for b in add_blocked_by if b not in task.blocked_by)
    if fresh:
        if new_status is not P:
            raise InvalidTransition(
                f"{task_id} is {task.status.value}: only a pending task can gain blockers"
            )
        _check_new_blockers(state, task_id, fresh)
        fields["blocked_by"] = task.blocked_by + fresh

    if new_status is not task.status:
        fields["status"] = new_status
        if new_status is R:
            who = fields.get("owner", task.owner)
            if who is None:
                raise InvalidTransition(f"{task_id} needs an owner to be in progress")
            unmet = _describe_unmet(state, task)
            if unmet:
                raise InvalidTransition(f"{task_id} cannot start: blocked by {unmet}")
            fields["lease"] = None if lease_seconds is None else Lease(who, now + lease_seconds)
        else:
            fields["lease"] = None
        if new_status is P and "owner" not in fields and not task.assigned:
            fields["owner"] = None

    if result is not None:
        fields["result"] = result
    return change(task, "update", **fields) if fields else None
