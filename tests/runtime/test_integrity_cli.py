"""Damaged boards and mailboxes stop the run with a clear error (issue 12, findings 2, 3).

An interrupted team run (three tasks completed, one in progress when Ctrl-C
came) has its board log or the lead's mailbox damaged, then is resumed. It
used to finish with exit 0 over the lost tasks, or wait forever for a reply
to a request no one had any more; now the damage is reported (a
``board.corrupt`` event and a line on stderr) and a run that lost records it
depends on stops with exit 2, naming what was lost.
"""

from __future__ import annotations

import json
import signal
from typing import TYPE_CHECKING, Any

import pytest

from coterie.board import read_log
from coterie.events import read_events
from coterie.runs import runs_root
from tests.agent.conftest import coterie, wait_for
from tests.agent.test_resume_cli import only_run, start, write_scenario
from tests.team.test_team_cli import BYPASS, create, write

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

WAIT = "echo started > alice.started; sleep 300"


def interrupted_team(workspace: Path, home: Path, tmp_path: Path) -> Path:
    """A team run stopped by Ctrl-C with task_1..3 completed and task_4 in progress."""
    blocked = ["task_1", "task_2", "task_3"]
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {
                    "tool_uses": [
                        create("one", "bob"),
                        create("two", "bob"),
                        create("three", "bob"),
                        create("wait", "alice", blocked_by=blocked),
                    ]
                },
                {"text": "planned"},
                *[{"text": "noted"} for _ in range(4)],
                {"text": "all done"},
            ],
            "bob": [
                *[x for i in range(3) for x in (write(f"b{i}.txt", "b"), {"text": f"did {i}"})],
            ],
            "alice": [
                {"tool_uses": [{"name": "Bash", "input": {"command": WAIT}}]},
                {"text": "waited"},
            ],
        },
    )
    proc = start(["team", "-p", *BYPASS, "--scenario", str(scenario), "go"], workspace, home)
    wait_for(workspace / "alice.started", proc, "the team never reached alice's task", settle=0.3)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    return runs_root(workspace) / only_run(workspace)


def flip_byte(log: Path) -> None:
    data = bytearray(log.read_bytes())
    # Inside task_3's creation (where the records fall depends on how fast bob
    # claims: a fixed offset may land on a claim that a later record makes moot).
    at = data.find(b'"three"')
    assert at > 0, "task_3's creation is not in the log as text"
    data[at + 2] ^= 0xFF
    log.write_bytes(bytes(data))


