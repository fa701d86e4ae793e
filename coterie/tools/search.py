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

When an ``rg`` binary is at hand (:mod:`coterie.tools._ripgrep`), ripgrep
finds the files instead of the walk: all of them for Glob, those that may
match for Grep. They are then read and shown exactly as the walk's are, each
opened again through the descriptor walk, so ripgrep makes searches faster
without changing what they may read.
"""

from __future__ import annotations

import functools
import os
import re
import stat
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import attrs
import trio

from coterie.tools._base import ToolResult
from coterie.tools._dirfd import (
    DIR_FLAGS,
    FILE_FLAGS,
    MAX_WALK_DEPTH,
    Entry,
    Target,
    resolve,
    walk,
)
from coterie.tools._fileio import NotRegular, open_regular
from coterie.tools._globbing import compile_glob, has_magic
from coterie.tools._grep import (
    MAX_FILE_BYTES,
    TYPE_GLOBS,
    GrepOptions,
    Matched,
    grep_files,
    read_text,
)
from coterie.tools._process import cap_text
from coterie.tools._ripgrep import find_rg, rg_files, rg_matching
from coterie.tools.capabilities import Access, Capabilities, Effect, PathInput
from coterie.tools.sandbox import SandboxViolation, absolute_path, allowed_roots

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence

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
                        (path, mtime)
                        for path, mtime in _matching_files(fd, target.path, matcher, stop)
                        if not (hidden is not None and hidden(path))
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


def _matching_files(
    dir_fd: int, top: Path, matcher: re.Pattern[str], stop: threading.Event
) -> Iterator[tuple[Path, float]]:
    """The files below *top* (open as *dir_fd*) whose relative path *matcher* takes,
    with their modification times: listed by ripgrep when it can, else by the walk."""
    rg = find_rg()
    listed = rg_files(rg, top, stop, max_depth=MAX_WALK_DEPTH) if rg is not None else None
    if listed is None:
        for entry, st in walk_files(dir_fd, top, stop):
            if matcher.match(entry.path.relative_to(top).as_posix()):
                yield entry.path, st.st_mtime
        return
    wanted = [path for path in listed if matcher.match(path)]
    for entry, st in _verified(dir_fd, top, wanted, stop):
        yield entry.path, st.st_mtime


@attrs.define
class _Tree:
    """Paths below one directory, as names: its files, and its subdirectories' trees."""

    files: list[str] = attrs.field(factory=list)
    dirs: dict[str, _Tree] = attrs.field(factory=dict)

    @classmethod
    def of(cls, paths: Iterable[str]) -> _Tree:
        """The tree of *paths* (relative, ``/``-separated)."""
        tree = cls()
        for path in paths:
            parts = path.split("/")
            if any(p in ("", ".", "..") for p in parts):
                continue  # never looked for outside the search root
            node = tree
            for part in parts[:-1]:
                node = node.dirs.setdefault(part, cls())
            node.files.append(parts[-1])
        return tree


def _verified(
    dir_fd: int, top: Path, paths: Iterable[str], stop: threading.Event
) -> Iterator[tuple[Entry, os.stat_result]]:
    """Those of *paths* (found by ripgrep below *top*, open as *dir_fd*; relative) that are
    regular files there now, in the walk's order, each reached as the walk
    reaches files: every directory entered with ``O_NOFOLLOW`` from its parent's
    descriptor (an entry's ``dir_fd`` is valid until the iterator moves on). A
    name ripgrep saw through a directory swapped for a symlink is not there
    when looked for this way: it is left out."""
    yield from _descend(dir_fd, top, _Tree.of(paths), stop, depth=1)


