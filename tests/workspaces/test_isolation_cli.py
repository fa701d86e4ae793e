"""``coterie team --isolation worktree``: the real CLI in a temporary git repository."""

from __future__ import annotations

import json
import signal
import time
from typing import TYPE_CHECKING, Any

from coterie.runs import runs_root
from tests.agent.conftest import coterie
from tests.agent.test_resume_cli import only_run, start, transcript_messages, write_scenario
from tests.workspaces.conftest import make_repo, run_git

if TYPE_CHECKING:
    from pathlib import Path

BYPASS = ("--permission-mode", "bypassPermissions")
ISOLATED = ("--isolation", "worktree", "--teammate", "alice", "--teammate", "bob")


def write(path: str, content: str) -> dict[str, Any]:
    return {"tool_uses": [{"name": "Write", "input": {"file_path": path, "content": content}}]}


def create(subject: str, owner: str) -> dict[str, Any]:
    return {
        "name": "TaskCreate",
        "input": {"subject": subject, "description": subject, "owner": owner},
    }


def merge(*task_ids: str) -> dict[str, Any]:
    return {"tool_uses": [{"name": "MergeTask", "input": {"task_id": t}} for t in task_ids]}


def team(scenario: Path, workspace: Path, home: Path, *extra: str) -> Any:
    done = coterie(
        "team", "-p", "--output-format", "json", *BYPASS, *ISOLATED, *extra,
        "--scenario", str(scenario), "go", cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def tool_results(workspace: Path, actor: str = "lead") -> list[str]:
    run_dir = runs_root(workspace) / only_run(workspace)
    return [
        str(block["content"])
        for message in transcript_messages(run_dir, actor)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def same_file_scenario(tmp_path: Path) -> Path:
    return write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {"tool_uses": [create("alice's notes", "alice"), create("bob's notes", "bob")]},
                {"text": "planned"},
                merge("task_1", "task_2"),
                {"text": "merged what merges"},
            ],
            "alice": [write("notes.txt", "from alice\n"), {"text": "alice wrote notes"}],
            "bob": [write("notes.txt", "from bob\n"), {"text": "bob wrote notes"}],
        },
    )


def test_two_teammates_edit_one_file_in_their_own_worktrees_and_the_lead_merges(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """Each task is committed on its own branch; the first merge fast-forwards, the
    second conflicts: reported with the file, aborted, the workspace untouched."""
    make_repo(workspace)
    summary = team(same_file_scenario(tmp_path), workspace, home)
    run_id = summary["run_id"]
    branches = [f"coterie/{run_id}/task_1", f"coterie/{run_id}/task_2"]
    results = {t["id"]: t["result"] for t in summary["tasks"]}
    for task_id, branch in zip(("task_1", "task_2"), branches, strict=True):
        commit = run_git(workspace, "rev-parse", branch).strip()
        assert results[task_id].startswith(f"[branch {branch} at {commit[:12]}]")
        assert run_git(workspace, "show", f"{branch}:notes.txt") in ("from alice\n", "from bob\n")
    assert run_git(workspace, "log", "-1", "--format=%an", branches[1]) == "bob (coterie)\n"
    merged, conflicted = tool_results(workspace)[-2:]
    assert "Fast-forwarded" in merged
    assert "conflicts" in conflicted
    assert "  notes.txt" in conflicted
    assert (workspace / "notes.txt").read_text() == "from alice\n"
    assert run_git(workspace, "status", "--porcelain") == ""
    assert not (workspace / ".git" / "MERGE_HEAD").exists()
    lead_saw = "".join(str(m["content"]) for m in transcript_messages(
        runs_root(workspace) / run_id, "lead"))  # fmt: skip
    assert f"committed on branch {branches[0]}" in lead_saw
    shown = coterie("tasks", "--json", cwd=workspace, home=home)
    assert branches[1] in json.loads(shown.stdout)["tasks"][1]["result"]


def test_a_teammate_cannot_write_the_leads_checkout(
    workspace: Path, home: Path, tmp_path: Path, own_workspaces: Path
) -> None:
    """Its tools are rooted at its worktree: a relative path lands there, the lead's
    checkout is outside its sandbox even in bypassPermissions."""
    make_repo(workspace)
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [{"tool_uses": [create("try", "alice")]}, {"text": "planned"}, {"text": "ok"}],
            "alice": [
                write(str(workspace / "evil.txt"), "x"),
                write("mine.txt", "y"),
                {
                    "tool_uses": [
                        {"name": "Bash", "input": {"command": "pwd; git branch --show-current"}}
                    ]
                },
                {"text": "done"},
            ],
        },
    )
    summary = team(scenario, workspace, home)
    assert not (workspace / "evil.txt").exists()
    assert not (workspace / "mine.txt").exists()
    assert "outside the workspace" in tool_results(workspace, "alice")[0]
    branch = f"coterie/{summary['run_id']}/task_1"
    assert run_git(workspace, "show", f"{branch}:mine.txt") == "y"
    where, on = tool_results(workspace, "alice")[2].split()[:2]
    assert where == str(own_workspaces.resolve() / summary["run_id"] / "alice")
    assert on == branch


