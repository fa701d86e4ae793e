"""Grep's engine: filtering files, reading them safely, matching, rendering.

Output follows ripgrep, which Claude Code's Grep wraps: ``path:line:text``
for a match, ``path-line-text`` for context, ``--`` between groups that do
not touch. Files come as ``(path, read)`` pairs, read only once they pass
the filters; :func:`read_text` reads an open descriptor only if it is a
regular text file of at most :data:`MAX_FILE_BYTES`, in chunks that watch
the stop event. Blocking; run it in a worker thread.
"""

from __future__ import annotations

import bisect
import os
import re
import stat
from typing import TYPE_CHECKING, Literal

import attrs

from coterie.tools._fileio import BINARY_SNIFF_BYTES, Stopped, is_binary, read_bounded
from coterie.tools._globbing import compile_glob

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Iterable
    from pathlib import Path

__all__ = [
    "MAX_FILE_BYTES",
    "TYPE_GLOBS",
    "GrepOptions",
    "Matched",
    "grep_files",
    "read_text",
]

# A useful subset of ripgrep's --type list.
TYPE_GLOBS: dict[str, str] = {
    "c": "*.{c,h}",
    "cpp": "*.{cpp,cc,cxx,hpp,hh,hxx,h}",
    "css": "*.{css,scss,sass,less}",
    "go": "*.go",
    "html": "*.{html,htm}",
    "java": "*.java",
    "js": "*.{js,mjs,cjs,jsx}",
    "json": "*.json",
    "kotlin": "*.{kt,kts}",
    "md": "*.{md,markdown}",
    "py": "*.{py,pyi}",
    "rb": "*.rb",
    "rust": "*.rs",
    "sh": "*.{sh,bash,zsh}",
    "sql": "*.sql",
    "swift": "*.swift",
    "toml": "*.toml",
    "ts": "*.{ts,tsx,mts,cts}",
    "txt": "*.txt",
    "yaml": "*.{yaml,yml}",
}

MAX_FILE_BYTES = 20 * 1024 * 1024  # bigger files are data, not code to search
MAX_LINE_CHARS = 1000


@attrs.frozen
class GrepOptions:
    """What to search for and how to show it (validated by the tool)."""

    regex: re.Pattern[str]
    mode: Literal["content", "files_with_matches", "count"] = "files_with_matches"
    glob: str | None = None
    file_type: str | None = None
    line_numbers: bool = True
    before: int = 0
    after: int = 0
    multiline: bool = False
    head_limit: int = 0
    offset: int = 0


def _file_filter(options: GrepOptions, root: Path) -> Callable[[Path], bool]:
    checks: list[Callable[[Path], bool]] = []
    for pattern in (options.glob, TYPE_GLOBS.get(options.file_type or "")):
        if not pattern:
            continue
        matcher = compile_glob(pattern.removeprefix("./"))
        if "/" in pattern:

            def by_path(p: Path, m: re.Pattern[str] = matcher) -> bool:
                rel = p.relative_to(root).as_posix() if p.is_relative_to(root) else p.name
                return m.match(rel) is not None

            checks.append(by_path)
        else:

            def by_name(p: Path, m: re.Pattern[str] = matcher) -> bool:
                # As ripgrep: a glob without a slash matches the file name at any depth.
                return m.match(p.name) is not None

            checks.append(by_name)
    return lambda p: all(check(p) for check in checks)


def read_text(fd: int, stop: threading.Event | None = None) -> str | None:
    """The text at *fd*, or ``None`` for what Grep skips.

    Skipped: anything but a regular file (a FIFO, socket or device), a file
    over :data:`MAX_FILE_BYTES` (judged by ``fstat`` before reading, and
    again by what the read returns, should it grow), a binary file (told by
    its first 8 KiB, before the rest is read). Raises :class:`Stopped`.
    """
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE_BYTES:
        return None
    head = read_bounded(fd, BINARY_SNIFF_BYTES, stop)
    if is_binary(head):
        return None
    data = head + read_bounded(fd, MAX_FILE_BYTES + 1 - len(head), stop)
    if len(data) > MAX_FILE_BYTES:
        return None
    return data.decode("utf-8", errors="replace")


