"""The tools an ``agent`` hook's verifier may use: Read, Grep and Glob, nothing else.

The one place this package reaches for :mod:`coterie.tools` (imported when
the run builds its :class:`ReadOnlyTools`, never at import time: the tools
import the hooks). The verifier is a subagent of the hook, not of the user:
it gets no gate to ask, so its reach is checked here, fail-closed: a path
outside the workspace (and the run's additional directories; the file tools
refuse those too), or one a Read deny rule covers (which only the gate would
refuse), is refused before the tool runs; Glob and Grep leave out the files a
deny rule covers, as they do for every agent. The tools run without hooks (a
hook's verifier does not fire hooks) and write nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from coterie.tools import ToolContext, ToolRegistry

__all__ = ["ReadOnlyTools"]

#: The input fields of Read, Grep and Glob that name a path.
_PATH_FIELDS = ("file_path", "path")


@attrs.frozen
class ReadOnlyTools:
    """Read, Grep and Glob over *workspace* (and *extra_dirs*), as a hook's verifier
    uses them (:class:`~coterie.hooks.judge.HookTools`)."""

    registry: ToolRegistry
    context: ToolContext
    roots: tuple[Path, ...]

    @classmethod
    def of(
        cls,
        workspace: Path,
        extra_dirs: Sequence[Path] = (),
        read_denied: Callable[[Path], bool] | None = None,
    ) -> ReadOnlyTools:
        """The tools of a run in *workspace*; *read_denied* is the policy's Read deny test."""
        from coterie.tools import GlobTool, GrepTool, ReadTool, ToolContext, ToolRegistry

        registry = ToolRegistry.of([ReadTool(), GrepTool(), GlobTool()])
        context = ToolContext(
            workspace=workspace,
            extra_dirs=list(extra_dirs),
            agent="hook-agent",
            read_denied=read_denied,
        )
        roots = tuple(Path(os.path.realpath(p)) for p in (workspace, *extra_dirs))
        return cls(registry, context, roots)

    def schemas(self) -> list[dict[str, Any]]:
        """The three tools' definitions (none deferred)."""
        return [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in self.registry
        ]

    async def run(self, name: str, input: Any) -> tuple[str, bool]:
        """Run *name* on *input* if every path it names is within reach."""
        from coterie.tools import execute_tool_call

        if name not in self.registry.names():
            return f"No such tool: {name!r}. Available: Read, Grep, Glob.", True
        if isinstance(input, dict):
            for field in _PATH_FIELDS:
                value = input.get(field)
                if isinstance(value, str) and not self._within(value):
                    return f"{value} is outside what a hook's verifier may read.", True
        result = await execute_tool_call(self.registry, None, name, input, self.context)
        return result.content, result.is_error

    def _within(self, value: str) -> bool:
        path = Path(value).expanduser()
        if not path.is_absolute():
            path = self.roots[0] / path
        real = Path(os.path.realpath(path))
        if not any(real == root or real.is_relative_to(root) for root in self.roots):
            return False
        denied = self.context.read_denied
        return denied is None or not denied(real)
