"""Subagents (``Task``) cannot widen their parent's permissions: the real CLI on scenarios.

Every subagent is served from the ``subagent`` role track (its name,
``<parent>-sub-<hex>``, is random); a sub-subagent shares that track, and
since a parent waits for its subagent, the track's turns are taken in order.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from tests.agent.conftest import coterie
from tests.agent.test_resume_cli import write_scenario
from tests.team.test_team_cli import BYPASS, create, events_of, write

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path

SUB_FINAL = "SUBAGENT REPORT: secret.txt was refused, other.txt written"


def task(prompt: str = "write the files", kind: str | None = None) -> dict[str, Any]:
    """A tool_use turn calling ``Task``."""
    data: dict[str, Any] = {"description": "delegated work", "prompt": prompt}
    if kind is not None:
        data["subagent_type"] = kind
    return {"tool_uses": [{"name": "Task", "input": data}]}


def deny_secret(workspace: Path) -> None:
    """The workspace's settings deny writing secret.txt."""
    (workspace / ".claude").mkdir()
    settings = {"permissions": {"deny": ["Write(secret.txt)"]}}
    (workspace / ".claude" / "settings.json").write_text(json.dumps(settings))


def results(workspace: Path, tool: str, *, sub: bool) -> list[dict[str, Any]]:
    """The ``agent.tool_result`` events of *tool*, from subagents (*sub*) or from the others."""
    return [
        e.data
        for e in events_of(workspace)
        if e.type == "agent.tool_result"
        and e.data["name"] == tool
        and ("-sub-" in e.data["actor"]) == sub
    ]


def subagent_tracks() -> list[dict[str, Any]]:
    """The subagent tries secret.txt (denied), then other.txt, then reports."""
    return [
        write("secret.txt", "leaked"),
        {"expect": "denied", **write("other.txt", "fine")},
        {"text": SUB_FINAL},
    ]


def run_or_team(command: str, workspace: Path, home: Path, tmp_path: Path) -> Any:
    """``coterie run`` (the lead calls Task) or ``coterie team`` (alice does, in her task)."""
    if command == "run":
        tracks = {"lead": [task(), {"expect": SUB_FINAL, "text": "lead done"}]}
        args = ["run"]
    else:
        tracks = {
            "lead": [
                {"tool_uses": [create("delegate", "alice")]},
                {"text": "planned"},
                {"text": "ok"},
            ],
            "alice": [task(), {"expect": SUB_FINAL, "text": "alice done"}],
        }
        args = ["team", "--teammate", "alice"]
    scenario = write_scenario(tmp_path / "s.json", {**tracks, "subagent": subagent_tracks()})
    return coterie(
        *args, "-p", *BYPASS, "--scenario", str(scenario), "go", cwd=workspace, home=home
    )


@pytest.mark.parametrize("command", ["run", "team"])
def test_a_subagent_is_bound_by_its_parents_deny_rules(
    command: str, workspace: Path, home: Path, tmp_path: Path
) -> None:
    """The parent may write anything (bypassPermissions) but secret.txt: so may its subagent."""
    deny_secret(workspace)
    done = run_or_team(command, workspace, home, tmp_path)
    assert done.returncode == 0, done.stderr
    writes = results(workspace, "Write", sub=True)
    assert [(w["is_error"], "Write(secret.txt)" in w["content"]) for w in writes] == [
        (True, True),
        (False, False),
    ]
    assert not (workspace / "secret.txt").exists()
    assert (workspace / "other.txt").read_text() == "fine"


@pytest.mark.parametrize("command", ["run", "team"])
def test_the_task_result_is_the_subagents_final_text(
    command: str, workspace: Path, home: Path, tmp_path: Path
) -> None:
    deny_secret(workspace)
    done = run_or_team(command, workspace, home, tmp_path)
    assert done.returncode == 0, done.stderr
    (result,) = results(workspace, "Task", sub=False)
    assert (result["content"], result["is_error"]) == (SUB_FINAL, False)


def test_a_subagent_of_a_parent_in_plan_mode_cannot_write(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [task(), {"text": "planned"}],
            "subagent": [
                write("plan.txt", "x"),
                {"expect": "Plan mode", "text": "could not write"},
            ],
        },
    )
    done = coterie(
        "run", "-p", "--permission-mode", "plan", "--scenario", str(scenario), "go",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (written,) = results(workspace, "Write", sub=True)
    assert written["is_error"]
    assert "denied" in written["content"]
    assert not (workspace / "plan.txt").exists()


def test_a_subagent_of_a_teammate_still_planning_cannot_write(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """With --plan-approval the teammate's subagent plans read-only too, until approval."""
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {"tool_uses": [create("job", "alice")]},
                {"text": "planned"},
                {
                    "expect": "PLAN",
                    "tool_uses": [
                        {
                            "name": "ApprovePlan",
                            "input": {"teammate": "alice", "task_id": "task_1", "approve": True},
                        }
                    ],
                },
                {"text": "approved"},
                {"text": "done"},
            ],
            "alice": [
                task(),
                {"expect": "sub could not write", "text": "PLAN: write job.txt"},
                {"text": "nothing to do after all"},
            ],
            "subagent": [write("job.txt", "early"), {"text": "sub could not write"}],
        },
    )
    done = coterie(
        "team", "--teammate", "alice", "--plan-approval", "-p", *BYPASS,
        "--scenario", str(scenario), "go", cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (written,) = results(workspace, "Write", sub=True)
    assert written["is_error"]
    assert "Plan mode" in written["content"]
    assert not (workspace / "job.txt").exists()


def test_an_explore_subagent_has_no_write_tool(workspace: Path, home: Path, tmp_path: Path) -> None:
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [task(kind="Explore"), {"text": "done"}],
            "subagent": [write("notes.txt", "x"), {"text": "I can only read"}],
        },
    )
    done = coterie(
        "run", "-p", *BYPASS, "--scenario", str(scenario), "go", cwd=workspace, home=home
    )
    assert done.returncode == 0, done.stderr
    (written,) = results(workspace, "Write", sub=True)
    assert written["is_error"]
    assert "No such tool: 'Write'" in written["content"]
    assert not (workspace / "notes.txt").exists()


