"""Recording a command's process group before it runs, and killing what a dead
run left behind, with the start-time check that keeps a recycled pid safe."""

from __future__ import annotations

import os
import subprocess
import time
from typing import TYPE_CHECKING

import pytest
import trio

from coterie import procgroups
from coterie.procgroups import records_dir
from coterie.tools._process import run_shell

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """A run directory the commands of a test record their groups in."""
    path = tmp_path / "run"
    path.mkdir()
    return path


def _records(run_dir: Path) -> list[str]:
    return sorted(p.name for p in (run_dir / "procgroups").iterdir())


async def test_the_group_is_recorded_before_the_command_runs_and_forgotten_after(
    run_dir: Path, tmp_path: Path
) -> None:
    seen = tmp_path / "seen"
    # The command itself lists the records: its own group must be there already.
    command = f"ls {run_dir / 'procgroups'} > {seen}; echo $$"
    outcome = await run_shell(
        command, cwd=tmp_path, time_limit=30, output_limit=1000, records=records_dir(run_dir)
    )
    pgid = int(outcome.output.split()[-1])
    start = seen.read_text().split()
    assert [name.partition("-")[0] for name in start] == [str(pgid)]
    assert _records(run_dir) == []


async def test_a_group_that_cannot_be_recorded_runs_nothing(tmp_path: Path) -> None:
    blocker = tmp_path / "run"
    blocker.write_text("a file where the run's directory should be")
    # Recording fails, as on a full disk.
    with pytest.raises(OSError):  # noqa: PT011 - whatever the OS says
        await run_shell(
            f"touch {tmp_path / 'ran'}",
            cwd=tmp_path,
            time_limit=30,
            output_limit=1000,
            records=records_dir(blocker),
        )
    await trio.sleep(0.2)
    assert not (tmp_path / "ran").exists()


async def test_a_cancelled_command_is_killed_and_forgotten(run_dir: Path, tmp_path: Path) -> None:
    with trio.move_on_after(1):
        await run_shell(
            "sleep 300",
            cwd=tmp_path,
            time_limit=30,
            output_limit=1000,
            records=records_dir(run_dir),
        )
    assert _records(run_dir) == []


def _leftover(tmp_path: Path) -> subprocess.Popen[bytes]:
    """A group as a dead run leaves it: its leader and a background child."""
    return subprocess.Popen(
        ["bash", "-c", f"sleep 300 & echo $! > {tmp_path / 'child'}; sleep 300"],
        start_new_session=True,
    )


def _wait_for(path: Path) -> int:
    deadline = time.monotonic() + 10
    while not path.exists() or not path.read_text().strip():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return int(path.read_text())


def test_reap_kills_every_member_of_a_recorded_group(tmp_path: Path) -> None:
    proc = _leftover(tmp_path)
    child = _wait_for(tmp_path / "child")
    procgroups.record(tmp_path / "procgroups", proc.pid)
    assert procgroups.reap_run(tmp_path) == 2
    assert proc.wait(timeout=10) == -9
    assert procgroups.start_time(child) is None or _zombie(child)
    assert _records(tmp_path) == []


def _zombie(pid: int) -> bool:
    with open(f"/proc/{pid}/stat", "rb") as f:
        raw = f.read()
    return raw[raw.rfind(b")") + 2 :].split()[0] in (b"Z", b"X")


@pytest.mark.parametrize("stale", ["start", "boot"])
def test_a_recycled_pid_or_another_boot_is_never_killed(tmp_path: Path, stale: str) -> None:
    proc = _leftover(tmp_path)
    try:
        _wait_for(tmp_path / "child")
        record = procgroups.record(tmp_path / "procgroups", proc.pid)
        # The same number recorded for an earlier process, or on another boot.
        start = record.start - 1 if stale == "start" else record.start
        record.path.rename(tmp_path / "procgroups" / f"{proc.pid}-{start}")
        if stale == "boot":
            (tmp_path / "procgroups" / f"{proc.pid}-{start}").write_text("another-boot\n")
        assert procgroups.reap_run(tmp_path) == 0
        assert proc.poll() is None
        assert _records(tmp_path) == []
    finally:
        os.killpg(proc.pid, 9)
        proc.wait()
