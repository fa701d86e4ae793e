"""Bash: run a shell command in the workspace, Claude Code's way.

Each call is a fresh ``bash -c`` in the workspace (no shell state carries
over between calls), in its own process group, with a timeout in
milliseconds (default 120000, at most 600000). Output is standard output and
standard error interleaved, capped at 50,000 characters keeping head and
tail. Whatever the command leaves running is killed with its group when the
call ends: coterie guarantees no orphan survives, so ``run_in_background`` is
refused rather than half-supported.

When the context has an OS sandbox (``ctx.sandbox``, bubblewrap on Linux:
:mod:`coterie.tools.ossandbox`), the command runs inside it; the sandbox
itself leaves the ``excludedCommands`` out. A command that cannot be put in
the sandbox is not run at all: never silently unsandboxed.
"""

from __future__ import annotations

import os
import signal
from typing import TYPE_CHECKING, Any

import attrs
import trio

from coterie.errors import CoterieError
from coterie.tools._base import ToolResult
from coterie.tools._process import run_shell
from coterie.tools.capabilities import Capabilities, Effect
from coterie.tools.permissions.harddeny import hard_deny_reason

if TYPE_CHECKING:
    from coterie.tools._base import ToolContext

__all__ = ["DEFAULT_TIMEOUT_MS", "MAX_OUTPUT_CHARS", "MAX_TIMEOUT_MS", "BashTool"]

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
MAX_OUTPUT_CHARS = 50_000

# Pagers and prompts would wait forever on a pipe with no terminal behind it.
_QUIET_ENV = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "TERM": "dumb",
}

_BASH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "minLength": 1, "description": "The command to execute"},
        "timeout": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_TIMEOUT_MS,
            "description": f"Optional timeout in milliseconds (max {MAX_TIMEOUT_MS})",
        },
        "description": {
            "type": "string",
            "description": "A clear, concise description of what this command does in 5-10 words",
        },
        "run_in_background": {
            "type": "boolean",
            "description": "Not supported by coterie: every command runs in the foreground",
        },
    },
    "required": ["command"],
    "additionalProperties": False,
}


@attrs.define
class BashTool:
    """Runs ``bash -c COMMAND`` in the workspace; the knobs are for tests and embedders."""

    default_timeout_ms: int = DEFAULT_TIMEOUT_MS
    output_limit: int = MAX_OUTPUT_CHARS
    kill_grace: float = 1.0
    pipe_grace: float = 0.2

    name = "Bash"
    description = (
        "Executes a bash command in the workspace directory and returns its output (standard"
        " output and standard error interleaved) and exit code. Each call starts a fresh"
        " shell: cd and variables do not persist between calls. timeout is in milliseconds"
        f" (default {DEFAULT_TIMEOUT_MS}, at most {MAX_TIMEOUT_MS}); on timeout the command"
        " and everything it started are killed. Output beyond"
        f" {MAX_OUTPUT_CHARS} characters is truncated in the middle. Processes left running"
        " in the background are killed when the command ends; run_in_background is not"
        " supported. Prefer Read, Edit, Write, Glob and Grep over cat, sed, find and grep."
    )
    input_schema = _BASH_SCHEMA
    capabilities = Capabilities(Effect.EXECUTION, command="command")

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run ``command`` and report its output and exit code."""
        if input.get("run_in_background"):
            return ToolResult(
                "run_in_background is not supported: coterie kills every process a command"
                " leaves behind when the call ends. Run the command in the foreground with a"
                " suitable timeout instead.",
                is_error=True,
            )
        # The gate checks this first; repeating it here keeps the promise "no
        # rule or mode can allow it" for embedders who run tools without a gate.
        reason = hard_deny_reason(input["command"])
        if reason is not None:
            return ToolResult(
                f"Refused: this command is on coterie's hard deny list ({reason}).",
                is_error=True,
            )
        timeout_ms = int(input.get("timeout") or self.default_timeout_ms)
        timeout_ms = min(timeout_ms, MAX_TIMEOUT_MS)
        argv = ["bash", "-c", input["command"]]
        if ctx.sandbox is not None:
            try:
                # Wrapping may look through the workspace for Read-denied files.
                argv = await trio.to_thread.run_sync(ctx.sandbox.wrap, argv, ctx)
            except CoterieError as exc:
                return ToolResult(
                    f"Refused: the OS sandbox cannot run this command: {exc}", is_error=True
                )
        outcome = await run_shell(
            input["command"],
            argv=argv,
            cwd=ctx.workspace,
            time_limit=timeout_ms / 1000,
            output_limit=self.output_limit,
            kill_grace=self.kill_grace,
            pipe_grace=self.pipe_grace,
            env={**os.environ, **ctx.env, **_QUIET_ENV},
            records=ctx.process_groups,
        )
        output = outcome.output.rstrip("\n")
        if outcome.timed_out:
            text = (
                f"Command timed out after {timeout_ms} ms; it was killed along with every"
                " process it started."
            )
            return ToolResult(f"{output}\n\n{text}" if output else text, is_error=True)
        code = outcome.exit_code
        if code is not None and code < 0:
            status = f"Killed by signal {_signal_name(-code)}"
        else:
            status = f"Exit code: {code}"
        body = output if output else "(no output)"
        return ToolResult(f"{body}\n\n{status}", is_error=code != 0)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
