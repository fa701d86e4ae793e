"""A workspace per teammate (docs/isolation.md): git worktrees, clones, branches, merges.

This package owns the git plumbing of ``--isolation worktree``: where each
teammate's checkout lives and how it is made (a worktree of the lead's
repository, or with ``--repo URL`` a clone), the branch of each task, the
commit the runtime makes when a task settles (and the push with
``--repo``), and merging a task's branch into the lead's workspace. Names,
messages and the reading of git's output are pure (:mod:`.naming`,
:mod:`.outcome`), and so is the allow list of a checkout's git configuration
(:mod:`.gitsafe`); :mod:`.git` is the one place coterie runs git, for this
package and for the rest of the runtime (:func:`run_git`,
:func:`config_is_inert`, :func:`git_in_group`). It knows nothing of actors,
the board or the tools: the runtime roots a teammate's tools at
:attr:`TeammateWorkspace.path` and calls :meth:`TeammateWorkspace.begin` and
:meth:`TeammateWorkspace.finish` around each task.
"""

from __future__ import annotations

from coterie.workspaces.checkout import (
    WORKSPACES_ENV,
    Checkouts,
    Committed,
    NotARepository,
    Repository,
    TeammateWorkspace,
    check_repository,
    workspaces_root,
)
from coterie.workspaces.git import GitError, config_is_inert, git_in_group, run_git
from coterie.workspaces.gitsafe import GitRefused
from coterie.workspaces.merge import merge_task
from coterie.workspaces.naming import (
    BadName,
    base_branch,
    commit_message,
    merge_message,
    task_branch,
    task_of_branch,
)
from coterie.workspaces.outcome import MergeOutcome, Status, parse_status

__all__ = [
    "WORKSPACES_ENV",
    "BadName",
    "Checkouts",
    "Committed",
    "GitError",
    "GitRefused",
    "MergeOutcome",
    "NotARepository",
    "Repository",
    "Status",
    "TeammateWorkspace",
    "base_branch",
    "check_repository",
    "commit_message",
    "config_is_inert",
    "git_in_group",
    "merge_message",
    "merge_task",
    "parse_status",
    "run_git",
    "task_branch",
    "task_of_branch",
    "workspaces_root",
]
