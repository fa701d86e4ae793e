"""A snapshot of a workspace: each file's mode, size, times and content hash.

:func:`scan` walks the workspace with ``os.scandir`` (symbolic links are
recorded as links, never followed; directories named ``.git`` are left out,
as git keeps their history itself) and, for a file whose size, modification
time, inode and mode are those the previous snapshot recorded, takes its hash
from there: only files that moved are read, as git's index does. Given what
changed since the previous snapshot (:class:`~.changes.Dirty`, from the
kernel's file events: :mod:`.watch`), it looks again only at those paths and
directories, and takes everything else from the previous one. A file's
content goes to the :class:`~.store.ObjectStore` when it is hashed, so every
snapshot can be restored. A file that vanishes or cannot be read during the
walk is left out of the snapshot (its absence is what a restore gives it).

Left out: the folders of :data:`SKIPPED_DIRS` and files over
:data:`MAX_FILE_BYTES`. A workspace over :data:`MAX_FILES` files or
:data:`MAX_BYTES` is refused whole (:class:`SnapshotTooLarge`). A snapshot is
plain data, stored as JSON (:meth:`Snapshot.to_json`).
"""

from __future__ import annotations

import os
import posixpath
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from coterie.errors import CoterieError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from coterie.checkpoints.changes import Dirty
    from coterie.checkpoints.store import ObjectStore

__all__ = [
    "MAX_BYTES",
    "MAX_FILES",
    "MAX_FILE_BYTES",
    "SKIPPED_DIRS",
    "Entry",
    "Snapshot",
    "SnapshotTooLarge",
    "changed_paths",
    "scan",
]

#: Directory names never entered: git's own history, agents' worktrees (checkouts of
#: their own), and the installed dependencies and caches tools rebuild, which would
#: otherwise be copied whole at a run's first checkpoint.
SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".worktrees",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
    }
)
#: Files larger than this are left out of snapshots (not kept, not rewound).
MAX_FILE_BYTES = 20 * 1024 * 1024
#: A workspace holding more than this (files or bytes, the left-out aside) is not
#: snapshotted at all: its first snapshot would copy it whole.
MAX_FILES = 100_000
MAX_BYTES = 2 * 1024**3


class SnapshotTooLarge(CoterieError):
    """The workspace is over :data:`MAX_FILES` or :data:`MAX_BYTES`: no snapshot."""


@attrs.frozen
class Entry:
    """One path of a snapshot: a regular file (``sha`` of its content) or a symbolic
    link (``link``: where it points)."""

    mode: int
    size: int = 0
    mtime_ns: int = 0
    ino: int = 0
    sha: str | None = None
    link: str | None = None

    def same_content(self, other: Entry) -> bool:
        """Whether both hold the same thing: content and permissions, or link target."""
        return (self.sha, self.link, self.mode & 0o7777) == (
            other.sha,
            other.link,
            other.mode & 0o7777,
        )


