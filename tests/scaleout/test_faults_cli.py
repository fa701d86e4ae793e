"""``coterie crash`` / ``stop`` / ``cancel --backend``: faults into a run on Redis, from afar."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING, Any

from coterie.backends.redis import redis_mailbox_names
from coterie.backends.redis.client import connect, parse_backend
from coterie.backends.redis.eventstream import read_stream
from tests.agent.conftest import clean_env, coterie, wait_for
from tests.agent.test_resume_cli import write_scenario
from tests.control.test_faults_cli import LONG, release, team_of_two
from tests.scaleout.test_inspect_cli import elsewhere
from tests.team.test_team_cli import BYPASS

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.events import Event


def start_team_on(
    redis_url: str,
    workspace: Path,
    home: Path,
    tmp_path: Path,
    alice_sleeps: float,
    model: dict[str, str] | None = None,
) -> subprocess.Popen[str]:
    """The team of two on Redis; its model the scripted one, or *model*'s server."""
    scenario = write_scenario(tmp_path / "s.json", team_of_two(alice_sleeps))
    scripted = [] if model else ["--scenario", str(scenario)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "coterie", "team", "-p", *BYPASS, *scripted,
         "--backend", redis_url, "go"],
        cwd=workspace, env=clean_env(HOME=str(home), **(model or {})), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    wait_for(workspace / "alice-started", proc, "alice never started her job", settle=0.1)
    return proc


async def events_on(redis_url: str, run_id: str) -> list[Event]:
    target = parse_backend(redis_url)
    async with connect(target) as client:
        return [s.event for s in await read_stream(client, target, run_id, count=100_000)]


async def test_crash_a_teammate_of_a_run_on_redis_from_another_home(
    workspace: Path, home: Path, tmp_path: Path, redis_url: str
) -> None:
    proc = start_team_on(redis_url, workspace, home, tmp_path, alice_sleeps=LONG)
    ws, env = elsewhere(tmp_path)
    env["COTERIE_BACKEND"] = redis_url
    run_id = run_id_of(ws, home, env)
    done = coterie("crash", run_id[:12], "alice", "--reason", "pulled the plug", cwd=ws,
                   home=home, env=env)  # fmt: skip
    release(workspace)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("crashed alice (InjectedCrash: pulled the plug)")
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    events = await events_on(redis_url, run_id)
    kinds = ("fault.", "actor.crashed", "actor.restarted")
    trail = [e.type for e in events if e.data.get("actor") == "alice" and e.type.startswith(kinds)]
    assert trail == ["fault.injected", "actor.crashed", "actor.restarted"]
    target = parse_backend(redis_url)
    async with connect(target) as client:  # the reply mailbox is gone from the server too
        names = await redis_mailbox_names(client, target, run_id)
    assert not [n for n in names if n.startswith("reply-")]


def run_id_of(ws: Path, home: Path, env: dict[str, str]) -> str:
    listed = coterie("runs", "--json", cwd=ws, home=home, env=env)
    return str(json.loads(listed.stdout)["run_id"])


def test_cancel_a_run_on_redis_then_resume_it_from_another_home(
    workspace: Path, home: Path, tmp_path: Path, redis_url: str, mock_server: Any
) -> None:
    """The model is `coterie mock-server`, which both homes reach (a scenario's
    cursors would stay in the first home's run directory)."""
    url = mock_server(write_scenario(tmp_path / "m.json", team_of_two(LONG)))
    model = {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "k"}
    proc = start_team_on(redis_url, workspace, home, tmp_path, alice_sleeps=LONG, model=model)
    ws, env = elsewhere(tmp_path)
    env.update(model, COTERIE_BACKEND=redis_url)
    run_id = run_id_of(ws, home, env)
    done = coterie("cancel", run_id, cwd=ws, home=home, env=env)
    release(workspace)
    assert done.returncode == 0, done.stderr
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, out + err
    shutil.rmtree(ws)
    shutil.copytree(workspace, ws)
    resumed = coterie("resume", run_id, "-p", cwd=ws, home=home, env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert "was fetched from" in resumed.stderr
    listed = coterie("runs", "--json", cwd=ws, home=home, env=env)
    assert json.loads(listed.stdout)["state"] == "completed"


def test_a_fault_into_a_finished_run_on_redis_is_refused_exit_1(
    workspace: Path, home: Path, tmp_path: Path, redis_url: str
) -> None:
    from tests.scaleout.test_inspect_cli import team_on

    run_id = team_on(redis_url, workspace, home, tmp_path)
    ws, env = elsewhere(tmp_path)
    done = coterie("stop", run_id, "alice", "--backend", redis_url, cwd=ws, home=home, env=env)
    assert done.returncode == 1
    assert "is not running; nothing to stop" in done.stderr
    unknown = coterie("cancel", "nope", "--backend", redis_url, cwd=ws, home=home, env=env)
    assert unknown.returncode == 2
    assert "not found on" in unknown.stderr
