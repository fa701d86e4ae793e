"""Merging a task's branch into the lead's workspace (``MergeTask``), never losing work.

The merge is refused before it starts when the workspace has uncommitted
changes to tracked files (``git merge --abort`` could not always bring them
back). A fast-forward when possible, else a merge commit. On conflicts the
merge is aborted at once: the workspace is as it was, the branch is kept,
and the outcome lists the conflicting files. With ``--repo`` the branch is
fetched from the shared repository first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coterie.workspaces.git import git
from coterie.workspaces.naming import merge_message, task_branch
from coterie.workspaces.outcome import MergeOutcome, parse_status

if TYPE_CHECKING:
    from coterie.workspaces.checkout import Repository

__all__ = ["merge_task"]

#: Who a merge commit is by when the user's git names nobody.
_FALLBACK_IDENTITY = ("-c", "user.name=coterie", "-c", "user.email=coterie@coterie.invalid")


async def merge_task(
    repo: Repository, run_id: str, task_id: str, subject: str | None, remote: str | None
) -> MergeOutcome:
    """Merge *task_id*'s branch into *repo*'s checkout (see the module docstring)."""
    branch = task_branch(run_id, task_id)
    top = repo.toplevel
    if remote is not None:
        fetched = await git(top, "fetch", "-q", remote, f"+refs/heads/{branch}:refs/heads/{branch}",
                            check=False)  # fmt: skip
        if not fetched.ok:
            why = fetched.stderr.strip() or "the fetch failed"
            return MergeOutcome("refused", branch, reason=f"cannot fetch it from {remote}: {why}")
    found = await git(top, "rev-parse", "--verify", "-q", f"refs/heads/{branch}^{{commit}}",
                      check=False)  # fmt: skip
    if not found.ok:
        why = f"there is no branch {branch} (has a teammate finished {task_id}?)"
        return MergeOutcome("refused", branch, reason=why)
    dirty = await git(top, "status", "--porcelain=v1", "-z", "--untracked-files=no")
    if not parse_status(dirty.stdout).clean:
        return MergeOutcome(
            "refused", branch,
            reason="the workspace has uncommitted changes; commit or stash them, then merge",
        )  # fmt: skip
    before = (await git(top, "rev-parse", "HEAD")).stdout.strip()
    named = await git(top, "config", "user.email", check=False)
    identity = () if named.ok and named.stdout.strip() else _FALLBACK_IDENTITY
    message = merge_message(branch, task_id, subject)
    merged = await git(top, *identity, "merge", "-q", "--no-edit", "-m", message, branch,
                       check=False)  # fmt: skip
    if merged.ok:
        after = (await git(top, "rev-parse", "HEAD")).stdout.strip()
        if after == before:
            return MergeOutcome("up-to-date", branch, after)
        two_parents = await git(top, "rev-parse", "-q", "--verify", "HEAD^2", check=False)
        return MergeOutcome("merged" if two_parents.ok else "fast-forward", branch, after)
    status = await git(top, "status", "--porcelain=v1", "-z")
    conflicts = parse_status(status.stdout).conflicts
    if (await git(top, "rev-parse", "-q", "--verify", "MERGE_HEAD", check=False)).ok:
        await git(top, "merge", "--abort")
    if conflicts:
        return MergeOutcome("conflict", branch, before, conflicts)
    why = (merged.stderr or merged.stdout).strip() or "git merge failed"
    return MergeOutcome("refused", branch, before, reason=why)
