"""Listing a stopped run's checkpoints, and rewinding it to one.

:func:`rewind_run` holds the run (a running one is refused), plans the
rewind on the snapshots (:func:`~.rewind.plan_rewind`), records the rewind as
a checkpoint of its own (so it can be undone), puts back the files the run
changed since the target checkpoint, and cuts the lead's conversation back to
before the first prompt from that checkpoint on (a ``compaction`` entry in its
transcript), so that ``coterie resume RUN_ID "..."`` goes on as if those
prompts had never been sent. The run's last request is forgotten with them.
In a team run on files, each teammate's conversation is cut back to before
the first work it began after the checkpoint, and the board's log to its
length then (:func:`conversation_marks`, recorded with each checkpoint), so
the tasks of those prompts go too.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from coterie.checkpoints.conversation import cut_team
from coterie.checkpoints.record import BadCheckpoint, Checkpoint, CheckpointLog, checkpoint_log
from coterie.checkpoints.restore import restore
from coterie.checkpoints.rewind import RewindPlan, Span, plan_rewind
from coterie.checkpoints.snapshot import changed_paths
from coterie.context import TranscriptLog
from coterie.context.transcript import prompt_status
from coterie.errors import CoterieError
from coterie.runs import (
    COMPLETED,
    find_run,
    hold_run,
    transcript_path,
    write_state,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = [
    "BadCheckpoint",
    "CheckpointRow",
    "RewindRefused",
    "RewindReport",
    "checkpoint_log",
    "cut_point",
    "list_checkpoints",
    "plan_files",
    "rewind_checkpoints",
    "rewind_files",
    "rewind_run",
]

#: The tools whose input names the file they write (what a change is credited to).
_FILE_TOOLS = {"Write": "file_path", "Edit": "file_path", "NotebookEdit": "notebook_path"}
_SHELL_TOOLS = frozenset({"Bash", "Monitor"})


class RewindRefused(CoterieError):
    """A file the rewind would put back was changed outside the run since."""


@attrs.frozen
class CheckpointRow:
    """A checkpoint as ``coterie checkpoints`` lists it."""

    n: int
    kind: str
    at: float
    text: str
    #: The paths the run changed while working on it, each with who changed it.
    changed: dict[str, list[str]]
    to: int | None = None


@attrs.frozen
class RewindReport:
    """What a rewind did."""

    to: int
    #: The rewind's own checkpoint (rewind to it to undo this one).
    checkpoint: int
    restored: tuple[str, ...]
    #: Paths changed outside the run too, put back all the same (``force``).
    overridden: tuple[str, ...]
    #: Messages dropped from the lead's conversation (None: it was left alone).
    dropped: int | None
    #: The checkpoint whose prompt the conversation was cut back to (None: not cut).
    cut_at: int | None = None
    #: The teammates whose conversations were cut back too (a stopped team run's).
    teammates: tuple[str, ...] = ()
    #: Tasks the board lost with the cut (created after that checkpoint).
    tasks_dropped: int = 0


def list_checkpoints(workdir: Path, run_id: str) -> list[CheckpointRow]:
    """The checkpoints of run *run_id* of *workdir*, oldest first."""
    run_dir = find_run(workdir, run_id)
    log = checkpoint_log(run_dir)
    points = log.checkpoints()
    calls = _tool_calls(run_dir)
    rows = []
    for i, point in enumerate(points):
        until = points[i + 1].at if i + 1 < len(points) else float("inf")
        changed: set[str] = set()
        if point.end is not None:
            changed = changed_paths(log.load(point.start), log.load(point.end))
        window = [c for c in calls if point.at <= c[0] < until]
        rows.append(
            CheckpointRow(
                point.n,
                point.kind,
                point.at,
                point.text,
                {p: _credited(p, window, workdir) for p in sorted(changed)},
                point.to,
            )
        )
    return rows


async def rewind_run(
    workdir: Path,
    run_id: str,
    to: int,
    *,
    code: bool = True,
    conversation: bool = True,
    force: bool = False,
) -> RewindReport:
    """Rewind run *run_id* of *workdir*, stopped, to checkpoint *to* (see the module
    docstring): :class:`BadCheckpoint` for a checkpoint it does not have,
    :class:`RewindRefused` for a file changed outside the run since (unless *force*)."""
    run_dir = find_run(workdir, run_id)
    with hold_run(run_dir):
        lead = transcript_path(run_dir, "lead")

        async def cut(prompt_id: str) -> int:
            with TranscriptLog.open(lead) as transcript:
                return await transcript.cut_before(prompt_id)

        async def now(job: Callable[[], None]) -> None:
            job()

        log = checkpoint_log(run_dir)
        report = await rewind_checkpoints(
            log, workdir, lead, to, code=code,
            conversation=conversation, force=force, cut=cut, blocking=now,
        )  # fmt: skip
        if conversation:
            point = next((p for p in log.checkpoints() if p.n == report.cut_at), None)
            if point is not None and point.marks is not None:
                teammates, tasks = await cut_team(run_dir, point.marks)
                report = attrs.evolve(report, teammates=teammates, tasks_dropped=tasks)
            write_state(run_dir, state=COMPLETED, request=None, result=None)
        return report


async def rewind_checkpoints(
    log: CheckpointLog,
    workdir: Path,
    lead: Path,
    to: int,
    *,
    code: bool,
    conversation: bool,
    force: bool,
    cut: Callable[[str], Awaitable[int]],
    blocking: Callable[[Callable[[], None]], Awaitable[None]],
) -> RewindReport:
    """The rewind of a run (stopped, or live between its requests) to checkpoint *to*
    of *log*: the files of *workdir* put back (with *code*), the conversation of the
    lead (its transcript at *lead*) cut back by *cut* (given the request's id; how
    many messages went), the rewind recorded as a checkpoint. *blocking* runs the
    work on files (a worker thread in a live session)."""
    points = log.checkpoints()
    if not 1 <= to <= len(points):
        have = f"1 to {len(points)}" if points else "none"
        raise BadCheckpoint(f"run {log.run_dir.name} has no checkpoint {to} (it has {have})")
    point = cut_point(lead, points, to) if conversation else None
    done: list[tuple[Checkpoint, RewindPlan]] = []

    def files() -> None:
        spans, plan = plan_files(log, workdir, to, refuse=code and not force)
        rewind = log.begin(workdir, request="", text=f"rewind to {to}", kind="rewind", to=to)
        if code:
            restore(workdir, spans[to - 1].start, plan.restore, log.store)
        done.append((rewind, plan))

    await blocking(files)
    rewind, plan = done[0]
    dropped = None
    if conversation:
        dropped = await cut(point.request) if point is not None else 0
    await blocking(lambda: log.end(workdir, rewind.n))
    return RewindReport(
        to,
        rewind.n,
        tuple(sorted(plan.restore)) if code else (),
        tuple(sorted(plan.conflicts)) if code else (),
        dropped,
        point.n if point is not None else None,
    )


def plan_files(
    log: CheckpointLog, workdir: Path, to: int, *, refuse: bool = True
) -> tuple[list[Span], RewindPlan]:
    """The snapshots of *log*'s checkpoints and the plan of putting *workdir*'s files
    back to checkpoint *to* (1-based); with *refuse*, :class:`RewindRefused` when a
    file to put back was changed outside the run since."""
    points = log.checkpoints()
    spans = [Span(log.load(p.start), log.load(p.end) if p.end else None) for p in points]
    plan = plan_rewind(spans, log.snapshot_now(workdir), to - 1)
    if refuse and plan.conflicts:
        first = sorted(plan.conflicts)[0]
        more = f" (and {len(plan.conflicts) - 1} more)" if len(plan.conflicts) > 1 else ""
        raise RewindRefused(
            f"{first}{more} was changed outside the run after checkpoint {to}; rewinding"
            " would lose that change (--force to rewind it all the same)"
        )
    return spans, plan


def rewind_files(log: CheckpointLog, workdir: Path, to: int, *, dry_run: bool = False) -> list[str]:
    """Put *workdir*'s files back to checkpoint *to* of *log* (a live run's, between
    its requests: the Agent SDK's ``rewind_files``), recorded as a checkpoint of its
    own; the paths put back (with *dry_run*, those that would be). Refuses as
    :func:`rewind_run` does."""
    spans, plan = plan_files(log, workdir, to)
    if not dry_run:
        point = log.begin(workdir, request="", text=f"rewind to {to}", kind="rewind", to=to)
        restore(workdir, spans[to - 1].start, plan.restore, log.store)
        log.end(workdir, point.n)
    return sorted(plan.restore)


def cut_point(transcript: Path, points: list[Checkpoint], to: int) -> Checkpoint | None:
    """The prompt from checkpoint *to* on whose start the conversation of the log at
    *transcript* (the lead's) is cut back to: the first still in it (those an
    earlier rewind cut are passed over); None if none is. :class:`BadCheckpoint`
    when it cannot be cut there exactly (a summary replaced a prompt, or the prompt
    was not the lead's)."""
    for point in points:
        if point.n < to or point.kind != "prompt" or not point.request:
            continue
        status = prompt_status(transcript, point.request)
        if status == "present":
            return point
        if status != "cut":
            why = "a summary replaced it" if status == "gone" else "it was not the lead's"
            raise BadCheckpoint(
                f"the conversation from checkpoint {point.n} on cannot be cut back exactly"
                f" ({why}): rewind the files only (--code)"
            )
    return None


def _tool_calls(run_dir: Path) -> list[tuple[float, str, str, dict[str, Any]]]:
    """(time, actor, tool, input) of every tool call the run's events record."""
    calls = []
    with contextlib.suppress(OSError):
        for line in (run_dir / "events.jsonl").read_text().splitlines():
            with contextlib.suppress(ValueError):
                event = json.loads(line)
                data = event.get("data", event)
                if event.get("type") == "agent.tool_call" and isinstance(data, dict):
                    raw = data.get("input")
                    input: dict[str, Any] = raw if isinstance(raw, dict) else {}
                    actor = str(data.get("actor", ""))
                    calls.append((float(event.get("ts", 0.0)), actor, str(data.get("name")), input))
    return calls


def _credited(
    path: str, calls: list[tuple[float, str, str, dict[str, Any]]], workdir: Path
) -> list[str]:
    """Who changed *path*: the agents whose file tools named it, else those that ran
    shell commands meanwhile (a command's files are not named), else nobody known."""
    named = sorted(
        {
            actor
            for _, actor, tool, input in calls
            if tool in _FILE_TOOLS and _same_file(input.get(_FILE_TOOLS[tool]), path, workdir)
        }
    )
    if named:
        return named
    return sorted({actor for _, actor, tool, _ in calls if tool in _SHELL_TOOLS})


def _same_file(raw: Any, path: str, workdir: Path) -> bool:
    if not isinstance(raw, str):
        return False
    given = Path(raw)
    return (given if given.is_absolute() else workdir / given) == workdir / path
