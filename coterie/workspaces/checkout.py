"""A teammate's own checkout: a git worktree of the lead's repository, or a clone.

:class:`Repository` is the lead's workspace as a repository, checked when the
run is prepared (:func:`check_repository`: not a repository, or no commit,
is a usage error). :class:`TeammateWorkspace` is one teammate's checkout,
kept across its restarts and the run's resumes (its place is fixed by the
run and the teammate, see :func:`workspaces_root`):

- :meth:`~TeammateWorkspace.open` makes it if it is missing: ``git worktree
  add --detach`` at the lead's HEAD, or (``--repo URL``) a clone of URL;
- :meth:`~TeammateWorkspace.begin` puts it on the task's branch: the branch
  as a previous incarnation left it, else a new one from the lead's current
  HEAD (with ``--repo``: from the base the lead publishes to URL);
- :meth:`~TeammateWorkspace.finish` commits everything that changed on the
  task's branch (nothing to commit is fine), pushes the branch to URL with
  ``--repo``, and detaches, so that the branch is free to be merged.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path, PurePath

import attrs

from coterie.errors import CoterieError
from coterie.home import coterie_home, private_dir
from coterie.workspaces.git import GitError, git, git_sync
from coterie.workspaces.naming import base_branch, check_ref_part, commit_message, task_branch
from coterie.workspaces.outcome import parse_status

__all__ = [
    "WORKSPACES_ENV",
    "Checkouts",
    "Committed",
    "NotARepository",
    "Repository",
    "TeammateWorkspace",
    "check_repository",
    "workspaces_root",
]

#: The environment variable that moves the teammates' checkouts.
WORKSPACES_ENV = "COTERIE_WORKSPACES"


class NotARepository(CoterieError, ValueError):
    """``--isolation worktree`` in a workspace that is not a git repository with a
    commit, or whose git configuration the runtime will not run git under."""


def workspaces_root() -> Path:
    """Where the teammates' checkouts live: ``$COTERIE_WORKSPACES``, else a folder
    beside the coterie home (``~/.coterie-workspaces``). Not under the home, which
    no tool may write, and not in the workspace, which the lead's tools see."""
    override = os.environ.get(WORKSPACES_ENV)
    if override:
        return Path(override).expanduser()
    home = coterie_home()
    return home.with_name(home.name + "-workspaces")


@attrs.frozen
class Repository:
    """The lead's workspace as a git repository."""

    #: The lead's workspace (resolved).
    workdir: Path
    #: The top of the repository's working tree.
    toplevel: Path

    @property
    def subdir(self) -> PurePath:
        """Where the workspace is inside the repository (``.`` at its top)."""
        return PurePath(os.path.relpath(self.workdir, self.toplevel))


def check_repository(workdir: Path) -> Repository:
    """*workdir* as a repository, or :class:`NotARepository` saying why not."""
    workdir = workdir.resolve()
    try:
        top = git_sync(workdir, "rev-parse", "--show-toplevel", check=False)
    except GitError as exc:  # its configuration names a program git could run
        raise NotARepository(f"--isolation worktree cannot use {workdir}: {exc}") from None
    if not top.ok:
        raise NotARepository(
            f"--isolation worktree needs a git repository: {workdir} is not in one"
            " (run `git init` and commit, or use --isolation shared)"
        )
    if not git_sync(workdir, "rev-parse", "--verify", "-q", "HEAD^{commit}", check=False).ok:
        raise NotARepository(
            f"--isolation worktree needs a commit to start from: the repository of {workdir}"
            " has none yet (commit something first)"
        )
    return Repository(workdir, Path(top.stdout.strip()).resolve())


@attrs.frozen
class Committed:
    """What the runtime committed for a task when its teammate settled it."""

    branch: str
    #: The branch's head after the commit (the task's work, or its base if none).
    commit: str
    #: Whether the teammate changed anything (else no commit was made).
    changed: bool
    #: Whether the branch was pushed to the shared repository (``--repo``).
    pushed: bool = False

    def note(self) -> str:
        """One line naming the branch and commit, for the task's result."""
        where = " (pushed)" if self.pushed else ""
        return f"[branch {self.branch} at {self.commit[:12]}{where}]"


def _identity(teammate: str) -> dict[str, str]:
    name, email = f"{teammate} (coterie)", f"{teammate}@coterie.invalid"
    return {
        "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email,
    }  # fmt: skip


