"""How the team tools show the board to a model: compact, plain text, no clocks.

Kept apart from the tools so the formats (which the team runtime's prompts
and the tests rely on) read in one place. Nothing here does I/O.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coterie.board import TaskStatus

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from coterie.board import Task

__all__ = ["describe_changes", "format_blockers", "format_task", "format_task_list"]

MAX_SUBJECT_CHARS = 80
_HEADER = ("id", "status", "owner", "blocked_by", "subject")


def _clip(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def format_blockers(task: Task, statuses: Mapping[str, TaskStatus]) -> str:
    """``task_1, task_2 (pending)``: every blocker, with the status of those not completed.

    A blocker that is not completed is still open (or failed, which blocks
    for good); a completed one is written bare.
    """
    if not task.blocked_by:
        return "-"
    parts = []
    for b in task.blocked_by:
        status = statuses.get(b)
        done = status is TaskStatus.COMPLETED
        parts.append(b if done else f"{b} ({status.value if status else 'unknown'})")
    return ", ".join(parts)


def format_task_list(tasks: Iterable[Task], me: str) -> str:
    """The board as an aligned table, one task a line, then counts by status.

    Columns: id, status, owner (``-`` for none, ``(you)`` after *me*),
    blocked_by (see :func:`format_blockers`), subject (one line, clipped).
    """
    tasks = list(tasks)
    if not tasks:
        return "No tasks yet."
    statuses = {t.id: t.status for t in tasks}
    rows = [_HEADER] + [
        (
            t.id,
            t.status.value,
            "-" if t.owner is None else t.owner + (" (you)" if t.owner == me else ""),
            format_blockers(t, statuses),
            _clip(t.subject, MAX_SUBJECT_CHARS),
        )
        for t in tasks
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_HEADER) - 1)]
    lines = [
        "  ".join([*(cell.ljust(w) for cell, w in zip(row, widths, strict=False)), row[-1]])
        for row in rows
    ]
    counts = {s: sum(1 for t in tasks if t.status is s) for s in TaskStatus}
    summary = ", ".join(f"{n} {s.value}" for s, n in counts.items() if n)
    lines.append(f"{len(tasks)} task{'s' if len(tasks) != 1 else ''}: {summary}")
    return "\n".join(lines)


def format_task(task: Task, tasks: Iterable[Task], me: str) -> str:
    """One task in full: subject, status, owner, blockers, dependents, description, result."""
    tasks = list(tasks)
    statuses = {t.id: t.status for t in tasks}
    blocks = [t.id for t in tasks if task.id in t.blocked_by]
    if task.owner is None:
        owner = "none"
    else:
        how = "assigned" if task.assigned else "claimed"
        owner = f"{task.owner}{' (you)' if task.owner == me else ''}, {how}"
    lines = [
        f"{task.id}: {task.subject}",
        f"status: {task.status.value}",
        f"owner: {owner}",
        f"blocked_by: {format_blockers(task, statuses)}",
        f"blocks: {', '.join(blocks) if blocks else '-'}",
        "description:",
        task.description if task.description.strip() else "(empty)",
        "result:",
        "(none)" if task.result is None else task.result or "(empty)",
    ]
    return "\n".join(lines)


def describe_changes(before: Task, after: Task) -> list[str]:
    """What an update changed, e.g. ``["status in_progress -> failed", "result recorded"]``."""
    changes = []
    if before.status is not after.status:
        changes.append(f"status {before.status.value} -> {after.status.value}")
    if before.owner != after.owner:
        changes.append(f"owner {before.owner or 'none'} -> {after.owner or 'none'}")
    added = [b for b in after.blocked_by if b not in before.blocked_by]
    if added:
        changes.append(f"now also blocked by {', '.join(added)}")
    if before.result != after.result:
        changes.append("result recorded")
    return changes
