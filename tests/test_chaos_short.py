"""Short runs of the chaos harness (bench/chaos.py).

Two rounds with no violation: a cut stream through the real SDK against
``coterie mock-server``, and a full disk (a small tmpfs) on the scripted
model, resumed once there is space again; the table says how many faults were
drawn, landed and re-drawn. Then the mutation checks: two deliberately broken
builds (a resume that runs an interrupted tool again, a transcript that loses
its last record) caught by rounds whose kill lands inside a tool call, and a
mutant left uncaught failing the harness. And the Redis faults the harness
does to a server of its own (refused writes, a restart without data), and a
harness stopped by SIGTERM taking its round's processes with it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from bench.chaos import main
from bench.chaos_redis import Redis, server_binary

REPO = Path(__file__).parents[1]


def chaos(*args: str, timeout: float = 170) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(REPO / "bench" / "chaos.py"), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.slow
def test_a_short_chaos_run_finds_no_violation(tmp_path: Path) -> None:
    table = tmp_path / "table.json"
    done = chaos("--rounds", "2", "--seed", "1", "--faults", "cut,enospc", "--json", str(table))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 round(s) with a violation" in done.stdout, done.stdout
    assert " cut           sdk " in done.stdout, done.stdout
    assert " enospc        scripted " in done.stdout, done.stdout
    assert "drawn landed redrawn" in done.stdout, done.stdout
    kinds = json.loads(table.read_text())["kinds"]
    rows = {(r["fault"], r["path"]): r for r in kinds if r["drawn"]}
    assert set(rows) == {("cut", "sdk"), ("enospc", "scripted")}
    for row in rows.values():
        assert row["drawn"] - row["redrawn"] == 1  # one round of each kind, re-drawn or not
        assert row["landed"] <= 1
        assert row["violations"] == 0


@pytest.mark.slow
def test_mutants_of_resume_and_transcript_are_caught(tmp_path: Path) -> None:
    report = tmp_path / "mutants.json"
    done = chaos(
        "--mutants",
        "--mutant-names",
        "resume-reruns-tool,transcript-loses-last",
        "--paths",
        "scripted",
        "--schedule",
        "in_tool",
        "--mutant-rounds",
        "3",
        "--seed",
        "1",
        "--json",
        str(report),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    results = {r["mutant"]: r for r in json.loads(report.read_text())["mutants"]}
    assert set(results) == {"resume-reruns-tool", "transcript-loses-last"}
    for result in results.values():
        assert 1 <= result["caught_in"] <= 3, done.stdout
    assert "a tool ran twice" in done.stdout
    assert "never ran, but they did" in done.stdout


def test_a_mutant_not_caught_fails_the_harness(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--mutants", "--mutant-names", "reaper-kills-nothing", "--mutant-rounds", "0"])
    assert code == 1
    assert "NOT CAUGHT in 0 rounds" in capsys.readouterr().out


@pytest.mark.skipif(server_binary() is None, reason="redis-server is not installed")
def test_the_redis_faults_refuse_writes_then_lose_the_data(tmp_path: Path) -> None:
    redis = Redis(tmp_path / "redis").start()
    try:
        assert redis.command("SET", "k", "v") == b"+OK\r\n"
        redis.refuse_writes()
        assert redis.command("SET", "k2", "v").startswith(b"-OOM")
        redis.take_writes()
        assert redis.command("SET", "k2", "v") == b"+OK\r\n"
        port = redis.port
        redis.restart_empty()
        assert redis.port == port
        assert redis.command("EXISTS", "k") == b":0\r\n"
    finally:
        redis.stop()


def test_the_link_faults_hold_data_back_while_cut_and_late_while_slow() -> None:
    """The proxy between a round's run and its server: cut, nothing passes either way
    (what was sent arrives once it heals, as TCP would retransmit it); slowed, each
    chunk waits; stopped, every connection is closed."""
    from bench.chaos_proxy import Proxy

    with socket.create_server(("127.0.0.1", 0)) as server:
        proxy = Proxy(int(server.getsockname()[1])).start()
        try:
            client = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
            far, _ = server.accept()
            client.sendall(b"hello")
            assert far.recv(5) == b"hello"
            proxy.partition()
            client.sendall(b"held")
            far.settimeout(0.3)
            with pytest.raises(TimeoutError):
                far.recv(4)
            proxy.heal()
            far.settimeout(5)
            assert far.recv(4) == b"held"
            proxy.slow(0.2)
            began = time.monotonic()
            far.sendall(b"late")
            assert client.recv(4) == b"late"
            assert time.monotonic() - began >= 0.2
        finally:
            proxy.stop()
        assert client.recv(1) == b""  # closed by the proxy's end
        client.close()
        far.close()


@pytest.mark.slow
def test_a_run_goes_on_through_a_cut_and_a_slow_link_to_its_server(tmp_path: Path) -> None:
    done = chaos(
        "--rounds", "2", "--seed", "3", "--faults", "redis-partition,redis-slow",
        "--paths", "scripted", "--json", str(tmp_path / "table.json"),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 round(s) with a violation" in done.stdout, done.stdout
    assert "the link cut for" in done.stdout, done.stdout
    assert "ms late for" in done.stdout, done.stdout


def _marked(mark: str) -> list[tuple[int, str]]:
    """Live processes whose environment holds *mark*: their pid and command line."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if mark.encode() not in Path(f"/proc/{pid}/environ").read_bytes():
                continue
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if state != "Z":
            found.append((int(pid), cmd))
    return found


@pytest.mark.slow
def test_a_harness_stopped_by_sigterm_leaves_nothing_of_its_round_running() -> None:
    """Its rounds' processes run in sessions of their own, and a Bash step leaves a
    ``sleep 30`` in a group coterie records: a SIGTERM to the harness alone used to
    end it at once and leave them all running."""
    mark = f"CHAOS_TEST_MARK_{uuid.uuid4().hex}"  # (COTERIE_ variables are not passed on)
    env = {**os.environ, mark: "1"}
    harness = subprocess.Popen(
        [sys.executable, str(REPO / "bench" / "chaos.py"), "--rounds", "3", "--seed", "7",
         "--faults", "crash", "--paths", "sdk"],
        cwd=REPO, env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not any("sleep 30" in cmd for _pid, cmd in _marked(mark)):
            assert harness.poll() is None, "the harness ended before a round's step ran"
            assert time.monotonic() < deadline, "no round's step ever ran"
            time.sleep(0.05)
        harness.send_signal(signal.SIGTERM)
        assert harness.wait(timeout=60) == 143
        deadline = time.monotonic() + 5
        while (alive := _marked(mark)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive, alive
    finally:
        if harness.poll() is None:
            harness.kill()
            harness.wait()
        for pid, _cmd in _marked(mark):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
