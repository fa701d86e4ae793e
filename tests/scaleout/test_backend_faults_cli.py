"""The Redis server failing under a running team: one line, never a traceback
(issue 29, findings 4 and 5; docs/reliability.md, "The backend's failure states").

Each test has a server of its own (it is killed, emptied or starved), and a team
of two on the scripted model whose teammate alice runs ``sleep``; the faults are
timed from the run's own state (alice's job started, the server counting refused
writes), never by guessing. A refused mailbox send waiting instead of crashing
its actor is tested on a post office (tests/mailbox/test_redis_faults.py): in a
team, the first send comes only after a long wait, as every transcript append
waits for the server first.
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import time
from typing import TYPE_CHECKING

from tests.agent.conftest import clean_env, coterie, wait_for
from tests.agent.test_resume_cli import write_scenario
from tests.redis_server import redis_server
from tests.scaleout.test_faults_cli import start_team_on
from tests.team.test_team_cli import BYPASS

if TYPE_CHECKING:
    from pathlib import Path

    from tests.redis_server import RedisServer


def test_a_server_back_empty_stops_the_run_with_one_line(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    with redis_server(tmp_path / "redis") as server:
        proc = start_team_on(server.url, workspace, home, tmp_path, alice_sleeps=3)
        server.kill()  # kill -9, then a server without the run's data on the same port
        server.directory = tmp_path / "redis-empty"
        server.start()
        _, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 1
        assert "Traceback" not in stderr
        lines = [line for line in stderr.splitlines() if line.startswith("error:")]
        assert len(lines) == 1, stderr
        assert "no longer holds run" in lines[0]
        assert "restarted without its data" in lines[0]
        # A resume says so in one line too, never waits for a prompt the server lost.
        (run_id,) = re.findall(r"run (\d{8}-\d{6}-[0-9a-f]{6})", lines[0])
        done = coterie("resume", run_id, "-p", cwd=workspace, home=home, timeout=60)
    assert done.returncode in (1, 2), done.stderr
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert "no longer holds run" in line or "lost" in line


def _refusals(server: RedisServer) -> int:
    """How many commands the server refused for lack of memory."""
    found = re.search(rb"errorstat_OOM:count=(\d+)", server.command("INFO", "errorstats"))
    return int(found.group(1)) if found else 0


def test_a_server_out_of_memory_is_waited_out_and_said_once(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    with redis_server(tmp_path / "redis") as server:
        proc = start_team_on(server.url, workspace, home, tmp_path, alice_sleeps=1)
        server.command("CONFIG", "SET", "maxmemory-policy", "noeviction")
        server.command("CONFIG", "SET", "maxmemory", "1")  # every write refused: OOM
        deadline = time.monotonic() + 60
        while _refusals(server) < 3:  # the run's writes refused, again and again
            assert time.monotonic() < deadline, "nothing was written while out of memory"
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        server.command("CONFIG", "SET", "maxmemory", "0")  # memory freed
        _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr
    assert stderr.count("is out of memory and refuses writes") == 1, stderr
    assert stderr.count("accepts commands again") == 1, stderr
    assert "gave up" not in stderr
    runs = coterie("runs", cwd=workspace, home=home)
    assert "completed" in runs.stdout, runs.stdout


def test_a_resume_on_a_server_that_lost_the_run_is_one_line(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """One agent on Redis, the server back empty while its tool runs: the resume
    used to wait forever for the prompt the server had lost."""
    scenario = write_scenario(
        tmp_path / "one.json",
        {"lead": [{"tool_uses": [{"name": "Bash", "input": {"command": "touch began; sleep 2"}}]},
                  {"text": "done"}]},
    )  # fmt: skip
    with redis_server(tmp_path / "redis") as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "coterie", "run", "-p", *BYPASS, "--scenario", str(scenario),
             "--backend", server.url, "go"],
            cwd=workspace, env=clean_env(HOME=str(home)), stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        wait_for(workspace / "began", proc, "the tool never began", settle=0.1)
        server.kill()
        server.directory = tmp_path / "redis-empty"
        server.start()
        _, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 1, stderr
        (run_id,) = {m for m in re.findall(r"\d{8}-\d{6}-[0-9a-f]{6}", stderr)}
        done = coterie("resume", run_id, "-p", cwd=workspace, home=home, timeout=60)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert f"no longer holds run {run_id}" in line


def test_a_server_that_cannot_be_reached_is_one_line(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """Nothing listening at the address: one line and exit 1, never a traceback.
    Something that takes the connection and never answers (a hung server): one line
    once the first answer is overdue (the run waited forever before), and a SIGTERM
    while the run waits for it is a stop like any other (exit 143; it was exit 1
    with the client's error, or 130)."""
    scenario = write_scenario(tmp_path / "s.json", {"lead": [{"text": "hi"}]})
    with socket.create_server(("127.0.0.1", 0)) as closed:
        port = closed.getsockname()[1]
    done = coterie(
        "team", "-p", *BYPASS, "--backend", f"redis://127.0.0.1:{port}/0",
        "--scenario", str(scenario), "go", cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("error: the Redis server failed: "), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    with socket.create_server(("127.0.0.1", 0)) as hung:  # takes connections, says nothing
        url = f"redis://127.0.0.1:{hung.getsockname()[1]}/0"
        argv = ["team", "-p", *BYPASS, "--backend", url, "--scenario", str(scenario), "go"]
        done = coterie(*argv, cwd=workspace, home=home, timeout=60)
        assert done.returncode == 1, done.stderr
        assert "took the connection but did not answer" in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    with socket.create_server(("127.0.0.1", 0)) as hung:  # a new one: no connection queued
        url = f"redis://127.0.0.1:{hung.getsockname()[1]}/0"
        argv = ["team", "-p", *BYPASS, "--backend", url, "--scenario", str(scenario), "go"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "coterie", *argv], cwd=workspace,
            env=clean_env(HOME=str(home)), stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        hung.settimeout(30)
        conn, _ = hung.accept()  # the client has connected, and waits for an answer
        with conn:
            proc.send_signal(signal.SIGTERM)
            _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "Traceback" not in err


def test_commands_that_read_a_hung_server_say_so_in_time(workspace: Path, home: Path) -> None:
    """Not only a run's start: every command's first connection waits for the server's
    first answer a bounded time (``coterie runs`` and a worker waited forever)."""
    with socket.create_server(("127.0.0.1", 0)) as hung:  # takes connections, says nothing
        url = f"redis://127.0.0.1:{hung.getsockname()[1]}/0"
        env = clean_env(HOME=str(home))
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "coterie", *argv, "--backend", url],
                cwd=workspace, env=env, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )
            for argv in (["runs"], ["worker"])
        ]  # fmt: skip
        for proc in procs:
            _out, err = proc.communicate(timeout=60)
            assert proc.returncode == 1, err
            assert "took the connection but did not answer" in " ".join(err.split()), err
            assert err.startswith("error: "), err
            assert "Traceback" not in err
