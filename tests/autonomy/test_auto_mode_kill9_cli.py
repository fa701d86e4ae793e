"""kill -9 during ``coterie run --auto``: the classification round trip is not fsynced
(``Message.durable`` false), so a classification in flight at the kill is asked
again or fails closed; an action never runs without an allowing verdict of its own
process, and a verdict lost in the kill is never taken for one.
"""

from __future__ import annotations

import os
import random
from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest

from coterie.events import read_events
from coterie.runs import runs_root
from tests.agent.conftest import home, workspace
from tests.agent.test_resume_cli import kill_and_resume, steps, write_scenario

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["home", "workspace"]  # the fixtures of tests/agent

ALLOW = {"text": "<block>no</block>"}
ROUNDS = int(os.environ.get("COTERIE_RESUME_ROUNDS", "3"))


def check_every_action_had_a_verdict(events: list[Any]) -> tuple[int, int]:
    """Walk the run's events in order; every Bash call that ran (a result that is not
    an error) was allowed by an Auto Mode decision after its call, in the same
    incarnation of the lead. Returns (actions run, redelivered classify requests)."""
    allowed: bool | None = None
    ran = redelivered = 0
    for event in events:
        data = event.data
        if event.type == "actor.started" and data.get("actor") == "lead":
            allowed = None  # a new incarnation: nothing decided yet
        elif event.type == "agent.tool_call" and data.get("actor") == "lead":
            allowed = None
        elif event.type == "auto_mode.decision" and data.get("actor") == "lead":
            allowed = not data["block"]
        elif event.type == "service.redelivered" and data.get("kind") == "classify":
            redelivered += 1
        elif (
            event.type == "agent.tool_result"
            and data.get("actor") == "lead"
            and data.get("name") == "Bash"
            and not data["is_error"]
        ):
            assert allowed is True, f"an action ran without an allowing verdict: {data}"
            ran += 1
    return ran, redelivered


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(ROUNDS))
def test_kill9_during_auto_mode_never_runs_an_action_without_a_verdict(
    seed: int, workspace: Path, home: Path, tmp_path: Path
) -> None:
    rng = random.Random(f"auto-{seed}")
    count = 30
    # More allowing turns than actions: a classification lost in a kill is asked again.
    tracks = {"lead": steps(count, pause=0.02), "classifier": [ALLOW] * (3 * count)}
    scenario = write_scenario(tmp_path / "s.json", tracks)
    first = ["run", "-p", "--permission-mode", "auto", "--scenario", str(scenario), "go"]
    done, kills = kill_and_resume(first, workspace, home, rng, most=5)
    assert (done.returncode, done.stdout) == (0, "all done\n"), done.stderr
    lines = Counter((workspace / "steps.log").read_text().split())
    assert max(lines.values()) == 1, f"a tool ran twice: {lines.most_common(3)}"
    assert count - kills <= len(lines) <= count
    (run_dir,) = runs_root(workspace).iterdir()
    ran, redelivered = check_every_action_had_a_verdict(list(read_events(run_dir / "events.jsonl")))
    assert ran >= len(lines) - kills  # a kill may land between the tool and its result
    print(f"seed {seed}: {kills} kills, {ran} actions, {redelivered} classify redelivered")
