"""The workspace sandbox: which paths the file tools may touch.

A path the model gives is expanded (``~``), made absolute against the
workspace, and resolved with every symlink followed -- also for a file that
does not exist yet, whose deepest existing ancestor is resolved (that is
what :func:`os.path.realpath` does). The *resolved* path must lie inside the
workspace or one of the ``--add-dir`` directories (themselves resolved), and
the tools then operate on that resolved path, never on the spelling they
were given: a symlink inside the workspace that points outside therefore
leads outside, and is refused.

This module *judges* paths (the permission policy asks it before a tool
runs). The file tools do not act on its answer by path: they walk the path
again through directory descriptors with ``O_NOFOLLOW`` per component
(:mod:`coterie.tools._dirfd`), so a directory swapped for a symlink between
the check and the use cannot redirect a Read, Write or Edit. What Bash
commands do is the shell policy's and the OS sandbox's business.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from coterie.errors import CoterieError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from coterie.tools._base import ToolContext

__all__ = [
    "SandboxViolation",
    "absolute_path",
    "allowed_roots",
    "check_inside",
    "resolve_path",
    "sandboxed_path",
]


_RESOLVE_TRIES = 3


class SandboxViolation(CoterieError, PermissionError):
    """A tool was asked to touch a path outside the workspace and ``--add-dir``s.

    Tools turn it into an error result; the message is written for the model.
    """


def absolute_path(raw: str | os.PathLike[str], base: Path) -> Path:
    """*raw* with ``~`` expanded and made absolute against *base*; nothing resolved.

    Raises :class:`SandboxViolation` for a path that cannot name a file
    (empty, or holding a NUL byte).
    """
    text = os.fspath(raw)
    if not text.strip():
        raise SandboxViolation("The path is empty.")
    if "\0" in text:
        raise SandboxViolation("The path contains a NUL byte.")
    expanded = Path(os.path.expanduser(text))
    return expanded if expanded.is_absolute() else base / expanded


def resolve_path(raw: str | os.PathLike[str], base: Path) -> Path:
    """*raw* expanded, made absolute against *base*, symlinks followed.

    Raises :class:`SandboxViolation` for a path that cannot name a file
    (empty, or holding a NUL byte), or one whose components keep changing
    while they are resolved (fail closed: the caller refuses it).
    """
    absolute = absolute_path(raw, base)
    for _ in range(_RESOLVE_TRIES):
        try:
            # realpath resolves the deepest existing ancestor and keeps the rest as
            # written, so a not-yet-existing file under a symlinked directory is
            # judged by where the symlink really leads.
            return Path(os.path.realpath(absolute))
        except OSError:
            # A component changed kind between realpath's lstat and its
            # readlink (EINVAL): something is swapping it. Look again.
            continue
    raise SandboxViolation(
        f"{os.fspath(raw)} keeps changing while it is being resolved (a symlink or"
        " directory on the way is being replaced); refused."
    )


def allowed_roots(ctx: ToolContext, *, reading: bool = False) -> list[Path]:
    """The resolved workspace and additional directories, in that order; when
    *reading*, then the directories admitted for reading only (skill folders); then
    the folders a person let this one call reach (:attr:`ToolContext.call_roots`)."""
    roots: list[Path] = []
    admitted = (*ctx.extra_dirs, *(ctx.read_dirs if reading else ()), *ctx.call_roots)
    for root in (ctx.workspace, *admitted):
        resolved = Path(os.path.realpath(os.path.expanduser(root)))
        if resolved not in roots:
            roots.append(resolved)
    return roots


def check_inside(path: Path, roots: Iterable[Path]) -> bool:
    """Whether the resolved *path* is one of *roots* or lies below one."""
    return any(path == root or path.is_relative_to(root) for root in roots)


def sandboxed_path(raw: str | os.PathLike[str], ctx: ToolContext) -> Path:
    """Resolve *raw* for a file tool, or raise :class:`SandboxViolation`.

    Relative paths are taken against the workspace.
    """
    roots = allowed_roots(ctx)
    path = resolve_path(raw, roots[0])
    if not check_inside(path, roots):
        where = ", ".join(str(r) for r in roots)
        raise SandboxViolation(
            f"{os.fspath(raw)!s} resolves to {path}, which is outside the workspace"
            f" and the additional directories ({where}). coterie's file tools only"
            " work inside them; use a path inside the workspace."
        )
    return path
