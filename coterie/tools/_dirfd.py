"""Race-free path resolution through directory file descriptors.

Theory of operation. A path is checked and used in one walk: starting from
``/``, every component is opened with ``O_NOFOLLOW`` relative to the
descriptor of the directory before it (``openat``), so what is opened is
exactly what was looked at. A symlink met on the way is read
(``readlinkat``) and its target spliced into the rest of the walk, as the
kernel would do, but by us: every directory the walk enters must be one of
the allowed roots, lie below one, or be an ancestor of one (the way down to
the workspace from ``/``), and the final path must lie inside a root. A
symlink swapped in after a component was opened cannot redirect anything:
the descriptor already held is the directory that was checked, and the next
``openat`` with ``O_NOFOLLOW`` refuses a symlink instead of following it.

The result, a :class:`Target`, holds the descriptor of the real parent
directory and the leaf's name in it; the file tools open, create and rename
only relative to that descriptor. Blocking; call it from a worker thread.

Limits: a directory *moved* (not replaced by a symlink) out of the roots
after the walk entered it is still written through the descriptor held;
doing that needs write access outside the workspace, which the OS sandbox
takes away from Bash.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from coterie.tools.sandbox import SandboxViolation, check_inside

if TYPE_CHECKING:
    import threading
    from collections.abc import Iterator, Sequence

__all__ = [
    "DIR_FLAGS",
    "FILE_FLAGS",
    "MAX_WALK_DEPTH",
    "Entry",
    "Target",
    "kind_of",
    "resolve",
    "walk",
]

#: How a directory on the walk is opened: never through a symlink, never blocking.
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
#: How a file is opened for reading: a FIFO opens at once (no writer needed),
#: a terminal does not become ours, a symlink is refused.
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
_MAX_SYMLINKS = 40  # as Linux's MAXSYMLINKS
#: How deep Glob and Grep descend: one descriptor is held per level.
MAX_WALK_DEPTH = 128


def kind_of(mode: int) -> str | None:
    """What a special file is, for messages; ``None`` for a regular file or directory."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "a special file"


@attrs.define
class Target:
    """A resolved path: the open real parent directory and the leaf's name in it.

    ``path`` is the real absolute path (what the sandbox judged, and the key
    of ``read_files``); ``lstat`` is the leaf as it was when resolved, or
    ``None`` when it does not exist. Close it (it is a context manager).
    """

    parent: int
    name: str
    path: Path
    lstat: os.stat_result | None

    def close(self) -> None:
        """Release the parent directory's descriptor."""
        if self.parent >= 0:
            os.close(self.parent)
            self.parent = -1

    def __enter__(self) -> Target:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def restat(self) -> os.stat_result | None:
        """The leaf's ``lstat`` now, or ``None`` if it is gone."""
        try:
            return os.stat(self.name, dir_fd=self.parent, follow_symlinks=False)
        except FileNotFoundError:
            return None


def _may_enter(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == r or path.is_relative_to(r) or r.is_relative_to(path) for r in roots)


def _outside(raw: str, where: Path, roots: Sequence[Path]) -> SandboxViolation:
    listed = ", ".join(str(r) for r in roots)
    return SandboxViolation(
        f"{raw} resolves to {where}, which is outside the workspace and the additional"
        f" directories ({listed}). coterie's file tools only work inside them; use a path"
        " inside the workspace."
    )


def _protected(raw: str, where: Path, protected: Sequence[Path]) -> SandboxViolation | None:
    for place in protected:
        if where == place or where.is_relative_to(place):
            return SandboxViolation(
                f"{raw} resolves to {where}, inside {place}, which is protected (coterie's"
                " own run state): no tool may write there, in any mode."
            )
    return None


