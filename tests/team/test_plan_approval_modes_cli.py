"""``coterie team --plan-approval -p`` outside ``bypassPermissions`` (bug 2 of issue 10).

The lead's ``ApprovePlan`` changes only the run's own state (a message to a
teammate whose every later action is still checked by the run's policy), so
it must be allowed in every mode, as the other team tools are. Before the fix
it was asked about (denied headless) in ``default``, denied in ``dontAsk``
and ``plan``, and the task failed after three rounds of unanswered plans.

What is right in ``plan`` mode: the lead's approval answers the plan
protocol, it is not the user's consent. The run's ``plan`` mode is a ceiling
no agent lifts, so the approved teammate still may not write; it reports
that, and the task completes with its report and nothing changed.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from tests.agent.conftest import coterie
from tests.agent.test_resume_cli import write_scenario
from tests.team.test_plan_approval_cli import alice_writes, plan_messages, verdict
from tests.team.test_team_cli import create, events_of, write

if TYPE_CHECKING:
    from pathlib import Path


def allow_writes(home: Path) -> None:
    """The user's settings allow Write, so an approved teammate may write headless."""
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"permissions": {"allow": ["Write"]}}))


def scenario(tmp_path: Path, *, written: bool) -> Path:
    """alice plans, the lead approves, alice writes (or is still refused, in plan mode)."""
    outcome = "report.txt written" if written else "report.txt not written: plan mode"
    after_approval: list[dict[str, Any]] = [
        {"expect": "approved your plan", **write("report.txt", "the report")},
        {"expect": "created successfully" if written else "Plan mode is on", "text": outcome},
    ]
    return write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {"tool_uses": [create("write the report", "alice")]},
                {"text": "planned"},
                {"expect": "PLAN: write report.txt", **verdict(True)},
                {"text": "approved it"},
                {"expect": outcome, "text": "the team is done"},
            ],
            "alice": [
                write("report.txt", "too early"),
                {"expect": "denied", "text": "PLAN: write report.txt"},
                *after_approval,
            ],
        },
    )


def run(mode: str, workspace: Path, home: Path, tmp_path: Path) -> dict[str, Any]:
    allow_writes(home)
    path = scenario(tmp_path, written=mode != "plan")
    done = coterie(
        "team", "--teammate", "alice", "--plan-approval", "-p", "--output-format", "json",
        "--permission-mode", mode, "--scenario", str(path), "go",
        cwd=workspace, home=home, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary


def approvals(workspace: Path) -> list[bool]:
    """Whether each of the lead's ApprovePlan calls failed (was denied), in order."""
    return [
        e.data["is_error"]
        for e in events_of(workspace)
        if e.type == "agent.tool_result"
        and e.data["actor"] == "lead"
        and e.data["name"] == "ApprovePlan"
    ]


def denial_rules(workspace: Path, agent: str, tool: str) -> list[str | None]:
    return [
        e.data["rule"]
        for e in events_of(workspace)
        if e.type == "permission.denied" and e.data["agent"] == agent and e.data["tool"] == tool
    ]


@pytest.mark.parametrize("mode", ["default", "dontAsk"])
def test_the_lead_approves_a_plan_and_the_task_completes(
    mode: str, workspace: Path, home: Path, tmp_path: Path
) -> None:
    summary = run(mode, workspace, home, tmp_path)
    assert approvals(workspace) == [False]
    assert plan_messages(workspace) == [
        ("alice", "lead", "plan_request"),
        ("lead", "alice", "plan_approval"),
    ]
    # Denied while planning (plan mode's ceiling beats the allow rule), allowed once approved.
    assert alice_writes(workspace) == [True, False]
    assert denial_rules(workspace, "alice", "Write") == ["plan-mode"]
    assert (workspace / "report.txt").read_text() == "the report"
    assert [(t["id"], t["status"], t["owner"], t["result"]) for t in summary["tasks"]] == [
        ("task_1", "completed", "alice", "report.txt written")
    ]
    assert summary["result"] == "the team is done"


def test_in_plan_mode_the_plan_is_approved_but_nothing_is_written(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """The lead's approval is no user's consent: the run's plan mode still binds alice."""
    summary = run("plan", workspace, home, tmp_path)
    assert approvals(workspace) == [False]
    assert plan_messages(workspace) == [
        ("alice", "lead", "plan_request"),
        ("lead", "alice", "plan_approval"),
    ]
    assert alice_writes(workspace) == [True, True]
    assert denial_rules(workspace, "alice", "Write") == ["plan-mode", "plan-mode"]
    assert not (workspace / "report.txt").exists()
    assert [(t["status"], t["result"]) for t in summary["tasks"]] == [
        ("completed", "report.txt not written: plan mode")
    ]
    assert summary["result"] == "the team is done"
