"""Read, Write and Edit, with Claude Code's names, schemas and rules.

Every path goes through the sandbox first and the tools then work on the
resolved path. A Read records a :class:`FileStamp`; Write and Edit on an
existing file require that stamp and refuse if the file changed since, so an
agent never overwrites what it has not seen. Blocking file work runs in a
worker thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import trio

from coterie.tools._base import ToolResult
from coterie.tools._fileio import (
    BINARY_SNIFF_BYTES,
    atomic_write,
    check_fresh,
    is_binary,
    stamp_of,
)
from coterie.tools.capabilities import Access, Capabilities, Effect, PathInput
from coterie.tools.sandbox import SandboxViolation, sandboxed_path

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from coterie.tools._base import ToolContext

__all__ = ["EditTool", "ReadTool", "WriteTool", "number_lines"]

DEFAULT_READ_LINES = 2000
MAX_LINE_CHARS = 2000
# Past this the model should page with offset/limit instead of flooding its context.
MAX_READ_CHARS = 256_000
_SNIPPET_CONTEXT = 3

_READ_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file_path": {"type": "string", "description": "The file to read"},
        "offset": {
            "type": "integer",
            "minimum": 0,
            "description": "The line number to start reading from (1-based)",
        },
        "limit": {"type": "integer", "minimum": 1, "description": "How many lines to read"},
    },
    "required": ["file_path"],
    "additionalProperties": False,
}

_WRITE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file_path": {"type": "string", "description": "The file to write"},
        "content": {"type": "string", "description": "The whole new content"},
    },
    "required": ["file_path", "content"],
    "additionalProperties": False,
}

_EDIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file_path": {"type": "string", "description": "The file to modify"},
        "old_string": {"type": "string", "description": "The text to replace"},
        "new_string": {"type": "string", "description": "The text to replace it with"},
        "replace_all": {
            "type": "boolean",
            "description": "Replace every occurrence of old_string (default false)",
        },
    },
    "required": ["file_path", "old_string", "new_string"],
    "additionalProperties": False,
}


def number_lines(lines: list[str], first: int) -> str:
    """``cat -n`` style: the number right-aligned in six columns, a tab, the line."""
    out = []
    for n, line in enumerate(lines, start=first):
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f"... [line truncated, {len(line)} characters]"
        out.append(f"{n:>6}\t{line}")
    return "\n".join(out)


async def _on_file(
    verb: str, raw: str, ctx: ToolContext, work: Callable[[Path], ToolResult]
) -> ToolResult:
    """Resolve *raw* inside the sandbox and run ``work(path)`` in a worker thread.

    Permission problems and full disks come back as error results: they are
    the model's to know about, not bugs.
    """
    try:
        path = sandboxed_path(raw, ctx)
    except SandboxViolation as exc:
        return ToolResult(str(exc), is_error=True)
    try:
        return await trio.to_thread.run_sync(work, path)
    except OSError as exc:
        return ToolResult(f"Cannot {verb} {path}: {exc.strerror or exc}", is_error=True)


class ReadTool:
    """Reads a text file with numbered lines and remembers that it was read."""

    name = "Read"
    description = (
        "Reads a text file from the workspace. file_path may be absolute or relative to the"
        " workspace. By default up to 2000 lines are read from the start; use offset (the"
        " 1-based line to start at) and limit for long files. Lines are numbered like"
        " `cat -n`; lines longer than 2000 characters are truncated. A file must be read"
        " before it can be changed with Write or Edit. Directories and binary files cannot"
        " be read: use Glob, Grep or Bash `ls` for those."
    )
    input_schema = _READ_SCHEMA
    capabilities = Capabilities(Effect.READ_ONLY, PathInput("file_path", Access.READ))

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Read ``file_path`` from ``offset`` for ``limit`` lines."""
        offset = max(1, int(input.get("offset") or 1))
        limit = int(input.get("limit") or DEFAULT_READ_LINES)
        return await _on_file(
            "read", input["file_path"], ctx, lambda path: self._read(path, offset, limit, ctx)
        )

    def _read(self, path: Path, offset: int, limit: int, ctx: ToolContext) -> ToolResult:
        if not path.exists():
            return ToolResult(f"File does not exist: {path}", is_error=True)
        if path.is_dir():
            return ToolResult(
                f"{path} is a directory, not a file. Use Glob or Bash `ls` to list it.",
                is_error=True,
            )
        stamp = stamp_of(path)
        data = path.read_bytes()
        if is_binary(data[:BINARY_SNIFF_BYTES]):
            return ToolResult(
                f"Cannot read {path}: it is a binary file ({len(data)} bytes).", is_error=True
            )
        text = data.decode("utf-8", errors="replace")
        ctx.read_files[path] = stamp
        if not text:
            return ToolResult(
                "<system-reminder>Warning: the file exists but its contents are empty."
                "</system-reminder>"
            )
        lines = text.split("\n")
        if text.endswith("\n"):
            lines.pop()
        lines = [line.removesuffix("\r") for line in lines]
        total = len(lines)
        if offset > total:
            return ToolResult(
                f"<system-reminder>Warning: the file has only {total} line(s), but reading"
                f" was asked to start at line {offset}.</system-reminder>"
            )
        shown = lines[offset - 1 : offset - 1 + limit]
        body = number_lines(shown, offset)
        if len(body) > MAX_READ_CHARS:
            return ToolResult(
                f"The requested part of {path} is {len(body)} characters, more than the"
                f" {MAX_READ_CHARS} a Read may return. Use offset and limit to read a"
                " smaller part, or Grep to find what you need.",
                is_error=True,
            )
        last = offset + len(shown) - 1
        if offset > 1 or last < total:
            body += f"\n\n(Showing lines {offset}-{last} of {total}; use offset to read more.)"
        return ToolResult(body)


