"""Small file-system helpers with the durability rules the whole project follows."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


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
