"""Glob and Grep in pure Python, with Claude Code's names and schemas.

The search root is resolved and opened through directory descriptors
(:mod:`coterie.tools._dirfd`), and the walk below it enters each directory
with ``O_NOFOLLOW`` relative to its parent's descriptor: it never follows a
directory symlink (no loops, no wandering outside), not even one swapped in
during the walk. Both skip ``.git`` and leave out what a Read deny rule
hides (``ctx.read_denied``) and what is not a file: FIFOs, sockets and
devices are neither listed nor read, so a search never blocks on one. Grep
reads a symlinked file only when its target, resolved the same way, lies
inside the sandbox, and skips binary files and files over 20 MiB (judged
before reading). The walk runs in a worker thread, abandoned when the call
is cancelled; it stops at its next file.
"""

from __future__ import annotations

import os
import re
import stat
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from coterie.tools._base import ToolResult
from coterie.tools._dirfd import DIR_FLAGS, FILE_FLAGS, Entry, Target, resolve, walk
from coterie.tools._fileio import NotRegular, open_regular
from coterie.tools._globbing import compile_glob, has_magic
from coterie.tools._grep import TYPE_GLOBS, GrepOptions, grep_files, read_text
from coterie.tools._process import cap_text
from coterie.tools.capabilities import Access, Capabilities, Effect, PathInput
from coterie.tools.sandbox import SandboxViolation, absolute_path, allowed_roots

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from coterie.tools._base import ToolContext

__all__ = ["GlobTool", "GrepTool", "walk_files"]

GLOB_LIMIT = 100
MAX_SEARCH_OUTPUT = 50_000
_SKIP_DIRS = frozenset({".git"})


def walk_files(
    dir_fd: int, top: Path, stop: threading.Event | None = None
) -> Iterator[tuple[Entry, os.stat_result]]:
    """Files below the open directory *dir_fd* (named *top*), with what they are.

    Regular files and symlinks to regular files (the ``stat`` is the
    target's), not entering ``.git`` or directory symlinks; special files
    are left out. An entry's ``dir_fd`` is valid until the iterator moves on.
    """
    for entry in walk(dir_fd, top, _SKIP_DIRS, stop):
        st = entry.lstat
        if stat.S_ISLNK(st.st_mode):
            try:  # stat (not open) follows the link: it cannot block
                st = os.stat(entry.name, dir_fd=entry.dir_fd)
            except OSError:
                continue  # dangling
        if stat.S_ISREG(st.st_mode):
            yield entry, st


async def _in_thread(work: Callable[[threading.Event], ToolResult]) -> ToolResult:
    stop = threading.Event()
    try:
        return await trio.to_thread.run_sync(work, stop, abandon_on_cancel=True)
    finally:
        stop.set()  # an abandoned walk winds down instead of running on


def _search_root(raw: str | None, ctx: ToolContext) -> tuple[Path, list[Path]] | ToolResult:
    """The absolute (unresolved) search root and the sandbox's roots."""
    roots = allowed_roots(ctx, reading=True)
    try:
        return absolute_path(raw or ".", roots[0]), roots
    except SandboxViolation as exc:
        return ToolResult(str(exc), is_error=True)


def _open_root(absolute: Path, roots: Sequence[Path], raw: str | None) -> Target | ToolResult:
    try:
        return resolve(absolute, roots, raw=raw or ".")
    except SandboxViolation as exc:
        return ToolResult(str(exc), is_error=True)
    except OSError:
        return ToolResult(f"Path does not exist: {absolute}", is_error=True)


def _open_dir(target: Target) -> int | None:
    """The search root opened as a directory, or ``None`` if it is not one."""
    if target.lstat is None or not stat.S_ISDIR(target.lstat.st_mode):
        return None
    try:
        return os.open(target.name, DIR_FLAGS, dir_fd=target.parent)
    except OSError:
        return None


_GLOB_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "minLength": 1, "description": "The glob pattern"},
        "path": {
            "type": "string",
            "description": "The directory to search in (default: the workspace)",
        },
    },
    "required": ["pattern"],
    "additionalProperties": False,
}


