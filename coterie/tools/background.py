"""The tools of background work: TaskStop, Monitor, and the older BashOutput and KillShell.

A background command (Bash with ``run_in_background``, or a Monitor) is not
the tool call's: it belongs to the run, which owns its process group, its
output file and its end (:mod:`coterie.runtime.background`). The tools reach
it through ``ToolContext.background``, a :class:`BackgroundHost`; where a
context has none (an embedder running tools bare), they answer an error the
model can read.

Claude Code 2.1.332 offers ``TaskStop {task_id}`` (``shell_id`` is its older
name) and ``Monitor {command, description, timeout_ms}``. It still answers
``KillShell {shell_id}`` (as TaskStop) but no longer ``BashOutput``; coterie
offers both, for models trained on them: BashOutput gives what a background
command printed since the previous BashOutput of it (Claude Code's models now
Read the output file instead).

:func:`background_notices` is what the agent loop adds to the conversation
before its next model call: the notices of this agent's background work
(finished, stopped, lost, a Monitor's lines).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import attrs

from coterie.errors import CoterieError
from coterie.tools._base import ToolResult
from coterie.tools.backgroundhost import BackgroundHost, Started, Stopped
from coterie.tools.bash import shell_argv
from coterie.tools.capabilities import Capabilities, Effect

if TYPE_CHECKING:
    from coterie.tools._base import ToolContext

__all__ = [
    "MONITOR_DEFAULT_MS",
    "MONITOR_MAX_MS",
    "MONITOR_MIN_MS",
    "BackgroundHost",
    "BashOutputTool",
    "MonitorTool",
    "Started",
    "Stopped",
    "TaskStopTool",
    "background_notices",
]

MONITOR_MIN_MS = 1_000
MONITOR_DEFAULT_MS = 300_000
MONITOR_MAX_MS = 1_800_000


def _host(ctx: ToolContext) -> BackgroundHost | None:
    return getattr(ctx, "background", None)


_NO_HOST = ToolResult(
    "Background commands are not available here: this agent's run has no owner for them.",
    is_error=True,
)


def background_notices(ctx: ToolContext) -> list[dict[str, Any]]:
    """The notices for *ctx*'s agent, as ``text`` blocks to add to the next user message."""
    host = _host(ctx)
    if host is None:
        return []
    return [{"type": "text", "text": text} for text in host.take_notices(ctx.agent)]


async def _stop(ctx: ToolContext, task_id: object) -> ToolResult:
    host = _host(ctx)
    if host is None:
        return _NO_HOST
    if not isinstance(task_id, str) or not task_id:
        return ToolResult("Give the id of the background task to stop (task_id).", is_error=True)
    stopped = await host.stop(task_id)
    if stopped is None:
        return ToolResult(f"No background task is running with ID {task_id}.", is_error=True)
    body = {
        "message": f"Stopped background task {task_id} ({stopped.command}) and its processes.",
        "task_id": task_id,
        "task_type": "local_bash",
        "command": stopped.command,
    }
    return ToolResult(json.dumps(body))


_TASK_STOP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "task_id": {"type": "string", "description": "The id of the background task to stop"},
        "shell_id": {"type": "string", "description": "Older name of task_id"},
    },
    "additionalProperties": False,
}