def _matching_lines(text: str, options: GrepOptions) -> tuple[list[str], list[int], int]:
    """The file's lines, the 0-based indices of lines that match, and the match count."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    if not options.multiline:
        hits = [i for i, line in enumerate(lines) if options.regex.search(line)]
        count = sum(len(options.regex.findall(lines[i])) for i in hits)
        return lines, hits, count
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    marked: set[int] = set()
    count = 0
    for match in options.regex.finditer(text):
        count += 1
        first = _line_of(starts, match.start())
        last = _line_of(starts, max(match.start(), match.end() - 1))
        marked.update(range(first, min(last, len(lines) - 1) + 1))
    return lines, sorted(marked), count


#: What can make a match on one line differ from one in the whole text.
_CONTEXT_SENSITIVE = ("(?=", "(?!", "(?<", "\\A", "\\Z")


def _has_match(text: str, options: GrepOptions) -> bool:
    """Whether some line of *text* matches (as :func:`_matching_lines` would find),
    without splitting it into lines when one search of the whole text can tell."""
    regex = options.regex
    if options.multiline or any(s in regex.pattern for s in _CONTEXT_SENSITIVE):
        return bool(_matching_lines(text, options)[1])
    # Without look-around or \A/\Z, a match on a line is a match in the whole text
    # (with ^ and $ at line ends): no match there, none on any line.
    whole = re.compile(regex.pattern, regex.flags | re.MULTILINE).search(text)
    if whole is None or (whole.start() == len(text) and text.endswith("\n")):
        return False  # (the empty "line" after the last newline is no line)
    start = text.rfind("\n", 0, whole.start()) + 1
    end = text.find("\n", whole.start())
    line = text[start : end if end >= 0 else len(text)]
    if regex.search(line):
        return True
    return bool(_matching_lines(text, options)[1])  # a match across lines: look line by line


def _line_of(starts: list[int], offset: int) -> int:
    return bisect.bisect_right(starts, offset) - 1


def _content_lines(name: str, lines: list[str], hits: list[int], options: GrepOptions) -> list[str]:
    hit_set = set(hits)
    shown: list[int] = []
    for i in hits:
        lo, hi = max(0, i - options.before), min(len(lines) - 1, i + options.after)
        shown.extend(range(max(lo, shown[-1] + 1 if shown else lo), hi + 1))
    out: list[str] = []
    previous = None
    for i in shown:
        if previous is not None and i != previous + 1 and (options.before or options.after):
            out.append("--")
        sep = ":" if i in hit_set else "-"
        line = lines[i].removesuffix("\r")
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + " [...]"
        number = f"{i + 1}{sep}" if options.line_numbers else ""
        out.append(f"{name}{sep}{number}{line}")
        previous = i
    return out


def _page(entries: list[str], options: GrepOptions) -> tuple[list[str], bool]:
    entries = entries[options.offset :]
    if options.head_limit and len(entries) > options.head_limit:
        return entries[: options.head_limit], True
    return entries, False


@attrs.frozen
class Matched:
    """What a file's reader gives in ``files_with_matches`` mode when ripgrep found
    the match already: only the path is shown, so there is nothing to read (and
    the file's modification time, for the newest-first order, is known)."""

    mtime: float


def grep_files(
    files: Iterable[tuple[Path, Callable[[], str | Matched | None]]],
    root: Path,
    options: GrepOptions,
    stop: threading.Event | None = None,
) -> str:
    """Search *files* and render the result as the model will read it.

    Each file is ``(path, read)``; ``read()`` is called only for a file the
    glob and type filters keep, and returns its text or ``None`` to skip it.
    """
    wanted = _file_filter(options, root)
    matched: list[tuple[Path, list[str], list[int], int]] = []
    mtimes: dict[Path, float] = {}  # those known already
    for path, read in files:
        if stop is not None and stop.is_set():
            break
        if not wanted(path):
            continue
        try:
            text = read()
        except Stopped:
            break
        except OSError:
            continue  # gone or unreadable meanwhile: as ripgrep, carry on
        if text is None:
            continue
        if isinstance(text, Matched):
            assert options.mode == "files_with_matches", "only a path is known of the file"
            matched.append((path, [], [0], 0))
            mtimes[path] = text.mtime
            continue
        if options.mode == "files_with_matches":
            if _has_match(text, options):
                matched.append((path, [], [0], 0))
            continue
        lines, hits, count = _matching_lines(text, options)
        if hits:
            matched.append((path, lines, hits, count))
    if not matched:
        return "No files found" if options.mode == "files_with_matches" else "No matches found"
    if options.mode == "files_with_matches":
        paths = sorted(
            (m[0] for m in matched),
            key=lambda p: mtimes[p] if p in mtimes else _mtime(p),
            reverse=True,
        )
        entries, cut = _page([str(p) for p in paths], options)
        head = f"Found {len(paths)} file{'s' if len(paths) != 1 else ''}"
        return "\n".join([head, *entries, *(["(more results: raise head_limit)"] if cut else [])])
    if options.mode == "count":
        entries = [f"{path}:{count}" for path, _, _, count in matched]
        total = sum(m[3] for m in matched)
        entries, cut = _page(entries, options)
        summary = f"\nFound {total} total occurrences across {len(matched)} files."
        return "\n".join(entries) + ("\n(more results: raise head_limit)" if cut else "") + summary
    out: list[str] = []
    for path, lines, hits, _ in matched:
        if out and (options.before or options.after):
            out.append("--")
        out.extend(_content_lines(str(path), lines, hits, options))
    entries, cut = _page(out, options)
    return "\n".join(entries) + ("\n(more results: raise head_limit)" if cut else "")


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
