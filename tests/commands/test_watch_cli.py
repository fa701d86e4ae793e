"""``coterie watch``: a run's live view from another terminal, and replays of finished runs."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING

from coterie.events import Event
from coterie.runs import create_run, hold_run, write_state
from tests.agent.conftest import clean_env, coterie

if TYPE_CHECKING:
    from pathlib import Path

RUN_ID = re.compile(r"\d{8}-\d{6}-[0-9a-f]+")


def _popen(*args: str, cwd: Path, home: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "coterie", *args],
        cwd=cwd,
        env=clean_env(HOME=str(home)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )


def _recorded_run(workspace: Path, gaps: list[float], *, torn: bool = False) -> tuple[str, Path]:
    """A finished run whose log holds a crash and a restart, *gaps* seconds apart."""
    run_id, run_dir = create_run(workspace, {"command": "demo", "demo": "recorded"})
    kinds = [
        ("actor.started", {"supervisor": "root", "actor": "worker", "attempt": 0}),
        ("actor.crashed", {"supervisor": "root", "actor": "worker", "reason": "boom"}),
        ("actor.restarted", {"supervisor": "root", "actor": "worker", "attempt": 1}),
        ("actor.started", {"supervisor": "root", "actor": "worker", "attempt": 1}),
    ]
    ts, lines = 1_700_000_000.0, []
    for seq, ((kind, data), gap) in enumerate(zip(kinds, [0.0, *gaps], strict=False), start=1):
        ts += gap
        lines.append(Event(seq, ts, kind, data).to_json() + "\n")
    text = "".join(lines) + ('{"seq":9,"ts":1700000009,"type":"actor.cra' if torn else "")
    (run_dir / "events.jsonl").write_text(text)
    write_state(run_dir, state="completed", result={"result": "done", "is_error": False})
    return run_id, run_dir


def _snapshot(run_dir: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(run_dir)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(run_dir.rglob("*"))
    }


def test_watch_follows_a_live_demo_to_its_end(workspace: Path, home: Path) -> None:
    """Started while the storm demo runs: the crashes, restarts and give-ups as they
    happen, then the final tree naming every actor; both exit 0."""
    demo = _popen("demo", "storm", "--pace", "0.3", "--workdir", str(workspace), cwd=workspace,
                  home=home)  # fmt: skip
    assert demo.stdout is not None
    first = demo.stdout.readline()
    run_id = RUN_ID.search(first)
    assert run_id, first
    watched = coterie("watch", run_id.group(), "--workdir", str(workspace), cwd=workspace,
                      home=home, timeout=60)  # fmt: skip
    demo.communicate(timeout=60)
    assert watched.returncode == 0, watched.stderr
    assert demo.returncode == 0
    out = watched.stdout
    assert f"coterie watch · demo storm · live · run {run_id.group()}" in out
    assert "✗ parser crashed: ValueError: cannot parse job 2" in out
    assert "↻ parser restarting (attempt 1)" in out
    assert "✗ workers escalated to root" in out
    assert "✗ supervisor root gave up" in out
    for actor in ("root", "workers", "parser", "steady"):
        assert re.search(rf"^\W*{actor}  ", out, re.MULTILINE), actor
    assert re.search(r"parser  stopped ↻\d ✉2", out)  # jobs 2 and 3: never acknowledged
    assert out.rstrip().endswith("completed: demo storm finished")


def test_watch_replays_a_finished_run_at_once_with_speed_zero(workspace: Path, home: Path) -> None:
    run_id, _ = _recorded_run(workspace, [30.0, 30.0, 30.0])
    started = time.monotonic()
    done = coterie("watch", run_id, "--speed", "0", "--workdir", str(workspace), cwd=workspace,
                   home=home)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 30
    assert "coterie watch · demo recorded · replay at once" in done.stdout
    assert "✗ worker crashed: boom" in done.stdout
    assert "↻ worker restarting (attempt 1)" in done.stdout
    assert "root  running" in done.stdout
    assert "worker  running ↻1" in done.stdout


def test_a_replay_takes_the_recorded_time_over_the_speed(workspace: Path, home: Path) -> None:
    """3 s recorded: a replay at speed 1 takes at least 3 s, at speed 3 at least 1 s and
    less than at speed 1 (upper bounds generous: start-up times vary on a loaded
    machine; the exact waits are tests/ui/test_follow.py's)."""
    run_id, _ = _recorded_run(workspace, [1.0, 1.0, 1.0])

    def timed(speed: str) -> float:
        started = time.monotonic()
        done = coterie("watch", run_id, "--speed", speed, "--workdir", str(workspace),
                       cwd=workspace, home=home)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return time.monotonic() - started

    at_once, real, fast = timed("0"), timed("1"), timed("3")
    assert 3.0 <= real < 3.0 + at_once + 3.0
    assert 1.0 <= fast < real
    assert at_once < real - 2.0


def test_watch_writes_nothing_into_the_run(workspace: Path, home: Path) -> None:
    ran = coterie("demo", "strategies", "--pace", "0", "--workdir", str(workspace),
                  cwd=workspace, home=home)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    run_id = RUN_ID.search(ran.stdout)
    assert run_id
    (run_dir,) = (p for p in (_runs(workspace)) if p.name == run_id.group())
    before = _snapshot(run_dir)
    done = coterie("watch", run_id.group(), "--speed", "0", "--workdir", str(workspace),
                   cwd=workspace, home=home)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert _snapshot(run_dir) == before


def _runs(workspace: Path) -> list[Path]:
    from coterie.runs import runs_root

    return sorted(runs_root(workspace).iterdir())


def test_a_torn_last_line_of_a_finished_run_is_left_out(workspace: Path, home: Path) -> None:
    run_id, _ = _recorded_run(workspace, [0.0, 0.0, 0.0], torn=True)
    done = coterie("watch", run_id, "--speed", "0", "--workdir", str(workspace), cwd=workspace,
                   home=home)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("crashed") == 1
    assert "Traceback" not in done.stderr


def test_a_line_being_written_by_a_live_run_is_waited_for(workspace: Path, home: Path) -> None:
    """The run (this test, holding its lock) has written half a line; the watcher waits
    for the rest, shows it, and exits 0 when the run ends."""
    run_id, run_dir = _recorded_run(workspace, [0.0, 0.0, 0.0])
    log = run_dir / "events.jsonl"
    line = Event(5, time.time(), "actor.crashed", {"actor": "worker", "reason": "late"}).to_json()
    with hold_run(run_dir):
        with open(log, "a") as f:
            f.write(line[:20])
        watcher = _popen("watch", run_id, "--workdir", str(workspace), cwd=workspace, home=home)
        assert watcher.stdout is not None
        assert "· live ·" in watcher.stdout.readline()  # it follows: the run holds its lock
        time.sleep(0.5)
        assert watcher.poll() is None
        with open(log, "a") as f:
            f.write(line[20:] + "\n")
        time.sleep(0.5)
    out, err = watcher.communicate(timeout=30)
    assert watcher.returncode == 0, err
    assert "✗ worker crashed: late" in out


def test_ctrl_c_leaves_quietly_with_130(workspace: Path, home: Path) -> None:
    run_id, run_dir = _recorded_run(workspace, [0.0, 0.0, 0.0])
    with hold_run(run_dir):
        watcher = _popen("watch", run_id, "--workdir", str(workspace), cwd=workspace, home=home)
        assert watcher.stdout is not None
        assert "· live ·" in watcher.stdout.readline()
        time.sleep(0.3)
        os.kill(watcher.pid, signal.SIGINT)
        out, err = watcher.communicate(timeout=30)
    assert watcher.returncode == 130
    assert err == ""
    assert "Traceback" not in out


def test_an_unknown_run_is_one_line_and_exit_2(workspace: Path, home: Path) -> None:
    done = coterie("watch", "nosuch", "--workdir", str(workspace), cwd=workspace, home=home)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert "run 'nosuch' not found" in done.stderr


def test_watch_follows_the_paced_team_demo(workspace: Path, home: Path) -> None:
    """The team demo with --pace talks to `coterie mock-server` slowly enough to be
    watched: alice's crash and restart, every agent in the final tree, the board."""
    demo = _popen("demo", "team", "--pace", "0.2", "--workdir", str(workspace), cwd=workspace,
                  home=home)  # fmt: skip
    assert demo.stdout is not None
    for line in demo.stdout:
        if (found := RUN_ID.search(line)) is not None:
            break
    assert found is not None
    watched = coterie("watch", found.group(), "--workdir", str(workspace), cwd=workspace,
                      home=home, timeout=90)  # fmt: skip
    rest, err = demo.communicate(timeout=90)
    assert demo.returncode == 0, rest + err
    assert watched.returncode == 0, watched.stderr
    out = watched.stdout
    assert f"coterie watch · team · live · run {found.group()}" in out
    assert "✗ alice crashed" in out
    assert "↻ alice restarting (attempt 1)" in out
    for actor in ("lead", "alice", "bob", "evaluator"):
        assert re.search(rf"^\W*{actor}  ", out, re.MULTILINE), actor
    assert "alice  exited ↻1" in out
    assert "4 completed" in out
    assert "task_3   completed" in out


def test_sigterm_leaves_quietly_with_143(workspace: Path, home: Path) -> None:
    run_id, run_dir = _recorded_run(workspace, [0.0, 0.0, 0.0])
    with hold_run(run_dir):
        watcher = _popen("watch", run_id, "--workdir", str(workspace), cwd=workspace, home=home)
        assert watcher.stdout is not None
        assert "· live ·" in watcher.stdout.readline()
        watcher.terminate()
        _, err = watcher.communicate(timeout=30)
    assert watcher.returncode == 143
    assert err == ""
