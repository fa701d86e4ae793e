"""The user-visible bugs the old wiring caused, each through the real CLI (issue 10).

1. ``permissions.defaultMode`` in a settings file was never applied: a
   missing ``--permission-mode`` was turned into ``default`` before the
   policy could read the settings.
2. (``coterie team --plan-approval`` in headless modes:
   ``tests/team/test_plan_approval_modes_cli.py``.)
3. A teammate that marked its own task ``failed`` (or handed it back) with
   ``TaskUpdate`` crashed and was restarted: the refusal of the board's
   second settlement was not caught.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from coterie.events import read_events
from coterie.runs import runs_root
from tests.agent.conftest import coterie
from tests.agent.test_resume_cli import only_run, write_scenario

if TYPE_CHECKING:
    from pathlib import Path

WRITE = {"tool_uses": [{"name": "Write", "input": {"file_path": "out.txt", "content": "x\n"}}]}


def settings(folder: Path, data: dict[str, Any]) -> None:
    (folder / ".claude").mkdir(parents=True, exist_ok=True)
    (folder / ".claude" / "settings.json").write_text(json.dumps(data))


@pytest.mark.parametrize("where", ["user", "project"])
def test_the_settings_default_mode_applies_when_no_mode_is_given(
    workspace: Path, home: Path, where: str
) -> None:
    settings(
        home if where == "user" else workspace, {"permissions": {"defaultMode": "acceptEdits"}}
    )
    if where == "project":  # a checkout's defaultMode counts only once it is trusted
        trusted = coterie("trust", str(workspace), cwd=workspace, home=home)
        assert trusted.returncode == 0, trusted.stderr
    scenario = write_scenario(workspace.parent / "s.json", {"lead": [WRITE, {"text": "wrote it"}]})
    done = coterie(
        "run", "-p", "--output-format", "stream-json", "--scenario", str(scenario), "write",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (workspace / "out.txt").read_text() == "x\n"
    init = json.loads(done.stdout.splitlines()[0])
    assert init["permission_mode"] == "acceptEdits"


def test_the_command_line_mode_beats_the_settings_default_mode(workspace: Path, home: Path) -> None:
    settings(home, {"permissions": {"defaultMode": "acceptEdits"}})
    scenario = write_scenario(
        workspace.parent / "s.json", {"lead": [WRITE, {"text": "could not write"}]}
    )
    done = coterie(
        "run", "-p", "--permission-mode", "default", "--scenario", str(scenario), "write",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not (workspace / "out.txt").exists()  # default mode, headless: denied


@pytest.mark.parametrize("status", ["failed", "pending"])
def test_a_teammate_settling_its_own_task_is_not_a_crash(
    workspace: Path, home: Path, status: str
) -> None:
    update = {"task_id": "task_1", "status": status, "result": "cannot do it"}
    scenario = write_scenario(
        workspace.parent / "s.json",
        {
            "lead": [
                {"tool_uses": [{"name": "TaskCreate", "input": {
                    "subject": "job", "description": "do the job", "owner": "alice"}}]},
                {"text": "assigned"},
                {"text": "noted"},
                {"text": "noted again"},
                {"text": "done"},
            ],
            "alice": [
                {"tool_uses": [{"name": "TaskUpdate", "input": update}]},
                {"text": "I gave the task up."},
            ],
        },
    )  # fmt: skip
    done = coterie(
        "team", "--teammate", "alice", "-p", "--permission-mode", "bypassPermissions",
        "--scenario", str(scenario), "do the job", cwd=workspace, home=home, timeout=60,
    )  # fmt: skip
    run_dir = runs_root(workspace) / only_run(workspace)
    events = list(read_events(run_dir / "events.jsonl"))
    crashes = [e for e in events if e.type == "actor.crashed" and e.data.get("actor") == "alice"]
    assert crashes == [], [e.data for e in crashes]
    settled = [e for e in events if e.type == "team.task_settled"]
    assert settled, "the second settlement's refusal is reported as an event"
    if status == "failed":
        assert done.returncode == 1, done.stderr  # a failed task makes the run an error
        assert "failed: task_1" in done.stdout


def test_revoking_trust_narrows_a_runs_resume_too(workspace: Path, home: Path) -> None:
    """What the settings granted is derived again on resume, not frozen in the run."""
    settings(workspace, {"permissions": {"defaultMode": "acceptEdits"}})
    assert coterie("trust", str(workspace), cwd=workspace, home=home).returncode == 0
    second = {"tool_uses": [{"name": "Write", "input": {"file_path": "b.txt", "content": "b"}}]}
    scenario = write_scenario(
        workspace.parent / "s.json",
        {"lead": [WRITE, {"text": "one"}, second, {"text": "two"}]},
    )
    first = coterie("run", "-p", "--scenario", str(scenario), "write", cwd=workspace, home=home)
    assert first.returncode == 0, first.stderr
    assert (workspace / "out.txt").exists()
    revoked = coterie("trust", "--revoke", str(workspace), cwd=workspace, home=home)
    assert revoked.returncode == 0, revoked.stderr
    again = coterie("resume", only_run(workspace), "again", "-p", cwd=workspace, home=home)
    assert again.returncode == 0, again.stderr
    assert not (workspace / "b.txt").exists()  # default mode, headless: the Write was denied
    assert "not trusted" in again.stderr