def test_clones_push_their_branches_to_the_shared_repository_and_the_lead_merges(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    make_repo(workspace)
    bare = tmp_path / "shared.git"
    run_git(tmp_path, "init", "-q", "--bare", str(bare))
    summary = team(same_file_scenario(tmp_path), workspace, home, "--repo", f"file://{bare}")
    run_id = summary["run_id"]
    pushed = run_git(bare, "branch", "--format=%(refname:short)").split()
    assert pushed == [f"coterie/{run_id}/base", f"coterie/{run_id}/task_1",
                      f"coterie/{run_id}/task_2"]  # fmt: skip
    assert "(pushed)]" in summary["tasks"][0]["result"]
    assert (workspace / "notes.txt").read_text() == "from alice\n"
    assert len(run_git(workspace, "worktree", "list").splitlines()) == 1  # clones, no worktrees
    assert "  notes.txt" in tool_results(workspace)[-1]


def test_a_teammate_that_crashes_mid_task_keeps_its_work(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    make_repo(workspace)
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {"tool_uses": [create("half", "alice")]},
                {"text": "planned"},
                merge("task_1"),
                {"text": "merged"},
            ],
            "alice": [
                write("half.txt", "written before the crash\n"),
                {"crash": "a bug"},
                {"text": "finished after the restart"},
            ],
        },
    )
    summary = team(scenario, workspace, home)
    assert summary["actors"]["alice"]["restarts"] == 1
    assert summary["tasks"][0]["status"] == "completed"
    assert (workspace / "half.txt").read_text() == "written before the crash\n"


def test_a_resume_after_kill_9_finds_the_worktree_and_commits_it(
    workspace: Path, home: Path, tmp_path: Path, own_workspaces: Path
) -> None:
    make_repo(workspace)
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {"tool_uses": [create("slow", "alice")]},
                {"text": "planned"},
                {"text": "all done"},
            ],
            "alice": [
                write("kept.txt", "before the kill\n"),
                {"tool_uses": [{"name": "Bash", "input": {"command": "sleep 60"}}]},
                {"text": "done after the resume"},
            ],
        },
    )
    args = ["team", "-p", *BYPASS, *ISOLATED, "--scenario", str(scenario), "go"]
    proc = start(args, workspace, home)
    try:
        deadline = time.monotonic() + 60
        # Until alice's `sleep 60` runs (its process group is recorded): her Write is done.
        while not list(runs_root(workspace).glob("*/procgroups/*")):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert list(own_workspaces.glob("*/alice/kept.txt"))
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
    run_id = only_run(workspace)
    done = coterie("resume", "-p", run_id, cwd=workspace, home=home)
    assert done.returncode == 0, done.stderr
    kept = run_git(workspace, "show", f"coterie/{run_id}/task_1:kept.txt")
    assert kept == "before the kill\n"


def test_a_workspace_that_is_not_a_repository_is_refused(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    scenario = same_file_scenario(tmp_path)
    done = coterie(
        "team", "-p", *ISOLATED, "--scenario", str(scenario), "go", cwd=workspace, home=home
    )
    assert done.returncode == 2
    assert "needs a git repository" in done.stderr
    assert not runs_root(workspace).exists() or not any(runs_root(workspace).iterdir())
    run_git(workspace, "init", "-q")
    empty = coterie(
        "team", "-p", *ISOLATED, "--scenario", str(scenario), "go", cwd=workspace, home=home
    )
    assert empty.returncode == 2
    assert "needs a commit" in empty.stderr


def test_a_teammates_subagent_works_in_the_teammates_worktree(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    make_repo(workspace)
    agent = {"name": "Agent", "input": {"description": "d", "prompt": "write it",
                                        "subagent_type": "general-purpose"}}  # fmt: skip
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {"tool_uses": [create("delegate", "alice")]},
                {"text": "planned"},
                {"text": "ok"},
            ],
            "alice": [{"tool_uses": [agent]}, {"text": "my subagent wrote it"}],
            "subagent": [write("by-sub.txt", "sub\n"), {"text": "written"}],
        },
    )
    summary = team(scenario, workspace, home)
    assert not (workspace / "by-sub.txt").exists()
    branch = f"coterie/{summary['run_id']}/task_1"
    assert run_git(workspace, "show", f"{branch}:by-sub.txt") == "sub\n"


def test_work_of_a_teammate_stopped_for_good_goes_to_whoever_takes_the_task(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """Its supervisor gives up on alice: what she wrote is committed on the task's
    branch, and bob, who takes the task next, starts from it."""
    make_repo(workspace)
    crashes = [{"crash": f"bug {n}"} for n in range(4)]
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {"tool_uses": [create("fragile", "alice")]},
                {"text": "planned"},
                {"text": "noted"},
                {"text": "done"},
            ],
            "alice": [write("half.txt", "alice's half\n"), *crashes],
            "bob": [write("other.txt", "bob's half\n"), {"text": "finished alice's task"}],
        },
    )
    summary = team(scenario, workspace, home)
    (task,) = summary["tasks"]
    assert (task["status"], task["owner"]) == ("completed", "bob")
    branch = f"coterie/{summary['run_id']}/task_1"
    assert run_git(workspace, "show", f"{branch}:half.txt") == "alice's half\n"
    assert run_git(workspace, "show", f"{branch}:other.txt") == "bob's half\n"
    log = run_git(workspace, "log", "--format=%an %s", branch).splitlines()
    assert log[:2] == [
        "bob (coterie) task_1: fragile",
        "alice (coterie) task_1: fragile (handed back)",
    ]


def test_isolation_through_the_real_api_path(
    workspace: Path, home: Path, tmp_path: Path, mock_server: Any
) -> None:
    """The same run through the `anthropic` client and `coterie mock-server`."""
    make_repo(workspace)
    url = mock_server(same_file_scenario(tmp_path))
    done = coterie(
        "team", "-p", "--output-format", "json", *BYPASS, *ISOLATED, "go",
        cwd=workspace, home=home, env={"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "k"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "merged what merges"
    assert (workspace / "notes.txt").read_text() == "from alice\n"
    assert "  notes.txt" in tool_results(workspace)[-1]
