"""Bash: run a shell command in the workspace, Claude Code's way.

Each call is a fresh ``bash -c``, in its own process group, with a timeout in
milliseconds (default 120000, at most 600000). Output is standard output and
standard error interleaved, capped at 50,000 characters keeping head and
tail. Whatever the command leaves running is killed with its group when the
call ends: no orphan survives a call.

With ``run_in_background`` the command is not the call's but the run's: it
is handed to ``ctx.background`` (:mod:`coterie.runtime.background` owns it:
recorded, its output in a file under the run directory, ended with the run)
and the call returns at once with its id and output file. The permission
checks are the same as for a foreground command (the gate sees the same
input); the directory it starts in is the agent's, and it reports none back.

The working directory persists between calls, as in Claude Code (models rely
on it: ``cd sub`` then ``make``); variables and functions do not. The shell
reports its directory when it exits (an ``EXIT`` trap printing a marker with a
token fresh for each call, taken off the output); the next call starts there
if it is still a directory inside the workspace or an additional directory,
else in the workspace, and the model is told the directory was reset. A
command that ends without reporting (killed, timed out, ``exec``) leaves the
directory as it was. The permission checks take a command's relative paths
against the same directory (``ToolContext.shell_cwd``).

When the context has an OS sandbox (``ctx.sandbox``, bubblewrap on Linux:
:mod:`coterie.tools.ossandbox`), the command runs inside it; the sandbox
itself leaves the ``excludedCommands`` out. A command that cannot be put in
the sandbox is not run at all: never silently unsandboxed.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import trio

from coterie.errors import CoterieError
from coterie.tools._base import ToolResult
from coterie.tools._process import run_shell
from coterie.tools.capabilities import Capabilities, Effect
from coterie.tools.permissions.harddeny import hard_deny_reason
from coterie.tools.sandbox import allowed_roots, check_inside

if TYPE_CHECKING:
    from coterie.tools._base import ToolContext

__all__ = [
    "command_output",
    "DEFAULT_TIMEOUT_MS",
    "MAX_OUTPUT_CHARS",
    "MAX_TIMEOUT_MS",
    "BashTool",
    "shell_argv",
    "start_dir",
]

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
            "type": "number",
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
            "description": (
                "Run it in the background: the call returns at once with the task's id and"
                " output file, and you are told when it finishes"
            ),
        },
        "dangerouslyDisableSandbox": {
            "type": "boolean",
            "description": (
                "Run outside the OS sandbox (only where the settings allow it, and asked"
                " about as any command outside it is); only when the sandbox stops a"
                " command that must run"
            ),
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
        " output and standard error interleaved) and exit code. The working directory"
        " persists between calls (a cd stays in effect, within the workspace and the"
        " additional directories); variables and functions do not. timeout is in milliseconds"
        f" (default {DEFAULT_TIMEOUT_MS}, at most {MAX_TIMEOUT_MS}); on timeout the command"
        " and everything it started are killed. Output beyond"
        f" {MAX_OUTPUT_CHARS} characters is truncated in the middle. Processes a command"
        " leaves running (`&`) are killed when it ends: for a long-running command (a server,"
        " a watcher, a long build) set run_in_background instead, which returns at once with"
        " an id and an output file to Read; you are told when it finishes, and TaskStop ends"
        " it. Prefer Read, Edit, Write, Glob and Grep over cat, sed, find and grep."
    )
    input_schema = _BASH_SCHEMA
    # Claude Code's Bash keeps 30,000 characters; a longer output goes to a file.
    capabilities = Capabilities(Effect.EXECUTION, command="command", result_chars=30_000)

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run ``command`` and report its output and exit code (or, with
        ``run_in_background``, start it under the run and report its id)."""
        if input.get("run_in_background"):
            return await _background(input, ctx)
        # The gate checks this first; repeating it here keeps the promise "no
        # rule or mode can allow it" for embedders who run tools without a gate.
        refused = _refused(input["command"])
        if refused is not None:
            return refused
        timeout_ms = max(1, round(input.get("timeout") or self.default_timeout_ms))
        timeout_ms = min(timeout_ms, MAX_TIMEOUT_MS)
        cwd, reset = start_dir(ctx)
        with _DirReport.open() as report:
            argv = ["bash", "-c", _reporting(input["command"], report.write_fd)]
            wrapped = await _sandboxed(argv, input["command"], cwd, ctx, _out_of_sandbox(input))
            if isinstance(wrapped, ToolResult):
                return wrapped
            outcome = await run_shell(
                input["command"],
                argv=wrapped,
                cwd=cwd,
                time_limit=timeout_ms / 1000,
                output_limit=self.output_limit,
                kill_grace=self.kill_grace,
                pipe_grace=self.pipe_grace,
                env=_env(ctx),
                records=ctx.process_groups,
                pass_fds=(report.write_fd,),
            )
            reported = report.received()
        output = outcome.output.rstrip("\n")
        notes = [reset] if reset else []
        if reported is not None:
            ctx.shell_cwd = reported if _admitted(reported, ctx) else None
            if ctx.shell_cwd is None and reset is None:
                notes.append(_reset_note(ctx))
        if notes:
            output = "\n".join([output, *notes]) if output else "\n".join(notes)
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
        body = output if output else NO_OUTPUT
        return ToolResult(f"{body}\n\n{status}", is_error=code != 0)


#: What a result says for a command that printed nothing.
NO_OUTPUT = "(no output)"


def command_output(result: ToolResult) -> str:
    """What the command of a Bash *result* printed (its output without the exit
    status this tool adds; empty for none): a slash command's ``!`cmd``` line
    is replaced by it."""
    body, _, _status = result.content.rpartition("\n\n")
    body = body if _status.startswith(("Exit code:", "Killed by signal")) else result.content
    return "" if body == NO_OUTPUT else body


