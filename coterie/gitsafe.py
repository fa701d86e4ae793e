"""Running git in a checkout that may not be trusted, without running its programs.

A repository's ``.git/config`` is the checkout's content: it can name
programs git runs on its own (an fsmonitor, hooks, a pager, an external
diff, the clean and smudge commands of filter drivers). Every git command
coterie runs itself (the git status of the system prompt, the worktrees,
commits and merges of isolated teammates) runs under
:func:`safe_git_config`: those switched off, each filter driver the
configuration names emptied, and no ``GIT_*`` variable of the caller's
environment (``GIT_DIR`` and the like could point it elsewhere). When the
configuration cannot even be read, git must not run at all.
"""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["SAFE_GIT_CONFIG", "git_env", "run_git", "safe_git_config"]

SAFE_GIT_CONFIG = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("diff.external", ""),
    ("diff.ignoreSubmodules", "all"),
    ("status.submoduleSummary", "false"),
)
_GIT_TIMEOUT = 5


def git_env(config: list[tuple[str, str]]) -> dict[str, str]:
    """The environment of a git command under *config*: the caller's, without its
    ``GIT_*`` variables, with *config* given as ``GIT_CONFIG_*`` (over every file)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_PAGER="cat", PAGER="cat", GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0")
    env["GIT_CONFIG_COUNT"] = str(len(config))
    for i, (key, value) in enumerate(config):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


def run_git(
    workdir: Path, config: list[tuple[str, str]], *args: str
) -> subprocess.CompletedProcess[str] | None:
    """``git ARGS`` in *workdir* under *config* (a few seconds at most, nothing asked
    on the terminal); None if it could not run or took too long."""
    try:
        return subprocess.run(
            ["git", "--no-pager", "--no-optional-locks", *args],
            cwd=workdir,
            env=git_env(config),
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def _filter_drivers(workdir: Path) -> list[str] | None:
    """The filter drivers git's configuration names here (reading it runs nothing);
    None if it cannot be read."""
    out = run_git(workdir, list(SAFE_GIT_CONFIG), "config", "--null", "--get-regexp", r"^filter\.")
    if out is None or out.returncode not in (0, 1):  # 1: no filter at all
        return None
    drivers = []
    for record in out.stdout.split("\0"):
        key = record.split("\n", 1)[0]  # filter.<driver>.<variable>
        if key.startswith("filter.") and key.count(".") >= 2:
            drivers.append(key[len("filter.") : key.rindex(".")])
    return list(dict.fromkeys(drivers))


def safe_git_config(workdir: Path) -> list[tuple[str, str]] | None:
    """The configuration under which git runs none of *workdir*'s programs, or None
    if it cannot be worked out (then git must not run)."""
    drivers = _filter_drivers(workdir)
    if drivers is None:
        return None
    config = list(SAFE_GIT_CONFIG)
    for driver in drivers:
        # An empty command is no command; not required, so git keeps the content as it is.
        config += [(f"filter.{driver}.{var}", "") for var in ("clean", "smudge", "process")]
        config.append((f"filter.{driver}.required", "false"))
    return config
