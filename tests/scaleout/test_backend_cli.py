"""``--backend redis://``: a run's state on a real Redis server, through the real CLI."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
import trio

from coterie.backends import Backend, open_stores
from coterie.backends.redis import read_redis_log
from coterie.backends.redis import registry as runregistry
from coterie.backends.redis.client import connect, parse_backend
from coterie.backends.redis.eventstream import read_stream
from coterie.backends.redis.mirror import RunMirror
from coterie.backends.redis.registry import live_key
from coterie.events import EventLog
from coterie.runs import RunBusy
from tests.agent.conftest import coterie
from tests.agent.test_resume_cli import write_scenario
from tests.team.test_team_cli import BYPASS, create, write

if TYPE_CHECKING:
    from pathlib import Path


def two_tasks(tmp_path: Path) -> Path:
    return write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {"tool_uses": [create("one", "alice"), create("two", "bob")]},
                {"text": "planned"},
                {"text": "both done"},
            ],
            "alice": [write("one.txt", "1"), {"text": "one written"}],
            "bob": [write("two.txt", "2"), {"text": "two written"}],
        },
    )


async def test_a_team_on_redis_keeps_its_board_events_and_transcripts_there(
    workspace: Path, home: Path, tmp_path: Path, redis_url: str
) -> None:
    done = coterie(
        "team", "-p", "--output-format", "json", *BYPASS, "--scenario", str(two_tasks(tmp_path)),
        "--backend", redis_url, "go", cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["result"] == "both done"
    run_id = summary["run_id"]
    assert (workspace / "one.txt").read_text() == "1"
    target = parse_backend(redis_url)
    entries = await read_redis_log(target, run_id)
    assert {e.op for e in entries} >= {"create", "claim", "complete"}
    async with connect(target) as client:
        events = [s.event.type for s in await read_stream(client, target, run_id, count=10_000)]
        files = await RunMirror(client, target, run_id).files()
    assert "actor.started" in events
    assert events.count("board.changed") >= 4
    assert {"config.json", "state.json", "transcripts/lead.log", "transcripts/alice.log"} <= set(
        files
    )


def test_a_bad_backend_url_is_one_line_and_exit_2(workspace: Path, home: Path) -> None:
    done = coterie("run", "-p", "--backend", "mysql://x", "hi", cwd=workspace, home=home)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].startswith("error: backend 'mysql://x'")


def test_remote_needs_a_redis_backend(workspace: Path, home: Path) -> None:
    done = coterie("team", "-p", "--remote", "go", cwd=workspace, home=home)
    assert done.returncode == 2
    assert "--remote" in done.stderr


async def test_a_run_is_held_by_one_host_at_a_time(
    workspace: Path, tmp_path: Path, redis_url: str
) -> None:
    target = parse_backend(redis_url)
    async with connect(target) as client:
        await client.set(live_key(target, "r-held"), "elsewhere:4242", px=60_000)
    run_dir = tmp_path / "r-held"
    run_dir.mkdir()
    (run_dir / "config.json").write_text("{}")
    with pytest.raises(RunBusy, match="elsewhere:4242"):
        async with open_stores(
            Backend("redis", target), "r-held", run_dir, EventLog(), team=False
        ) as stores:
            del stores


async def test_the_hold_is_renewed_while_the_run_goes_on_and_released_after(
    tmp_path: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runregistry, "LIVE_TTL", 0.4)
    monkeypatch.setattr(runregistry, "LIVE_EVERY", 0.1)
    target = parse_backend(redis_url)
    holder = live_key(target, "r-renew")
    run_dir = tmp_path / "r-renew"
    run_dir.mkdir()
    (run_dir / "config.json").write_text("{}")
    async with (
        open_stores(Backend("redis", target), "r-renew", run_dir, EventLog(), team=False),
        connect(target) as client,
    ):
        await trio.sleep(1.2)  # real time: three times the hold's time to live
        assert await client.get(holder) is not None  # renewed all along
    async with connect(target) as client:
        assert await client.get(holder) is None  # released, so another host may go on


def test_a_remote_team_refuses_a_scenario_its_workers_would_not_replay(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    scenario = write_scenario(tmp_path / "s.json", {"lead": [{"text": "hi"}]})
    done = coterie("team", "-p", "--backend", "redis://127.0.0.1:1", "--remote", "--scenario",
                   str(scenario), "go", cwd=workspace, home=home)  # fmt: skip
    assert done.returncode == 2
    assert "never replay a --scenario file" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
