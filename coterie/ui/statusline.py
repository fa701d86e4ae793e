"""The status line: a command whose output the interactive session shows under its prompt.

Claude Code's ``statusLine`` setting, ``{"type": "command", "command": "...",
"padding": N}``: the command (run by ``sh -c`` in the workspace) gets the
session as JSON on its standard input, in Claude Code's shape
(:func:`status_payload`), and what it prints is shown under the prompt,
ANSI colours kept (Claude Code 2.1 shows every line it prints, each indented).

This module owns the setting's shape (:func:`parse_status_line`, which the
settings loader calls), the payload, what is shown of the output
(:func:`shown_lines`), and running the command (:func:`run_status_line`):
through :func:`coterie.processes.open_group` (recorded in the run's
``procgroups/`` before it runs, its whole group ended when it is done or
its time is up). A command that exits non-zero shows nothing, as in Claude
Code (measured); so does one that times out, cannot start or prints
nothing. It is code the settings name, so a project's ``statusLine`` is
only honoured once the workspace is trusted (the settings loader leaves it
out otherwise, as it does ``env``).

The setting is ``{"type": "command", "command": str, "padding": int}``
(``padding`` optional, 0 or more). The payload has the keys Claude Code 2.1
gives its status line command (measured): ``session_id``,
``transcript_path``, ``cwd``, ``model`` (``id``, ``display_name``),
``workspace`` (``current_dir``, ``project_dir``, ``added_dirs``),
``version``, ``output_style`` (``name``), ``cost`` (``total_cost_usd``,
``total_duration_ms``, ``total_api_duration_ms``, ``total_lines_added``,
``total_lines_removed``), ``context_window`` (``total_input_tokens``,
``total_output_tokens``, ``context_window_size``, ``current_usage``,
``used_percentage``, ``remaining_percentage``) and ``exceeds_200k_tokens``.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
from typing import TYPE_CHECKING, Any, Final

import attrs
import trio

from coterie.errors import CoterieError
from coterie.processes import open_group

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

__all__ = [
    "MAX_LINES",
    "TIMEOUT",
    "StatusLineConfig",
    "StatusLineError",
    "display_name",
    "parse_status_line",
    "run_status_line",
    "shown_lines",
    "status_payload",
]

#: Seconds a status line command may take (coterie's own bound).
TIMEOUT: Final = 5.0
#: Lines of output shown at most (coterie's own bound: a runaway command must
#: not fill the screen; Claude Code's, if any, was not measured).
MAX_LINES: Final = 8
#: Characters of one line shown at most (the same kind of bound).
MAX_WIDTH: Final = 1000
#: Claude Code indents a status line by two columns with padding 0 (measured).
_INDENT: Final = 2
#: Control characters other than the escape that starts a colour (dropped).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f]")


class StatusLineError(CoterieError, ValueError):
    """A ``statusLine`` setting of the wrong shape."""


@attrs.frozen
class StatusLineConfig:
    """A ``statusLine`` setting: the command to run, and the columns before its text."""

    command: str
    padding: int = 0
    #: The settings file it came from.
    source: str = ""
    #: Seconds the command may take before its group is ended (and nothing shown).
    timeout: float = TIMEOUT


def parse_status_line(value: object, source: str = "settings") -> StatusLineConfig:
    """The ``statusLine`` setting *value* of the file *source*; a
    :class:`StatusLineError` naming it when its shape is wrong."""
    if not isinstance(value, dict):
        raise StatusLineError(f"{source}: 'statusLine' must be an object")
    if value.get("type") != "command":
        raise StatusLineError(f'{source}: statusLine.type must be "command"')
    command = value.get("command")
    if not isinstance(command, str) or not command.strip():
        raise StatusLineError(f"{source}: statusLine.command must be a command line")
    padding = value.get("padding", 0)
    if isinstance(padding, bool) or not isinstance(padding, int) or padding < 0:
        raise StatusLineError(f"{source}: statusLine.padding must be a whole number, 0 or more")
    return StatusLineConfig(command, padding, source)


def status_payload(
    *,
    session_id: str,
    transcript_path: Path | None,
    cwd: Path,
    project_dir: Path,
    model_id: str,
    version: str,
    added_dirs: Sequence[Path] = (),
    output_style: str = "default",
    cost_usd: float = 0.0,
    duration_ms: int = 0,
    api_duration_ms: int = 0,
    input_tokens: int = 0,
    output_tokens: int = 0,
    context_window: int = 200_000,
    current_usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    """The JSON a status line command reads, in Claude Code's shape (see the module)."""
    usage = current_usage or {}
    used = sum(usage.get(k, 0) for k in _CONTEXT_KEYS)
    percent = min(100, round(100 * used / context_window)) if context_window > 0 else 0
    return {
        "session_id": session_id,
        "transcript_path": str(transcript_path) if transcript_path is not None else "",
        "cwd": str(cwd),
        "model": {"id": model_id, "display_name": display_name(model_id)},
        "workspace": {
            "current_dir": str(cwd),
            "project_dir": str(project_dir),
            "added_dirs": [str(d) for d in added_dirs],
        },
        "version": version,
        "output_style": {"name": output_style},
        "cost": {
            "total_cost_usd": cost_usd,
            "total_duration_ms": duration_ms,
            "total_api_duration_ms": api_duration_ms,
            "total_lines_added": 0,
            "total_lines_removed": 0,
        },
        "context_window": {
            "total_input_tokens": input_tokens,
            "total_output_tokens": output_tokens,
            "context_window_size": context_window,
            "current_usage": {k: usage.get(k, 0) for k in (*_CONTEXT_KEYS, "output_tokens")},
            "used_percentage": percent,
            "remaining_percentage": 100 - percent,
        },
        "exceeds_200k_tokens": used > 200_000,
    }