class WriteTool:
    """Creates or overwrites a file, atomically."""

    name = "Write"
    description = (
        "Writes a file in the workspace, creating it (and missing parent directories) or"
        " overwriting it. file_path may be absolute or relative to the workspace. An existing"
        " file must have been read with Read first, and the write is refused if it changed"
        " since. Prefer Edit for changing part of an existing file."
    )
    input_schema = _WRITE_SCHEMA
    capabilities = Capabilities(Effect.WORKSPACE, PathInput("file_path", Access.WRITE))

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Write ``content`` to ``file_path``."""
        content = input["content"]
        return await _on_file(
            "write", input["file_path"], ctx, lambda path: self._write(path, content, ctx)
        )

    def _write(self, path: Path, content: str, ctx: ToolContext) -> ToolResult:
        if path.is_dir():
            return ToolResult(f"{path} is a directory; cannot write over it.", is_error=True)
        existed = path.exists()
        if existed:
            refusal = check_fresh(path, ctx, "writing")
            if refusal is not None:
                return refusal
        ctx.read_files[path] = atomic_write(path, content)
        if existed:
            return ToolResult(f"The file {path} has been updated.")
        return ToolResult(f"File created successfully at: {path}")


class EditTool:
    """Replaces an exact string in a file (once, or everywhere with replace_all)."""

    name = "Edit"
    description = (
        "Replaces old_string with new_string in a file. old_string must match the file"
        " exactly (including indentation) and occur exactly once, unless replace_all is"
        " true. The file must have been read with Read first, and the edit is refused if it"
        " changed since. An empty old_string on a file that does not exist creates it."
    )
    input_schema = _EDIT_SCHEMA
    capabilities = Capabilities(Effect.WORKSPACE, PathInput("file_path", Access.WRITE))

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Apply the replacement to ``file_path``."""
        old, new = input["old_string"], input["new_string"]
        if old == new:
            return ToolResult(
                "No changes to make: old_string and new_string are exactly the same.",
                is_error=True,
            )
        replace_all = bool(input.get("replace_all", False))
        return await _on_file(
            "edit",
            input["file_path"],
            ctx,
            lambda path: self._edit(path, old, new, replace_all, ctx),
        )

    def _edit(
        self, path: Path, old: str, new: str, replace_all: bool, ctx: ToolContext
    ) -> ToolResult:
        if not path.exists():
            if old == "":
                ctx.read_files[path] = atomic_write(path, new)
                return ToolResult(f"File created successfully at: {path}")
            return ToolResult(f"File does not exist: {path}", is_error=True)
        if path.is_dir():
            return ToolResult(f"{path} is a directory, not a file.", is_error=True)
        refusal = check_fresh(path, ctx, "editing")
        if refusal is not None:
            return refusal
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            return ToolResult(f"Cannot edit {path}: it is not UTF-8 text.", is_error=True)
        if old == "":
            if text:
                return ToolResult(
                    "old_string is empty but the file is not: give the text to replace,"
                    " or use Write to replace the whole file.",
                    is_error=True,
                )
            updated, first = new, 0
        else:
            if old not in text and "\r\n" in text:
                # Models write "\n"; a CRLF file still deserves a match.
                old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
            count = text.count(old)
            if count == 0:
                return ToolResult(
                    f"String to replace not found in file {path}.\nString: {old}", is_error=True
                )
            if count > 1 and not replace_all:
                return ToolResult(
                    f"Found {count} matches of the string to replace, but replace_all is"
                    " false. To replace every occurrence set replace_all to true; to replace"
                    " one, give more surrounding context so that it is unique.",
                    is_error=True,
                )
            first = text.index(old)
            updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
        ctx.read_files[path] = atomic_write(path, updated)
        return ToolResult(
            f"The file {path} has been updated. Here is the start of the change:\n"
            + _snippet(updated, first, new)
        )


def _snippet(text: str, start: int, new: str) -> str:
    """Numbered lines around the (first) replacement, so the model sees its result."""
    lines = text.split("\n")
    first_line = text.count("\n", 0, start)
    last_line = first_line + new.count("\n")
    lo = max(0, first_line - _SNIPPET_CONTEXT)
    hi = min(len(lines), last_line + _SNIPPET_CONTEXT + 1)
    return number_lines([line.removesuffix("\r") for line in lines[lo:hi]], lo + 1)