@attrs.frozen
class TeammateWorkspace:
    """One teammate's checkout (see the module docstring)."""

    repo: Repository
    run_id: str = attrs.field(validator=lambda _i, _a, v: check_ref_part(v))
    teammate: str
    #: The checkout's top: ``<workspaces_root>/<run id>/<teammate>``.
    root: Path
    #: ``--repo``: the URL the teammate clones and pushes to (None: a worktree).
    remote: str | None = None
    #: Whether this process publishes the run's base branch (False on a worker:
    #: the lead's process published it, from the lead's workspace).
    publish: bool = True

    @classmethod
    def of(
        cls,
        repo: Repository,
        run_id: str,
        teammate: str,
        remote: str | None,
        publish: bool = True,
    ) -> TeammateWorkspace:
        root = workspaces_root() / run_id / teammate
        return cls(repo, run_id, teammate, root, remote, publish)

    @property
    def path(self) -> Path:
        """Where the teammate's tools are rooted: its checkout's copy of the workspace."""
        return Path(os.path.normpath(self.root / self.repo.subdir))

    async def open(self) -> None:
        """Make the checkout if it does not exist yet (a restart or a resume keeps it)."""
        if (self.root / ".git").exists():
            return
        # Private (0700): the run's folder first, so nobody else can even look in
        # while git fills the checkout; then the checkout itself.
        private_dir(self.root.parent)
        if self.remote is None:
            top = self.repo.toplevel
            await git(top, "worktree", "prune")
            if self.root.exists() and not any(self.root.iterdir()):
                self.root.rmdir()
            await git(top, "worktree", "add", "-q", "--detach", str(self.root), "HEAD")
            self.root.chmod(0o700)
            return
        partial = self.root.with_name(self.root.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        await git(self.root.parent, "clone", "-q", "--no-checkout", self.remote, str(partial))
        partial.chmod(0o700)
        partial.rename(self.root)

    async def begin(self, task_id: str) -> str:
        """Put the checkout on *task_id*'s branch (see the module docstring); its name."""
        branch = task_branch(self.run_id, task_id)
        await self.open()
        here = await git(self.root, "symbolic-ref", "-q", "--short", "HEAD", check=False)
        if here.ok and here.stdout.strip() == branch:
            return branch  # a restart: the work so far is in the checkout as it was
        if await self._has(f"refs/heads/{branch}"):
            await git(self.root, "checkout", "-q", "--ignore-other-worktrees", branch)
        elif self.remote is None:
            base = (await git(self.repo.workdir, "rev-parse", "HEAD")).stdout.strip()
            await git(self.root, "checkout", "-q", "--no-track", "-b", branch, base)
        else:
            if self.publish:
                await self._publish_base()
            await git(self.root, "fetch", "-q", "origin")
            pushed = f"refs/remotes/origin/{branch}"
            start = pushed if await self._has(pushed) else f"origin/{base_branch(self.run_id)}"
            await git(self.root, "checkout", "-q", "--no-track", "-b", branch, start)
        return branch

    async def finish(self, task_id: str, subject: str, status: str) -> Committed:
        """Commit what changed on *task_id*'s branch, push it with ``--repo``, detach."""
        branch = await self.begin(task_id)  # after a restart between the two: still there
        await git(self.root, "add", "-A")
        listed = await git(self.root, "status", "--porcelain=v1", "-z")
        changed = not parse_status(listed.stdout).clean
        if changed:
            message = commit_message(task_id, subject, self.teammate, status)
            await git(self.root, "commit", "-q", "--no-verify", "-m", message,
                      env=_identity(self.teammate))  # fmt: skip
        commit = (await git(self.root, "rev-parse", "HEAD")).stdout.strip()
        pushed = False
        if self.remote is not None:
            await git(self.root, "push", "-q", "origin", f"{branch}:refs/heads/{branch}")
            pushed = True
        await git(self.root, "checkout", "-q", "--detach")
        return Committed(branch, commit, changed, pushed)

    async def _publish_base(self) -> None:
        """Push the lead's HEAD to the shared repository as the run's base branch.

        Done here, in the lead's process, while teammates run beside the lead;
        workers on other hosts will have the lead publish it as tasks are made.
        """
        ref = f"+HEAD:refs/heads/{base_branch(self.run_id)}"
        assert self.remote is not None
        await git(self.repo.workdir, "push", "-q", self.remote, ref)

    async def _has(self, ref: str) -> bool:
        found = await git(
            self.root, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}", check=False
        )
        return found.ok


@attrs.frozen
class Checkouts:
    """The checkouts of one run's teammates (``--isolation worktree``)."""

    repo: Repository
    run_id: str
    #: ``--repo``: the URL teammates clone and push to (None: worktrees).
    remote: str | None = None
    #: Whether teammates of this process publish the base branch (False on a worker).
    publish: bool = True

    def teammate(self, name: str) -> TeammateWorkspace:
        """Teammate *name*'s checkout (made by its first :meth:`~TeammateWorkspace.open`)."""
        return TeammateWorkspace.of(self.repo, self.run_id, name, self.remote, self.publish)

    async def publish_base(self) -> None:
        """Push the lead's HEAD to the shared repository as the run's base branch
        (``--remote``: done once by the lead's process, before workers start)."""
        if self.remote is not None:
            ref = f"+HEAD:refs/heads/{base_branch(self.run_id)}"
            await git(self.repo.workdir, "push", "-q", self.remote, ref)
