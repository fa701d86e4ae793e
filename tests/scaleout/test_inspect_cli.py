"""``coterie runs``, ``tasks`` and ``inbox`` with ``--backend``: read from a real Redis server."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from coterie.backends.redis import open_redis_post_office, peek_redis_mailbox
from coterie.backends.redis.client import connect, parse_backend
from coterie.messages import Message
from tests.agent.conftest import coterie
from tests.scaleout.test_backend_cli import two_tasks
from tests.team.test_team_cli import BYPASS

if TYPE_CHECKING:
    from pathlib import Path


def team_on(redis_url: str, workspace: Path, home: Path, tmp_path: Path) -> str:
    done = coterie(
        "team", "-p", "--output-format", "json", *BYPASS, "--scenario", str(two_tasks(tmp_path)),
        "--backend", redis_url, "go", cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["run_id"])


def elsewhere(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A workspace and a coterie home that have never seen the run (another host)."""
    other = tmp_path / "other-host"
    (other / "ws").mkdir(parents=True)
    return other / "ws", {"COTERIE_HOME": str(other / "coterie-home")}


def test_runs_lists_what_the_server_knows_from_another_home(
    workspace: Path, home: Path, tmp_path: Path, redis_url: str
) -> None:
    run_id = team_on(redis_url, workspace, home, tmp_path)
    ws, env = elsewhere(tmp_path)
    listed = coterie("runs", "--json", "--backend", redis_url, cwd=ws, home=home, env=env)
    assert listed.returncode == 0, listed.stderr
    (row,) = [json.loads(line) for line in listed.stdout.splitlines()]
    assert row["run_id"] == run_id
    assert (row["command"], row["state"], row["request"]) == ("team", "completed", "go")
    assert row["workspace"] == str(workspace.resolve())
    assert row["result"] == "both done"
    assert row["holder"] is None
    table = coterie("runs", cwd=ws, home=home, env={**env, "COTERIE_BACKEND": redis_url})
    assert run_id in table.stdout
    assert "completed" in table.stdout
    on_files = coterie("runs", cwd=ws, home=home, env=env)
    assert run_id not in on_files.stdout  # that home has never seen it


def test_tasks_reads_the_board_from_the_server_by_prefix(
    workspace: Path, home: Path, tmp_path: Path, redis_url: str
) -> None:
    run_id = team_on(redis_url, workspace, home, tmp_path)
    ws, env = elsewhere(tmp_path)
    shown = coterie("tasks", run_id[:13], "--json", "--backend", redis_url, cwd=ws, home=home,
                    env=env)  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    answer = json.loads(shown.stdout)
    assert answer["run_id"] == run_id
    assert [(t["subject"], t["status"], t["owner"]) for t in answer["tasks"]] == [
        ("one", "completed", "alice"),
        ("two", "completed", "bob"),
    ]
    table = coterie("tasks", "--backend", redis_url, cwd=ws, home=home, env=env)
    assert table.returncode == 0, table.stderr
    assert f"run {run_id} (completed) · 2 tasks" in table.stdout
    missing = coterie("tasks", "nope", "--backend", redis_url, cwd=ws, home=home, env=env)
    assert missing.returncode == 2
    assert "not found" in missing.stderr


async def test_inbox_shows_unacknowledged_messages_without_taking_them(
    workspace: Path, home: Path, tmp_path: Path, redis_url: str
) -> None:
    run_id = team_on(redis_url, workspace, home, tmp_path)
    target = parse_backend(redis_url)
    async with open_redis_post_office(target, run_id) as post:
        await post.send(Message.new("alice", "lead", "note", {"text": "still here"}))
    ws, env = elsewhere(tmp_path)
    shown = coterie("inbox", run_id, "lead", "--json", "--backend", redis_url, cwd=ws, home=home,
                    env=env)  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    answer = json.loads(shown.stdout)
    (pending,) = answer["pending"]
    assert (pending["sender"], pending["body"], pending["in_flight"]) == (
        "alice", {"text": "still here"}, False,
    )  # fmt: skip
    assert any(h["direction"] == "received" for h in answer["history"])
    text = coterie("inbox", "lead", "--backend", redis_url, cwd=ws, home=home, env=env)
    assert "pending, not acknowledged yet: 1" in text.stdout
    assert "alice → lead [note]: still here" in text.stdout
    async with connect(target) as client:  # looking took nothing: never delivered
        (again,) = await peek_redis_mailbox(client, target, run_id, "lead")
    assert (again.in_flight, again.deliveries) == (False, 0)
    unknown = coterie("inbox", run_id, "carol", "--backend", redis_url, cwd=ws, home=home, env=env)
    assert unknown.returncode == 2
    assert "actors with a mailbox: " in unknown.stderr
    assert "alice" in unknown.stderr


def test_an_unreachable_server_is_exit_1(workspace: Path, home: Path) -> None:
    done = coterie("runs", "--backend", "redis://127.0.0.1:1/0", cwd=workspace, home=home)
    assert done.returncode == 1
    assert "cannot read redis://127.0.0.1:1/0" in done.stderr
