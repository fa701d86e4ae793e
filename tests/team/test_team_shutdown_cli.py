"""The end of a team run: the shutdown protocol, and a team with nobody left to work."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import attrs
import pytest

from coterie.team._lead import SHUTDOWN_TIMEOUT
from tests.agent.conftest import coterie
from tests.agent.test_resume_cli import write_scenario
from tests.team.test_team_cli import BYPASS, create, events_of, write

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path

    from coterie.events import Event


@attrs.frozen
class Finished:
    """A team run done in a workspace, and how long the CLI took."""

    workspace: Path
    home: Path
    done: subprocess.CompletedProcess[str]
    seconds: float

    @property
    def events(self) -> list[Event]:
        return events_of(self.workspace)

    def messages(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.type == "team.message" and e.data["kind"] == kind]


def two_tasks() -> dict[str, list[dict[str, Any]]]:
    return {
        "lead": [
            {"tool_uses": [create("one", "alice"), create("two", "bob")]},
            {"text": "planned"},
            {"text": "noted"},
            {"text": "both done"},
        ],
        "alice": [write("one.txt", "1"), {"text": "one written"}],
        "bob": [write("two.txt", "2"), {"text": "two written"}],
    }


def run_team(tmp: Path, tracks: dict[str, list[dict[str, Any]]]) -> Finished:
    workspace, home = tmp / "ws", tmp / "home"
    workspace.mkdir()
    home.mkdir()
    scenario = write_scenario(tmp / "s.json", tracks)
    started = time.monotonic()
    done = coterie(
        "team", "-p", "--output-format", "json", *BYPASS, "--scenario", str(scenario), "go",
        cwd=workspace, home=home, timeout=SHUTDOWN_TIMEOUT,
    )  # fmt: skip
    return Finished(workspace, home, done, time.monotonic() - started)


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Finished:
    """alice and bob each do one task; the run is over."""
    run = run_team(tmp_path_factory.mktemp("shutdown"), two_tasks())
    assert run.done.returncode == 0, run.done.stderr
    return run


def test_each_teammate_is_asked_to_shut_down_and_answers(finished: Finished) -> None:
    asked = [(e.data["sender"], e.data["recipient"]) for e in finished.messages("shutdown_request")]
    answered = [
        (e.data["sender"], e.data["recipient"]) for e in finished.messages("shutdown_response")
    ]
    assert sorted(asked) == [("lead", "alice"), ("lead", "bob")]
    assert sorted(answered) == [("alice", "lead"), ("bob", "lead")]


def test_the_shutdown_starts_after_every_task_is_reported(finished: Finished) -> None:
    first_request = min(e.seq for e in finished.messages("shutdown_request"))
    reports = finished.messages("result")
    assert len(reports) == 2
    assert all(e.seq < first_request for e in reports)


def test_a_teammate_answers_before_it_stops_and_stops_cleanly(finished: Finished) -> None:
    events = finished.events
    for name in ("alice", "bob"):
        (answer,) = [e for e in finished.messages("shutdown_response") if e.data["sender"] == name]
        (ended,) = [
            e
            for e in events
            if e.type in ("actor.exited", "actor.crashed", "actor.stopped")
            and e.data["actor"] == name
        ]
        assert (ended.type, answer.seq < ended.seq) == ("actor.exited", True)


def test_the_run_ends_promptly_without_waiting_out_the_shutdown_timeout(
    finished: Finished,
) -> None:
    assert not [e for e in finished.events if e.type == "team.shutdown_timeout"]
    assert finished.seconds < SHUTDOWN_TIMEOUT / 3
    assert json.loads(finished.done.stdout)["duration_ms"] < SHUTDOWN_TIMEOUT * 1000 / 3


# -- nobody left ----------------------------------------------------------------------


def everyone_crashes() -> dict[str, list[dict[str, Any]]]:
    """Two tasks, and both teammates crash past their supervisors' intensity."""
    return {
        "lead": [
            {"tool_uses": [create("one", "alice"), create("two")]},
            {"text": "planned"},
            {"expect": "was stopped", "text": "noted"},
            {"expect": "was stopped", "text": "noted"},
        ],
        "alice": [{"crash": f"alice bug {i}"} for i in range(4)],
        "bob": [{"crash": f"bob bug {i}"} for i in range(4)],
    }


@pytest.fixture(scope="module")
def abandoned(tmp_path_factory: pytest.TempPathFactory) -> Finished:
    return run_team(tmp_path_factory.mktemp("abandoned"), everyone_crashes())


def test_a_team_whose_teammates_all_stopped_ends_with_exit_code_1(abandoned: Finished) -> None:
    assert abandoned.done.returncode == 1, abandoned.done.stderr
    assert abandoned.seconds < SHUTDOWN_TIMEOUT / 3


def test_the_result_names_the_tasks_not_done(abandoned: Finished) -> None:
    summary = json.loads(abandoned.done.stdout)
    assert summary["is_error"]
    assert "not done" in summary["result"]
    assert "task_1, task_2" in summary["result"]
    assert [t["status"] for t in summary["tasks"]] == ["pending", "pending"]


def test_teammates_stopped_by_their_supervisors_are_not_asked_to_shut_down(
    abandoned: Finished,
) -> None:
    assert [e.data["sender"] for e in abandoned.messages("teammate_stopped")] in (
        ["alice", "bob"],
        ["bob", "alice"],
    )
    assert abandoned.messages("shutdown_request") == []


def test_a_task_blocked_by_a_failed_one_ends_the_run_with_both_named(tmp_path: Path) -> None:
    error = {"status": 400, "type": "invalid_request_error", "message": "the request was bad"}
    run = run_team(
        tmp_path,
        {
            "lead": [
                {
                    "tool_uses": [
                        create("one", "alice"),
                        create("two", "bob", blocked_by=["task_1"]),
                    ]
                },
                {"text": "planned"},
                {"expect": "task_1 failed", "text": "noted"},
            ],
            "alice": [{"error": error}],
            "bob": [],
        },
    )
    assert run.done.returncode == 1, run.done.stderr
    summary = json.loads(run.done.stdout)
    assert [t["status"] for t in summary["tasks"]] == ["failed", "pending"]
    assert "failed: task_1" in summary["result"]
    assert "not done (no teammate could take them): task_2" in summary["result"]
    assert sorted(e.data["recipient"] for e in run.messages("shutdown_request")) == ["alice", "bob"]


def test_a_task_cannot_be_assigned_to_the_lead(tmp_path: Path) -> None:
    run = run_team(
        tmp_path,
        {
            "lead": [
                {"tool_uses": [create("mine", "lead")]},
                {"tool_uses": [create("mine", "alice")]},
                {"text": "planned"},
                *[{"text": "noted"}] * 3,
            ],
            "alice": [{"text": "done"}],
            "bob": [{"text": "done"}],
        },
    )
    created = [
        e.data
        for e in run.events
        if e.type == "agent.tool_result" and e.data["name"] == "TaskCreate"
    ]
    assert [c["is_error"] for c in created] == [True, False]
