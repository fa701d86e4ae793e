"""``coterie tasks`` and ``coterie inbox``: the real CLI on run directories built in tmp_path."""

from __future__ import annotations

import fcntl
import json
import os
from typing import TYPE_CHECKING

import pytest
import trio

from coterie.board import Board
from coterie.events import EventLog
from coterie.mailbox import Durability, open_file_mailbox
from coterie.messages import Message
from coterie.runs import create_run, hold_run, runs_root, write_state
from tests.agent.conftest import coterie

if TYPE_CHECKING:
    from pathlib import Path


def make_team_run(workspace: Path) -> Path:
    """A finished team run: two tasks (one done), three mailboxes, a message history.

    alice was sent three messages by the lead: the first acknowledged, the
    second received but not acknowledged, the third not received yet.
    """
    _run_id, run_dir = create_run(workspace, {"command": "team", "goal": "parse things"})
    with Board(run_dir / "board", fsync=False) as board:
        board.create("Write the parser", "parse", owner="alice")
        board.create("Write the tests", "test", blocked_by=["task_1"])
        board.claim("alice", lease_seconds=60)
        board.complete("task_1", "alice", "wrote parser.py\nall good")
    trio.run(fill_mailboxes, run_dir)
    log = EventLog(run_dir / "events.jsonl")
    log.emit("actor.started", supervisor="team", actor="alice", attempt=1, kind="worker")
    log.emit("team.message", sender="lead", recipient="alice", kind="message", text="Parse it")
    log.emit("team.message", sender="alice", recipient="lead", kind="result", text="Parsed.")
    log.emit("team.message", sender="bob", recipient="lead", kind="idle", text="idle")
    log.close()
    write_state(run_dir, state="completed")
    return run_dir


async def fill_mailboxes(run_dir: Path) -> None:
    boxes = {
        name: open_file_mailbox(run_dir / "mailboxes" / name, durability=Durability.NONE)
        for name in ("alice", "bob", "lead")
    }
    for text in ("first", "second", "third"):
        await boxes["alice"].send(Message.new("lead", "alice", "message", {"text": text}))
    await boxes["alice"].ack(await boxes["alice"].receive())
    await boxes["alice"].receive()
    for box in boxes.values():
        await box.aclose()


@pytest.fixture
def run_dir(workspace: Path) -> Path:
    return make_team_run(workspace)


def snapshot(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes() for p in directory.rglob("*") if p.is_file()
    }


# -- coterie tasks -------------------------------------------------------------------


def test_tasks_shows_the_board_of_a_run(run_dir: Path, workspace: Path, home: Path) -> None:
    result = coterie("tasks", run_dir.name, cwd=workspace, home=home, env={"COLUMNS": "160"})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"run {run_dir.name} (completed) · 2 tasks"
    first = next(line for line in lines if line.startswith("task_1"))
    assert first.split()[:3] == ["task_1", "completed", "alice"]
    assert "Write the parser" in first
    assert "wrote parser.py all good" in first
    second = next(line for line in lines if line.startswith("task_2"))
    assert second.split()[:4] == ["task_2", "pending", "—", "task_1"]


def test_tasks_without_a_run_id_shows_the_latest_run(
    run_dir: Path, workspace: Path, home: Path
) -> None:
    older = runs_root(workspace) / "20000101-000000-aaaaaa"
    (older / "board").mkdir(parents=True)
    (older / "config.json").write_text('{"command": "team"}')
    result = coterie("tasks", "--json", cwd=workspace, home=home)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["run_id"] == run_dir.name


def test_tasks_json_is_the_board_as_the_team_tools_show_it(
    run_dir: Path, workspace: Path, home: Path
) -> None:
    result = coterie(
        "tasks", run_dir.name, "--json", "--workdir", str(workspace), cwd=home, home=home
    )
    assert result.returncode == 0, result.stderr
    tasks = json.loads(result.stdout)["tasks"]
    assert [(t["id"], t["status"], t["owner"]) for t in tasks] == [
        ("task_1", "completed", "alice"),
        ("task_2", "pending", None),
    ]
    assert tasks[1]["blocked_by"] == ["task_1"]


def test_tasks_reads_a_live_run(run_dir: Path, workspace: Path, home: Path) -> None:
    write_state(run_dir, state="running")
    with hold_run(run_dir), Board(run_dir / "board", fsync=False) as board:
        board.claim("bob", lease_seconds=60)
        result = coterie("tasks", "--json", cwd=workspace, home=home)
        header = coterie("tasks", cwd=workspace, home=home).stdout.splitlines()[0]
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["tasks"][1]["owner"] == "bob"
    assert header == f"run {run_dir.name} (running) · 2 tasks"