async def shell_argv(
    command: str, ctx: ToolContext, *, unsandboxed: bool = False
) -> tuple[list[str], Path, dict[str, str]] | ToolResult:
    """How *ctx*'s agent runs *command* apart from a Bash call (a background command,
    a Monitor): its argv (in the OS sandbox if there is one, unless *unsandboxed*
    and the settings allow that), directory and environment; or the refusal the
    model gets (the hard deny list, a command the sandbox cannot run)."""
    refused = _refused(command)
    if refused is not None:
        return refused
    cwd, _ = start_dir(ctx)
    wrapped = await _sandboxed(["bash", "-c", command], command, cwd, ctx, unsandboxed)
    if isinstance(wrapped, ToolResult):
        return wrapped
    return wrapped, cwd, _env(ctx)


async def _background(input: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Start ``command`` under the run's owner of background commands; its id and file."""
    host = getattr(ctx, "background", None)
    if host is None:
        return ToolResult(
            "run_in_background is not supported here: this agent's run has no owner for"
            " background commands. Run the command in the foreground with a timeout.",
            is_error=True,
        )
    command = input["command"]
    prepared = await shell_argv(command, ctx, unsandboxed=_out_of_sandbox(input))
    if isinstance(prepared, ToolResult):
        return prepared
    argv, cwd, env = prepared
    try:
        started = await host.start(
            agent=ctx.agent,
            command=command,
            argv=argv,
            cwd=cwd,
            env=env,
            description=str(input.get("description") or command),
        )
    except (CoterieError, OSError) as exc:
        return ToolResult(f"The background command could not start: {exc}", is_error=True)
    return ToolResult(
        f"Started in the background with ID: {started.task_id}. Its output (standard output"
        f" and error) is written to {started.output}; Read that file to see what it has"
        " printed so far. You will be told when it finishes; TaskStop ends it."
    )


def _refused(command: str) -> ToolResult | None:
    reason = hard_deny_reason(command)
    if reason is None:
        return None
    return ToolResult(
        f"Refused: this command is on coterie's hard deny list ({reason}).", is_error=True
    )


def _out_of_sandbox(input: dict[str, Any]) -> bool:
    """Whether the call asks to run outside the OS sandbox (``dangerouslyDisableSandbox``)."""
    return input.get("dangerouslyDisableSandbox") is True


async def _sandboxed(
    argv: list[str], command: str, cwd: Path, ctx: ToolContext, unsandboxed: bool = False
) -> list[str] | ToolResult:
    """*argv* inside *ctx*'s OS sandbox, if it has one (not if *unsandboxed* and the
    sandbox's settings allow commands out of it); a refusal if it cannot be."""
    if ctx.sandbox is None:
        return argv
    wrap = functools.partial(ctx.sandbox.wrap, command=command, cwd=cwd, unsandboxed=unsandboxed)
    try:
        # Wrapping may look through the workspace for Read-denied files.
        return await trio.to_thread.run_sync(wrap, argv, ctx)
    except CoterieError as exc:
        return ToolResult(f"Refused: the OS sandbox cannot run this command: {exc}", is_error=True)


def _env(ctx: ToolContext) -> dict[str, str]:
    return {**os.environ, **ctx.env, **_QUIET_ENV}


def start_dir(ctx: ToolContext) -> tuple[Path, str | None]:
    """Where the next command of *ctx*'s agent starts, and a note for the model when
    its kept directory is no longer one it may work in (then: the workspace)."""
    kept = ctx.shell_cwd
    if kept is None:
        return ctx.workspace, None
    if _admitted(kept, ctx):
        return kept, None
    return ctx.workspace, _reset_note(ctx)


def _admitted(path: Path, ctx: ToolContext) -> bool:
    """Whether *path* is a directory inside the workspace or an additional directory."""
    return os.path.isdir(path) and check_inside(Path(os.path.realpath(path)), allowed_roots(ctx))


def _reset_note(ctx: ToolContext) -> str:
    return f"Shell cwd was reset to {ctx.workspace}"


def _reporting(command: str, fd: int) -> str:
    """*command*, with the shell writing its directory to *fd* when it exits (the
    exit status stays the command's: an EXIT trap does not change it)."""
    return f"trap 'pwd -P >&{fd} 2>/dev/null' EXIT\n{command}"


@attrs.define
class _DirReport:
    """The pipe a shell writes its last working directory to."""

    read_fd: int
    write_fd: int
    _open: list[int] = attrs.field(factory=list)

    @classmethod
    def open(cls) -> _DirReport:
        read_fd, write_fd = os.pipe()
        return cls(read_fd, write_fd, [read_fd, write_fd])

    def __enter__(self) -> _DirReport:
        return self

    def __exit__(self, *exc: object) -> None:
        self._close(*self._open)

    def _close(self, *fds: int) -> None:
        for fd in fds:
            if fd in self._open:  # each once: a number closed twice may be someone else's
                self._open.remove(fd)
                os.close(fd)

    def received(self) -> Path | None:
        """The directory the shell reported (its last line), or None if it did not."""
        self._close(self.write_fd)
        os.set_blocking(self.read_fd, False)
        data = b""
        with contextlib.suppress(BlockingIOError):  # a background process holds it open
            while len(data) < 65536 and (chunk := os.read(self.read_fd, 4096)):
                data += chunk
        lines = os.fsdecode(data).splitlines()
        return Path(lines[-1]) if lines and lines[-1].startswith("/") else None


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
