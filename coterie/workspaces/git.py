"""Running git for the runtime: one async call, no program of the repository's.

The runtime's own git commands (creating worktrees and clones, committing a
teammate's work, merging it for the lead, pushing to ``--repo URL``) are
made by :func:`coterie.gitsafe.git_command`: a checkout's ``.git/config``
and hooks are the workspace's content, and the runtime must not run programs
they name on its own authority. Every key of that configuration is either
known to be inert, overridden, or makes the command refused (a
:class:`GitError` naming the key), before git starts. Nothing asks for
credentials (``GIT_TERMINAL_PROMPT=0``).
"""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

import attrs
import trio

from coterie.errors import CoterieError
from coterie.gitsafe import GitRefused, git_command

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

__all__ = ["GitError", "GitOutput", "git", "git_sync"]


class GitError(CoterieError, RuntimeError):
    """A git command the runtime needed failed (its words are in the message)."""


@attrs.frozen
class GitOutput:
    """What one git command gave back."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def _command(
    cwd: Path, args: tuple[str, ...], extra: Mapping[str, str] | None
) -> tuple[list[str], dict[str, str]]:
    """``git -C CWD ARGS`` as :mod:`coterie.gitsafe` makes it, or :class:`GitError`."""
    try:
        argv, env = git_command(cwd if cwd.is_dir() else cwd.parent, ("-C", str(cwd), *args))
    except GitRefused as exc:
        raise GitError(f"git {' '.join(args)} in {cwd}: {exc}") from None
    return argv, {**env, "LC_ALL": "C", **(extra or {})}


def _checked(args: tuple[str, ...], out: GitOutput, check: bool) -> GitOutput:
    if check and not out.ok:
        words = (out.stderr or out.stdout).strip() or f"exit status {out.returncode}"
        raise GitError(f"git {' '.join(args)}: {words}")
    return out


async def git(
    cwd: Path, *args: str, check: bool = True, env: Mapping[str, str] | None = None
) -> GitOutput:
    """Run ``git -C CWD ARGS``; with *check*, a failure raises :class:`GitError`."""
    argv, full_env = _command(cwd, args, env)
    done = await trio.run_process(
        argv,
        capture_stdout=True,
        capture_stderr=True,
        stdin=subprocess.DEVNULL,
        check=False,
        env=full_env,
    )
    out = GitOutput(done.returncode, done.stdout.decode(errors="replace"),
                    done.stderr.decode(errors="replace"))  # fmt: skip
    return _checked(args, out, check)


def git_sync(cwd: Path, *args: str, check: bool = True) -> GitOutput:
    """:func:`git` for the preparation of a run, before Trio runs anything."""
    argv, env = _command(cwd, args, None)
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, check=False,
            stdin=subprocess.DEVNULL, env=env, timeout=60,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git {' '.join(args)}: {exc}") from None
    return _checked(args, GitOutput(done.returncode, done.stdout, done.stderr), check)
