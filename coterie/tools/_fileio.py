"""Blocking file helpers for the file tools (called through ``trio.to_thread``).

Writes are atomic: a temporary file in the target's directory, flushed and
fsynced, then renamed over the target, so a reader (or a crash) sees the old
content or the new, never half of it. Read-before-write is enforced with a
:class:`FileStamp` (modification time in ns and size) taken at Read and after
every Write.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from typing import TYPE_CHECKING

from coterie.tools._base import FileStamp, ToolResult

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.tools._base import ToolContext

__all__ = [
    "BINARY_SNIFF_BYTES",
    "atomic_write",
    "check_fresh",
    "is_binary",
    "stamp_of",
]

BINARY_SNIFF_BYTES = 8192


def stamp_of(path: Path) -> FileStamp:
    """The stamp of *path* as it is on disk now."""
    st = path.stat()
    return FileStamp(mtime_ns=st.st_mtime_ns, size=st.st_size)


def is_binary(head: bytes) -> bool:
    """A NUL byte in the first few KiB is how git and grep tell binary files."""
    return b"\0" in head[:BINARY_SNIFF_BYTES]


def check_fresh(path: Path, ctx: ToolContext, verb: str) -> ToolResult | None:
    """Refuse changing an existing file the agent has not read, or that changed since.

    Returns the error result, or ``None`` when the change may go ahead.
    """
    seen = ctx.read_files.get(path)
    if seen is None:
        return ToolResult(
            f"File has not been read yet: {path}. Read it first before {verb} it.",
            is_error=True,
        )
    if stamp_of(path) != seen:
        return ToolResult(
            f"File has been modified since it was read: {path}. It was changed by"
            f" someone else (the user, a linter, a command). Read it again before {verb} it.",
            is_error=True,
        )
    return None


def atomic_write(path: Path, data: str) -> FileStamp:
    """Replace *path* with *data* (UTF-8) atomically; create parent directories.

    An existing file keeps its permission bits. Returns the new stamp.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = None
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp_name, mode)
        else:
            # mkstemp creates 0600; a new file should get the usual umask mode.
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp_name, 0o666 & ~umask)
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    return stamp_of(path)