def nesting(workspace: Path, home: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """lead → subagent → sub-subagent, which calls Task again."""
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [task("go one level down"), {"expect": "level 1 done", "text": "lead done"}],
            "subagent": [
                task("go two levels down"),  # the subagent
                task("go three levels down"),  # the sub-subagent
                {"text": "level 2 done"},
                {"expect": "level 2 done", "text": "level 1 done"},
            ],
        },
    )
    done = coterie(
        "run", "-p", *BYPASS, "--scenario", str(scenario), "go", cwd=workspace, home=home
    )
    assert done.returncode == 0, done.stderr
    return done


def test_a_sub_subagent_cannot_start_another_subagent(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    nesting(workspace, home, tmp_path)
    started = [e.data for e in events_of(workspace) if e.type == "subagent.started"]
    assert len(started) == 2
    assert started[1]["actor"] == started[0]["subagent"]
    (refused,) = [r for r in results(workspace, "Task", sub=True) if r["is_error"]]
    assert refused["actor"] == started[1]["subagent"]


def test_the_nesting_limit_is_named_in_the_refusal(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    nesting(workspace, home, tmp_path)
    (refused,) = [r for r in results(workspace, "Task", sub=True) if r["is_error"]]
    assert "nesting limit" in refused["content"]


def test_a_subagent_that_crashes_is_restarted_and_finishes(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [task(), {"expect": "finished after a crash", "text": "lead done"}],
            "subagent": [
                write("one.txt", "1"),
                {"crash": "a bug in the subagent"},
                {"text": "finished after a crash"},
            ],
        },
    )
    done = coterie(
        "run", "-p", *BYPASS, "--scenario", str(scenario), "go", cwd=workspace, home=home
    )
    assert (done.returncode, done.stdout) == (0, "lead done\n"), done.stderr
    events = events_of(workspace)
    assert [e.data["actor"] for e in events if e.type == "actor.restarted"] == [
        e.data["subagent"] for e in events if e.type == "subagent.started"
    ]
    (result,) = results(workspace, "Task", sub=False)
    assert (result["content"], result["is_error"]) == ("finished after a crash", False)
    assert len(results(workspace, "Write", sub=True)) == 1  # not done again after the restart


def test_a_subagent_that_keeps_crashing_is_an_error_result_and_the_run_ends(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [task(), {"expect": "crashed repeatedly", "text": "gave up on it"}],
            "subagent": [{"crash": f"bug {i}"} for i in range(4)],
        },
    )
    done = coterie(
        "run", "-p", "--output-format", "json", *BYPASS, "--scenario", str(scenario), "go",
        cwd=workspace, home=home, timeout=30,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "gave up on it"
    (result,) = results(workspace, "Task", sub=False)
    assert result["is_error"]
    assert "crashed repeatedly" in result["content"]


def test_a_teammates_subagent_has_no_team_tools(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """A subagent cannot change the board: its TaskCreate is an error, no task is added."""
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {"tool_uses": [create("delegate", "alice")]},
                {"text": "planned"},
                {"text": "ok"},
            ],
            "alice": [task(), {"text": "alice done"}],
            "subagent": [{"tool_uses": [create("sneaky extra task")]}, {"text": "tried"}],
        },
    )
    done = coterie(
        "team", "--teammate", "alice", "-p", "--output-format", "json", *BYPASS,
        "--scenario", str(scenario), "go", cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (created,) = results(workspace, "TaskCreate", sub=True)
    assert created["is_error"]
    assert [t["subject"] for t in json.loads(done.stdout)["tasks"]] == ["delegate"]


def test_a_teammates_subagent_that_keeps_crashing_does_not_stop_the_team(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """Its supervisor gives up under the ``team`` supervisor: alice gets an error result,
    finishes her task, and the lead and the run carry on to the end."""
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {"tool_uses": [create("delegate", "alice")]},
                {"text": "planned"},
                {"expect": "task_1 completed", "text": "all done"},
            ],
            "alice": [task(), {"expect": "crashed repeatedly", "text": "did it myself"}],
            "subagent": [{"crash": f"bug {i}"} for i in range(4)],
        },
    )
    done = coterie(
        "team", "--teammate", "alice", "-p", "--output-format", "json", *BYPASS,
        "--scenario", str(scenario), "go", cwd=workspace, home=home, timeout=30,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["result"] == "all done"
    assert [(t["status"], t["result"]) for t in summary["tasks"]] == [
        ("completed", "did it myself")
    ]
    assert summary["actors"]["alice"]["restarts"] == 0
    assert summary["actors"]["lead"]["restarts"] == 0
