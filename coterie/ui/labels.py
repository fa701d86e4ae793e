"""The one-line label of a tool call (``Bash(make test)``), shared by the console
view, its live line and the team view, so that they name a call alike."""

from __future__ import annotations

from typing import Any

__all__ = ["tool_label"]


def tool_label(name: str, data: dict[str, Any]) -> str:
    """A one-line label for a tool call, as Claude Code shows it."""
    for key in (
        "command",
        "file_path",
        "pattern",
        "query",
        "description",
        "subject",
        "to",
        "title",
        "name",
    ):
        if isinstance(data.get(key), str):
            text = data[key].splitlines()[0] if data[key] else ""
            return f"{name}({text[:100]})"
    return name
