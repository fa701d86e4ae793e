"""EnterWorktree / ExitWorktree: an agent's work moves into a git worktree and back."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from coterie.tools import PermissionPolicy, ToolContext
from coterie.tools.files import ReadTool, WriteTool
from coterie.tools.worktree import EnterWorktreeTool, ExitWorktreeTool
from tests.workspaces.conftest import make_repo, run_git

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "ws").resolve()


@pytest.fixture
def agent(repo: Path) -> ToolContext:
    return ToolContext(workspace=repo)


async def test_enter_makes_a_locked_worktree_on_its_branch_and_moves_the_agent(
    repo: Path, agent: ToolContext
) -> None:
    result = await EnterWorktreeTool().run({"name": "feat-x"}, agent)
    assert not result.is_error, result.content
    tree = repo / ".worktrees" / "feat-x"
    assert agent.workspace == tree
    assert agent.shell_cwd == tree
    assert run_git(tree, "branch", "--show-current").strip() == "worktree-feat-x"
    assert "locked" in run_git(repo, "worktree", "list", "--porcelain")
    assert run_git(repo, "status", "--porcelain") == ""  # the workspace ignores it
    # Relative paths now act in the worktree, not in the workspace.
    wrote = await WriteTool().run({"file_path": "new.txt", "content": "hi\n"}, agent)
    assert not wrote.is_error, wrote.content
    assert (tree / "new.txt").read_text() == "hi\n"
    assert not (repo / "new.txt").exists()
    read = await ReadTool().run({"file_path": "README.md"}, agent)
    assert "hello" in read.content


async def test_keep_goes_back_and_leaves_the_worktree_unlocked(
    repo: Path, agent: ToolContext
) -> None:
    await EnterWorktreeTool().run({"name": "later"}, agent)
    result = await ExitWorktreeTool().run({"action": "keep"}, agent)
    assert not result.is_error, result.content
    assert agent.workspace == repo
    assert agent.shell_cwd == repo
    assert (repo / ".worktrees" / "later").is_dir()
    assert "locked" not in run_git(repo, "worktree", "list", "--porcelain")
    again = await EnterWorktreeTool().run({"name": "later"}, agent)
    assert again.content.startswith("Entered the existing worktree")


async def test_remove_refuses_to_lose_work_unless_told(repo: Path, agent: ToolContext) -> None:
    await EnterWorktreeTool().run({"name": "risky"}, agent)
    (agent.workspace / "work.txt").write_text("unsaved\n")
    refused = await ExitWorktreeTool().run({"action": "remove"}, agent)
    assert refused.is_error
    assert "1 changed file(s)" in refused.content
    assert agent.workspace == repo / ".worktrees" / "risky"
    removed = await ExitWorktreeTool().run({"action": "remove", "discard_changes": True}, agent)
    assert not removed.is_error, removed.content
    assert agent.workspace == repo
    assert not (repo / ".worktrees" / "risky").exists()
    assert "worktree-risky" not in run_git(repo, "branch", "--list")


async def test_a_clean_worktree_is_removed(repo: Path, agent: ToolContext) -> None:
    await EnterWorktreeTool().run({"name": "clean"}, agent)
    removed = await ExitWorktreeTool().run({"action": "remove"}, agent)
    assert not removed.is_error, removed.content
    assert not (repo / ".worktrees" / "clean").exists()


async def test_mistakes_are_error_results(tmp_path: Path, repo: Path, agent: ToolContext) -> None:
    assert (await ExitWorktreeTool().run({"action": "keep"}, agent)).is_error
    assert (await EnterWorktreeTool().run({"name": "../escape"}, agent)).is_error
    await EnterWorktreeTool().run({"name": "one"}, agent)
    assert (await EnterWorktreeTool().run({"name": "two"}, agent)).is_error
    assert (await ExitWorktreeTool().run({"action": "toss"}, agent)).is_error
    plain = tmp_path / "plain"
    plain.mkdir()
    outside = await EnterWorktreeTool().run({}, ToolContext(workspace=plain))
    assert outside.is_error
    assert "git repository" in outside.content


def test_they_are_deferred_workspace_tools() -> None:
    for tool in (EnterWorktreeTool(), ExitWorktreeTool()):
        assert tool.capabilities.deferred
        assert not tool.capabilities.confined


#: Entering or leaving a worktree writes the repository: asked like a write, never in plan.
GATE = {
    "default": "ask", "acceptEdits": "ask", "plan": "deny",
    "dontAsk": "deny", "bypassPermissions": "allow",
}  # fmt: skip


@pytest.mark.parametrize("mode", list(GATE))
def test_the_gate_decides_them_like_a_write(repo: Path, mode: str) -> None:
    policy = PermissionPolicy.from_rules(mode=mode)  # type: ignore[arg-type]
    for tool, data in ((EnterWorktreeTool(), {"name": "x"}), (ExitWorktreeTool(), {})):
        decision = policy.check(tool, data, ToolContext(workspace=repo))
        assert decision.behavior == GATE[mode], (tool.name, mode)
