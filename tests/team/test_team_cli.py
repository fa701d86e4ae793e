"""``coterie team`` and ``coterie demo`` on scenarios in temporary workspaces."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import trio

from coterie.context import TranscriptLog
from coterie.events import read_events
from coterie.mailbox import PostOffice
from coterie.runs import runs_root
from tests.agent.conftest import REPO, coterie
from tests.agent.test_resume_cli import only_run, write_scenario

if TYPE_CHECKING:
    from pathlib import Path

BYPASS = ("--permission-mode", "bypassPermissions")


def write(path: str, content: str) -> dict[str, Any]:
    return {"tool_uses": [{"name": "Write", "input": {"file_path": path, "content": content}}]}


def create(subject: str, owner: str | None = None, **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"subject": subject, "description": f"Do: {subject}", **extra}
    if owner:
        data["owner"] = owner
    return {"name": "TaskCreate", "input": data}


def events_of(workspace: Path) -> list[Any]:
    return list(read_events(runs_root(workspace) / only_run(workspace) / "events.jsonl"))


def unacknowledged(run_dir: Path) -> dict[str, int]:
    async def count() -> dict[str, int]:
        post = PostOffice(run_dir / "mailboxes")
        try:
            return {n: post.open(n).statistics().pending for n in post.names()}
        finally:
            await post.aclose()

    return trio.run(count)


def test_the_team_demo_plans_works_in_parallel_crashes_and_finishes(
    workspace: Path, home: Path
) -> None:
    done = coterie("demo", "--workdir", str(workspace), cwd=workspace, home=home)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "alice crashed" in out
    assert "alice restarting" in out
    assert "4/4 tasks completed" in out
    assert "Goal met" in out
    for name in ("greet.py", "test_greet.py", "README.md", "CHANGELOG.md"):
        assert (workspace / name).is_file()
    run_dir = runs_root(workspace) / only_run(workspace)
    types = [e.type for e in read_events(run_dir / "events.jsonl")]
    assert types.count("actor.crashed") == 1
    assert set(unacknowledged(run_dir).values()) == {0}
    with TranscriptLog.open(run_dir / "transcripts" / "alice.log", "none") as log:
        writes = [
            b["input"]["file_path"]
            for m in log.load()
            for b in m["content"]
            if b.get("type") == "tool_use" and b["name"] == "Write"
        ]
    assert writes.count("greet.py") == 1


def test_a_team_run_prints_its_summary_as_json(workspace: Path, home: Path, tmp_path: Path) -> None:
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {"tool_uses": [create("one", "alice"), create("two", "bob")]},
                {"text": "planned"},
                {"text": "both done"},
            ],
            "alice": [write("one.txt", "1"), {"text": "one written"}],
            "bob": [
                write("two.txt", "2"),
                {"text": "two written", "usage": {"input_tokens": 7, "output_tokens": 3,
                 "cache_creation_input_tokens": 11, "cache_read_input_tokens": 5000}},
            ],
        },
    )  # fmt: skip
    done = coterie(
        "team", "-p", "--output-format", "json", *BYPASS, "--scenario", str(scenario), "go",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["result"] == "both done"
    # Each actor's tokens as the API bills them: uncached input, cache writes and reads.
    assert summary["actors"]["bob"]["cache_read_input_tokens"] == 5000
    assert summary["actors"]["bob"]["cache_creation_input_tokens"] == 11
    assert summary["usage"]["cache_read_input_tokens"] >= 5000
    assert [(t["id"], t["status"], t["owner"]) for t in summary["tasks"]] == [
        ("task_1", "completed", "alice"),
        ("task_2", "completed", "bob"),
    ]
    assert summary["actors"]["alice"]["tasks_completed"] == 1
    # The lead: its plan (two calls) and one answer carrying both results.
    assert summary["num_turns"] == 7
    # That answer's prompt holds both results, and no idle notice (they are
    # acknowledged with it, never shown to the model).
    run_dir = runs_root(workspace) / only_run(workspace)
    with TranscriptLog.open(run_dir / "transcripts" / "lead.log", "none") as log:
        last_prompt = json.dumps([m for m in log.load() if m["role"] == "user"][-1])
    assert "Task task_1 completed" in last_prompt
    assert "Task task_2 completed" in last_prompt
    assert 'kind=\\"idle\\"' not in last_prompt


def test_a_team_with_a_goal_in_auto_mode_runs_through_the_real_api_path(
    workspace: Path, home: Path, tmp_path: Path, mock_server: Any
) -> None:
    """The demo's team over HTTP: every actor (lead, teammates, evaluator, classifier,
    a crash included) through the real `anthropic` client and `coterie mock-server`,
    which picks each one's track from the headers coterie sends."""
    demo = json.loads((REPO / "coterie" / "assets" / "team_demo.json").read_text())
    demo["tracks"]["classifier"] = [{"text": "<block>no</block>"} for _ in range(12)]
    scenario = tmp_path / "team.json"
    scenario.write_text(json.dumps(demo))
    url = mock_server(scenario)
    done = coterie(
        "team", "-p", "--output-format", "json", "--auto", "--teammate", "alice",
        "--teammate", "bob", "--goal", "the four files exist", "Build a tiny greeting library",
        cwd=workspace, home=home, env={"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "k"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["goal"]["status"] == "met"
    assert [t["status"] for t in summary["tasks"]] == ["completed"] * 4
    assert summary["actors"]["alice"]["restarts"] == 1
    for name in ("greet.py", "test_greet.py", "README.md", "CHANGELOG.md"):
        assert (workspace / name).is_file()
    decisions = [e for e in events_of(workspace) if e.type == "auto_mode.decision"]
    assert {e.data["actor"] for e in decisions} == {"alice", "bob"}
    assert not any(e.data["block"] for e in decisions)


def test_the_budget_bounds_the_whole_team_not_each_agent(workspace: Path, home: Path) -> None:
    """Each agent of the demo spends under $0.05, the team about $0.12: a $0.05
    budget must stop the team, not let every agent spend it."""
    done = coterie(
        "team", "-p", "--output-format", "json", *BYPASS, "--max-budget-usd", "0.05",
        "--scenario", str(REPO / "coterie" / "assets" / "team_demo.json"),
        "--teammate", "alice", "--teammate", "bob", "Build a tiny greeting library",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    summary = json.loads(done.stdout)
    assert summary["is_error"]
    assert all(a["cost_usd"] < 0.05 for a in summary["actors"].values())
    # Agents working at once may each finish the call they started: one call each.
    assert summary["total_cost_usd"] < 0.05 + 3 * 0.012
    assert any(t["status"] != "completed" for t in summary["tasks"])
