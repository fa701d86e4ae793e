"""What changed in a workspace since the last snapshot, told by the kernel's file events.

The pure half of :mod:`.watch`. :class:`ChangeLog` is told which directories
are watched (:meth:`~ChangeLog.watching`, under the watch descriptor the
kernel gave each) and fed inotify's events as they are read
(:meth:`~ChangeLog.event`); :meth:`~ChangeLog.take` answers what the next
snapshot must look at again, as :class:`Dirty`:

- ``paths``: files (or links) created, written, closed after writing,
  changed in mode or owner, moved or deleted: each is looked at again with
  one ``lstat``;
- ``subtrees``: directories created, moved in, moved out or deleted: each is
  walked again whole (a directory moved in arrives with everything in it,
  and no event says what that is).

Nothing is known before the first walk, nor after the kernel's queue
overflowed or the workspace's own directory was moved or deleted: then
:meth:`~ChangeLog.take` answers None, which means "walk everything" (and
watch every directory again as it is walked).

A directory moved or deleted takes its watches with it: :meth:`event` returns
the descriptors to stop watching (a directory moved elsewhere would go on
reporting under its old name), and forgets them, so late events from them
are ignored (the walk of the new place sees what they said).
"""

from __future__ import annotations

import posixpath

import attrs

__all__ = [
    "EVENTS",
    "IN_IGNORED",
    "IN_ISDIR",
    "IN_Q_OVERFLOW",
    "ChangeLog",
    "Dirty",
]

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_UNMOUNT = 0x00002000
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ISDIR = 0x40000000

#: The events a snapshot cares about: anything that changes what a path holds,
#: its mode, or whether it is there.
EVENTS = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
)
_GONE = IN_MOVED_FROM | IN_DELETE
_ARRIVED = IN_MOVED_TO | IN_CREATE


@attrs.frozen
class Dirty:
    """The paths and the directories (relative to the workspace, ``/``-separated) to
    look at again."""

    paths: frozenset[str] = frozenset()
    subtrees: frozenset[str] = frozenset()


class ChangeLog:
    """The watched directories and the changes seen since the last :meth:`take`
    (directories named in *skipped* are never walked, so their coming and going
    changes nothing)."""

    def __init__(self, skipped: frozenset[str] = frozenset()) -> None:
        self._skipped = skipped
        self._dirs: dict[int, str] = {}
        self._wds: dict[str, int] = {}
        self._paths: set[str] = set()
        self._subtrees: set[str] = set()
        self._whole = True  # nothing known yet

    def watching(self, wd: int, rel: str) -> None:
        """Directory *rel* (``""``: the workspace) is watched under descriptor *wd*."""
        old = self._dirs.get(wd)
        if old is not None and self._wds.get(old) == wd:
            del self._wds[old]
        self._dirs[wd] = rel
        self._wds[rel] = wd

    def lost(self) -> None:
        """Events may have been missed: the next snapshot walks everything."""
        self._whole = True

    def event(self, wd: int, mask: int, name: str) -> list[int]:
        """One event read from the kernel; the descriptors to stop watching."""
        if mask & IN_Q_OVERFLOW:
            self._whole = True
            return []
        base = self._dirs.get(wd)
        if base is None:
            return []  # a directory forgotten already (moved or deleted)
        if mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT):
            if base == "":
                self._whole = True  # the workspace itself went
            if mask & IN_IGNORED:
                self._forget_wd(wd)
            return []
        path = posixpath.join(base, name) if base else name
        if not mask & IN_ISDIR:
            self._paths.add(path)
            return []
        if name in self._skipped or not mask & (_GONE | _ARRIVED):
            return []  # never walked; or a directory's own mode: no file changed
        self._subtrees.add(path)
        return self._forget(path) if mask & _GONE else []

    def take(self) -> Dirty | None:
        """What changed since the last call (None: walk everything); starts afresh."""
        whole, paths, subtrees = self._whole, self._paths, self._subtrees
        self._whole, self._paths, self._subtrees = False, set(), set()
        if whole:
            return None
        # A directory inside another walked again is covered by it; so are its paths.
        kept = frozenset(s for s in subtrees if not _inside(s, subtrees))
        loose = frozenset(p for p in paths if p not in kept and not _inside(p, kept))
        return Dirty(loose, kept)

    def _forget(self, rel: str) -> list[int]:
        """Forget the watches of *rel* and every directory under it; their descriptors."""
        prefix = rel + "/"
        gone = [wd for path, wd in self._wds.items() if path == rel or path.startswith(prefix)]
        for wd in gone:
            self._forget_wd(wd)
        return gone

    def _forget_wd(self, wd: int) -> None:
        rel = self._dirs.pop(wd, None)
        if rel is not None and self._wds.get(rel) == wd:
            del self._wds[rel]


def _inside(path: str, dirs: set[str] | frozenset[str]) -> bool:
    """Whether a directory above *path* is one of *dirs*."""
    while (path := posixpath.dirname(path)) != "":
        if path in dirs:
            return True
    return False
