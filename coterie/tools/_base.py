"""The tool interface: what the agent loop calls, and what a tool may use.

A tool never raises for a problem the model caused (bad input, a missing
file, a failing command): it returns a :class:`ToolResult` with
``is_error=True`` and a message the model can act on. Exceptions are for bugs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import attrs

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    from coterie.events import EventLog
    from coterie.tools.team import TeamContext


@attrs.frozen
class ToolResult:
    """What goes back to the model in a ``tool_result`` block."""

    content: str
    is_error: bool = False


@attrs.frozen
class FileStamp:
    """What a Read saw of a file, to refuse a Write/Edit if it changed since."""

    mtime_ns: int
    size: int


@attrs.define
class ToolContext:
    """Per-agent state the tools share: the workspace and what was read."""

    workspace: Path
    extra_dirs: list[Path] = attrs.field(factory=list)
    agent: str = "lead"
    events: EventLog | None = None
    # Resolved path -> stamp at the agent's last Read (or its own last Write).
    read_files: dict[Path, FileStamp] = attrs.field(factory=dict)
    todos: list[dict[str, Any]] = attrs.field(factory=list)
    turns_since_todo_update: int = 0
    # Set from the permission policy (``policy.read_denied``) so that Glob and
    # Grep leave out files a Read deny rule covers, as Claude Code does.
    read_denied: Callable[[Path], bool] | None = None
    #: Starts a subagent: (description, prompt, subagent_type) -> its final text.
    #: Set by the runtime; None where subagents are not allowed (nesting limit).
    subagents: Callable[[str, str, str], Awaitable[ToolResult]] | None = None
    # The board and mailboxes of a team run, for the team tools; None for a solo agent.
    team: TeamContext | None = None


class Tool(Protocol):
    """A tool the model can call, named and shaped as in Claude Code."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult: ...