def _descend(
    fd: int, here: Path, tree: _Tree, stop: threading.Event, depth: int
) -> Iterator[tuple[Entry, os.stat_result]]:
    for name in sorted(tree.files):
        if stop.is_set():
            return
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            yield Entry(here / name, fd, name, st), st
    if depth >= MAX_WALK_DEPTH:
        return
    for name in sorted(tree.dirs):
        try:
            sub = os.open(name, DIR_FLAGS, dir_fd=fd)
        except OSError:
            continue  # gone, swapped for a symlink, or unreadable
        try:
            yield from _descend(sub, here / name, tree.dirs[name], stop, depth + 1)
        finally:
            os.close(sub)


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
                    files = _candidates(fd, target.path, input["pattern"], options, roots, stop)
                    if files is None:  # no ripgrep, or not for this pattern
                        files = _readable(walk_files(fd, target.path, stop), roots, stop)
                    text = grep_files(_shown(files, hidden), target.path, options, stop)
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


Readable: TypeAlias = "Iterator[tuple[Path, Callable[[], str | Matched | None]]]"
"""Files Grep may read, each with how to read it safely (or a :class:`Matched`:
only its path is shown, and ripgrep found the match)."""


def _shown(files: Readable, hidden: Callable[[Path], bool] | None) -> Readable:
    """*files* but those a Read deny rule hides."""
    return (pair for pair in files if hidden is None or not hidden(pair[0]))


def _readable(
    files: Iterator[tuple[Entry, os.stat_result]], roots: Sequence[Path], stop: threading.Event
) -> Readable:
    """The walk's files."""
    for entry, _ in files:
        yield entry.path, _reader(entry, roots, stop)


def _candidates(
    dir_fd: int,
    top: Path,
    pattern: str,
    options: GrepOptions,
    roots: Sequence[Path],
    stop: threading.Event,
) -> Readable | None:
    """The files below *top* ripgrep says may match, or None without ripgrep (or
    when it cannot take *pattern*). Each path is looked for again as the walk
    finds files (:func:`_verified`): one ripgrep saw through a symlink, or that
    is no regular file now, is left out. To show lines (``content``,
    ``count``), each file is then opened again as a Read opens a path, and its
    text searched; to show only paths (``files_with_matches``), ripgrep's
    match stands, and no file is read twice."""
    rg = find_rg()
    if rg is None:
        return None
    # Several -g are alternatives to ripgrep, and the Python filter that follows
    # wants all of them: one narrows enough. A glob with a / (or a !) could mean
    # something else to ripgrep: it is left to the Python filter alone.
    user = options.glob
    name_glob = user if user and "/" not in user and not user.startswith("!") else None
    narrowing = TYPE_GLOBS.get(options.file_type or "") or name_glob
    paths = rg_matching(
        rg,
        top,
        pattern,
        ignore_case=options.regex.flags & re.IGNORECASE != 0,
        multiline=options.multiline,
        globs=(narrowing,) if narrowing else (),
        max_bytes=MAX_FILE_BYTES,
        max_depth=MAX_WALK_DEPTH,
        stop=stop,
    )
    if paths is None:
        return None
    found = _verified(dir_fd, top, paths, stop)
    if options.mode == "files_with_matches":
        return ((entry.path, functools.partial(Matched, st.st_mtime)) for entry, st in found)
    return _readable(found, roots, stop)


def _read_resolved(path: Path, roots: Sequence[Path], stop: threading.Event) -> str | None:
    """The text of *path* as a Read would open it (symlinks followed only inside the
    sandbox), or None when it leads out or is no regular text file."""
    try:
        with resolve(path, roots) as target:
            fd, _ = open_regular(target, "search")
    except (SandboxViolation, OSError):
        return None
    try:
        return read_text(fd, stop)
    finally:
        os.close(fd)


def _reader(entry: Entry, roots: Sequence[Path], stop: threading.Event) -> Callable[[], str | None]:
    def read() -> str | None:
        if stat.S_ISLNK(entry.lstat.st_mode):
            # A symlinked file may lead out of the sandbox: resolve it as a
            # Read would, and leave its content unread if it does.
            return _read_resolved(entry.path, roots, stop)
        fd = os.open(entry.name, FILE_FLAGS, dir_fd=entry.dir_fd)
        try:
            return read_text(fd, stop)
        finally:
            os.close(fd)

    return read
