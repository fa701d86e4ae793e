"""How the file tools show lines: ``cat -n`` numbering, long lines cut, edit snippets."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["MAX_LINE_CHARS", "number_lines", "numbered", "snippet"]

MAX_LINE_CHARS = 2000
_SNIPPET_CONTEXT = 3


def number_lines(lines: Sequence[str], first: int) -> str:
    """``cat -n`` style: the number right-aligned in six columns, a tab, the line."""
    return numbered([(line, len(line)) for line in lines], first)


def numbered(lines: Sequence[tuple[str, int]], first: int) -> str:
    """As :func:`number_lines`, for lines kept cut with their real lengths."""
    out = []
    for n, (line, length) in enumerate(lines, start=first):
        if length > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f"... [line truncated, {length} characters]"
        out.append(f"{n:>6}\t{line}")
    return "\n".join(out)


def snippet(text: str, start: int, new: str) -> str:
    """Numbered lines around the (first) replacement, so the model sees its result."""
    lines = text.split("\n")
    first_line = text.count("\n", 0, start)
    last_line = first_line + new.count("\n")
    lo = max(0, first_line - _SNIPPET_CONTEXT)
    hi = min(len(lines), last_line + _SNIPPET_CONTEXT + 1)
    return number_lines([line.removesuffix("\r") for line in lines[lo:hi]], lo + 1)
