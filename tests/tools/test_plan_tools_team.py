"""A teammate's ExitPlanMode under plan approval: its plan goes to the lead, never
to a person, and the lead's ApprovePlan lets it work (issue 27)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tests.agent.conftest import home, workspace
from tests.team.test_plan_approval_cli import alice_writes, plan_messages, plan_run, verdict
from tests.team.test_team_cli import create, events_of, write

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["home", "workspace"]  # the fixtures, used by name below

PLAN = "PLAN: write report.txt"


def tracks() -> dict[str, list[dict[str, Any]]]:
    return {
        "lead": [
            {"tool_uses": [create("write the report", "alice")]},
            {"text": "planned"},
            {"expect": PLAN, **verdict(True)},
            {"text": "approved it"},
            {"expect": "report.txt written", "text": "the report is done"},
        ],
        "alice": [
            {"tool_uses": [{"name": "ExitPlanMode", "input": {"plan": PLAN}}]},
            {"expect": "goes to the lead", "text": PLAN},
            {"expect": "approved your plan", **write("report.txt", "the report")},
            {"text": "report.txt written"},
        ],
    }


def exit_plan_results(workspace: Path) -> list[tuple[bool, str]]:
    return [
        (e.data["is_error"], str(e.data.get("content", e.data)))
        for e in events_of(workspace)
        if e.type == "agent.tool_result" and e.data["name"] == "ExitPlanMode"
    ]


def test_a_teammates_exit_plan_mode_reaches_the_lead_not_a_person(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """Headless: a person would be nobody (denied); the lead answers instead."""
    summary = plan_run(tracks(), workspace, home, tmp_path)
    [(failed, _)] = exit_plan_results(workspace)
    assert failed is False
    assert plan_messages(workspace) == [
        ("alice", "lead", "plan_request"),
        ("lead", "alice", "plan_approval"),
    ]
    assert alice_writes(workspace) == [False]
    assert (workspace / "report.txt").read_text() == "the report"
    assert summary["result"] == "the report is done"


def test_the_plan_the_lead_reads_is_the_one_exit_plan_mode_presented(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    plan = tracks()
    plan["alice"][1] = {"expect": "goes to the lead", "text": "Sent my plan to the lead."}
    summary = plan_run(plan, workspace, home, tmp_path)
    assert plan_messages(workspace)[0] == ("alice", "lead", "plan_request")
    assert summary["result"] == "the report is done"
