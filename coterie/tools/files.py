"""Read, Write and Edit, with Claude Code's names, schemas and rules.

Every path is resolved and opened in one walk through directory descriptors
(:mod:`coterie.tools._dirfd`): checked against the sandbox component by
component, with ``O_NOFOLLOW``, so a symlink swapped in meanwhile cannot
redirect the tool; the tools then read, create and rename only relative to
the parent directory's descriptor. Only regular files are read; a Read
keeps only the lines it shows. A Read records a :class:`FileStamp`; Write
and Edit on an existing file require that stamp and refuse if the file
changed since, so an agent never overwrites what it has not seen. Blocking
file work runs in a worker thread; a cancelled Read is abandoned (its
thread stops at its next chunk).
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, Any

from coterie.tools._base import ToolResult
from coterie.tools._documents import Kind, document_kind, max_bytes, read_document
from coterie.tools._fileio import (
    BINARY_SNIFF_BYTES,
    Stopped,
    atomic_write,
    check_fresh,
    is_binary,
    open_regular,
    read_bounded,
    read_lines,
    special_file_message,
    stamp_from,
)
from coterie.tools._lines import (
    MAX_LINE_CHARS,
    number_lines,
    numbered,
    read_window,
    snippet,
    window_note,
)
from coterie.tools._onfile import Outcome, on_file
from coterie.tools.capabilities import Access, Capabilities, Effect, PathInput

if TYPE_CHECKING:
    import threading
    from pathlib import Path

    from coterie.tools._base import ToolContext
    from coterie.tools._dirfd import Target

__all__ = ["EditTool", "ReadTool", "WriteTool", "number_lines"]

#: Claude Code's cap on what one Read returns; past it the model is told to page.
MAX_READ_TOKENS = 25_000
#: The estimate of a token, in characters (what the funnel starts from).
CHARS_PER_TOKEN = 4
MAX_READ_CHARS = MAX_READ_TOKENS * CHARS_PER_TOKEN
#: What a Read with ``allow_large`` may return: a good part of a context window.
MAX_LARGE_READ_TOKENS = 100_000
MAX_LARGE_READ_CHARS = MAX_LARGE_READ_TOKENS * CHARS_PER_TOKEN
# Edit holds the whole file (twice) in memory; past this it is data, not source.
MAX_EDIT_BYTES = 32 * 1024 * 1024

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
        "pages": {
            "type": "string",
            "description": 'For a PDF: the pages to read, "3" or "1-5" (at most 20 at a time)',
        },
        "allow_large": {
            "type": "boolean",
            "description": "Read a text file (or a range of lines) over the usual size limit,"
            f" up to about {MAX_LARGE_READ_TOKENS} tokens, when all of it is really needed",
        },
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


class ReadTool:
    """Reads a text file with numbered lines and remembers that it was read."""

    name = "Read"
    description = (
        "Reads a file from the local filesystem (the workspace and the additional"
        " directories).\n\nUsage:\n"
        "- file_path may be absolute or relative to the workspace\n"
        "- By default, it reads up to 2000 lines starting from the beginning of the file\n"
        "- You can optionally specify a line offset (the 1-based line to start at) and"
        " limit, especially handy for long files; when you already know which part of the"
        " file you need, only read that part\n"
        "- Any lines longer than 2000 characters will be truncated\n"
        "- Results are returned using cat -n format, with line numbers starting at 1: each"
        " line is the line number, a tab, then the verbatim file content\n"
        f"- One read returns at most about {MAX_READ_TOKENS} tokens; for more, use offset"
        " and limit, or Grep\n"
        "- A file must be read before it can be changed with Write or Edit\n"
        "- Images (PNG, JPEG, GIF, WebP) are shown to you as pictures, scaled down if they"
        ' are large. PDFs are read as the text of their pages: pass pages ("3", "1-5",'
        " at most 20 pages a call; needed for PDFs of more than 10 pages). Jupyter notebooks"
        ' (.ipynb) are shown as their cells, each in <cell id="...">, with their outputs\n'
        "- It cannot read directories (use Glob or Bash `ls`), other binary files, pipes,"
        " sockets or devices\n"
        "- If you read a file that exists but has empty contents you will receive a system"
        " reminder warning in place of file contents."
    )
    input_schema = _READ_SCHEMA
    # A Read bounds itself (MAX_LARGE_READ_CHARS at most, the note included): never cut again.
    capabilities = Capabilities(
        Effect.READ_ONLY,
        PathInput("file_path", Access.READ),
        result_chars=MAX_LARGE_READ_CHARS + MAX_READ_CHARS,
    )

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Read ``file_path`` from ``offset`` for ``limit`` lines (a PDF's ``pages``)."""
        offset, limit = read_window(input.get("offset"), input.get("limit"))
        pages = input.get("pages")
        budget = MAX_LARGE_READ_CHARS if input.get("allow_large") is True else MAX_READ_CHARS
        return await on_file(
            "read",
            input["file_path"],
            ctx,
            lambda target, stop: self._read(target, offset, limit, pages, budget, stop),
            abandon=True,
        )

    def _read(
        self,
        target: Target,
        offset: int,
        limit: int,
        pages: str | None,
        budget: int,
        stop: threading.Event,
    ) -> Outcome:
        path = target.path
        if target.lstat is None:
            return ToolResult(f"File does not exist: {path}", is_error=True), None
        if stat.S_ISDIR(target.lstat.st_mode):
            return _is_a_directory(path), None
        try:
            fd, st = open_regular(target, "read")
        except IsADirectoryError:
            return _is_a_directory(path), None
        try:
            kind = document_kind(path)
            if kind is not None or pages is not None:
                return _read_document(target.path, kind, fd, st, pages, budget, stop)
            head = read_bounded(fd, BINARY_SNIFF_BYTES, stop)
            if is_binary(head):
                return ToolResult(
                    f"Cannot read {path}: it is a binary file ({st.st_size} bytes).",
                    is_error=True,
                ), None
            os.lseek(fd, 0, os.SEEK_SET)
            got = read_lines(fd, offset, limit, width=MAX_LINE_CHARS, budget=budget, stop=stop)
        except Stopped:
            return ToolResult("The read was cancelled.", is_error=True), None
        finally:
            os.close(fd)
        record = (path, stamp_from(st))
        if st.st_size == 0 and got.total == 0:
            return ToolResult(
                "<system-reminder>Warning: the file exists but the contents are empty."
                "</system-reminder>"
            ), record
        if not got.shown:
            total = "?" if got.total is None else str(got.total)
            return ToolResult(
                "<system-reminder>Warning: the file exists but is shorter than the provided"
                f" offset ({offset}). The file has {total} lines.</system-reminder>"
            ), record
        body = numbered(got.shown, offset)
        if got.over_budget or len(body) > budget:
            # The estimate of what was kept; past the budget reading stopped.
            tokens = -(-max(len(body), budget + 1) // CHARS_PER_TOKEN)
            more = "more than " if got.over_budget else ""
            large = "" if budget > MAX_READ_CHARS else " (or allow_large if you need all of it)"
            return ToolResult(
                f"File content ({more}{tokens} tokens) exceeds maximum allowed tokens"
                f" ({budget // CHARS_PER_TOKEN}). Use offset and limit parameters to read"
                " specific portions of the file, or search for specific content (Grep)"
                f" instead of reading the whole file{large}.",
                is_error=True,
            ), None
        note = window_note(offset, len(got.shown), got.total, st.st_size)
        return ToolResult(f"{body}\n\n{note}" if note else body), record


def _read_document(
    path: Path,
    kind: Kind | None,
    fd: int,
    st: os.stat_result,
    pages: str | None,
    budget: int,
    stop: threading.Event,
) -> Outcome:
    """Read of a notebook, an image or a PDF (what ``pages`` is for) from *fd*."""
    if kind is None or (pages is not None and kind != "pdf"):
        return ToolResult(
            f"pages is for PDF files only; {path.name} is not one (use offset and limit for"
            " the lines of a text file).",
            is_error=True,
        ), None
    data = read_bounded(fd, max_bytes(kind) + 1, stop)
    result = read_document(kind, path, data, pages, budget=budget)
    return result, None if result.is_error else (path, stamp_from(st))


def _is_a_directory(path: Path) -> ToolResult:
    return ToolResult(
        f"{path} is a directory, not a file. Use Glob or Bash `ls` to list it.", is_error=True
    )


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
        return await on_file(
            "write",
            input["file_path"],
            ctx,
            lambda target, _: self._write(target, content, ctx),
            create_dirs=True,
        )

    def _write(self, target: Target, content: str, ctx: ToolContext) -> Outcome:
        path, st = target.path, target.lstat
        if st is not None:
            if stat.S_ISDIR(st.st_mode):
                return ToolResult(
                    f"{path} is a directory; cannot write over it.", is_error=True
                ), None
            refusal = special_file_message(path, st.st_mode, "write")
            if refusal is not None:
                return ToolResult(refusal, is_error=True), None
            stale = check_fresh(path, st, ctx, "writing")
            if stale is not None:
                return stale, None
        record = (path, atomic_write(target, content))
        if st is not None:
            return ToolResult(f"The file {path} has been updated."), record
        return ToolResult(f"File created successfully at: {path}"), record


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
        return await on_file(
            "edit",
            input["file_path"],
            ctx,
            lambda target, _: self._edit(target, old, new, replace_all, ctx),
            # Only a new file (empty old_string) may need its directories made.
            create_dirs=old == "",
        )

    def _edit(
        self, target: Target, old: str, new: str, replace_all: bool, ctx: ToolContext
    ) -> Outcome:
        path = target.path
        if target.lstat is None:
            if old == "":
                record = (path, atomic_write(target, new))
                return ToolResult(f"File created successfully at: {path}"), record
            return ToolResult(f"File does not exist: {path}", is_error=True), None
        if stat.S_ISDIR(target.lstat.st_mode):
            return ToolResult(f"{path} is a directory, not a file.", is_error=True), None
        try:
            fd, st = open_regular(target, "edit")
        except IsADirectoryError:
            return ToolResult(f"{path} is a directory, not a file.", is_error=True), None
        try:
            stale = check_fresh(path, st, ctx, "editing")
            if stale is not None:
                return stale, None
            if st.st_size > MAX_EDIT_BYTES:
                return ToolResult(
                    f"Cannot edit {path}: it is {st.st_size} bytes, more than the"
                    f" {MAX_EDIT_BYTES} Edit handles.",
                    is_error=True,
                ), None
            data = read_bounded(fd, MAX_EDIT_BYTES + 1)
        finally:
            os.close(fd)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return ToolResult(f"Cannot edit {path}: it is not UTF-8 text.", is_error=True), None
        if old == "":
            if text:
                return ToolResult(
                    "old_string is empty but the file is not: give the text to replace,"
                    " or use Write to replace the whole file.",
                    is_error=True,
                ), None
            updated, first = new, 0
        else:
            if old not in text and "\r\n" in text:
                # Models write "\n"; a CRLF file still deserves a match.
                old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
            count = text.count(old)
            if count == 0:
                return ToolResult(
                    f"String to replace not found in file {path}.\nString: {old}", is_error=True
                ), None
            if count > 1 and not replace_all:
                return ToolResult(
                    f"Found {count} matches of the string to replace, but replace_all is"
                    " false. To replace every occurrence set replace_all to true; to replace"
                    " one, give more surrounding context so that it is unique.",
                    is_error=True,
                ), None
            first = text.index(old)
            updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
        record = (path, atomic_write(target, updated))
        return ToolResult(
            f"The file {path} has been updated. Here is the start of the change:\n"
            + snippet(updated, first, new)
        ), record