def truncate_half(log: Path) -> None:
    data = log.read_bytes()
    log.write_bytes(data[: len(data) // 2])


def zero(log: Path) -> None:
    log.write_bytes(bytes(log.stat().st_size))


def garbage(log: Path) -> None:
    log.write_bytes(b"this is not a board log at all\n" * 40)


def delete(log: Path) -> None:
    log.unlink()


def says(text: str, phrase: str) -> bool:
    """Whether *text* holds *phrase*, wherever the console wrapped its lines."""
    return "".join(phrase.split()) in "".join(text.split())


def board_events(run_dir: Path) -> list[dict[str, Any]]:
    return [e.data for e in read_events(run_dir / "events.jsonl") if e.type == "board.corrupt"]


@pytest.mark.parametrize("damage", [flip_byte, truncate_half, zero, garbage, delete])
def test_a_board_that_lost_tasks_stops_the_resume_with_a_clear_error(
    damage: Callable[[Path], None], workspace: Path, home: Path, tmp_path: Path
) -> None:
    run_dir = interrupted_team(workspace, home, tmp_path)
    damage(run_dir / "board" / "board.log")
    resumed = coterie("resume", run_dir.name, "-p", cwd=workspace, home=home, timeout=60)
    assert resumed.returncode == 2, (resumed.stdout, resumed.stderr)
    assert says(resumed.stderr, "the task board lost"), resumed.stderr
    assert "task_" in resumed.stderr
    assert "Traceback" not in resumed.stderr
    if damage is not delete:
        assert board_events(run_dir), "the damage was not reported as board.corrupt"
        assert says(resumed.stderr, "damaged")


def test_a_skipped_board_record_nothing_depends_on_is_reported_and_the_run_goes_on(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    run_dir = interrupted_team(workspace, home, tmp_path)
    log = run_dir / "board" / "board.log"
    log.write_bytes(log.read_bytes() + b"\0" * 64 + b"junk that is no record, then more")
    resumed = coterie("resume", run_dir.name, "-p", cwd=workspace, home=home, timeout=60)
    assert resumed.returncode == 0, resumed.stderr
    assert says(resumed.stderr, "task board's log is damaged")
    (event,) = board_events(run_dir)
    assert event["action"] == "truncated"  # a tail that is no record: cut, kept aside
    assert event["saved_to"]
    tasks = read_log(run_dir / "board")
    done = {e.task_id for e in tasks if e.fields.get("status") == "completed"}
    assert done == {"task_1", "task_2", "task_3", "task_4"}


def lead_segments(run_dir: Path) -> list[Path]:
    return sorted((run_dir / "mailboxes" / "lead").glob("*.log"))


@pytest.mark.parametrize("how", ["deleted", "zeroed"])
def test_a_lost_lead_mailbox_stops_the_resume_instead_of_hanging(
    how: str, workspace: Path, home: Path, tmp_path: Path
) -> None:
    run_dir = interrupted_team(workspace, home, tmp_path)
    state = json.loads((run_dir / "state.json").read_text())
    assert state["request"]["sent"]
    for segment in lead_segments(run_dir):
        if how == "deleted":
            segment.unlink()
        else:
            segment.write_bytes(bytes(segment.stat().st_size))
    resumed = coterie("resume", run_dir.name, "-p", cwd=workspace, home=home, timeout=60)
    assert resumed.returncode == 2, (resumed.stdout, resumed.stderr)
    assert says(resumed.stderr, "nothing would ever answer it"), resumed.stderr
    assert says(resumed.stderr, state["request"]["id"])
    assert "Traceback" not in resumed.stderr


@pytest.mark.parametrize("damage", [delete, zero, truncate_half])
def test_a_transcript_that_lost_tool_calls_stops_the_resume(
    damage: Callable[[Path], None], workspace: Path, home: Path, tmp_path: Path
) -> None:
    """Found by bench/chaos.py: a teammate's transcript deleted, zeroed or cut short
    after a kill made the teammate run a tool of a finished step again, and the
    run ended success. Now the event log's tool calls are checked against it."""
    run_dir = interrupted_team(workspace, home, tmp_path)
    damage(run_dir / "transcripts" / "bob.log")
    written = sorted(p.name for p in workspace.glob("b*.txt"))
    resumed = coterie("resume", run_dir.name, "-p", cwd=workspace, home=home, timeout=60)
    assert resumed.returncode == 2, (resumed.stdout, resumed.stderr)
    assert says(resumed.stderr, "bob's transcript"), resumed.stderr
    assert says(resumed.stderr, "the run is stopped rather than report success over lost work")
    assert "Traceback" not in resumed.stderr
    assert sorted(p.name for p in workspace.glob("b*.txt")) == written  # nothing run again


def test_a_deleted_state_file_stops_the_resume(workspace: Path, home: Path, tmp_path: Path) -> None:
    """Found by bench/chaos.py: state.json deleted after a kill: the resume went on
    without the pending request (and failed later, or started over)."""
    run_dir = interrupted_team(workspace, home, tmp_path)
    (run_dir / "state.json").unlink()
    resumed = coterie("resume", run_dir.name, "-p", cwd=workspace, home=home, timeout=60)
    assert resumed.returncode == 2, (resumed.stdout, resumed.stderr)
    assert says(resumed.stderr, "state.json is missing"), resumed.stderr
    assert "Traceback" not in resumed.stderr


def test_a_transcript_with_a_damaged_record_stops_the_resume(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """Found by bench/chaos.py: a flipped byte in the middle of a teammate's
    transcript lost the message holding a tool call whose start record survived,
    and the teammate ran the step again."""
    run_dir = interrupted_team(workspace, home, tmp_path)
    log = run_dir / "transcripts" / "bob.log"
    data = bytearray(log.read_bytes())
    data[len(data) // 2] ^= 0xFF
    log.write_bytes(bytes(data))
    written = sorted(p.name for p in workspace.glob("b*.txt"))
    resumed = coterie("resume", run_dir.name, "-p", cwd=workspace, home=home, timeout=60)
    assert resumed.returncode == 2, (resumed.stdout, resumed.stderr)
    assert says(resumed.stderr, "bob.log is damaged"), resumed.stderr
    assert "Traceback" not in resumed.stderr
    assert sorted(p.name for p in workspace.glob("b*.txt")) == written
