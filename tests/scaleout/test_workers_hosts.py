"""Remote teams that lose a worker or their server mid-run (issue 16's "must be shown").

A team of four teammates does 20 tasks; each task's tool appends one line to
a ledger file every process shares (the hosts share the file system). One
worker is killed (kill -9: of its process here, of every process of its host
in the network namespaces), or the Redis server is restarted (AOF, fsync
always): every task is completed exactly once on the board, no ledger line
is there twice, and the run's answer comes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.agent.conftest import clean_env
from tests.agent.test_resume_cli import write_scenario
from tests.netns import network
from tests.redis_server import redis_server
from tests.scaleout.test_workers_cli import clone_scenario, start_worker, stop
from tests.team.test_team_cli import BYPASS, create
from tests.workspaces.conftest import make_repo, run_git

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

pytestmark = pytest.mark.slow

NAMES = ("alice", "bob", "carol", "dave")
PER = 5  # tasks per teammate: 20 in all
ANSWER = "all twenty tasks are done"


def ledger_scenario(tmp_path: Path, ledger: Path) -> Path:
    calls = [create(f"{n}-{i}", n) for n in NAMES for i in range(PER)]
    tracks: dict[str, Any] = {"lead": [{"tool_uses": calls}, {"text": "planned"}]}
    tracks["lead"] += [{"text": ANSWER}] * 12
    for n in NAMES:
        turns: list[dict[str, Any]] = []
        for i in range(PER):
            command = f"echo {n}-{i} >> {ledger}"
            turns.append({"tool_uses": [{"name": "Bash", "input": {"command": command}}]})
            turns.append({"text": f"{n}-{i} recorded"})
        tracks[n] = turns
    return write_scenario(tmp_path / "ledger.json", tracks)


def start_mock(
    scenario: Path, home: Path, host: str, wrapper: Sequence[str]
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*wrapper, sys.executable, "-m", "coterie", "mock-server", "--scenario", str(scenario),
         "--host", host, "--latency", "0.15"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env(HOME=str(home)),
    )  # fmt: skip


def start_lead(
    workspace: Path, home: Path, backend: str, api: dict[str, str], wrapper: Sequence[str]
) -> subprocess.Popen[str]:
    names = [a for n in NAMES for a in ("--teammate", n)]
    return subprocess.Popen(
        [*wrapper, sys.executable, "-m", "coterie", "team", "-p", "--output-format", "json",
         *BYPASS, "--backend", backend, "--remote", "--remote-grace", "60", *names,
         "--workdir", str(workspace), "do the twenty tasks"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=workspace,
        env={**clean_env(HOME=str(home)), **api}, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def wait_lines(ledger: Path, count: int, lead: subprocess.Popen[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and lead.poll() is None:
        if ledger.exists() and len(ledger.read_text().splitlines()) >= count:
            return
        time.sleep(0.05)
    out, err = lead.communicate() if lead.poll() is not None else ("", "")
    raise AssertionError(f"the ledger never reached {count} lines: {out[-3000:]} {err[-3000:]}")


#: Prints the ids of the tasks the board's log completed (run where the server is reachable).
READ_LOG = """
import json, sys, trio
from coterie.backends.redis import read_redis_log
from coterie.backends.redis.client import parse_backend
entries = trio.run(read_redis_log, parse_backend(sys.argv[1]), sys.argv[2])
print(json.dumps([e.task_id for e in entries if e.op == "complete"]))
"""


def completed_tasks(backend: str, run_id: str, wrapper: Sequence[str]) -> list[str]:
    done = subprocess.run(
        [*wrapper, sys.executable, "-c", READ_LOG, backend, run_id],
        capture_output=True, text=True, env=clean_env(), check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    ids: list[str] = json.loads(done.stdout)
    return ids


def check_run(
    lead: subprocess.Popen[str],
    ledger: Path,
    backend: str,
    workers: Callable[[], object],
    wrapper: Sequence[str],
) -> Any:
    try:
        out, err = lead.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        lead.kill()
        out, err = lead.communicate()
    outs = workers()  # what the workers said, once the run is over
    (ledger.parent / "lead.out").write_text(json.dumps([lead.returncode, out, err, outs]))
    assert lead.returncode == 0, (out[-4000:], err[-4000:], outs, what_happened(out))
    summary = json.loads(out)
    assert ANSWER in summary["result"]
    assert [t["status"] for t in summary["tasks"]] == ["completed"] * len(NAMES) * PER
    lines = ledger.read_text().splitlines()
    assert len(lines) == len(set(lines)), lines  # no tool side effect twice
    expected = {f"{n}-{i}" for n in NAMES for i in range(PER)}
    assert set(lines) <= expected
    # A tool the kill interrupted after it ran is answered as interrupted, not run again.
    assert len(lines) >= len(expected) - 2, sorted(expected - set(lines))
    completed = completed_tasks(backend, summary["run_id"], wrapper)
    assert len(completed) == len(set(completed)) == len(expected), completed
    return outs


#: Events too many and too ordinary to tell what went wrong in a failed run.
ORDINARY = frozenset({
    "agent.tool_call", "agent.tool_result", "agent.message", "board.changed", "model.requested",
    "actor.state",
})  # fmt: skip


def what_happened(out: str, shown: int = 80) -> list[str]:
    """For a failed run's message: the last of its unordinary events, in time order,
    in every process (the lead's run and the workers' copies under the coterie home)."""
    try:
        run_id = json.loads(out)["run_id"]
    except (ValueError, KeyError):
        return ["(no run id in the lead's output)"]
    seen: list[tuple[float, str]] = []
    for log in Path(os.environ["COTERIE_HOME"]).glob(f"**/{run_id}/events.jsonl"):
        for line in log.read_text().splitlines():
            event = json.loads(line)
            if event.get("type") not in ORDINARY:
                seen.append((event.get("ts", 0.0), f"{log.parent.parent.name}: {line[:300]}"))
    return [line for _ts, line in sorted(seen)[-shown:]]


def run_with_a_fault(
    tmp_path: Path,
    workspace: Path,
    home: Path,
    backend: str,
    hosts: dict[str, Sequence[str]],
    fault: Callable[[list[subprocess.Popen[str]]], None],
    api_host: str = "127.0.0.1",
) -> list[tuple[str, str]]:
    """The ledger run: the lead and mock server on ``hosts['lead']``, workers on
    ``hosts['w1']`` and ``hosts['w2']``; *fault* once 6 lines are written."""
    ledger = workspace / "ledger.txt"  # inside the workspace: where Bash may write
    mock = start_mock(ledger_scenario(tmp_path, ledger), home, api_host, hosts["lead"])
    procs = [mock]
    try:
        assert mock.stdout is not None
        url = mock.stdout.readline().strip()
        assert url.startswith("http://"), mock.stderr.read() if mock.stderr else ""
        api = {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "k"}
        workers = [
            start_worker(home, workspace, backend, "--id", w, *BYPASS, env=api, wrapper=hosts[w])
            for w in ("w1", "w2")
        ]
        procs += workers
        lead = start_lead(workspace, home, backend, api, hosts["lead"])
        procs.append(lead)
        wait_lines(ledger, 6, lead, timeout=120)
        fault(workers)
        outs = lambda: [stop(w, 5) for w in workers]  # noqa: E731
        said: list[tuple[str, str]] = check_run(lead, ledger, backend, outs, hosts["lead"])
        return said
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()


def test_a_worker_killed_mid_run_is_taken_over(
    tmp_path: Path, workspace: Path, home: Path, redis_url: str
) -> None:
    hosts: dict[str, Sequence[str]] = {"lead": (), "w1": (), "w2": ()}
    said = run_with_a_fault(tmp_path, workspace, home, redis_url, hosts, lambda ws: ws[0].kill())
    took_over(said[1][0])


def took_over(out: str) -> None:
    """The surviving worker hosted every teammate in the end (the dead one's too)."""
    hosted = {
        line.split()[1].split("/")[1] for line in out.splitlines() if line.startswith("hosting")
    }
    assert hosted == set(NAMES), out


def test_a_host_lost_mid_run_in_network_namespaces(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    with network(["db", "lead", "w1", "w2"]) as net:
        db = net.hosts["db"]
        with redis_server(
            tmp_path / "redis", host=db.address, wrapper=db.wrapper, appendonly=True
        ) as server:
            hosts = {n: net.hosts[n].wrapper for n in ("lead", "w1", "w2")}
            said = run_with_a_fault(
                tmp_path, workspace, home, server.url, hosts,
                lambda _ws: _lost(net.hosts["w1"]), api_host=net.hosts["lead"].address,
            )  # fmt: skip
            took_over(said[1][0])


def test_the_server_restarted_mid_run_in_network_namespaces(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    with network(["db", "lead", "w1", "w2"]) as net:
        db = net.hosts["db"]
        with redis_server(
            tmp_path / "redis", host=db.address, wrapper=db.wrapper, appendonly=True,
            appendfsync="always",
        ) as server:  # fmt: skip
            hosts = {n: net.hosts[n].wrapper for n in ("lead", "w1", "w2")}
            run_with_a_fault(
                tmp_path, workspace, home, server.url, hosts,
                lambda _ws: server.restart(), api_host=net.hosts["lead"].address,
            )  # fmt: skip
    # The server away for a moment is waited out: an actor whose call came in the
    # gap may crash once (its reply lost), never until its supervisor gives up.
    _code, out, _err, _outs = json.loads((workspace / "lead.out").read_text())
    gave_up = [line for line in what_happened(out, 10_000) if '"supervisor.gave_up"' in line]
    assert not gave_up, gave_up


def _lost(host: Any) -> None:
    assert host.kill_all() >= 1


def test_a_teammate_on_another_host_pushes_its_clones_branch_and_the_lead_merges(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    """The worker's host reaches the lead's only through the server and the bare
    repository (a path: the hosts share the file system)."""
    make_repo(workspace)
    bare = tmp_path / "shared.git"
    run_git(tmp_path, "init", "-q", "--bare", str(bare))
    elsewhere = tmp_path / "worker-checkout"
    run_git(tmp_path, "clone", "-q", str(workspace), str(elsewhere))
    with network(["db", "lead", "w1"]) as net:
        db, lead_host, far = net.hosts["db"], net.hosts["lead"], net.hosts["w1"]
        with redis_server(tmp_path / "redis", host=db.address, wrapper=db.wrapper) as server:
            mock = start_mock(clone_scenario(tmp_path), home, lead_host.address, lead_host.wrapper)
            procs = [mock]
            try:
                assert mock.stdout is not None
                api = {
                    "ANTHROPIC_BASE_URL": mock.stdout.readline().strip(),
                    "ANTHROPIC_API_KEY": "k",
                }
                worker = start_worker(
                    home, elsewhere, server.url, "--id", "far", *BYPASS, env=api,
                    wrapper=far.wrapper,
                )  # fmt: skip
                procs.append(worker)
                done = lead_host.run(
                    [sys.executable, "-m", "coterie", "team", "-p", "--output-format", "json",
                     *BYPASS, "--backend", server.url, "--remote", "--isolation", "worktree",
                     "--repo", str(bare), "--teammate", "alice", "--teammate", "bob",
                     "--workdir", str(workspace), "go"],
                    capture_output=True, text=True, cwd=workspace, timeout=120,
                    env={**clean_env(HOME=str(home)), **api}, stdin=subprocess.DEVNULL,
                )  # fmt: skip
                out, _err = stop(worker)
            finally:
                for proc in procs:
                    if proc.poll() is None:
                        proc.kill()
                        proc.communicate()
    assert done.returncode == 0, (done.stderr[-3000:], out)
    summary = json.loads(done.stdout)
    assert all("(pushed)]" in t["result"] for t in summary["tasks"])
    assert (workspace / "a.txt").read_text() == "from alice\n"
    assert (workspace / "b.txt").read_text() == "from bob\n"
    assert "hosting" in out
