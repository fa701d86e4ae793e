"""Carrying out an :class:`~coterie.extensions.commands.Expansion` before its prompt is sent.

The thin layer over :mod:`~coterie.extensions.commandlines`: each shell line
runs as a Bash call of the lead's own, each ``@`` path that names a file
is read with the Read tool, and each that names a directory is listed once
a Glob call on it is let through (as Claude Code lists it: the names of its
entries), all through the lead's hooks and permission gate
(*run_tools*: :meth:`coterie.runtime.AgentSession.run_tools`), so the
command's ``allowed-tools`` (granted for these calls only) decide what runs
unasked, and the OS sandbox and the run's process owner apply as for any
Bash call. A line that fails or is not allowed stops the command: the
prompt is never sent. An ``@`` naming no file, or one the gate does not let
be read (or listed), is left as text.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from coterie.agent import RunResult
from coterie.models import Usage
from coterie.tools import ToolResult
from coterie.tools.bash import command_output

if TYPE_CHECKING:
    from collections.abc import Awaitable, Sequence
    from pathlib import Path

    from coterie.extensions.commands import Expansion

__all__ = ["Completed", "RunTools", "complete", "stopped_result"]


class RunTools(Protocol):
    """:meth:`coterie.runtime.AgentSession.run_tools`: calls run as the lead's own."""

    def __call__(
        self, calls: list[dict[str, Any]], allow: Sequence[str] = ..., by: str = ...
    ) -> Awaitable[list[dict[str, Any]]]: ...


@attrs.frozen
class Completed:
    """The prompt to send, or the one line saying why the command stopped."""

    prompt: str | None
    stopped: str | None = None


async def complete(
    expansion: Expansion,
    workdir: Path,
    run_tools: RunTools,
) -> Completed:
    """*expansion*'s prompt once its lines ran and its files were read (see the module)."""

    async def run(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        command = expansion.command
        return await run_tools(calls, command.allowed_tools, f"command /{command.name}")

    lines = expansion.shell
    outputs: list[str] = []
    if lines:
        calls = [{"name": "Bash", "input": {"command": line.command}} for line in lines]
        results = await run(calls)
        for line, result in zip(lines, results, strict=False):
            if result["is_error"]:
                return Completed(None, expansion.stopped(line, str(result["content"])))
            outputs.append(command_output(ToolResult(str(result["content"]))))
    attached: list[tuple[str, str]] = []
    listed: list[tuple[str, list[str]]] = []
    for path in expansion.files:
        target = workdir / path
        if _is_dir(target):
            glob = {"pattern": "*", "path": str(target)}
            (result,) = await run([{"name": "Glob", "input": glob}])
            names = None if result["is_error"] else _names(target)
            if names is not None:
                listed.append((path, names))
            continue
        if not _is_file(target):
            continue
        (result,) = await run([{"name": "Read", "input": {"file_path": str(target)}}])
        if not result["is_error"]:
            attached.append((path, str(result["content"])))
    return Completed(expansion.completed(outputs, attached, listed))


def stopped_result(line: str) -> dict[str, Any]:
    """The result of a run whose command stopped at a shell line (*line* says so):
    no model request was made."""
    return RunResult(line, True, "error_during_execution", 0, Usage(), 0.0, 0).to_dict()


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


def _names(path: Path) -> list[str] | None:
    """The names of the entries of the directory *path* (None: it cannot be read)."""
    try:
        return [entry.name for entry in os.scandir(path)]
    except OSError:
        return None


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # a name too long for the file system names nothing
        return False
