"""A slash command's shell lines and file references, found and filled in (sans-io).

As Claude Code 2.1 treats a command's body (measured against it):

- ``!`command``` where the ``!`` starts a line or follows white space is a
  shell line: it runs before the prompt is sent, and its output (standard
  output then standard error, trimmed) takes its place. ``x!`cmd```,
  ``(!`cmd`)`` and ``[!`cmd`]`` are text. A fenced code block opened by
  ````` ```! ````` runs as one command, the fences and all replaced by its
  output. Lines run inside any other fence as well (Claude Code does not
  look at fences for them).
- ``@path`` where the ``@`` starts a line or follows white space names a
  file: if it exists, the file is attached to the prompt (read as the Read
  tool reads it); if not, nothing happens. The text itself is never changed.
  Trailing punctuation (``@notes.md.``) is not part of the name. Inside a
  code span (```@x```), quotes or parentheses the ``@`` follows no white
  space, so it is text. Decorators (``@dataclass``), at-rules (``@media``),
  npm scopes (``@scope/pkg``) and mentions (``@john``) name no file in
  practice, so they stay text.

This module only finds and fills in: :func:`parse_body` splits a body into
text and :class:`ShellLine` pieces and lists its :func:`file_refs`;
:func:`fill` puts outputs back. Running the lines (through the permission
gate, under the command's ``allowed-tools``) and reading the files belong
to the run.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["Piece", "ShellLine", "file_refs", "fill", "parse_body", "shell_lines"]

#: A ```! block: its opening fence alone on a line, up to the next closing fence.
_BLOCK = re.compile(r"^```![ \t]*\n(.*?)\n?^```[ \t]*$", re.DOTALL | re.MULTILINE)
#: An inline shell line: ``!`` at a line's start or after white space.
_INLINE = re.compile(r"(?:(?<=\s)|^)!`([^`\n]+)`", re.MULTILINE)
#: A file reference: ``@`` at a line's start or after white space, then a path.
_AT = re.compile(r"(?:(?<=\s)|^)@([^\s`'\"()<>\[\]{},;]+)", re.MULTILINE)
_TRAILING = ".,:;!?"


@attrs.frozen
class ShellLine:
    """One shell line of a command: *pattern* as written, *command* to run."""

    pattern: str
    command: str


Piece = str | ShellLine


def parse_body(body: str) -> tuple[Piece, ...]:
    """*body* as text and shell lines, in order (joined, the text pieces and the
    patterns give *body* back)."""
    pieces: list[Piece] = []
    at = 0
    for block in _BLOCK.finditer(body):
        pieces += _inline(body[at : block.start()])
        command = block.group(1).strip()
        pieces.append(ShellLine(block.group(0), command) if command else block.group(0))
        at = block.end()
    pieces += _inline(body[at:])
    return tuple(p for p in pieces if p != "")


def _inline(text: str) -> list[Piece]:
    pieces: list[Piece] = []
    at = 0
    for line in _INLINE.finditer(text):
        command = line.group(1).strip()
        if not command:
            continue
        pieces += [text[at : line.start()], ShellLine(line.group(0), command)]
        at = line.end()
    pieces.append(text[at:])
    return pieces


def shell_lines(pieces: Sequence[Piece]) -> tuple[ShellLine, ...]:
    """The shell lines among *pieces*, in order."""
    return tuple(p for p in pieces if isinstance(p, ShellLine))


def file_refs(text: str) -> tuple[str, ...]:
    """The paths *text* names with ``@``, each once, in order of first mention."""
    found: dict[str, None] = {}
    for match in _AT.finditer(text):
        path = match.group(1).rstrip(_TRAILING)
        if path:
            found.setdefault(path, None)
    return tuple(found)


def fill(pieces: Sequence[Piece], outputs: Sequence[str]) -> str:
    """*pieces* with each shell line replaced by its output (*outputs* in order, one
    per :class:`ShellLine`; trimmed here)."""
    lines = shell_lines(pieces)
    if len(outputs) != len(lines):
        raise ValueError(f"{len(lines)} shell line(s), {len(outputs)} output(s)")
    given = iter(outputs)
    return "".join(next(given).strip() if isinstance(p, ShellLine) else p for p in pieces)
