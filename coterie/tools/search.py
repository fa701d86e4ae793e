"""Glob and Grep in pure Python, with Claude Code's names and schemas.

Both walk the tree below a sandboxed directory without following directory
symlinks (no loops, no wandering outside), skip ``.git``, and leave out what
a Read deny rule hides (``ctx.read_denied``). Grep also skips binary files
(a NUL byte early on) and files whose real location is outside the sandbox.
The walk runs in a worker thread that stops when the call is cancelled.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from coterie.tools._base import ToolResult
from coterie.tools._globbing import compile_glob, has_magic
from coterie.tools._grep import TYPE_GLOBS, GrepOptions, grep_files
from coterie.tools._process import cap_text
from coterie.tools.capabilities import Access, Capabilities, Effect, PathInput
from coterie.tools.sandbox import (
    SandboxViolation,
    allowed_roots,
    check_inside,
    sandboxed_path,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from coterie.tools._base import ToolContext

__all__ = ["GlobTool", "GrepTool", "walk_files"]

GLOB_LIMIT = 100
MAX_SEARCH_OUTPUT = 50_000
_SKIP_DIRS = frozenset({".git"})


def walk_files(root: Path, stop: threading.Event | None = None) -> Iterator[Path]:
    """Regular files below *root*, not entering ``.git`` or directory symlinks."""
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        if stop is not None and stop.is_set():
            return
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            yield Path(dirpath, name)


async def _in_thread(work: Callable[[threading.Event], ToolResult]) -> ToolResult:
    stop = threading.Event()
    try:
        return await trio.to_thread.run_sync(work, stop, abandon_on_cancel=True)
    finally:
        stop.set()  # an abandoned walk winds down instead of running on


def _search_root(raw: str | None, ctx: ToolContext) -> Path | ToolResult:
    try:
        return sandboxed_path(raw or ".", ctx)
    except SandboxViolation as exc:
        return ToolResult(str(exc), is_error=True)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


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
        root = _search_root(raw_root, ctx)
        if isinstance(root, ToolResult):
            return root
        if not root.is_dir():
            return ToolResult(f"Not a directory: {root}", is_error=True)
        matcher = compile_glob(pattern.removeprefix("./"))
        hidden = ctx.read_denied

        def work(stop: threading.Event) -> ToolResult:
            found = [
                p
                for p in walk_files(root, stop)
                if matcher.match(p.relative_to(root).as_posix())
                and not (hidden is not None and hidden(p))
            ]
            if not found:
                return ToolResult("No files found")
            found.sort(key=_mtime, reverse=True)
            lines = [str(p) for p in found[:GLOB_LIMIT]]
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
        root = _search_root(input.get("path"), ctx)
        if isinstance(root, ToolResult):
            return root
        if not root.exists():
            return ToolResult(f"Path does not exist: {root}", is_error=True)
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
        roots = allowed_roots(ctx)
        hidden = ctx.read_denied

        def visible(path: Path) -> bool:
            if hidden is not None and hidden(path):
                return False
            # A symlinked file may lead out of the sandbox; its content stays unread.
            return check_inside(Path(os.path.realpath(path)), roots)

        def work(stop: threading.Event) -> ToolResult:
            files = [root] if root.is_file() else list(walk_files(root, stop))
            text = grep_files(files, root, options, visible, stop)
            return ToolResult(cap_text(text, MAX_SEARCH_OUTPUT))

        return await _in_thread(work)
