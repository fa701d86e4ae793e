"""A teammate's checkout: made once, a branch per task, the runtime's commit, merges."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from coterie.workspaces import (
    Checkouts,
    NotARepository,
    check_repository,
    merge_task,
    task_branch,
)
from tests.agent.test_prompt import hostile_repository
from tests.workspaces.conftest import make_repo, run_git

if TYPE_CHECKING:
    from pathlib import Path

RUN = "20261201-000000-abcdef"


def checkouts(repo: Path, remote: str | None = None) -> Checkouts:
    return Checkouts(check_repository(repo), RUN, remote)


def test_a_folder_that_is_not_a_repository_is_refused(tmp_path: Path) -> None:
    with pytest.raises(NotARepository, match="not in one"):
        check_repository(tmp_path)


def test_a_repository_without_a_commit_is_refused(tmp_path: Path) -> None:
    run_git(tmp_path, "init", "-q")
    with pytest.raises(NotARepository, match="no"):
        check_repository(tmp_path)


async def test_a_task_gets_a_branch_from_the_leads_head_and_a_commit(repo: Path) -> None:
    alice = checkouts(repo).teammate("alice")
    branch = await alice.begin("task_1")
    assert branch == task_branch(RUN, "task_1")
    assert not alice.path.is_relative_to(repo)
    (alice.path / "new.txt").write_text("alice\n")
    done = await alice.finish("task_1", "add new.txt", "completed")
    assert done.changed
    assert not done.pushed
    logged = run_git(repo, "log", "-1", "--format=%s%n%an", branch)
    assert logged == "task_1: add new.txt\nalice (coterie)\n"
    assert run_git(repo, "rev-parse", branch).strip() == done.commit
    assert not (repo / "new.txt").exists()  # the lead's checkout is untouched
    assert run_git(repo, "status", "--porcelain") == ""


async def test_nothing_to_commit_is_fine(repo: Path) -> None:
    bob = checkouts(repo).teammate("bob")
    await bob.begin("task_2")
    done = await bob.finish("task_2", "look only", "completed")
    assert not done.changed
    assert done.commit == run_git(repo, "rev-parse", "HEAD").strip()


async def test_a_restarted_teammate_finds_its_work_where_it_left_it(repo: Path) -> None:
    first = checkouts(repo).teammate("alice")
    await first.begin("task_1")
    (first.path / "half.txt").write_text("half done\n")
    again = checkouts(repo).teammate("alice")  # a new incarnation, or a resume
    await again.begin("task_1")
    assert (again.path / "half.txt").read_text() == "half done\n"
    done = await again.finish("task_1", "finish it", "completed")
    assert "half.txt" in run_git(repo, "show", "--name-only", "--format=", done.commit)


async def test_the_next_task_starts_from_the_leads_new_head(repo: Path) -> None:
    group = checkouts(repo)
    alice = group.teammate("alice")
    await alice.begin("task_1")
    (alice.path / "one.txt").write_text("1\n")
    await alice.finish("task_1", "one", "completed")
    assert (await merge_task(group.repo, RUN, "task_1", "one", None)).kind == "fast-forward"
    await alice.begin("task_2")
    assert (alice.path / "one.txt").is_file()


async def test_merging_two_branches_that_touch_the_same_file(repo: Path) -> None:
    """The first fast-forwards; the second conflicts, is aborted, and loses nothing."""
    group = checkouts(repo)
    for name, task in (("alice", "task_1"), ("bob", "task_2")):
        mate = group.teammate(name)
        await mate.begin(task)
        (mate.path / "README.md").write_text(f"{name} was here\n")
        await mate.finish(task, f"{name}'s readme", "completed")
    first = await merge_task(group.repo, RUN, "task_1", "a", None)
    assert first.kind == "fast-forward"
    head = run_git(repo, "rev-parse", "HEAD")
    second = await merge_task(group.repo, RUN, "task_2", "b", None)
    assert second.kind == "conflict"
    assert second.conflicts == ("README.md",)
    assert run_git(repo, "rev-parse", "HEAD") == head
    assert run_git(repo, "status", "--porcelain") == ""
    assert (repo / "README.md").read_text() == "alice was here\n"
    assert run_git(repo, "rev-parse", "--verify", task_branch(RUN, "task_2"))


async def test_diverged_branches_merge_with_a_merge_commit(repo: Path) -> None:
    group = checkouts(repo)
    for name, task in (("alice", "task_1"), ("bob", "task_2")):
        mate = group.teammate(name)
        await mate.begin(task)
        (mate.path / f"{name}.txt").write_text(name)
        await mate.finish(task, name, "completed")
    await merge_task(group.repo, RUN, "task_1", "a", None)
    outcome = await merge_task(group.repo, RUN, "task_2", "b", None)
    assert outcome.kind == "merged"
    assert (repo / "alice.txt").is_file()
    assert (repo / "bob.txt").is_file()
    again = await merge_task(group.repo, RUN, "task_2", "b", None)
    assert again.kind == "up-to-date"


async def test_uncommitted_changes_in_the_workspace_refuse_the_merge(repo: Path) -> None:
    group = checkouts(repo)
    mate = group.teammate("alice")
    await mate.begin("task_1")
    (mate.path / "x.txt").write_text("x")
    await mate.finish("task_1", "x", "completed")
    (repo / "README.md").write_text("my own edit, not committed\n")
    outcome = await merge_task(group.repo, RUN, "task_1", "x", None)
    assert outcome.kind == "refused"
    assert "uncommitted" in outcome.reason
    assert (repo / "README.md").read_text() == "my own edit, not committed\n"


async def test_a_branch_that_does_not_exist_is_refused(repo: Path) -> None:
    outcome = await merge_task(checkouts(repo).repo, RUN, "task_9", None, None)
    assert outcome.kind == "refused"
    assert "no branch" in outcome.reason


async def test_a_clone_pushes_its_branch_and_the_lead_fetches_it(
    repo: Path, tmp_path: Path
) -> None:
    bare = tmp_path / "shared.git"
    run_git(tmp_path, "init", "-q", "--bare", str(bare))
    group = checkouts(repo, remote=f"file://{bare}")
    alice = group.teammate("alice")
    await alice.begin("task_1")
    assert (alice.path / "README.md").read_text() == "hello\n"  # from the published base
    (alice.path / "pushed.txt").write_text("over the wire\n")
    done = await alice.finish("task_1", "push it", "completed")
    assert done.pushed
    assert run_git(bare, "rev-parse", task_branch(RUN, "task_1")).strip() == done.commit
    run_git(repo, "worktree", "list")  # no worktree of the lead's repository was made
    assert "checkouts" not in run_git(repo, "worktree", "list")
    outcome = await merge_task(group.repo, RUN, "task_1", "push it", f"file://{bare}")
    assert outcome.kind == "fast-forward"
    assert (repo / "pushed.txt").read_text() == "over the wire\n"


async def test_a_workspace_below_the_top_of_its_repository(tmp_path: Path) -> None:
    top = make_repo(tmp_path / "mono", {"app/main.py": "print(1)\n", "lib/x.py": "\n"})
    group = checkouts(top / "app")
    mate = group.teammate("alice")
    await mate.begin("task_1")
    assert mate.path.name == "app"
    assert (mate.path / "main.py").is_file()


async def test_a_hostile_repository_cannot_make_the_runtimes_git_run_its_programs(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    marker = tmp_path / "ran"
    hostile_repository(repo, marker)
    alice = checkouts(repo).teammate("alice")
    await alice.begin("task_1")
    (alice.path / "tracked.txt").write_text("changed\n")  # the clean filter's matter
    done = await alice.finish("task_1", "change it", "completed")
    assert done.changed
    outcome = await merge_task(check_repository(repo), RUN, "task_1", "change it", None)
    assert outcome.kind == "fast-forward", outcome
    assert not marker.exists()  # no hook, fsmonitor or filter of the repository ran