def test_tasks_of_an_unknown_run_is_a_usage_error(
    run_dir: Path, workspace: Path, home: Path
) -> None:
    result = coterie("tasks", "nosuchrun", cwd=workspace, home=home)
    assert result.returncode == 2
    assert "'nosuchrun' not found" in result.stderr
    assert run_dir.name in result.stderr  # the recent runs are named


def test_tasks_of_a_run_without_a_board_is_a_usage_error(workspace: Path, home: Path) -> None:
    run_id, _ = create_run(workspace, {"command": "run", "prompt": "hi"})
    result = coterie("tasks", run_id, cwd=workspace, home=home)
    assert result.returncode == 2
    assert "has no task board" in result.stderr


def test_tasks_in_a_workspace_without_runs_is_a_usage_error(workspace: Path, home: Path) -> None:
    result = coterie("tasks", cwd=workspace, home=home)
    assert result.returncode == 2
    assert "no runs" in result.stderr


# -- coterie inbox -------------------------------------------------------------------


def test_inbox_shows_pending_messages_and_the_history(
    run_dir: Path, workspace: Path, home: Path
) -> None:
    result = coterie("inbox", run_dir.name, "alice", cwd=workspace, home=home)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "pending, not acknowledged yet: 2" in out
    assert "lead → alice [message]: second" in out
    assert "lead → alice [message]: third" in out
    assert ": first" not in out
    assert "history: 2 messages" in out
    assert "← lead [message]: Parse it" in out
    assert "→ lead [result]: Parsed." in out
    assert "idle" not in out  # bob's message to the lead is not alice's


def test_inbox_json(run_dir: Path, workspace: Path, home: Path) -> None:
    result = coterie("inbox", run_dir.name, "alice", "--json", cwd=workspace, home=home)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert [m["body"]["text"] for m in data["pending"]] == ["second", "third"]
    assert [(h["direction"], h["text"]) for h in data["history"]] == [
        ("received", "Parse it"),
        ("sent", "Parsed."),
    ]


def test_inbox_with_only_an_actor_reads_the_latest_run(
    run_dir: Path, workspace: Path, home: Path
) -> None:
    result = coterie("inbox", "alice", "--json", cwd=workspace, home=home)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["run_id"] == run_dir.name


def test_inbox_changes_nothing_and_needs_no_lock(
    run_dir: Path, workspace: Path, home: Path
) -> None:
    """Even while a writer holds alice's mailbox lock, and without a trace."""
    before = snapshot(run_dir / "mailboxes")
    fd = os.open(run_dir / "mailboxes" / "alice" / "lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        result = coterie("inbox", run_dir.name, "alice", cwd=workspace, home=home, timeout=30)
    finally:
        os.close(fd)
    assert result.returncode == 0, result.stderr
    assert snapshot(run_dir / "mailboxes") == before


def test_inbox_of_an_unknown_actor_lists_the_actors(
    run_dir: Path, workspace: Path, home: Path
) -> None:
    result = coterie("inbox", run_dir.name, "carol", cwd=workspace, home=home)
    assert result.returncode == 2
    assert "no actor 'carol'" in result.stderr
    assert "alice, bob, lead" in result.stderr


def test_inbox_given_only_a_run_asks_for_the_actor(
    run_dir: Path, workspace: Path, home: Path
) -> None:
    result = coterie("inbox", run_dir.name, cwd=workspace, home=home)
    assert result.returncode == 2
    assert "name an actor too" in result.stderr
    assert "alice, bob, lead" in result.stderr


def test_inbox_of_an_unknown_run_is_a_usage_error(
    run_dir: Path, workspace: Path, home: Path
) -> None:
    result = coterie("inbox", "nosuchrun", "alice", cwd=workspace, home=home)
    assert result.returncode == 2
    assert "'nosuchrun' not found" in result.stderr


@pytest.mark.parametrize(
    ("command", "words"),
    [("tasks", ["RUN_ID", "most recent run", "Exit codes"]),
     ("inbox", ["[RUN_ID] ACTOR", "not acknowledged", "most recent", "Exit codes"])],
)  # fmt: skip
def test_help_explains_each_command(
    command: str, words: list[str], tmp_path: Path, home: Path
) -> None:
    result = coterie(command, "--help", cwd=tmp_path, home=home)
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    for word in words:
        assert word in text
