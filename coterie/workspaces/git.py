"""Running git for the runtime: one async call, git's programs switched off.

The runtime's own git commands (creating worktrees and clones, committing a
teammate's work, merging it for the lead) run under
:func:`coterie.gitsafe.safe_git_config`: a checkout's ``.git/config`` and
hooks are the workspace's content, and the runtime must not run programs
they name (hooks, fsmonitor, filter drivers' clean and smudge commands) on
its own authority; when that configuration cannot be read, the command is
refused. Nothing asks for credentials (``GIT_TERMINAL_PROMPT=0``).
"""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

import attrs
import trio

from coterie.errors import CoterieError
from coterie.gitsafe import git_env, safe_git_config

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


def _argv(cwd: Path, args: tuple[str, ...]) -> list[str]:
    return ["git", "--no-pager", "-C", str(cwd), *args]


def _env(cwd: Path, args: tuple[str, ...], extra: Mapping[str, str] | None) -> dict[str, str]:
    config = safe_git_config(cwd if cwd.is_dir() else cwd.parent)
    if config is None:
        raise GitError(
            f"git {' '.join(args)}: the repository's git configuration at {cwd} cannot be"
            " read, so git cannot run there without the risk of running its programs"
        )
    env = {**git_env(config), "LC_ALL": "C"}
    env.update(extra or {})
    return env


def _checked(args: tuple[str, ...], out: GitOutput, check: bool) -> GitOutput:
    if check and not out.ok:
        words = (out.stderr or out.stdout).strip() or f"exit status {out.returncode}"
        raise GitError(f"git {' '.join(args)}: {words}")
    return out


async def git(
    cwd: Path, *args: str, check: bool = True, env: Mapping[str, str] | None = None
) -> GitOutput:
    """Run ``git -C CWD ARGS``; with *check*, a failure raises :class:`GitError`."""
    done = await trio.run_process(
        _argv(cwd, args),
        capture_stdout=True,
        capture_stderr=True,
        stdin=subprocess.DEVNULL,
        check=False,
        env=_env(cwd, args, env),
    )
    out = GitOutput(done.returncode, done.stdout.decode(errors="replace"),
                    done.stderr.decode(errors="replace"))  # fmt: skip
    return _checked(args, out, check)


def git_sync(cwd: Path, *args: str, check: bool = True) -> GitOutput:
    """:func:`git` for the preparation of a run, before Trio runs anything."""
    try:
        done = subprocess.run(
            _argv(cwd, args), capture_output=True, text=True, check=False,
            stdin=subprocess.DEVNULL, env=_env(cwd, args, None), timeout=60,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git {' '.join(args)}: {exc}") from None
    return _checked(args, GitOutput(done.returncode, done.stdout, done.stderr), check)
