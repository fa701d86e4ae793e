"""EnterWorktree / ExitWorktree through the real CLI: the agent's writes land in the
worktree, and the workspace gets them only through git."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tests.agent.conftest import coterie, home, workspace
from tests.agent.test_resume_cli import BYPASS, write_scenario
from tests.workspaces.conftest import make_repo, run_git

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["home", "workspace"]  # the fixtures of tests/agent


def call(tool: str, **data: Any) -> dict[str, Any]:
    return {"tool_uses": [{"name": tool, "input": data}]}


def test_work_in_a_worktree_then_keep_it(workspace: Path, home: Path, tmp_path: Path) -> None:
    make_repo(workspace)
    lead = [
        call("EnterWorktree", name="feat"),
        {"expect": "on branch worktree-feat", **call("Write", file_path="note.txt", content="x\n")},
        call("Bash", command="pwd > where.txt"),
        call("ExitWorktree", action="keep"),
        {"expect": "kept at", **call("Bash", command="pwd > where.txt")},
        {"text": "Done."},
    ]
    scenario = write_scenario(tmp_path / "s.json", {"lead": lead})
    done = coterie(
        "run", "-p", "--output-format", "json", *BYPASS, "--scenario", str(scenario), "go",
        cwd=workspace, home=home, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "Done."
    tree = workspace.resolve() / ".worktrees" / "feat"
    assert (tree / "note.txt").read_text() == "x\n"
    assert not (workspace / "note.txt").exists()
    assert (tree / "where.txt").read_text().strip() == str(tree)
    assert (workspace / "where.txt").read_text().strip() == str(workspace.resolve())
    assert run_git(tree, "branch", "--show-current").strip() == "worktree-feat"
