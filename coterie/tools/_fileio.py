"""Blocking file helpers for the file tools (called from a worker thread).

Everything here works on descriptors from :mod:`coterie.tools._dirfd`, never
on path strings, so what is read or replaced is what the sandbox judged.

- Only regular files are read: a FIFO, socket or device is refused with a
  clear message (see :func:`open_regular`; a FIFO is opened ``O_NONBLOCK``
  so even the refusal never waits for a writer).
- Reads are bounded and take a ``stop`` event between chunks, so an
  abandoned read winds down instead of running on: :func:`read_lines` keeps
  only the lines a Read shows (each cut to its display width), and a NUL
  byte in the first 8 KiB (git's and grep's test) refuses a binary file
  before anything else is read.
- Writes are atomic: a temporary file made with ``O_EXCL`` in the already
  opened parent directory, written, fsynced, then renamed over the target
  with ``renameat`` on that same descriptor, and the directory fsynced; a
  reader (or a crash) sees the old content or the new, never half of it.
- Read-before-write is enforced with a :class:`FileStamp` (modification
  time in ns and size), taken from ``fstat`` of what was read or written.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import os
import secrets
import stat
from typing import TYPE_CHECKING

import attrs

from coterie.tools._base import FileStamp, ToolResult
from coterie.tools._dirfd import FILE_FLAGS, kind_of

if TYPE_CHECKING:
    import threading
    from pathlib import Path

    from coterie.tools._base import ToolContext
    from coterie.tools._dirfd import Target

__all__ = [
    "BINARY_SNIFF_BYTES",
    "CHUNK_BYTES",
    "Lines",
    "NotRegular",
    "Stopped",
    "atomic_write",
    "check_fresh",
    "is_binary",
    "open_regular",
    "read_bounded",
    "read_lines",
    "stamp_from",
]

BINARY_SNIFF_BYTES = 8192
CHUNK_BYTES = 1 << 16
#: After the lines shown, the rest of a file is counted (not kept) up to this
#: many bytes, to say "of N lines"; past it the total is left unknown.
COUNT_LIMIT_BYTES = 8 << 20


class NotRegular(OSError):
    """The path names something a file tool does not read: a FIFO, socket, device."""


class Stopped(Exception):
    """The read was abandoned (its call was cancelled); nothing is reported."""


def stamp_from(st: os.stat_result) -> FileStamp:
    """The stamp of the file *st* describes."""
    return FileStamp(mtime_ns=st.st_mtime_ns, size=st.st_size)


def is_binary(head: bytes) -> bool:
    """A NUL byte in the first few KiB is how git and grep tell binary files."""
    return b"\0" in head[:BINARY_SNIFF_BYTES]


def special_file_message(path: Path, mode: int, verb: str) -> str | None:
    """Why *verb* refuses the file of *mode*, or ``None`` for a regular file."""
    kind = kind_of(mode)
    if kind is None or stat.S_ISDIR(mode):
        return None
    return (
        f"Cannot {verb} {path}: it is {kind}, not a regular file. coterie's file tools only"
        " read and write regular files (reading a pipe or a device could block or never"
        " end)."
    )


def open_regular(target: Target, verb: str) -> tuple[int, os.stat_result]:
    """Open *target*'s leaf for reading, if it is a regular file; return fd and ``fstat``.

    Raises :class:`NotRegular` for anything else (with the message to show),
    ``IsADirectoryError`` for a directory, and ``OSError`` (``ELOOP``) if the
    leaf was swapped for a symlink after it was resolved.
    """
    if target.lstat is not None:
        refusal = special_file_message(target.path, target.lstat.st_mode, verb)
        if refusal is not None:  # refused before opening: opening a device can act
            raise NotRegular(errno.EINVAL, refusal)
    try:
        fd = os.open(target.name, FILE_FLAGS, dir_fd=target.parent)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # what open(2) says for a socket
            raise NotRegular(errno.ENXIO, f"Cannot {verb} {target.path}: it is a socket.") from exc
        raise
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(target.path))
        refusal = special_file_message(target.path, st.st_mode, verb)
        if refusal is not None:
            raise NotRegular(errno.EINVAL, refusal)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def read_bounded(fd: int, limit: int, stop: threading.Event | None = None) -> bytes:
    """At most *limit* bytes from *fd*, in chunks, checking *stop* between them."""
    parts: list[bytes] = []
    left = limit
    while left > 0:
        if stop is not None and stop.is_set():
            raise Stopped
        chunk = os.read(fd, min(CHUNK_BYTES, left))
        if not chunk:
            break
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


@attrs.frozen
class Lines:
    """What :func:`read_lines` kept: the shown lines and what it learnt of the rest.

    Each shown line is ``(text, length)``: the text (at most ``width`` + 1
    characters of it: a longer line is cut) and the line's real length.
    ``total`` is the file's line count, or ``None`` when the file was too big
    to count past what is shown. ``chars`` is the sum of the kept texts.
    """

    shown: list[tuple[str, int]]
    total: int | None
    chars: int
    over_budget: bool


def read_lines(
    fd: int,
    first: int,
    count: int,
    *,
    width: int,
    budget: int,
    stop: threading.Event | None = None,
) -> Lines:
    """Lines *first* .. *first* + *count* - 1 (1-based) of the UTF-8 text at *fd*.

    Reads from the current position in chunks; keeps only the lines asked
    for, at most *width* + 1 characters of each, and stops keeping once their
    sum passes *budget* (``over_budget``). Malformed UTF-8 is replaced, a
    trailing ``\\r`` dropped, as the Read tool shows it.
    """
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    shown: list[tuple[str, int]] = []
    last = first + count - 1
    line_no = 1  # the number of the line being assembled
    pieces: list[str] = []
    kept = length = chars = 0
    tail_cr = False  # the line so far ends with "\r"
    ended_clean = True  # the text so far ends with "\n" (or is empty)
    over = False

    def finish() -> None:
        nonlocal chars, over
        if not (first <= line_no <= last) or over:
            return
        text = "".join(pieces)
        real = length - 1 if tail_cr else length
        if tail_cr and len(text) == length:  # kept whole: drop the "\r" of a CRLF line
            text = text[:-1]
        shown.append((text, real))
        chars += len(text)
        over = chars > budget

    while True:
        if stop is not None and stop.is_set():
            raise Stopped
        if line_no > last or over:
            return _count_rest(fd, line_no - 1, ended_clean, shown, chars, over, stop)
        chunk = os.read(fd, CHUNK_BYTES)
        text = decoder.decode(chunk, final=not chunk)
        start = 0
        while start < len(text):
            end = text.find("\n", start)
            segment = text[start:] if end < 0 else text[start:end]
            if segment:
                length += len(segment)
                tail_cr = segment.endswith("\r")
                if first <= line_no <= last and kept <= width:
                    piece = segment[: width + 1 - kept]
                    pieces.append(piece)
                    kept += len(piece)
            if end < 0:
                break
            finish()
            line_no += 1
            pieces, kept, length, tail_cr = [], 0, 0, False
            start = end + 1
        if text:
            ended_clean = text.endswith("\n")
        if not chunk:
            if not ended_clean:
                finish()  # the last line had no newline
                line_no += 1
            return Lines(shown, line_no - 1, chars, over)


def _count_rest(
    fd: int,
    done: int,
    ended_clean: bool,
    shown: list[tuple[str, int]],
    chars: int,
    over: bool,
    stop: threading.Event | None,
) -> Lines:
    """Count the lines after the shown ones, within :data:`COUNT_LIMIT_BYTES`."""
    total = done
    left = COUNT_LIMIT_BYTES
    tail_clean = ended_clean
    while left > 0:
        if stop is not None and stop.is_set():
            raise Stopped
        chunk = os.read(fd, min(CHUNK_BYTES, left))
        if not chunk:
            return Lines(shown, total + (0 if tail_clean else 1), chars, over)
        total += chunk.count(b"\n")
        tail_clean = chunk.endswith(b"\n")
        left -= len(chunk)
    return Lines(shown, None, chars, over)


def check_fresh(
    path: Path, current: os.stat_result, ctx: ToolContext, verb: str
) -> ToolResult | None:
    """Refuse changing an existing file the agent has not read, or that changed since.

    *current* is the file's ``lstat`` now. Returns the error result, or
    ``None`` when the change may go ahead.
    """
    seen = ctx.read_files.get(path)
    if seen is None:
        return ToolResult(
            f"File has not been read yet: {path}. Read it first before {verb} it.",
            is_error=True,
        )
    if stamp_from(current) != seen:
        return ToolResult(
            f"File has been modified since it was read: {path}. It was changed by"
            f" someone else (the user, a linter, a command). Read it again before {verb} it.",
            is_error=True,
        )
    return None


def atomic_write(target: Target, data: str) -> FileStamp:
    """Replace *target*'s leaf with *data* (UTF-8) atomically, inside its parent's fd.

    An existing regular file keeps its permission bits; a new one gets the
    umask's. Returns the new stamp.
    """
    payload = data.encode("utf-8")
    current = target.restat()
    keep = stat.S_IMODE(current.st_mode) if current and stat.S_ISREG(current.st_mode) else None
    tmp = f".{target.name}.{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    # O_CREAT applies the umask to 0o666 itself: no process-wide umask dance.
    fd = os.open(tmp, flags, 0o666, dir_fd=target.parent)
    try:
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view) :]
            if keep is not None:
                os.fchmod(fd, keep)
            os.fsync(fd)
            st = os.fstat(fd)
        finally:
            os.close(fd)
        # renameat on the parent's descriptor: a symlink swapped in meanwhile
        # is itself replaced, never followed.
        os.replace(tmp, target.name, src_dir_fd=target.parent, dst_dir_fd=target.parent)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=target.parent)
        raise
    with contextlib.suppress(OSError):  # durability of the rename; not all file systems can
        os.fsync(target.parent)
    return stamp_from(st)