class GlobTool:
    """Finds files by name pattern, newest first."""

    name = "Glob"
    description = (
        "Fast file pattern matching. Supports glob patterns like `**/*.py` or"
        " `src/**/*.{ts,tsx}` (`**` spans directories, `*` does not). Returns matching file"
        f" paths sorted by modification time, newest first, at most {GLOB_LIMIT}. path is the"
        " directory to search (default: the workspace)."
    )
    input_schema = _GLOB_SCHEMA
    capabilities = Capabilities(Effect.READ_ONLY, PathInput("path", Access.READ))

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """List files under ``path`` matching ``pattern``."""
        raw_root, pattern = _split_absolute(input["pattern"], input.get("path"))
        found_root = _search_root(raw_root, ctx)
        if isinstance(found_root, ToolResult):
            return found_root
        absolute, roots = found_root
        matcher = compile_glob(pattern.removeprefix("./"))
        hidden = ctx.read_denied

        def work(stop: threading.Event) -> ToolResult:
            target = _open_root(absolute, roots, raw_root)
            if isinstance(target, ToolResult):
                return target
            with target:
                fd = _open_dir(target)
                if fd is None:
                    return ToolResult(f"Not a directory: {target.path}", is_error=True)
                try:
                    found = [
                        (entry.path, st.st_mtime)
                        for entry, st in walk_files(fd, target.path, stop)
                        if matcher.match(entry.path.relative_to(target.path).as_posix())
                        and not (hidden is not None and hidden(entry.path))
                    ]
                finally:
                    os.close(fd)
            if not found:
                return ToolResult("No files found")
            found.sort(key=lambda pair: pair[1], reverse=True)
            lines = [str(p) for p, _ in found[:GLOB_LIMIT]]
            if len(found) > GLOB_LIMIT:
                lines.append(
                    f"(Results are truncated: {len(found)} files matched, showing the"
                    f" {GLOB_LIMIT} newest. Use a more specific path or pattern.)"
                )
            return ToolResult("\n".join(lines))

        return await _in_thread(work)


def _split_absolute(pattern: str, path: str | None) -> tuple[str | None, str]:
    """An absolute pattern carries its own root: its literal leading directories."""
    expanded = os.path.expanduser(pattern)
    if not os.path.isabs(expanded):
        return path, pattern
    parts = Path(expanded).parts
    literal = list(_takewhile_literal(parts))
    return str(Path(*literal)), "/".join(parts[len(literal) :]) or "*"


def _takewhile_literal(parts: tuple[str, ...]) -> Iterator[str]:
    for part in parts[:-1]:  # the last part is the name pattern itself
        if has_magic(part):
            return
        yield part


_GREP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "The regular expression to search for"},
        "path": {
            "type": "string",
            "description": "File or directory to search in (default: the workspace)",
        },
        "glob": {
            "type": "string",
            "description": 'Glob to filter files (e.g. "*.js", "*.{ts,tsx}", "src/**/*.py")',
        },
        "type": {
            "type": "string",
            "description": "File type to search (e.g. py, js, ts, rust, go)",
        },
        "output_mode": {
            "type": "string",
            "enum": ["content", "files_with_matches", "count"],
            "description": 'Output mode (default "files_with_matches")',
        },
        "-i": {"type": "boolean", "description": "Case insensitive search"},
        "-n": {"type": "boolean", "description": "Show line numbers (content mode; default true)"},
        "-A": {"type": "integer", "minimum": 0, "description": "Lines to show after a match"},
        "-B": {"type": "integer", "minimum": 0, "description": "Lines to show before a match"},
        "-C": {"type": "integer", "minimum": 0, "description": "Lines before and after a match"},
        "head_limit": {
            "type": "integer",
            "minimum": 0,
            "description": "Show only the first N lines/entries (0: no limit)",
        },
        "offset": {"type": "integer", "minimum": 0, "description": "Skip the first N entries"},
        "multiline": {
            "type": "boolean",
            "description": "Let . match newlines and patterns span lines (default false)",
        },
    },
    "required": ["pattern"],
    "additionalProperties": False,
}