_CONTEXT_KEYS: Final = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def display_name(model_id: str) -> str:
    """A model's name as people say it: ``claude-opus-5-5`` is ``Opus 5.5``; a name
    that is not ``claude-<family>-<version>`` stays as it is."""
    match = re.fullmatch(r"claude-([a-z]+)-(\d+)(?:-(\d{1,2}))?(?:-\d{8})?", model_id)
    if match is None:
        return model_id
    family, major, minor = match.groups()
    return f"{family.capitalize()} {major}{'.' + minor if minor else ''}"


def shown_lines(stdout: str, padding: int = 0) -> tuple[str, ...]:
    """What is shown of a status line command's *stdout*: its lines (colours kept,
    other control characters dropped, trailing blanks and empty lines at the end
    left out, a tab a space), each indented by two columns and *padding* more, at most
    :data:`MAX_LINES` of at most :data:`MAX_WIDTH` characters."""
    lines = [
        _CONTROL.sub("", line.replace("\t", " ")).rstrip()[:MAX_WIDTH]
        for line in stdout.splitlines()
    ]
    while lines and not lines[-1]:
        lines.pop()
    indent = " " * (_INDENT + padding)
    return tuple(f"{indent}{line}" if line else "" for line in lines[:MAX_LINES])


#: Bytes of its output read at most (the rest is dropped).
OUTPUT_LIMIT: Final = 64 * 1024
#: Seconds between SIGTERM and SIGKILL when its group is ended.
_GRACE: Final = 0.5
#: Seconds its output may stay open once it has exited (a background child's).
_PIPE_GRACE: Final = 0.2


async def run_status_line(
    config: StatusLineConfig,
    payload: Mapping[str, Any],
    *,
    cwd: Path,
    records: Path | None,
    env: Mapping[str, str] | None = None,
) -> tuple[str, ...]:
    """The lines to show under the prompt (:func:`~coterie.statusline.shown_lines`),
    or none when the command failed, timed out or could not start."""
    data = json.dumps(dict(payload)).encode()
    out = bytearray()
    finished = False
    try:
        async with open_group(
            ["sh", "-c", config.command],
            cwd=cwd,
            records=records,
            env=env,
            stdin=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            grace=_GRACE,
        ) as proc:
            assert proc.stdin is not None
            assert proc.stdout is not None
            stdin, stdout = proc.stdin, proc.stdout

            async def feed() -> None:
                with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                    await stdin.send_all(data)
                await stdin.aclose()

            drained = trio.Event()

            async def drain() -> None:
                try:
                    while chunk := await stdout.receive_some(65536):
                        out.extend(chunk[: max(0, OUTPUT_LIMIT - len(out))])
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    pass
                finally:
                    drained.set()

            with trio.move_on_after(config.timeout):
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(feed)
                    nursery.start_soon(drain)
                    await proc.wait()
                    # Something it left in the background may hold its output open.
                    with trio.move_on_after(_PIPE_GRACE):
                        await drained.wait()
                    nursery.cancel_scope.cancel()
                finished = True
    except OSError:  # it could not start, or its group could not be recorded
        return ()
    if not finished or proc.returncode != 0:
        return ()
    return shown_lines(out.decode("utf-8", errors="replace"), config.padding)
