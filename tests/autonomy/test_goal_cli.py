"""``coterie run --goal COND``: the real CLI on scenarios whose ``evaluator`` track judges."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from coterie.runs import runs_root
from tests.agent.conftest import coterie, home, workspace
from tests.agent.test_resume_cli import only_run, transcript_messages, write_scenario
from tests.team.test_team_cli import BYPASS, events_of, write

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path

__all__ = ["home", "workspace"]  # the fixtures of tests/agent

GOAL = "done.txt exists"


def verdict(ok: bool, reason: str, **extra: Any) -> dict[str, Any]:
    """An evaluator turn answering the verdict JSON of docs/autonomy.md."""
    return {"text": json.dumps({"ok": ok, "reason": reason, **extra})}


def pursue(
    workspace: Path, home: Path, scenario: Path, *extra: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """``coterie run -p --output-format json --goal GOAL`` on *scenario*; the process and
    its JSON result."""
    done = coterie(
        "run", "-p", "--output-format", "json", *BYPASS, "--scenario", str(scenario),
        "--goal", GOAL, *extra, "make done.txt",
        cwd=workspace, home=home, timeout=60,
    )  # fmt: skip
    assert done.stdout, done.stderr
    return done, json.loads(done.stdout)


def checks(workspace: Path) -> list[dict[str, Any]]:
    """The ``goal.checked`` events of the run, in order."""
    return [e.data for e in events_of(workspace) if e.type == "goal.checked"]


def user_texts(workspace: Path) -> list[str]:
    """The text of every user message in the lead's transcript."""
    run_dir = runs_root(workspace) / only_run(workspace)
    return [
        block["text"]
        for message in transcript_messages(run_dir)
        if message["role"] == "user"
        for block in message["content"]
        if block.get("type") == "text"
    ]


def test_a_goal_is_met_after_one_not_met_verdict_whose_reason_is_fed_back(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {"text": "Looked around; nothing to do."},
                {
                    "expect": "The goal is not met yet: done.txt is missing",
                    **write("done.txt", "ok"),
                },
                {"text": "Created done.txt."},
            ],
            "evaluator": [verdict(False, "done.txt is missing"), verdict(True, "done.txt written")],
        },
    )
    done, result = pursue(workspace, home, scenario)
    assert done.returncode == 0, done.stderr
    assert result["goal"] == {
        "condition": GOAL, "status": "met", "reason": "done.txt written", "iterations": 2,
    }  # fmt: skip
    assert result["result"].endswith("Goal met: done.txt written")
    assert "The goal is not met yet: done.txt is missing" in user_texts(workspace)
    assert [(c["status"], c["valid"]) for c in checks(workspace)] == [
        ("not_met", True),
        ("met", True),
    ]
    assert (workspace / "done.txt").read_text() == "ok"


def test_an_impossible_verdict_stops_the_run_with_exit_code_1(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [{"text": "The disk is read-only, I cannot write anything."}],
            "evaluator": [
                verdict(False, "the workspace is read-only", impossible=True),
                verdict(True, "never asked: the run stopped"),
            ],
        },
    )
    done, result = pursue(workspace, home, scenario)
    assert done.returncode == 1
    assert (result["is_error"], result["subtype"]) == (True, "error_goal_impossible")
    assert result["goal"]["status"] == "impossible"
    assert "The goal is impossible: the workspace is read-only" in result["result"]
    assert [c["status"] for c in checks(workspace)] == ["impossible"]


GARBAGE = [
    "Yes, the goal is met.",  # not JSON
    '{"ok": true}',  # no reason
    '{"ok": "true", "reason": "done"}',  # ok not a boolean
    '{"ok": true, "impossible": true, "reason": "both at once"}',  # inconsistent
]


def test_an_evaluator_answering_only_garbage_stops_at_the_cap_never_met(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    cap = len(GARBAGE)
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [{"text": f"Done, I promise ({i})."} for i in range(cap)],
            "evaluator": [{"text": text} for text in GARBAGE],
        },
    )
    done, result = pursue(workspace, home, scenario, "--max-goal-iterations", str(cap))
    assert done.returncode == 1
    assert (result["subtype"], result["goal"]["status"]) == ("error_max_goal_iterations", "cap")
    assert [(c["status"], c["valid"]) for c in checks(workspace)] == [("not_met", False)] * cap
    assert "Goal met" not in result["result"]
    # Every garbage answer was fed back as "not met"; the lead worked once per check.
    fed_back = [t for t in user_texts(workspace) if t.startswith("The goal is not met yet:")]
    assert len(fed_back) == cap - 1


def test_a_crashing_evaluator_is_restarted_and_its_verdict_counts_as_not_met(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {"text": "Nothing yet."},
                {
                    "expect": "The goal is not met yet: the evaluator crashed",
                    **write("done.txt", "ok"),
                },
                {"text": "Created done.txt."},
            ],
            "evaluator": [{"crash": "evaluator bug"}, verdict(True, "done.txt written")],
        },
    )
    done, result = pursue(workspace, home, scenario)
    assert done.returncode == 0, done.stderr
    assert result["goal"]["status"] == "met"
    events = events_of(workspace)
    crashed = [e.data["actor"] for e in events if e.type == "actor.crashed"]
    starts = [e.data["attempt"] for e in events if e.type == "actor.started"
              and e.data["actor"] == "evaluator"]  # fmt: skip
    assert crashed == ["evaluator"]
    assert starts == [0, 1]
    first, second = checks(workspace)
    assert (first["status"], first["valid"]) == ("not_met", False)
    assert "crashed" in first["reason"]
    assert (second["status"], second["valid"]) == ("met", True)


def test_a_lead_restarted_mid_pursuit_goes_on_from_its_last_instruction(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """The fed-back instruction is in the transcript under its iteration's id: the
    restarted Lead finishes it and the pursuit counts on, it does not start over."""
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {"text": "first try"},
                {"crash": "a bug while working on the feedback"},
                write("done.txt", "ok"),
                {"text": "created done.txt"},
            ],
            "evaluator": [verdict(False, "done.txt is missing"), verdict(True, "it exists")],
        },
    )
    done, result = pursue(workspace, home, scenario)
    assert done.returncode == 0, done.stderr
    assert result["goal"]["status"] == "met"
    assert result["goal"]["iterations"] == 2
    assert [c["status"] for c in checks(workspace)] == ["not_met", "met"]
    run_dir = runs_root(workspace) / only_run(workspace)
    state = json.loads((run_dir / "scenario-state.json").read_text())
    assert state["cursors"]["evaluator"] == 2