class GrepTool:
    """Searches file contents with a Python regular expression."""

    name = "Grep"
    description = (
        "Searches file contents with a regular expression (Python `re` syntax). Filter files"
        ' with glob (e.g. "*.js", "**/*.tsx") or type (e.g. "py", "js", "rust"). output_mode:'
        ' "files_with_matches" (default) lists files, newest first; "content" shows matching'
        ' lines with -A/-B/-C context and -n line numbers; "count" shows match counts per'
        " file. head_limit and offset page the output. .git and binary files are skipped."
    )
    input_schema = _GREP_SCHEMA
    capabilities = Capabilities(Effect.READ_ONLY, PathInput("path", Access.READ))

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Search ``path`` for ``pattern``."""
        flags = re.IGNORECASE if input.get("-i") else 0
        if input.get("multiline"):
            flags |= re.MULTILINE | re.DOTALL
        try:
            regex = re.compile(input["pattern"], flags)
        except re.error as exc:
            return ToolResult(f"Invalid regular expression: {exc}", is_error=True)
        file_type = input.get("type")
        if file_type is not None and file_type not in TYPE_GLOBS:
            known = ", ".join(sorted(TYPE_GLOBS))
            return ToolResult(f"Unknown file type {file_type!r}; known: {known}", is_error=True)
        found_root = _search_root(input.get("path"), ctx)
        if isinstance(found_root, ToolResult):
            return found_root
        absolute, roots = found_root
        context = input.get("-C")
        options = GrepOptions(
            regex=regex,
            mode=input.get("output_mode", "files_with_matches"),
            glob=input.get("glob"),
            file_type=file_type,
            line_numbers=bool(input.get("-n", True)),
            before=int(input.get("-B", context or 0)),
            after=int(input.get("-A", context or 0)),
            multiline=bool(input.get("multiline")),
            head_limit=int(input.get("head_limit") or 0),
            offset=int(input.get("offset") or 0),
        )
        hidden = ctx.read_denied

        def work(stop: threading.Event) -> ToolResult:
            target = _open_root(absolute, roots, input.get("path"))
            if isinstance(target, ToolResult):
                return target
            with target:
                if target.lstat is None:
                    return ToolResult(f"Path does not exist: {target.path}", is_error=True)
                fd = _open_dir(target)
                if fd is None:
                    return _grep_one(target, options, hidden, stop)
                try:
                    files = _readable(walk_files(fd, target.path, stop), roots, hidden, stop)
                    text = grep_files(files, target.path, options, stop)
                finally:
                    os.close(fd)
            return ToolResult(cap_text(text, MAX_SEARCH_OUTPUT))

        return await _in_thread(work)


def _grep_one(
    target: Target,
    options: GrepOptions,
    hidden: Callable[[Path], bool] | None,
    stop: threading.Event,
) -> ToolResult:
    """Grep's path names one file: a special file is refused, with a clear message."""
    try:
        fd, _ = open_regular(target, "search")
    except NotRegular as exc:
        return ToolResult(exc.strerror or str(exc), is_error=True)
    except OSError as exc:
        return ToolResult(f"Cannot search {target.path}: {exc.strerror or exc}", is_error=True)
    try:
        if hidden is not None and hidden(target.path):
            return ToolResult("No files found")
        text = grep_files([(target.path, lambda: read_text(fd, stop))], target.path, options, stop)
    finally:
        os.close(fd)
    return ToolResult(cap_text(text, MAX_SEARCH_OUTPUT))


def _readable(
    files: Iterator[tuple[Entry, os.stat_result]],
    roots: Sequence[Path],
    hidden: Callable[[Path], bool] | None,
    stop: threading.Event,
) -> Iterator[tuple[Path, Callable[[], str | None]]]:
    """The walk's files Grep may read, each with how to read it safely."""
    for entry, _ in files:
        if hidden is not None and hidden(entry.path):
            continue
        yield entry.path, _reader(entry, roots, stop)


def _reader(entry: Entry, roots: Sequence[Path], stop: threading.Event) -> Callable[[], str | None]:
    def read() -> str | None:
        if stat.S_ISLNK(entry.lstat.st_mode):
            # A symlinked file may lead out of the sandbox: resolve it as a
            # Read would, and leave its content unread if it does.
            try:
                with resolve(entry.path, roots) as target:
                    fd, _ = open_regular(target, "search")
            except (SandboxViolation, OSError):
                return None
        else:
            fd = os.open(entry.name, FILE_FLAGS, dir_fd=entry.dir_fd)
        try:
            return read_text(fd, stop)
        finally:
            os.close(fd)

    return read
