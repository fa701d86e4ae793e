"""ripgrep as Glob's and Grep's file finder, when an ``rg`` binary is at hand.

ripgrep walks a tree and searches it about ten times faster than Python can.
It is used here only to *find* files: which files exist (Glob) and which
may match (Grep). Everything the model is shown is still read by coterie's
own safe path (:mod:`coterie.tools._dirfd`: no symlink leads out of the
sandbox, special files are never opened, Read deny rules apply) and
rendered by the same code as without ripgrep, so the two paths give the
same answers. A file ripgrep names is a candidate, nothing more: a path it
reached through a directory swapped for a symlink mid-walk is read again
safely, and what it read is never shown.

Which ``rg``: ``$COTERIE_RG`` (a path, or ``off`` to never use one), else
``rg`` on ``PATH``, else the one beside the running Python (the ``ripgrep``
package on PyPI installs it there). A pattern ripgrep cannot take (Python
``re`` syntax it lacks, such as look-around or back-references), or any
other failure of the binary, falls back to the pure-Python walk.

What ripgrep is told, so its candidates are a superset of what the Python
walk would find: hidden files included, no ignore files honoured (``.git``
is left out, as by the walk), files over the size limit skipped; a glob is
passed on only when it has no ``/`` (its meaning is then the same: the file
name at any depth). Symlinks are not followed (the walk follows symlinked
files that stay inside the sandbox; ripgrep, like Claude Code's Grep, does
not).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import threading
    from collections.abc import Sequence

__all__ = ["RG_ENV", "find_rg", "rg_files", "rg_matching"]

#: The environment variable naming the ``rg`` to use (``off``: none).
RG_ENV = "COTERIE_RG"
#: How often (seconds) a running ``rg`` is checked for the call being cancelled.
_POLL = 0.05
_COMMON = ("--no-config", "--no-messages", "--hidden", "--no-ignore", "--null", "-g", "!.git")


@functools.cache
def _usable(path: str) -> bool:
    try:
        done = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and done.stdout.startswith("ripgrep ")


def find_rg() -> str | None:
    """The ``rg`` binary to use, or None (see the module docstring)."""
    wanted = os.environ.get(RG_ENV)
    if wanted is not None:
        if wanted.strip().lower() in ("", "0", "off", "no", "false"):
            return None
        return wanted if _usable(wanted) else None
    for candidate in (shutil.which("rg"), str(Path(sys.executable).parent / "rg")):
        if candidate and os.access(candidate, os.X_OK) and _usable(candidate):
            return candidate
    return None


def _run(argv: Sequence[str], stop: threading.Event | None) -> tuple[int, bytes] | None:
    """``rg``'s exit code and output; None if it could not run or *stop* was set."""
    try:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
    except OSError:
        return None
    with proc:
        while True:
            try:
                out, _ = proc.communicate(timeout=_POLL)
            except subprocess.TimeoutExpired:
                if stop is not None and stop.is_set():
                    proc.kill()
                    proc.communicate()
                    return None
                continue
            return proc.returncode, out


def _below(root: Path, out: bytes) -> list[str]:
    """The paths ripgrep printed, relative to *root* (``a/b.txt``); any other left out."""
    prefix = os.fsencode(root).rstrip(b"/") + b"/"
    cut = len(prefix)
    return [os.fsdecode(n[cut:]) for n in out.split(b"\0") if n.startswith(prefix) and n[cut:]]


def _limits(max_bytes: int | None, max_depth: int | None) -> list[str]:
    size = ["--max-filesize", str(max_bytes)] if max_bytes is not None else []
    return size + (["--max-depth", str(max_depth)] if max_depth is not None else [])


def rg_files(
    rg: str,
    root: Path,
    stop: threading.Event | None = None,
    *,
    max_bytes: int | None = None,
    max_depth: int | None = None,
) -> list[str] | None:
    """The regular files below *root*, relative to it, or None when ripgrep failed
    (*max_depth*: 1 for *root*'s own files)."""
    argv = [rg, "--files", *_COMMON, *_limits(max_bytes, max_depth), "--", str(root)]
    done = _run(argv, stop)
    if done is None or done[0] not in (0, 1, 2) or (done[0] == 2 and not done[1]):
        return None
    return _below(root, done[1])


def rg_matching(
    rg: str,
    root: Path,
    pattern: str,
    *,
    ignore_case: bool = False,
    multiline: bool = False,
    globs: Sequence[str] = (),
    max_bytes: int | None = None,
    max_depth: int | None = None,
    stop: threading.Event | None = None,
) -> list[str] | None:
    """The files below *root* in which *pattern* may match, relative to it, or None
    when ripgrep cannot search for it (a pattern it does not take, a failure).

    Each of *globs* narrows by file name (they are alternatives, as several
    ``-g`` are to ripgrep); pass only globs without ``/``.
    """
    argv = [rg, "--files-with-matches", *_COMMON, *_limits(max_bytes, max_depth)]
    if ignore_case:
        argv.append("--ignore-case")
    if multiline:
        argv += ["--multiline", "--multiline-dotall"]
    for glob in globs:
        argv += ["-g", glob]
    done = _run([*argv, "-e", pattern, "--", str(root)], stop)
    if done is None:
        return None
    code, out = done
    if code == 1:
        return []
    if code == 0 or (code == 2 and out):  # 2 with output: some files could not be read
        return _below(root, out)
    return None
