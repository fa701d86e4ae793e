"""Small file-system helpers with the durability rules the whole project follows."""

from __future__ import annotations

import contextlib
import errno
import json
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

#: Errors meaning the storage takes no more writes: full, over quota, read-only.
STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS})


def is_storage_error(exc: BaseException) -> bool:
    """Whether *exc* says the disk is full or read-only."""
    return isinstance(exc, OSError) and exc.errno in STORAGE_ERRNOS


def fsync_dir(directory: Path) -> None:
    """fsync a directory, so that a rename or a new file in it is durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, *, sync: bool) -> None:
    """Replace *path* with *data* so that a crash leaves the old or the new content.

    Temp file in the same directory, (fsync), rename, (fsync of the directory):
    with ``sync`` the new content also survives power loss.
    """
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    if sync:
        fsync_dir(path.parent)  # the rename is durable only once the entry is


def append_json_line(path: Path, value: dict[str, Any]) -> None:
    """Append *value* as one JSON line to *path* (made if missing), fsynced before
    returning: a crash leaves the line whole, or cut off (which
    :func:`read_json_lines` leaves out)."""
    data = (json.dumps(value, ensure_ascii=False) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def read_json_lines(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of *path*, one a line (none if it is missing); a line that
    is not one (cut off by a crash) is left out."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    found = []
    for line in raw.splitlines():
        with contextlib.suppress(ValueError):
            value = json.loads(line)
            if isinstance(value, dict):
                found.append(value)
    return found


def raise_fd_limit() -> int:
    """Raise this process's soft limit on open files to its hard limit; the new limit.

    Each busy file mailbox holds a few descriptors (lock, writer, reader), so
    a team of hundreds of agents needs more than the common default of 1024.
    """
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            return soft
        return target
    return soft
