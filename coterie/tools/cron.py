"""CronCreate, CronList, CronDelete: prompts scheduled on five-field cron times, as in
Claude Code.

The jobs live in the run directory (:mod:`coterie.tools.cronbook`); the
scheduler actor fires a due job as a prompt to the lead, between the lead's
other requests, while the run is alive: a conversation (``coterie``, the
interactive session, and its resumes) or a ``--loop`` run. A headless
``-p`` run ends when its prompt is answered, as Claude Code's does, so its
jobs do not fire in it; the result of CronCreate says so, and the jobs stay
with the run (``coterie resume RUN`` in a conversation fires them).

Every job is kept durably with the run whatever ``durable`` says (it
survives a kill -9 and a resume); ``durable`` is recorded and shown. Unlike
Claude Code, no job is shared between runs, and fires get no jitter.

The tools change only the run's own state (:attr:`Effect.RUN_STATE`); they
are deferred, as in Claude Code.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from typing import TYPE_CHECKING, Any

from coterie.tools._base import ToolResult
from coterie.tools.capabilities import Capabilities, Effect
from coterie.tools.cronbook import RECURRING_DAYS, load_book, save_book

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.tools._base import ToolContext
    from coterie.tools.cronbook import CronJob

__all__ = ["CronCreateTool", "CronDeleteTool", "CronListTool", "fires_in_run", "run_directory"]

_CAPS = Capabilities(Effect.RUN_STATE, deferred=True)


def run_directory(ctx: ToolContext) -> Path | None:
    """The run directory of the agent of *ctx* (the parent of its process-group
    records); None where the agent has no run."""
    return None if ctx.process_groups is None else ctx.process_groups.parent


def fires_in_run(run_dir: Path) -> bool:
    """Whether the run stays alive to fire jobs: a conversation, or a ``--loop``
    (the runs that have the scheduler), read from the run's ``config.json``."""
    try:
        config = json.loads((run_dir / "config.json").read_text())
    except (OSError, ValueError):
        return False
    return bool(config.get("conversation") or config.get("loop"))


def _when(instant: float) -> str:
    return dt.datetime.fromtimestamp(instant).strftime("%Y-%m-%d %H:%M")


def _no_run(name: str) -> ToolResult:
    return ToolResult(f"{name} needs a run to keep jobs in; this agent has none.", is_error=True)


_CREATE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "cron": {
            "type": "string",
            "description": "Five fields in local time: minute hour day-of-month month"
            ' day-of-week ("*/10 * * * *": every ten minutes)',
        },
        "prompt": {"type": "string", "description": "The prompt to run when it fires"},
        "recurring": {
            "type": "boolean",
            "description": "true (default): at every matching time; false: once, then deleted",
        },
        "durable": {
            "type": "boolean",
            "description": "Recorded; coterie keeps every job with the run either way",
        },
    },
    "required": ["cron", "prompt"],
    "additionalProperties": False,
}


class CronCreateTool:
    """Schedules a prompt on a cron expression (recurring or one-shot)."""

    name = "CronCreate"
    description = (
        "Schedule a prompt to run later, once or repeatedly, on a standard five-field cron"
        " expression in the user's local time (minute hour day-of-month month day-of-week)."
        " recurring=false fires once and deletes the job; recurring jobs stop after"
        f" {RECURRING_DAYS} days. A job fires between your other work, only while the session"
        " runs; a headless run ends when its prompt is answered. Prefer minutes other than"
        " :00 and :30 when the time is approximate. CronList shows jobs, CronDelete removes one."
    )
    input_schema = _CREATE_SCHEMA
    capabilities = _CAPS

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Add the job; the result names its id and next fire, and whether this run fires it."""
        run_dir = run_directory(ctx)
        if run_dir is None:
            return _no_run(self.name)
        recurring = bool(input.get("recurring", True))
        durable = bool(input.get("durable", False))
        try:
            book, job = load_book(run_dir).add(
                str(input["cron"]),
                str(input["prompt"]),
                recurring=recurring,
                durable=durable,
                now=time.time(),
                agent=ctx.agent,
            )
        except ValueError as exc:
            return ToolResult(f"Invalid cron job: {exc}.", is_error=True)
        save_book(run_dir, book)
        kind = "recurring job" if recurring else "one-shot job"
        lines = [f"Scheduled {kind} {job.id} ({job.cron}). Next run: {_when(job.next_fire)}."]
        if recurring:
            lines.append(f"It expires after {RECURRING_DAYS} days; CronDelete {job.id} ends it.")
        else:
            lines.append("It fires once, then is deleted.")
        if fires_in_run(run_dir):
            lines.append("Kept with the run: it survives a resume.")
        else:
            lines.append(
                "This run is headless and ends when this prompt is answered, so the job will"
                " not fire in it; it stays with the run and fires if the run is resumed as a"
                " conversation."
            )
        return ToolResult(" ".join(lines))


_LIST_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
_DELETE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"id": {"type": "string", "description": "The job's id"}},
    "required": ["id"],
    "additionalProperties": False,
}


def _line(job: CronJob) -> str:
    kind = "recurring" if job.recurring else "one-shot"
    durable = ", durable" if job.durable else ""
    return f"{job.id} - {job.cron} ({kind}{durable}), next run {_when(job.next_fire)}: {job.prompt}"


class CronListTool:
    """Lists the run's scheduled jobs."""

    name = "CronList"
    description = "List the scheduled cron jobs of this session: id, schedule, next run, prompt."
    input_schema = _LIST_SCHEMA
    capabilities = Capabilities(Effect.READ_ONLY, deferred=True)

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """One job a line, or that there are none."""
        run_dir = run_directory(ctx)
        if run_dir is None:
            return _no_run(self.name)
        jobs = load_book(run_dir).jobs
        if not jobs:
            return ToolResult("No scheduled jobs.")
        return ToolResult("\n".join(_line(job) for job in jobs))


class CronDeleteTool:
    """Deletes a scheduled job by id."""

    name = "CronDelete"
    description = "Cancel a scheduled cron job by the id CronCreate returned (CronList shows them)."
    input_schema = _DELETE_SCHEMA
    capabilities = _CAPS

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Delete it; an unknown id is an error naming it."""
        run_dir = run_directory(ctx)
        if run_dir is None:
            return _no_run(self.name)
        job_id = str(input["id"])
        book = load_book(run_dir).delete(job_id)
        if book is None:
            return ToolResult(f"No scheduled job with id {job_id!r}.", is_error=True)
        save_book(run_dir, book)
        return ToolResult(f"Deleted job {job_id}.")
