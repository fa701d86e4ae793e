"""Running git for the runtime: the one place coterie runs it, no program of the repository's.

Every git command coterie runs itself starts here. The workspaces' commands
(creating worktrees and clones, committing a teammate's work, merging it
for the lead, pushing to ``--repo URL``: :func:`git`, :func:`git_sync`),
the plugin marketplaces' clones and fetches (:func:`git_in_group`), the
system prompt's ``git status`` snapshot (:func:`run_git`) and the check
that the model's own read-only git may run in a checkout
(:func:`config_is_inert`). A checkout's ``.git/config`` and hooks are the
workspace's content, and the runtime must not run programs they name on
its own authority: before git starts, the repository's configuration is
listed and judged by :mod:`coterie.workspaces.gitsafe` (pure), every key
either known to be inert, overridden, or making the command refused
(:class:`~coterie.workspaces.gitsafe.GitRefused`, or a :class:`GitError`
naming the key). Nothing asks for credentials (``GIT_TERMINAL_PROMPT=0``).
"""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING

import attrs
import trio

from coterie.errors import CoterieError
from coterie.workspaces.gitsafe import (
    GIT,
    LIST_CONFIG,
    USER_CONFIG,
    GitRefused,
    classify,
    git_env,
    has_submodule,
    parse_listing,
    plan,
    user_config,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from pathlib import Path

__all__ = [
    "GitError",
    "GitOutput",
    "config_is_inert",
    "git",
    "git_command",
    "git_in_group",
    "git_sync",
    "run_git",
    "safe_git_config",
]

#: The longest a short read (the configuration, the snapshot) may take, in seconds.
_READ_TIMEOUT = 5


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


def _run(
    argv: list[str], cwd: Path | None, env: Mapping[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """*argv* to its end (OSError or :class:`subprocess.TimeoutExpired` if it cannot
    run or takes longer than *timeout*): every synchronous git of this module."""
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True,
        timeout=timeout, check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def _read(workdir: Path, args: Iterable[str], env: Mapping[str, str]) -> str | None:
    try:
        done = _run([*GIT, *args], workdir, env, _READ_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode in (0, 1) else None  # 1: nothing set


def _repository_keys(workdir: Path) -> list[str] | None:
    """Every key of the configuration git would read in *workdir*; None if it cannot be read."""
    listed = _read(workdir, LIST_CONFIG, git_env(()))
    return None if listed is None else [key for _, key, _ in parse_listing(listed)]


def safe_git_config(workdir: Path) -> list[tuple[str, str]]:
    """The command-line configuration for git in *workdir* (the module docstring of
    :mod:`coterie.workspaces.gitsafe`); :class:`GitRefused`, with its one-line
    reason, if git must not run."""
    keys = _repository_keys(workdir)
    if keys is None:
        raise GitRefused(
            f"the git configuration at {workdir} cannot be read; the runtime will not run git there"
        )
    # The user's own settings, read as the user's git would (their environment).
    return plan(keys) + user_config(_read(workdir, USER_CONFIG, dict(os.environ)) or "", keys)


def git_command(workdir: Path, args: Iterable[str]) -> tuple[list[str], dict[str, str]]:
    """The argv and environment of ``git ARGS`` run by the runtime in *workdir*;
    :class:`GitRefused` if git must not run there."""
    return [*GIT, *args], git_env(safe_git_config(workdir))


def run_git(workdir: Path, *args: str) -> subprocess.CompletedProcess[str] | None:
    """``git ARGS`` in *workdir* (a few seconds at most, nothing asked on the
    terminal); None if it could not run or took too long, :class:`GitRefused` if
    it must not run there."""
    argv, env = git_command(workdir, args)
    try:
        return _run(argv, workdir, env, _READ_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return None


def config_is_inert(workdir: Path) -> bool:
    """Whether git run in *workdir* with the repository's configuration as it is (the
    model's own ``git status``) runs none of its programs: every key is inert, and
    there is no submodule (git runs itself inside each, under that one's own
    configuration, which this does not read)."""
    keys = _repository_keys(workdir)
    if keys is None or not all(classify(k) == "inert" for k in keys):
        return False
    try:
        index = run_git(workdir, "ls-files", "--stage", "-z")
    except GitRefused:
        return False
    if index is None or index.returncode != 0:
        return index is not None and "not a git repository" in index.stderr
    return not has_submodule(index.stdout)


def _command(
    cwd: Path, args: tuple[str, ...], extra: Mapping[str, str] | None
) -> tuple[list[str], dict[str, str]]:
    """``git -C CWD ARGS`` as :func:`git_command` makes it, or :class:`GitError`."""
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
        done = _run(argv, None, env, 60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git {' '.join(args)}: {exc}") from None
    return _checked(args, GitOutput(done.returncode, done.stdout, done.stderr), check)


async def git_in_group(cwd: Path, *args: str, records: Path) -> str:
    """``git ARGS`` in *cwd* in a process group recorded in *records*
    (:func:`coterie.processes.open_group`), its standard error with its output; that output, or
    :class:`GitError` with git's last line (naming ``git ARGS[0]`` only). No
    time limit of its own: the caller's (:func:`trio.fail_after`)."""
    from coterie.processes import open_group

    try:
        argv, env = git_command(cwd, args)
    except GitRefused as exc:
        raise GitError(f"git {args[0]} in {cwd}: {exc}") from None
    chunks: list[bytes] = []
    async with open_group(
        argv, cwd=cwd, records=records, env={**env, "LC_ALL": "C"}, stderr=subprocess.STDOUT
    ) as proc:
        assert proc.stdout is not None
        while chunk := await proc.stdout.receive_some():
            chunks.append(bytes(chunk))
        code = await proc.wait()
    out = b"".join(chunks).decode(errors="replace")
    if code != 0:
        words = out.strip().splitlines()[-1:] or [f"exit status {code}"]
        raise GitError(f"git {args[0]}: {words[0]}")
    return out
