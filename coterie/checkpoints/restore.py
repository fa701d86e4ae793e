"""Putting paths of a workspace back as a snapshot had them.

:func:`restore` takes the paths to put back (those a run changed since a
checkpoint: the caller decides) and, for each, deletes what is there now if
the snapshot had nothing, or writes the snapshot's content and permissions
(a link is made again). Deletions come first, deepest first, then folders
they emptied (but those the snapshot still needs), then writes. Nothing is
written through a symbolic link: a path whose folder is a link (or is not a
folder) now is refused with :class:`RestoreRefused` before anything changes,
so a restore never reaches outside the workspace. A file is written to a
temporary name beside it and renamed into place.
"""

from __future__ import annotations

import contextlib
import os
import stat
from typing import TYPE_CHECKING

from coterie.errors import CoterieError

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from coterie.checkpoints.snapshot import Snapshot
    from coterie.checkpoints.store import ObjectStore

__all__ = ["RestoreRefused", "restore"]


class RestoreRefused(CoterieError):
    """A path cannot be put back safely (its folder is now a link, or a file)."""


def restore(workspace: Path, target: Snapshot, paths: Iterable[str], store: ObjectStore) -> None:
    """Make each of *paths* in *workspace* what *target* had (see the module docstring)."""
    chosen = sorted(set(paths))
    gone = [p for p in chosen if p not in target.files]
    back = [p for p in chosen if p in target.files]
    # The folders the snapshot's files are in: never removed for being empty.
    needed = {parent for p in target.files for parent in _parents(p)}
    for path in [*gone, *back]:
        _check_folders(workspace, path, needed, set(gone))
    for path in sorted(gone, key=lambda p: -p.count("/")):
        _remove(workspace / path)
    for path in sorted(gone, key=lambda p: -p.count("/")):
        for parent in _parents(path):
            if parent not in needed:
                _remove_empty(workspace / parent)
    for path in back:
        entry = target.files[path]
        full = workspace / path
        full.parent.mkdir(parents=True, exist_ok=True)
        if _is_dir(full):
            raise RestoreRefused(f"{path}: a folder is there now; remove it to rewind")
        temp = full.parent / f".coterie-restore-{os.getpid()}-{full.name}"
        temp.unlink(missing_ok=True)
        if entry.link is not None:
            os.symlink(entry.link, temp)
        else:
            assert entry.sha is not None
            temp.write_bytes(store.read(entry.sha))
            os.chmod(temp, stat.S_IMODE(entry.mode))
        os.replace(temp, full)


def _parents(path: str) -> list[str]:
    """The folders of *path*, deepest first (``a/b/c`` → ``a/b``, ``a``)."""
    parts = path.split("/")[:-1]
    return ["/".join(parts[:i]) for i in range(len(parts), 0, -1)]


def _check_folders(workspace: Path, path: str, needed: set[str], gone: set[str]) -> None:
    """Refuse *path* if one of its folders exists now as anything but a real folder
    (a link could lead the write outside the workspace), unless that thing is
    itself deleted first."""
    for parent in reversed(_parents(path)):
        if parent in gone:
            return  # a file or link deleted before anything is written below it
        try:
            st = os.lstat(workspace / parent)
        except FileNotFoundError:
            return  # made afresh below
        if not stat.S_ISDIR(st.st_mode):
            kind = "a link" if stat.S_ISLNK(st.st_mode) else "a file"
            raise RestoreRefused(f"{path}: its folder {parent} is {kind} now")


def _is_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


def _remove(path: Path) -> None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        raise RestoreRefused(f"{path}: a folder is there now; remove it to rewind")
    path.unlink()


def _remove_empty(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not empty, or already gone
        folder.rmdir()