@attrs.define
class TaskStopTool:
    """Stops a background command (its whole process group) by id."""

    name = "TaskStop"
    description = (
        "Stops a running background task (a Bash command started with run_in_background, or a"
        " Monitor) by its id, killing every process it started. Its output file keeps what it"
        " printed."
    )
    input_schema = _TASK_STOP_SCHEMA
    #: Its older name, still taken (Claude Code 2.1.332 takes it too): ``{shell_id}``.
    aliases = ("KillShell",)
    # It ends only a process of the run's own making: run state, never asked about.
    capabilities = Capabilities(Effect.RUN_STATE, deferred=True)

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Stop ``task_id`` (or ``shell_id``)."""
        return await _stop(ctx, input.get("task_id") or input.get("shell_id"))


_KILL_SHELL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"shell_id": {"type": "string", "description": "The background shell's id"}},
    "required": ["shell_id"],
    "additionalProperties": False,
}


_BASH_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "bash_id": {"type": "string", "description": "The background shell's id"},
        "filter": {"type": "string", "description": "Only lines matching this regex"},
    },
    "required": ["bash_id"],
    "additionalProperties": False,
}


@attrs.define
class BashOutputTool:
    """What a background command printed since the last look (coterie's, for older models)."""

    name = "BashOutput"
    description = (
        "Returns what the background shell bash_id printed since the previous BashOutput of it"
        " (filter: only the lines matching a regular expression). Reading its output file with"
        " Read works too."
    )
    input_schema = _BASH_OUTPUT_SCHEMA
    # Claude Code no longer has it: taken when a model calls it, never offered.
    capabilities = Capabilities(Effect.READ_ONLY, result_chars=30_000, offered=False)

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """The new output of ``bash_id``, filtered by ``filter``."""
        host = _host(ctx)
        if host is None:
            return _NO_HOST
        task_id = str(input.get("bash_id") or "")
        text = host.read_new(task_id)
        if text is None:
            return ToolResult(f"No background task with ID {task_id}.", is_error=True)
        pattern = input.get("filter")
        if pattern:
            try:
                regex = re.compile(str(pattern))
            except re.error as exc:
                return ToolResult(f"filter is not a valid regular expression: {exc}", is_error=True)
            text = "".join(line for line in text.splitlines(True) if regex.search(line))
        return ToolResult(text if text else "(no new output)")


_MONITOR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "Shell command whose lines are events"},
        "description": {"type": "string", "description": "What is being watched, briefly"},
        "timeout_ms": {
            "type": "number",
            "description": f"How long to watch ({MONITOR_MIN_MS}..{MONITOR_MAX_MS} ms)",
        },
        "ws": {"type": "object", "description": "Not supported by coterie"},
    },
    # Claude Code's: command is not required (it takes a ws source instead, which
    # coterie refuses); a call without a command is refused before anything runs.
    "required": ["description", "timeout_ms"],
    "additionalProperties": False,
}


@attrs.define
class MonitorTool:
    """Runs a command in the background; each line it prints wakes the agent."""

    name = "Monitor"
    description = (
        "Starts a command in the background and tells you each line it prints, as it prints"
        " it: watch a log with `tail -f app.log | grep --line-buffered ERROR`, wait for a"
        " condition with an `until ...; do sleep 2; done; echo ready` loop. Filter in the"
        " command so that only lines worth waking for are printed. It ends when the command"
        " exits, after timeout_ms (you are told), or with TaskStop; keep working meanwhile"
        " instead of sleeping. The lines go to an output file too."
    )
    input_schema = _MONITOR_SCHEMA
    capabilities = Capabilities(
        Effect.EXECUTION, command="command", result_chars=30_000, deferred=True
    )

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Start the command under the run's background owner, as a monitor."""
        host = _host(ctx)
        if host is None:
            return _NO_HOST
        if input.get("ws"):
            return ToolResult("Monitor's ws source is not supported by coterie.", is_error=True)
        command = input.get("command")
        if not isinstance(command, str) or not command.strip():
            return ToolResult("Monitor needs a command to run.", is_error=True)
        try:
            ms = int(input.get("timeout_ms") or MONITOR_DEFAULT_MS)
        except (TypeError, ValueError):
            return ToolResult("timeout_ms must be a number of milliseconds.", is_error=True)
        ms = max(MONITOR_MIN_MS, min(ms, MONITOR_MAX_MS))
        prepared = await shell_argv(command, ctx)
        if isinstance(prepared, ToolResult):
            return prepared
        argv, cwd, env = prepared
        description = str(input.get("description") or command)
        try:
            started = await host.start(
                agent=ctx.agent,
                command=command,
                argv=argv,
                cwd=cwd,
                env=env,
                description=description,
                monitor_ms=ms,
            )
        except (CoterieError, OSError) as exc:
            return ToolResult(f"The monitor could not start: {exc}", is_error=True)
        return ToolResult(
            f"Monitor started with ID: {started.task_id}, for {ms // 1000} s at most (or until"
            " the command exits; you are told either way). Each line it prints comes to you as"
            " a notice; the lines also go to"
            f" {started.output}. Go on working: do not sleep or poll. A notice is not a"
            " reply from the user. Stop it with TaskStop."
        )