@attrs.frozen
class Snapshot:
    """Every file of a workspace, by its path relative to the workspace (``/``-separated)."""

    files: dict[str, Entry] = attrs.field(factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {path: attrs.asdict(entry) for path, entry in sorted(self.files.items())}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Snapshot:
        return cls({path: Entry(**fields) for path, fields in data.items()})


def changed_paths(before: Snapshot, after: Snapshot) -> set[str]:
    """The paths whose content, permissions or existence differ between the two."""
    changed = set(before.files) ^ set(after.files)
    for path in set(before.files) & set(after.files):
        if not before.files[path].same_content(after.files[path]):
            changed.add(path)
    return changed


def scan(
    workspace: Path,
    store: ObjectStore,
    previous: Snapshot | None = None,
    *,
    dirty: Dirty | None = None,
    on_dir: Callable[[str], None] | None = None,
) -> Snapshot:
    """A snapshot of *workspace* now (see the module docstring);
    :class:`SnapshotTooLarge` before anything is read or kept if the workspace is
    over the limits.

    With *dirty* (what changed since *previous*, :mod:`.watch`), only those paths
    are looked at again and the rest is taken from *previous*. *on_dir* is called
    with each directory a walk enters, before it is listed (to watch it).
    """
    known = previous.files if previous is not None else {}
    if previous is None or dirty is None:
        kept: dict[str, Entry] = {}
        found = list(_walk(workspace, "", on_dir))
    else:
        kept, found = _looked_again(workspace, previous, dirty, on_dir)
    count = len(kept) + len(found)
    total = sum(e.size for e in kept.values()) + sum(st.st_size for _, _, st in found)
    if count > MAX_FILES or total > MAX_BYTES:
        raise SnapshotTooLarge(
            f"the workspace holds {count:,} files, {total / 1024**3:.1f} GiB (checkpoints"
            f" keep at most {MAX_FILES:,} files, {MAX_BYTES / 1024**3:.0f} GiB)"
        )
    files = kept
    for rel, full, st in found:
        entry = _entry(full, st, known.get(rel), store)
        if entry is not None:
            files[rel] = entry
    return Snapshot(files)


def _looked_again(
    workspace: Path, previous: Snapshot, dirty: Dirty, on_dir: Callable[[str], None] | None
) -> tuple[dict[str, Entry], list[tuple[str, str, os.stat_result]]]:
    """*previous*'s entries that *dirty* does not name, and what its paths and
    subtrees hold now (lstat'd, not yet read)."""
    looked = dirty.paths | dirty.subtrees
    under = set(dirty.subtrees)  # everything below these is looked at again
    found: dict[str, tuple[str, str, os.stat_result]] = {}
    walks: list[str] = []
    for rel in looked:  # each may be a file, a link or a folder by now, or gone
        full = os.path.join(workspace, rel)
        try:
            st = os.lstat(full)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            if posixpath.basename(rel) not in SKIPPED_DIRS:
                under.add(rel)
                walks.append(rel)
        elif _kept_kind(st):
            found[rel] = (rel, full, st)
    prefixes = tuple(f"{sub}/" for sub in under)
    if prefixes:
        kept = {
            rel: entry
            for rel, entry in previous.files.items()
            if rel not in looked and not rel.startswith(prefixes)
        }
    else:  # the common case: a few files changed
        kept = dict(previous.files)
        for rel in looked:
            kept.pop(rel, None)
    for sub in walks:
        for item in _walk(Path(workspace, sub), f"{sub}/", on_dir):
            found[item[0]] = item
    return kept, list(found.values())


def _entry(full: str, st: os.stat_result, old: Entry | None, store: ObjectStore) -> Entry | None:
    """The entry of the file or link at *full* (lstat *st*), its hash taken from *old*
    when nothing moved; None if it is gone or unreadable."""
    if stat.S_ISLNK(st.st_mode):
        try:
            return Entry(mode=st.st_mode, link=os.readlink(full))
        except OSError:
            return None
    if (
        old is not None
        and old.sha is not None
        and (old.size, old.mtime_ns, old.ino, old.mode)
        == (st.st_size, st.st_mtime_ns, st.st_ino, st.st_mode)
    ):
        return old
    try:
        sha = store.put_file(Path(full))
    except OSError:
        return None  # gone, or unreadable: not in the snapshot
    return Entry(st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino, sha)


def _kept_kind(st: os.stat_result) -> bool:
    """Whether a snapshot keeps what *st* describes: a link, or a regular file not
    over :data:`MAX_FILE_BYTES`."""
    return stat.S_ISLNK(st.st_mode) or (stat.S_ISREG(st.st_mode) and st.st_size <= MAX_FILE_BYTES)


def _walk(
    root: Path, prefix: str = "", on_dir: Callable[[str], None] | None = None
) -> Iterator[tuple[str, str, os.stat_result]]:
    """(relative path, full path, lstat) of every regular file and link under *root*
    (whose path relative to the workspace is *prefix*)."""
    stack = [(prefix, str(root))]
    while stack:
        prefix, directory = stack.pop()
        if on_dir is not None:
            on_dir(prefix[:-1])
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            rel = f"{prefix}{entry.name}"
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if entry.name not in SKIPPED_DIRS:
                    stack.append((f"{rel}/", entry.path))
            elif _kept_kind(st):
                yield rel, entry.path, st
