"""The Agent tool's per-call options: ``model`` reaches the subagent, ``isolation:
"worktree"`` gives it a worktree of its own (kept only if it changed something)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from coterie.tools import ToolContext, ToolResult
from coterie.tools.task import TaskTool
from tests.workspaces.conftest import make_repo, run_git

if TYPE_CHECKING:
    from pathlib import Path


class Subagents:
    """A fake starter: records where and with what the subagent ran; writes *write* there."""

    def __init__(self, write: str | None = None) -> None:
        self.write = write
        self.calls: list[dict[str, Any]] = []

    async def __call__(
        self, description: str, prompt: str, kind: str, **options: Any
    ) -> ToolResult:
        self.calls.append(options)
        where = options.get("workspace")
        if self.write is not None and where is not None:
            (where / self.write).write_text("made by the subagent\n")
        return ToolResult("done")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "ws").resolve()


def agent_input(**more: Any) -> dict[str, Any]:
    return {"description": "d", "prompt": "p", **more}


async def test_the_model_reaches_the_subagent(repo: Path) -> None:
    fake = Subagents()
    result = await TaskTool().run(
        agent_input(model="haiku", effort="low"), ToolContext(workspace=repo, subagents=fake)
    )
    assert result.content == "done"
    assert fake.calls == [{"model": "haiku"}]


async def test_an_isolated_subagent_that_changed_nothing_leaves_no_worktree(repo: Path) -> None:
    fake = Subagents()
    result = await TaskTool().run(
        agent_input(isolation="worktree"), ToolContext(workspace=repo, subagents=fake)
    )
    assert result.content == "done"
    (call,) = fake.calls
    tree = call["workspace"]
    assert tree.parent == repo / ".worktrees"
    assert not tree.exists()
    assert "worktree-" not in run_git(repo, "branch", "--list")


async def test_an_isolated_subagents_changes_stay_in_its_worktree(repo: Path) -> None:
    fake = Subagents(write="new.txt")
    result = await TaskTool().run(
        agent_input(isolation="worktree"), ToolContext(workspace=repo, subagents=fake)
    )
    tree = fake.calls[0]["workspace"]
    assert (tree / "new.txt").exists()
    assert not (repo / "new.txt").exists()  # the workspace is untouched
    assert f"worked in the worktree {tree} on branch worktree-{tree.name}" in result.content
    assert "locked" not in run_git(repo, "worktree", "list", "--porcelain")  # released


async def test_isolation_outside_a_repository_is_an_error_result(tmp_path: Path) -> None:
    fake = Subagents()
    result = await TaskTool().run(
        agent_input(isolation="worktree"), ToolContext(workspace=tmp_path, subagents=fake)
    )
    assert result.is_error
    assert "No worktree made for the subagent" in result.content
    assert fake.calls == []
