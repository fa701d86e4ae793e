"""How the file tools show lines: numbered as Claude Code's Read numbers them, long
lines cut, edit snippets; and the arithmetic of a Read's offset and limit."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "DEFAULT_READ_LINES",
    "MAX_LINE_CHARS",
    "number_lines",
    "numbered",
    "read_window",
    "snippet",
    "window_note",
]

MAX_LINE_CHARS = 2000
DEFAULT_READ_LINES = 2000
_SNIPPET_CONTEXT = 3


def read_window(offset: object, limit: object) -> tuple[int, int]:
    """The first line (1-based) and the count of lines a Read of *offset* and *limit*
    shows: from line 1 (an offset of 0 or none is line 1), 2000 lines unless told."""
    first = offset if isinstance(offset, int) and not isinstance(offset, bool) else 1
    count = limit if isinstance(limit, int) and not isinstance(limit, bool) else 0
    return max(1, first), count if count > 0 else DEFAULT_READ_LINES


def window_note(first: int, shown: int, total: int | None, size: int) -> str:
    """What a Read adds after lines *first* .. *first* + *shown* - 1 of a *total*-line
    (*size*-byte) file when it did not show all of it; empty when it did."""
    last = first + shown - 1
    if total is None:
        return f"(Showing lines {first}-{last} of a {size}-byte file; use offset to read more.)"
    if first > 1 or last < total:
        return f"(Showing lines {first}-{last} of {total}; use offset to read more.)"
    return ""


def number_lines(lines: Sequence[str], first: int) -> str:
    """As Claude Code's Read shows lines: the number, a tab, the line (``cat -n``
    without the padding)."""
    return numbered([(line, len(line)) for line in lines], first)


def numbered(lines: Sequence[tuple[str, int]], first: int) -> str:
    """As :func:`number_lines`, for lines kept cut with their real lengths."""
    out = []
    for n, (line, length) in enumerate(lines, start=first):
        if length > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f"... [line truncated, {length} characters]"
        out.append(f"{n}\t{line}")
    return "\n".join(out)


def snippet(text: str, start: int, new: str) -> str:
    """Numbered lines around the (first) replacement, so the model sees its result."""
    lines = text.split("\n")
    first_line = text.count("\n", 0, start)
    last_line = first_line + new.count("\n")
    lo = max(0, first_line - _SNIPPET_CONTEXT)
    hi = min(len(lines), last_line + _SNIPPET_CONTEXT + 1)
    return number_lines([line.removesuffix("\r") for line in lines[lo:hi]], lo + 1)
