"""``coterie worker`` and ``coterie team --remote``: teammates hosted by other processes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

import pytest
import trio

from coterie.backends.redis.client import connect, parse_backend
from coterie.backends.redis.workers import WorkerRegistry
from tests.agent.conftest import clean_env, coterie
from tests.agent.test_resume_cli import write_scenario
from tests.team.test_team_cli import BYPASS, create, events_of, write
from tests.workspaces.conftest import make_repo, run_git

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from pathlib import Path

#: Short heartbeats: a dead worker's leases lapse within 2.5 s.
BEAT = ("--heartbeat", "0.5")


def start_worker(
    home: Path, workdir: Path, backend: str, *extra: str, env: dict[str, str] | None = None,
    wrapper: Sequence[str] = (),
) -> subprocess.Popen[str]:  # fmt: skip
    return subprocess.Popen(
        [*wrapper, sys.executable, "-m", "coterie", "worker", "--backend", backend,
         "--workdir", str(workdir), *BEAT, *extra],
        env={**clean_env(HOME=str(home)), **(env or {})},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def workers_up(url: str, count: int, timeout: float = 60) -> None:
    """Until *count* workers have said they are alive on the server (their heartbeat
    keys): a run started before would be taken by whichever worker came first."""

    async def wait() -> None:
        target = parse_backend(url)
        async with connect(target) as client:
            registry = WorkerRegistry(client, target)
            with trio.fail_after(timeout):
                while len(await registry.workers()) < count:
                    await trio.sleep(0.05)

    trio.run(wait)


def remote_team(
    redis_url: str, *args: str, workspace: Path, home: Path, env: dict[str, str],
    timeout: float = 90,
) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """``coterie team -p --output-format json --remote`` on *redis_url*, with *args*
    (the teammates and any option) and the prompt ``go``."""
    argv = ["team", "-p", "--output-format", "json", *BYPASS, "--backend", redis_url, "--remote"]
    return coterie(*argv, *args, "go", cwd=workspace, home=home, env=env, timeout=timeout)


def stop(proc: subprocess.Popen[str], timeout: float = 20) -> tuple[str, str]:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate()


@pytest.fixture
def workers() -> Iterator[list[subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def spread_scenario(tmp_path: Path, names: Sequence[str], per: int) -> Path:
    """The lead gives each teammate *per* tasks; each writes one file a task."""
    lead_calls = [create(f"{n}-{i}", n) for n in names for i in range(per)]
    tracks: dict[str, Any] = {
        "lead": [{"tool_uses": lead_calls}, {"text": "planned"}] + [{"text": "all done"}] * 4
    }
    for n in names:
        turns: list[dict[str, Any]] = []
        for i in range(per):
            turns += [write(f"{n}-{i}.txt", n), {"text": f"{n} wrote {i}"}]
        tracks[n] = turns
    return write_scenario(tmp_path / "spread.json", tracks)


def test_teammates_on_one_worker_share_its_run_and_every_event_reaches_the_server(
    workspace: Path, home: Path, tmp_path: Path, redis_url: str, mock_server: Any,
    workers: list[subprocess.Popen[str]],
) -> None:  # fmt: skip
    """Two teammates on one worker: one event log for the run there (each teammate's
    own log numbered its events from 1 under the same origin, and a reader of the
    server's stream dropped the second teammate's as copies of the first's)."""
    from coterie.backends.redis.reader import ServerReader
    from coterie.home import coterie_home

    names = ("alice", "bob")
    api = {"ANTHROPIC_BASE_URL": mock_server(spread_scenario(tmp_path, names, 1)),
           "ANTHROPIC_API_KEY": "k"}  # fmt: skip
    workers.append(start_worker(home, workspace, redis_url, "--id", "w0", *BYPASS, env=api))
    workers_up(redis_url, 1)
    done = remote_team(
        redis_url,
        "--teammate",
        "alice",
        "--teammate",
        "bob",
        workspace=workspace,
        home=home,
        env=api,
    )
    out, err = stop(workers[0])
    assert done.returncode == 0, (done.stderr, out, err)
    hosting = sorted(line.split()[1] for line in out.splitlines() if line.startswith("hosting"))
    assert [h.rpartition("/")[2] for h in hosting] == ["alice", "bob"]  # both on w0
    reader = ServerReader(parse_backend(redis_url))
    run = reader.find(None)
    seen = reader.events(run)
    started = {e.data["actor"] for e in seen if e.type == "actor.started"}
    assert {"alice", "bob"} <= started, sorted(started)
    for name in names:
        wrote = [e for e in seen if e.type == "agent.tool_call" and e.data.get("actor") == name]
        assert wrote, f"no tool call of {name} reached the server's stream"
    logs = [p.name for p in (coterie_home() / "workers" / "w0" / run.run_id).glob("events*")]
    assert logs == ["events.jsonl"], logs  # one log for the run on this worker


def test_a_remote_team_runs_on_two_workers(
    workspace: Path, home: Path, tmp_path: Path, redis_url: str, mock_server: Any,
    workers: list[subprocess.Popen[str]],
) -> None:  # fmt: skip
    names = ("alice", "bob")
    url = mock_server(spread_scenario(tmp_path, names, 2))
    api = {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "k"}
    for i in range(2):
        workers.append(start_worker(home, workspace, redis_url, "--id", f"w{i}", *BYPASS, env=api))
    workers_up(redis_url, 2)
    done = remote_team(
        redis_url,
        "--teammate",
        "alice",
        "--teammate",
        "bob",
        workspace=workspace,
        home=home,
        env=api,
    )
    outs = [stop(w) for w in workers]
    (tmp_path / "outs.json").write_text(json.dumps([*outs, (done.stdout, done.stderr)]))
    assert done.returncode == 0, (done.stderr, outs)
    summary = json.loads(done.stdout)
    assert [t["status"] for t in summary["tasks"]] == ["completed"] * 4
    for n in names:
        assert (workspace / f"{n}-0.txt").read_text() == n
        assert (workspace / f"{n}-1.txt").read_text() == n
    hosted = [{line.split()[1] for line in out.splitlines() if line.startswith("hosting")}
              for out, _err in outs]  # fmt: skip
    assert all(len(h) == 1 for h in hosted), outs  # one teammate each: spread over both
    assert {h.split("/")[1] for h in hosted[0] | hosted[1]} == set(names)


def test_a_worker_needs_a_redis_backend(workspace: Path, home: Path) -> None:
    done = coterie("worker", "--workdir", str(workspace), cwd=workspace, home=home)
    assert done.returncode == 2
    assert "workers need a server every host reaches" in done.stderr


@pytest.mark.parametrize("capacity", ["0", "-3"])
def test_a_bad_capacity_is_a_usage_error(
    workspace: Path, home: Path, redis_url: str, capacity: str
) -> None:
    done = coterie(
        "worker", "--backend", redis_url, "--capacity", capacity, cwd=workspace, home=home
    )
    assert done.returncode == 2
    assert "capacity" in done.stderr


async def test_a_worker_stops_cleanly_on_sigterm(
    workspace: Path, home: Path, redis_url: str, workers: list[subprocess.Popen[str]]
) -> None:
    worker = start_worker(home, workspace, redis_url, "--id", "lonely")
    workers.append(worker)
    deadline = time.monotonic() + 20
    assert worker.stdout is not None
    first = worker.stdout.readline()
    assert first.startswith("worker lonely: capacity 4"), first
    assert time.monotonic() < deadline
    target = parse_backend(redis_url)
    async with connect(target) as client:
        registry = WorkerRegistry(client, target)
        while not [w for w in await registry.workers() if w.id == "lonely"]:
            await trio.sleep(0.1)
        _out, err = stop(worker)
        assert worker.returncode == 128 + signal.SIGTERM, err
        assert "Traceback" not in err
        # It left at once, not after its heartbeat's time to live.
        assert not [w for w in await registry.workers() if w.id == "lonely"]


def clone_scenario(tmp_path: Path) -> Path:
    merge = {
        "tool_uses": [{"name": "MergeTask", "input": {"task_id": t}} for t in ("task_1", "task_2")]
    }
    return write_scenario(
        tmp_path / "clones.json",
        {
            "lead": [
                {"tool_uses": [create("alice's part", "alice"), create("bob's part", "bob")]},
                {"text": "planned"},
                merge,
                {"text": "both merged"},
            ],
            "alice": [write("a.txt", "from alice\n"), {"text": "alice wrote a.txt"}],
            "bob": [write("b.txt", "from bob\n"), {"text": "bob wrote b.txt"}],
        },
    )


def test_remote_teammates_push_their_branches_from_their_own_clones_and_the_lead_merges(
    workspace: Path, home: Path, tmp_path: Path, redis_url: str, mock_server: Any,
    workers: list[subprocess.Popen[str]],
) -> None:  # fmt: skip
    make_repo(workspace)
    bare = tmp_path / "shared.git"
    run_git(tmp_path, "init", "-q", "--bare", str(bare))
    elsewhere = tmp_path / "worker-checkout"  # the worker's own copy of the project
    run_git(tmp_path, "clone", "-q", str(workspace), str(elsewhere))
    url = mock_server(clone_scenario(tmp_path))
    api = {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "k"}
    workers.append(start_worker(home, elsewhere, redis_url, "--id", "far", *BYPASS, env=api))
    done = remote_team(
        redis_url,
        "--isolation",
        "worktree",
        "--repo",
        str(bare),
        "--teammate",
        "alice",
        "--teammate",
        "bob",
        workspace=workspace,
        home=home,
        env=api,
    )
    out, _err = stop(workers[0])
    assert done.returncode == 0, (done.stderr[-3000:], out)
    summary = json.loads(done.stdout)
    run_id = summary["run_id"]
    pushed = run_git(bare, "branch", "--format=%(refname:short)").split()
    assert pushed == [f"coterie/{run_id}/base", f"coterie/{run_id}/task_1",
                      f"coterie/{run_id}/task_2"]  # fmt: skip
    assert all("(pushed)]" in t["result"] for t in summary["tasks"])
    # The lead merged both branches into its own workspace.
    assert (workspace / "a.txt").read_text() == "from alice\n"
    assert (workspace / "b.txt").read_text() == "from bob\n"
    assert not (elsewhere / "a.txt").exists()  # the worker's own checkout is untouched


def test_remote_worktrees_need_a_shared_repository(
    workspace: Path, home: Path, redis_url: str
) -> None:
    make_repo(workspace)
    done = coterie(
        "team", "-p", "--backend", redis_url, "--remote", "--isolation", "worktree", "go",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 2
    assert "needs --repo URL" in done.stderr


async def test_a_teammate_that_keeps_crashing_on_a_worker_is_retired_and_its_task_handed_back(
    workspace: Path, home: Path, tmp_path: Path, redis_url: str, mock_server: Any,
    workers: list[subprocess.Popen[str]],
) -> None:  # fmt: skip
    scenario = write_scenario(
        tmp_path / "crashes.json",
        {
            "lead": [{"tool_uses": [create("the job", "bob")]}, {"text": "planned"}]
            + [{"text": "noted"}] * 4,
            "bob": [{"crash": f"bug {i}"} for i in range(4)],
            "alice": [write("job.txt", "done"), {"text": "did the job bob could not"}],
        },
    )
    api = {"ANTHROPIC_BASE_URL": mock_server(scenario), "ANTHROPIC_API_KEY": "k"}
    workers.append(start_worker(home, workspace, redis_url, "--id", "w0", *BYPASS, env=api))
    argv = ("team", "-p", "--output-format", "json", *BYPASS, "--backend", redis_url,
            "--remote", "--teammate", "alice", "--teammate", "bob", "go")  # fmt: skip
    done = await trio.to_thread.run_sync(
        lambda: coterie(*argv, cwd=workspace, home=home, env=api, timeout=90)
    )
    summary = json.loads(done.stdout) if done.returncode == 0 else None
    target = parse_backend(redis_url)
    hosts: dict[str, str | None] = {}
    if summary is not None:
        # The worker lets go of the run's teammates at its next round (a beat after
        # the run stopped): by then nothing of the run is left on the server.
        async with connect(target) as client:
            registry = WorkerRegistry(client, target)
            with trio.move_on_after(15):
                while (hosts := await registry.hosts(summary["run_id"], ("bob",))) != {"bob": None}:
                    await trio.sleep(0.1)
    out, _err = stop(workers[0])
    assert done.returncode == 0, (done.stderr[-3000:], out)
    assert summary is not None
    (task,) = summary["tasks"]
    assert (task["status"], task["owner"]) == ("completed", "alice")
    run_id = summary["run_id"]
    assert f"ended {run_id}/bob" in out  # its supervisor gave up: retired
    assert out.count(f"hosting {run_id}/bob") == 1  # no worker started it again
    assert hosts == {"bob": None}  # the run stopped: nothing of it is left on the server
    # The lead knew bob had stopped: it did not wait 30 s for his answer to its
    # shutdown (his lease, still the worker's until the next beat, once made it
    # think bob was hosted again).
    assert not [e for e in events_of(workspace) if e.type == "team.shutdown_timeout"]


def test_teammates_no_worker_hosts_are_handed_back_once_after_the_grace(
    workspace: Path, home: Path, tmp_path: Path, redis_url: str, mock_server: Any
) -> None:
    scenario = write_scenario(
        tmp_path / "alone.json",
        {"lead": [{"tool_uses": [create("the job", "alice")]}, {"text": "planned"}]
         + [{"text": "nobody could do it"}] * 4},
    )  # fmt: skip
    api = {"ANTHROPIC_BASE_URL": mock_server(scenario), "ANTHROPIC_API_KEY": "k"}
    done = remote_team(
        redis_url,
        "--remote-grace",
        "1",
        "--teammate",
        "alice",
        "--teammate",
        "bob",
        workspace=workspace,
        home=home,
        env=api,
    )
    summary = json.loads(done.stdout)
    (task,) = summary["tasks"]
    assert (task["status"], task["owner"]) == ("pending", None)  # handed back
    told = [e for e in events_of(workspace) if e.type == "team.message"
            and e.data["kind"] == "teammate_stopped"]  # fmt: skip
    assert sorted(e.data["sender"] for e in told) == ["alice", "bob"]  # each once
    assert all("no worker has hosted it for 1 s" in e.data["text"] for e in told)


def test_why_a_worker_cannot_host_a_teammate_reaches_the_worker_and_the_leads_summary(
    workspace: Path, home: Path, tmp_path: Path, redis_url: str, mock_server: Any,
    workers: list[subprocess.Popen[str]],
) -> None:  # fmt: skip
    """A worker with no model in its environment: one line on the worker saying why,
    and the same reason in the lead's hand-back and its final summary."""
    scenario = write_scenario(
        tmp_path / "alone.json",
        {"lead": [{"tool_uses": [create("the job", "alice")]}, {"text": "planned"}]
         + [{"text": "nobody could do it"}] * 4},
    )  # fmt: skip
    api = {"ANTHROPIC_BASE_URL": mock_server(scenario), "ANTHROPIC_API_KEY": "k"}
    workers.append(start_worker(home, workspace, redis_url, "--id", "w0", *BYPASS))  # no key
    done = remote_team(
        redis_url,
        "--remote-grace",
        "3",
        "--teammate",
        "alice",
        workspace=workspace,
        home=home,
        env=api,
    )
    out, _err = stop(workers[0])
    failed = [line for line in out.splitlines() if line.startswith("failed ")]
    assert failed, out
    where, _, reason = failed[0].partition(": ")
    assert where.endswith("/alice"), failed[0]
    assert reason, failed[0]
    summary = json.loads(done.stdout)
    told = [e for e in events_of(workspace) if e.type == "team.message"
            and e.data["kind"] == "teammate_stopped"]  # fmt: skip
    assert len(told) == 1
    assert f"a worker could not start it: {reason} (worker w0)" in told[0].data["text"]
    assert summary["is_error"] is True
    assert "alice stopped: no worker has hosted it for 3 s" in summary["result"]
    assert reason in summary["result"]


async def test_a_worker_stopped_mid_task_releases_its_teammates_at_once(
    workspace: Path, home: Path, tmp_path: Path, redis_url: str, mock_server: Any,
    workers: list[subprocess.Popen[str]],
) -> None:  # fmt: skip
    slow = {"tool_uses": [{"name": "Bash", "input": {"command": "sleep 60"}}]}
    scenario = write_scenario(
        tmp_path / "slow.json",
        {"lead": [{"tool_uses": [create("the job", "alice")]}, {"text": "planned"}],
         "alice": [slow, {"text": "slept"}]},
    )  # fmt: skip
    api = {"ANTHROPIC_BASE_URL": mock_server(scenario), "ANTHROPIC_API_KEY": "k"}
    worker = start_worker(home, workspace, redis_url, "--id", "w0", *BYPASS, env=api)
    workers.append(worker)
    lead = subprocess.Popen(
        [sys.executable, "-m", "coterie", "team", "-p", *BYPASS, "--backend", redis_url,
         "--remote", "--teammate", "alice", "go"],
        cwd=workspace, env={**clean_env(HOME=str(home)), **api}, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    target = parse_backend(redis_url)
    try:
        async with connect(target) as client:
            registry = WorkerRegistry(client, target)
            with trio.fail_after(60):
                while not (wanted := await registry.wanted()):
                    await trio.sleep(0.1)
                run_id = wanted[0].run_id
                while (await registry.hosts(run_id, ("alice",)))["alice"] != "w0":
                    await trio.sleep(0.1)
                await trio.sleep(2)  # alice is in her `sleep 60`
            out, err = await trio.to_thread.run_sync(stop, worker)
            assert worker.returncode == 128 + signal.SIGTERM, err
            assert f"released {run_id}/alice" in out
            # At once, not after the lease's time to live: another worker may take her.
            assert (await registry.hosts(run_id, ("alice",)))["alice"] is None
    finally:
        lead.kill()
        lead.wait()


def test_a_worker_keeps_its_owners_deny_rules_whatever_the_run_read(
    workspace: Path, home: Path, tmp_path: Path, redis_url: str, mock_server: Any,
    workers: list[subprocess.Popen[str]],
) -> None:  # fmt: skip
    """A run started with ``--setting-sources project`` reads no user settings; the
    worker hosting its teammate still applies its owner's ``~/.claude`` deny rules."""
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Read(./secrets/**)"]}})
    )
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "k").write_text("the owner's secret\n")
    copy = {"tool_uses": [{"name": "Bash", "input": {"command": "cat secrets/k > copied.txt"}}]}
    read = {"tool_uses": [{"name": "Read", "input": {"file_path": "secrets/k"}}]}
    scenario = write_scenario(
        tmp_path / "secret.json",
        {
            "lead": [
                {"tool_uses": [create("copy", "alice")]},
                {"text": "planned"},
                {"text": "done"},
                {"text": "done"},
            ],
            "alice": [read, copy, {"text": "tried"}],
        },
    )
    api = {"ANTHROPIC_BASE_URL": mock_server(scenario), "ANTHROPIC_API_KEY": "k"}
    workers.append(start_worker(home, workspace, redis_url, "--id", "w0", *BYPASS, env=api))
    done = remote_team(
        redis_url,
        "--setting-sources",
        "project",
        "--teammate",
        "alice",
        workspace=workspace,
        home=home,
        env=api,
    )
    out, err = stop(workers[0])
    assert done.returncode == 0, (done.stderr, out, err)
    assert not (workspace / "copied.txt").exists(), (out, err)
    assert "the owner's secret" not in done.stdout + out


def test_a_teammate_no_worker_hosted_does_not_stop_the_shutdown(
    workspace: Path, home: Path, tmp_path: Path, redis_url: str, mock_server: Any,
    workers: list[subprocess.Popen[str]],
) -> None:  # fmt: skip
    """Issue 32: the lead asked a teammate no worker ever hosted (no mailbox) to stop,
    crashed on ``UnknownActor`` and was restarted into the same crash; now the
    shutdown settles it and the run ends."""
    scenario = write_scenario(
        tmp_path / "one.json",
        {"lead": [{"tool_uses": [create("only", "alice")]}, {"text": "planned"}]
         + [{"text": "all done"}] * 4,
         "alice": [write("a.txt", "alice"), {"text": "wrote"}]},
    )  # fmt: skip
    api = {"ANTHROPIC_BASE_URL": mock_server(scenario), "ANTHROPIC_API_KEY": "k"}
    # One worker with room for one teammate: bob is never hosted.
    workers.append(start_worker(home, workspace, redis_url, "--capacity", "1", *BYPASS, env=api))
    done = remote_team(
        redis_url,
        "--teammate",
        "alice",
        "--teammate",
        "bob",
        workspace=workspace,
        home=home,
        env=api,
        timeout=60,
    )
    stop(workers[0])
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["terminal_reason"] == "completed"
    skipped = [e.data for e in events_of(workspace) if e.type == "team.shutdown_skipped"]
    assert skipped == [{"actor": "lead", "teammate": "bob", "reason": "no mailbox"}]


async def test_a_run_whose_data_the_server_lost_ends_alone_on_a_worker_hosting_two(
    workspace: Path, home: Path, tmp_path: Path, redis_url: str, mock_server: Any,
    workers: list[subprocess.Popen[str]],
) -> None:  # fmt: skip
    """One worker hosts a teammate of each of two runs; the server loses one run's
    keys (flushed, or restarted without them): that run's teammate ends, its lead
    says so in one line, and the other run goes on on the same worker to the end."""

    def lead(name: str) -> Path:
        turns = [{"tool_uses": [create("the job", name)]}, {"text": "planned"}]
        return write_scenario(
            tmp_path / f"{name}-lead.json", {"lead": [*turns, *[{"text": "done"}] * 2]}
        )

    def bash(command: str) -> list[dict[str, Any]]:
        call = {"name": "Bash", "input": {"command": command}}
        return [{"tool_uses": [call]}, {"text": "did it"}]

    mates = write_scenario(
        tmp_path / "mates.json",
        {"alice": bash("sleep 30"), "bob": bash("sleep 4; echo b > b.txt")},
    )
    api = {"ANTHROPIC_BASE_URL": mock_server(mates), "ANTHROPIC_API_KEY": "k"}
    worker = start_worker(
        home, workspace, redis_url, "--id", "w0", "--capacity", "2", *BYPASS, env=api
    )
    workers.append(worker)
    await trio.to_thread.run_sync(workers_up, redis_url, 1)
    argv = [sys.executable, "-m", "coterie", "team", "-p", *BYPASS, "--backend", redis_url,
            "--remote", "--teammate"]  # fmt: skip
    leads = {}
    for name in ("alice", "bob"):
        env = {**clean_env(HOME=str(home)), "ANTHROPIC_API_KEY": "k",
               "ANTHROPIC_BASE_URL": mock_server(lead(name))}  # fmt: skip
        leads[name] = subprocess.Popen(
            [*argv, name, "go"], cwd=workspace, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
    target = parse_backend(redis_url)
    try:
        async with connect(target) as client:
            registry = WorkerRegistry(client, target)
            runs: dict[str, str] = {}
            with trio.fail_after(60):
                while len(runs) < 2:
                    for want in await registry.wanted():
                        for name in want.teammates:
                            if (await registry.hosts(want.run_id, (name,)))[name] == "w0":
                                runs[name] = want.run_id
                    await trio.sleep(0.1)
            await trio.sleep(1)  # both teammates at work
            gone = [k async for k in client.scan_iter(match=f"*{runs['alice']}*")]
            assert gone
            await client.delete(gone)
        _, said_b = await trio.to_thread.run_sync(lambda: leads["bob"].communicate(timeout=90))
        _, said_a = await trio.to_thread.run_sync(lambda: leads["alice"].communicate(timeout=90))
    finally:
        for proc in leads.values():
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert leads["bob"].returncode == 0, said_b
    assert (workspace / "b.txt").read_text() == "b\n"
    assert worker.poll() is None  # the worker went on through the other run's loss
    assert leads["alice"].returncode != 0
    assert "Traceback" not in said_a, said_a
    out, err = stop(worker)
    assert "Traceback" not in err, err
    assert f"hosting {runs['bob']}/bob" in out
    assert f"lost {runs['alice']}/alice" in out  # stopped: its hold went with the keys
    assert "no longer holds run" in said_a
