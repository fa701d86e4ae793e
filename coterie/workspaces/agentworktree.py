"""An agent's own worktree of its workspace (EnterWorktree / ExitWorktree).

Claude Code's EnterWorktree makes ``.claude/worktrees/NAME`` on a new branch
``worktree-NAME`` at HEAD, locks it while the session works there, and its
ExitWorktree either keeps it (unlocked, for later) or removes it and its
branch. coterie does the same but puts it under :data:`WORKTREES_DIR` at the
top of the repository: coterie treats anything below a ``.claude`` folder as
configuration a person must approve changing, which would make every write
in a worktree there a question. The names follow :mod:`.naming`'s rules for
a branch component. It knows nothing of agents or tools.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

import attrs

from coterie.workspaces.git import GitError, git
from coterie.workspaces.naming import check_ref_part
from coterie.workspaces.outcome import parse_status

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "BRANCH_PREFIX",
    "WORKTREES_DIR",
    "AgentWorktree",
    "Unfinished",
    "open_worktree",
    "remove_worktree",
    "release_worktree",
    "unfinished_work",
    "worktree_of",
]

#: Where the worktrees live, below the top of the repository.
WORKTREES_DIR = ".worktrees"
#: Their branches are ``worktree-NAME``, as Claude Code names them.
BRANCH_PREFIX = "worktree-"
_LOCK_REASON = "in use by a coterie agent (ExitWorktree releases it)"


@attrs.frozen
class AgentWorktree:
    """One agent worktree: where it is, its branch, and the workspace it belongs to."""

    path: Path
    branch: str
    #: The workspace the agent left for it (where ExitWorktree takes it back).
    origin: Path
    #: Whether this call made it (False: an existing one was entered again).
    created: bool = True


def worktree_of(workspace: Path) -> tuple[Path, str] | None:
    """(origin, name) when *workspace* is an agent worktree's folder, else None."""
    if workspace.parent.name != WORKTREES_DIR:
        return None
    return workspace.parent.parent, workspace.name


async def _toplevel(workdir: Path) -> Path:
    from pathlib import Path

    out = await git(workdir, "rev-parse", "--show-toplevel", check=False)
    if not out.ok:
        raise GitError(f"{workdir} is not in a git repository: a worktree needs one")
    return Path(out.stdout.strip())  # git prints it resolved


async def open_worktree(workdir: Path, name: str | None = None) -> AgentWorktree:
    """Make (or enter again) worktree *name* (default: a fresh one) of the repository
    of *workdir* on branch ``worktree-NAME`` at HEAD, and lock it.
    ``ValueError`` for a bad name, :class:`GitError` when git cannot."""
    name = check_ref_part(name) if name else f"wt-{secrets.token_hex(3)}"
    top = await _toplevel(workdir)
    if not (await git(top, "rev-parse", "--verify", "-q", "HEAD^{commit}", check=False)).ok:
        raise GitError(f"the repository of {workdir} has no commit yet: commit something first")
    path, branch = top / WORKTREES_DIR / name, BRANCH_PREFIX + name
    created = not (path / ".git").exists()
    if created:
        await _exclude(top)
        await git(top, "worktree", "prune")
        exists = await git(top, "rev-parse", "--verify", "-q", f"refs/heads/{branch}", check=False)
        if exists.ok:  # kept by an earlier ExitWorktree whose folder has gone
            await git(top, "worktree", "add", "-q", str(path), branch)
        else:
            await git(top, "worktree", "add", "-q", "-b", branch, str(path), "HEAD")
    await git(top, "worktree", "lock", "--reason", _LOCK_REASON, str(path), check=False)
    return AgentWorktree(path, branch, workdir, created)


async def _exclude(top: Path) -> None:
    """Have the repository ignore :data:`WORKTREES_DIR` (its ``info/exclude``), so that
    ``git status`` and ``git add -A`` in the workspace never take a worktree in."""
    from pathlib import Path

    common = (await git(top, "rev-parse", "--git-common-dir")).stdout.strip()
    exclude = (top / Path(common)) / "info" / "exclude"
    line = f"/{WORKTREES_DIR}/"
    try:
        text = exclude.read_text()
    except FileNotFoundError:
        text = ""
    if line not in text.splitlines():
        exclude.parent.mkdir(parents=True, exist_ok=True)
        with exclude.open("a") as out:
            out.write(("" if text.endswith("\n") or not text else "\n") + line + "\n")


@attrs.frozen
class Unfinished:
    """What removing a worktree would lose: changed files, and commits no other branch has."""

    changed: int
    commits: int

    def __bool__(self) -> bool:
        return bool(self.changed or self.commits)


async def unfinished_work(path: Path, branch: str, origin: Path) -> Unfinished:
    """What is in worktree *path* and not in *origin*'s current branch."""
    status = parse_status((await git(path, "status", "--porcelain=v1", "-z")).stdout)
    ahead = await git(origin, "rev-list", "--count", f"HEAD..{branch}", check=False)
    commits = int(ahead.stdout.strip() or 0) if ahead.ok else 0
    return Unfinished(len(status.changed), commits)


async def release_worktree(path: Path) -> None:
    """Unlock worktree *path* (kept for later)."""
    await git(path, "worktree", "unlock", str(path), check=False)


async def remove_worktree(path: Path, branch: str, origin: Path) -> None:
    """Delete worktree *path* and its branch, whatever they hold."""
    await git(origin, "worktree", "unlock", str(path), check=False)
    await git(origin, "worktree", "remove", "--force", str(path))
    await git(origin, "branch", "-q", "-D", branch, check=False)
