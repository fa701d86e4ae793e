"""Task records: ids, statuses, leases, and their JSON form in the log."""

from __future__ import annotations

import enum
import re
from typing import Any

import attrs

from coterie.board._errors import InvalidTaskId

TASK_ID_RE = re.compile(r"task_[1-9][0-9]{0,8}")
MAX_TASKS = 999_999_999


def check_task_id(value: object) -> str:
    """Return *value* if it is a well-formed task id, else raise :class:`InvalidTaskId`."""
    if not isinstance(value, str) or not TASK_ID_RE.fullmatch(value):
        raise InvalidTaskId(
            f"invalid task id {value!r}: ids look like task_1, task_2, ... "
            "(matching ^task_[1-9][0-9]{0,8}$)"
        )
    return value


def task_number(task_id: str) -> int:
    """The number of a well-formed id: ``task_12`` -> 12."""
    return int(task_id[5:])


def task_id_for(number: int) -> str:
    """The id of the *number*-th task created on a board."""
    return f"task_{number}"


class TaskStatus(enum.StrEnum):
    """Where a task is in its life: ``pending -> in_progress -> completed``, or ``failed``."""

    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    FAILED = "failed"

    @property
    def finished(self) -> bool:
        """Completed or failed: nothing about the task changes any more."""
        return self is TaskStatus.COMPLETED or self is TaskStatus.FAILED


@attrs.frozen
class Lease:
    """A worker's claim on an in-progress task, valid until ``expires_at``.

    ``expires_at`` is wall-clock time (``time.time()``), the one clock that
    every process of a run, and a run resumed after a reboot, agree on.
    """

    holder: str
    expires_at: float


@attrs.frozen
class Task:
    """One task on the board, as of the last operation applied.

    ``owner`` is the worker the task is assigned to or held by; ``assigned``
    says the owner was chosen explicitly (at creation or by ``update``) rather
    than taken by a claim, which decides who gets the task back when a lease
    expires. ``result`` is the final text on completion, or the reason on
    failure. ``lease`` is set exactly while a claimed task is in progress.
    """

    id: str
    subject: str
    description: str
    status: TaskStatus = TaskStatus.PENDING
    owner: str | None = None
    blocked_by: tuple[str, ...] = ()
    result: str | None = None
    lease: Lease | None = None
    assigned: bool = False

    def to_json(self) -> dict[str, Any]:
        """The task as a JSON-able dict (what the log and the team tools show)."""
        return {
            "id": self.id,
            "subject": self.subject,
            "description": self.description,
            "status": self.status.value,
            "owner": self.owner,
            "assigned": self.assigned,
            "blocked_by": list(self.blocked_by),
            "result": self.result,
            "lease": _lease_to_json(self.lease),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Task:
        """Inverse of :meth:`to_json`; raises ``ValueError`` etc. on a malformed dict."""
        return cls(
            id=check_task_id(data["id"]),
            subject=_string(data["subject"]),
            description=_string(data["description"]),
            **fields_from_json({k: data[k] for k in _CHANGEABLE if k in data}),
        )


def _lease_to_json(lease: Lease | None) -> dict[str, Any] | None:
    return None if lease is None else {"holder": lease.holder, "expires_at": lease.expires_at}


def _string(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {value!r}")
    return value


def _optional_string(value: object) -> str | None:
    return None if value is None else _string(value)


def _lease(value: object) -> Lease | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise TypeError(f"expected a lease object, got {value!r}")
    expires = value["expires_at"]
    if not isinstance(expires, int | float) or isinstance(expires, bool):
        raise TypeError(f"expected a number, got {expires!r}")
    return Lease(_string(value["holder"]), float(expires))


def _blockers(value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise TypeError(f"expected a list of ids, got {value!r}")
    return tuple(check_task_id(v) for v in value)


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"expected a boolean, got {value!r}")
    return value


def _status(value: object) -> TaskStatus:
    # A dict lookup: calling the enum costs more than the rest of a replay step.
    try:
        return _STATUSES[value]  # type: ignore[index]
    except (KeyError, TypeError):
        raise ValueError(f"unknown status {value!r}") from None


_STATUSES = {s.value: s for s in TaskStatus}

_CHANGEABLE: dict[str, Any] = {
    "status": _status,
    "owner": _optional_string,
    "assigned": _flag,
    "blocked_by": _blockers,
    "result": _optional_string,
    "lease": _lease,
}


def fields_from_json(changes: dict[str, Any]) -> dict[str, Any]:
    """Convert the ``set`` part of a log record into :class:`Task` field values.

    Only the fields an operation may change are accepted (never ``id``,
    ``subject`` or ``description``); anything else raises ``ValueError``.
    """
    out: dict[str, Any] = {}
    for key, value in changes.items():
        convert = _CHANGEABLE.get(key)
        if convert is None:
            raise ValueError(f"field {key!r} cannot change")
        out[key] = convert(value)
    return out


def replace(task: Task, fields: dict[str, Any]) -> Task:
    """*task* with *fields* changed (``attrs.evolve``, at half the cost, for replay)."""
    return Task(
        id=task.id,
        subject=task.subject,
        description=task.description,
        status=fields.get("status", task.status),
        owner=fields.get("owner", task.owner),
        blocked_by=fields.get("blocked_by", task.blocked_by),
        result=fields.get("result", task.result),
        lease=fields.get("lease", task.lease),
        assigned=fields.get("assigned", task.assigned),
    )


def fields_to_json(fields: dict[str, Any]) -> dict[str, Any]:
    """Inverse of :func:`fields_from_json`, for the records the board writes."""
    out: dict[str, Any] = {}
    for key, value in fields.items():
        if key == "lease":
            out[key] = _lease_to_json(value)
        elif key == "blocked_by":
            out[key] = list(value)
        elif key == "status":
            out[key] = TaskStatus(value).value
        else:
            out[key] = value
    return out