def resolve(
    absolute: Path,
    roots: Sequence[Path],
    *,
    raw: str | None = None,
    create_dirs: bool = False,
    protected: Sequence[Path] = (),
) -> Target:
    """Walk *absolute* from ``/`` under *roots*; return its parent, opened.

    Symlinks are followed (the leaf's too) as long as the walk stays inside;
    missing directories are made when *create_dirs* (only inside a root).
    A walk for a write passes *protected* (resolved directories): a leaf in
    one of them is refused, and no directory is made there.
    Raises :class:`SandboxViolation` when the path leads outside, and
    :class:`OSError` for what the file system refuses (``FileNotFoundError``
    for a missing directory, ``NotADirectoryError``, ``ELOOP``).
    """
    shown = raw if raw is not None else str(absolute)
    pending = list(reversed(absolute.parts[1:]))  # a stack: the next component last
    stack = [os.open("/", DIR_FLAGS)]
    names: list[str] = []
    links = 0
    try:
        while True:
            if not pending:
                # The path names a directory (or ends in "." / ".."): its leaf
                # is the last directory entered, reopened from its parent.
                if not names:  # "/" itself
                    if not check_inside(Path("/"), roots):
                        raise _outside(shown, Path("/"), roots)
                    top = os.stat(".", dir_fd=stack[-1])
                    return Target(stack.pop(), ".", Path("/"), top)
                os.close(stack.pop())
                leaf = names.pop()
                pending.append(leaf)
            name = pending.pop()
            if name in ("", "."):
                continue
            if name == "..":
                if names:
                    os.close(stack.pop())
                    names.pop()
                continue
            here = Path("/", *names, name)
            try:
                st: os.stat_result | None = os.stat(name, dir_fd=stack[-1], follow_symlinks=False)
            except FileNotFoundError:
                st = None
            if st is not None and stat.S_ISLNK(st.st_mode):
                links += 1
                if links > _MAX_SYMLINKS:
                    raise OSError(errno.ELOOP, "Too many levels of symbolic links", shown)
                target = os.readlink(name, dir_fd=stack[-1])
                if target.startswith("/"):
                    while len(stack) > 1:
                        os.close(stack.pop())
                    names.clear()
                pending.extend(reversed(Path(target).parts[1 if target.startswith("/") else 0 :]))
                continue
            if not pending:  # the leaf
                if not check_inside(here, roots):
                    raise _outside(shown, here, roots)
                refusal = _protected(shown, here, protected)
                if refusal is not None:
                    raise refusal
                return Target(stack.pop(), name, here, st)
            if not _may_enter(here, roots):
                raise _outside(shown, Path(here, *reversed(pending)), roots)
            if st is None:
                if not (create_dirs and check_inside(here, roots)):
                    raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(here))
                refusal = _protected(shown, here, protected)
                if refusal is not None:
                    raise refusal
                # Made meanwhile by someone else: the open below judges what it is.
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=stack[-1])
            stack.append(os.open(name, DIR_FLAGS, dir_fd=stack[-1]))
            names.append(name)
    finally:
        for fd in stack:
            os.close(fd)


@attrs.frozen
class Entry:
    """A non-directory entry met by :func:`walk`: where it is and what it was."""

    path: Path
    dir_fd: int
    name: str
    lstat: os.stat_result


def walk(
    dir_fd: int, top: Path, skip: frozenset[str], stop: threading.Event | None = None
) -> Iterator[Entry]:
    """Every non-directory entry below the open directory *dir_fd*, depth first, sorted.

    Directories are entered with ``O_NOFOLLOW`` relative to their parent's
    descriptor, so a directory swapped for a symlink is not entered; symlinks
    and special files are yielded as they are (the caller decides). An
    entry's ``dir_fd`` is valid until the iterator moves on. *dir_fd* is not
    closed. Unreadable directories, and those deeper than
    :data:`MAX_WALK_DEPTH` (a checkout nested to exhaust descriptors), are
    left out.
    """
    # One frame per open directory: its fd, its path, the subdirectories left.
    frames: list[tuple[int, Path, list[str]]] = []
    try:
        fd, here = dir_fd, top
        while True:
            subdirs: list[str] = []
            frames.append((fd, here, subdirs))  # before yielding: closing us closes it
            try:
                names = sorted(os.listdir(fd))
            except OSError:
                names = []
            for name in names:
                if stop is not None and stop.is_set():
                    return
                try:
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except OSError:
                    continue
                if not stat.S_ISDIR(st.st_mode):
                    yield Entry(here / name, fd, name, st)
                elif name not in skip and len(frames) < MAX_WALK_DEPTH:
                    subdirs.append(name)
            subdirs.reverse()  # popped from the end: in sorted order
            fd = -1
            while fd < 0 and frames:
                parent, where, left = frames[-1]
                if not left:
                    frames.pop()
                    if parent != dir_fd:
                        os.close(parent)
                    continue
                name = left.pop()
                try:
                    fd, here = os.open(name, DIR_FLAGS, dir_fd=parent), where / name
                except OSError:
                    continue  # gone, swapped for a symlink, or unreadable
            if fd < 0:
                return
            if stop is not None and stop.is_set():
                os.close(fd)
                return
    finally:
        for open_fd, _, _ in frames:
            if open_fd != dir_fd:
                os.close(open_fd)
