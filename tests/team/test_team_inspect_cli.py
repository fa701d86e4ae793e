"""`coterie tasks RUN_ID` and `coterie inbox RUN_ID ACTOR` on a finished `coterie team` run."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from tests.agent.conftest import coterie
from tests.agent.test_resume_cli import only_run
from tests.team.test_team_shutdown_cli import Finished, run_team, two_tasks

if TYPE_CHECKING:
    import subprocess

WIDE = {"COLUMNS": "160"}


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Finished:
    """alice and bob each did one task (task_1 and task_2)."""
    run = run_team(tmp_path_factory.mktemp("inspect"), two_tasks())
    assert run.done.returncode == 0, run.done.stderr
    return run


def inspect(run: Finished, *args: str) -> subprocess.CompletedProcess[str]:
    done = coterie(*args, cwd=run.workspace, home=run.home, env=WIDE)
    assert done.returncode == 0, done.stderr
    return done


def test_tasks_shows_each_task_its_status_owner_and_result(finished: Finished) -> None:
    run_id = only_run(finished.workspace)
    lines = inspect(finished, "tasks", run_id).stdout.splitlines()
    assert lines[0] == f"run {run_id} (completed) · 2 tasks"
    rows = {line.split()[0]: line.split() for line in lines if line.startswith("task_")}
    assert rows == {
        "task_1": ["task_1", "completed", "alice", "one", "one", "written"],
        "task_2": ["task_2", "completed", "bob", "two", "two", "written"],
    }


def test_tasks_json_matches_the_runs_summary(finished: Finished) -> None:
    shown = json.loads(inspect(finished, "tasks", only_run(finished.workspace), "--json").stdout)
    assert shown["tasks"] == json.loads(finished.done.stdout)["tasks"]


def test_inbox_shows_what_alice_sent_and_received(finished: Finished) -> None:
    run_id = only_run(finished.workspace)
    out = inspect(finished, "inbox", run_id, "alice").stdout
    assert out.splitlines()[:2] == [
        f"inbox of alice · run {run_id} (completed)",
        "pending, not acknowledged yet: 0",
    ]
    history = [line.split(None, 1)[1].rstrip() for line in out.splitlines()[3:]]
    assert history == [
        "→ lead [result]: one written",
        "→ lead [idle]: idle after task_1",
        "← lead [shutdown_request]: asks to stop",
        "→ lead [shutdown_response]: stopping",
    ]


def test_inbox_json_lists_only_alices_messages_in_order(finished: Finished) -> None:
    shown = json.loads(
        inspect(finished, "inbox", only_run(finished.workspace), "alice", "--json").stdout
    )
    assert shown["pending"] == []
    assert [(m["direction"], m["kind"]) for m in shown["history"]] == [
        ("sent", "result"),
        ("sent", "idle"),
        ("received", "shutdown_request"),
        ("sent", "shutdown_response"),
    ]
