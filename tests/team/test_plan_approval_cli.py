"""``coterie team --plan-approval``: a teammate plans read-only until the lead approves."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tests.agent.conftest import coterie
from tests.agent.test_resume_cli import write_scenario
from tests.team.test_team_cli import BYPASS, create, events_of, write

if TYPE_CHECKING:
    from pathlib import Path


def verdict(approve: bool, feedback: str = "") -> dict[str, Any]:
    """The lead's ApprovePlan call on alice's plan for task_1."""
    data: dict[str, Any] = {"teammate": "alice", "task_id": "task_1", "approve": approve}
    if feedback:
        data["feedback"] = feedback
    return {"tool_uses": [{"name": "ApprovePlan", "input": data}]}


def approved_at_once() -> dict[str, list[dict[str, Any]]]:
    return {
        "lead": [
            {"tool_uses": [create("write the report", "alice")]},
            {"text": "planned"},
            {"expect": "PLAN: write report.txt", **verdict(True)},
            {"text": "approved it"},
            {"expect": "report.txt written", "text": "the report is done"},
        ],
        "alice": [
            write("report.txt", "too early"),
            {"expect": "denied", "text": "PLAN: write report.txt"},
            {"expect": "approved your plan", **write("report.txt", "the report")},
            {"text": "report.txt written"},
        ],
    }


def rejected_then_approved() -> dict[str, list[dict[str, Any]]]:
    return {
        "lead": [
            {"tool_uses": [create("write the report", "alice")]},
            {"text": "planned"},
            {"expect": "PLAN v1", **verdict(False, "add a title")},
            {"text": "rejected it"},
            {"expect": "PLAN v2", **verdict(True)},
            {"text": "approved it"},
            {"expect": "report.txt written", "text": "the report is done"},
        ],
        "alice": [
            write("report.txt", "too early"),
            {"expect": "denied", "text": "PLAN v1: write report.txt"},
            {"expect": "add a title", **write("report.txt", "still too early")},
            {"expect": "denied", "text": "PLAN v2: write report.txt with a title"},
            {"expect": "approved your plan", **write("report.txt", "# Title\nthe report")},
            {"text": "report.txt written"},
        ],
    }


def plan_run(
    tracks: dict[str, list[dict[str, Any]]], workspace: Path, home: Path, tmp_path: Path
) -> dict[str, Any]:
    scenario = write_scenario(tmp_path / "s.json", tracks)
    done = coterie(
        "team", "--teammate", "alice", "--plan-approval", "-p", "--output-format", "json",
        *BYPASS, "--scenario", str(scenario), "go", cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary


def alice_writes(workspace: Path) -> list[bool]:
    """Whether each of alice's Write calls failed, in order."""
    return [
        e.data["is_error"]
        for e in events_of(workspace)
        if e.type == "agent.tool_result"
        and e.data["actor"] == "alice"
        and e.data["name"] == "Write"
    ]


def plan_messages(workspace: Path) -> list[tuple[str, str, str]]:
    return [
        (e.data["sender"], e.data["recipient"], e.data["kind"])
        for e in events_of(workspace)
        if e.type == "team.message" and e.data["kind"] in ("plan_request", "plan_approval")
    ]


def test_a_planning_teammate_may_not_write_until_its_plan_is_approved(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    plan_run(approved_at_once(), workspace, home, tmp_path)
    assert alice_writes(workspace) == [True, False]
    assert (workspace / "report.txt").read_text() == "the report"


def test_the_plan_goes_to_the_lead_and_its_approval_back(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    plan_run(approved_at_once(), workspace, home, tmp_path)
    assert plan_messages(workspace) == [
        ("alice", "lead", "plan_request"),
        ("lead", "alice", "plan_approval"),
    ]


def test_an_approved_plan_is_carried_out_and_completes_the_task(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    summary = plan_run(approved_at_once(), workspace, home, tmp_path)
    assert summary["result"] == "the report is done"
    assert [(t["id"], t["status"], t["owner"], t["result"]) for t in summary["tasks"]] == [
        ("task_1", "completed", "alice", "report.txt written")
    ]


def test_a_rejected_plan_is_revised_still_read_only_then_approved(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    summary = plan_run(rejected_then_approved(), workspace, home, tmp_path)
    assert alice_writes(workspace) == [True, True, False]
    assert (workspace / "report.txt").read_text() == "# Title\nthe report"
    assert plan_messages(workspace) == [
        ("alice", "lead", "plan_request"),
        ("lead", "alice", "plan_approval"),
        ("alice", "lead", "plan_request"),
        ("lead", "alice", "plan_approval"),
    ]
    assert [(t["status"], t["result"]) for t in summary["tasks"]] == [
        ("completed", "report.txt written")
    ]


def test_only_the_lead_has_the_approve_plan_tool(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """A teammate cannot approve its own plan: ApprovePlan is not one of its tools."""
    tracks = approved_at_once()
    tracks["alice"].insert(0, verdict(True))
    plan_run(tracks, workspace, home, tmp_path)
    (own,) = [
        e.data
        for e in events_of(workspace)
        if e.type == "agent.tool_result" and e.data["name"] == "ApprovePlan"
        and e.data["actor"] == "alice"
    ]  # fmt: skip
    assert own["is_error"]
    assert alice_writes(workspace) == [True, False]


def test_a_plan_request_the_lead_never_answers_does_not_hang_the_run(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {"tool_uses": [create("write the report", "alice")]},
                {"text": "planned"},
                {"text": "nice plan"},  # but no ApprovePlan
                *[{"text": "still no ApprovePlan"}] * 3,
            ],
            "alice": [{"text": "PLAN: write report.txt"}, *[{"text": "waiting"}] * 3],
        },
    )
    done = coterie(
        "team", "--teammate", "alice", "--plan-approval", "-p", *BYPASS,
        "--scenario", str(scenario), "go", cwd=workspace, home=home, timeout=5,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    assert not (workspace / "report.txt").exists()


def test_a_planning_turn_that_fails_fails_the_task_instead_of_proposing_a_plan(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    error = {"status": 400, "type": "invalid_request_error", "message": "the request was bad"}
    tracks = {
        # Enough lead turns for either outcome: a failed task, or the error taken as a plan.
        "lead": [
            {"tool_uses": [create("write the report", "alice")]},
            {"text": "planned"},
            verdict(True),
            *[{"text": "ok"}] * 3,
        ],
        "alice": [{"error": error}, {"text": "done"}],
    }
    scenario = write_scenario(tmp_path / "s.json", tracks)
    done = coterie(
        "team", "--teammate", "alice", "--plan-approval", "-p", "--output-format", "json",
        *BYPASS, "--scenario", str(scenario), "go", cwd=workspace, home=home, timeout=15,
    )  # fmt: skip
    requests = [m for m in plan_messages(workspace) if m[2] == "plan_request"]
    assert requests == []
    assert [t["status"] for t in json.loads(done.stdout)["tasks"]] == ["failed"]


def test_the_inbox_shows_the_leads_verdict_and_feedback(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    plan_run(rejected_then_approved(), workspace, home, tmp_path)
    shown = coterie("inbox", "alice", "--json", cwd=workspace, home=home)
    history = json.loads(shown.stdout)["history"]
    verdicts = [m["text"] for m in history if m["kind"] == "plan_approval"]
    assert len(verdicts) == 2
    assert "add a title" in verdicts[0]
    assert verdicts[0] != verdicts[1]
