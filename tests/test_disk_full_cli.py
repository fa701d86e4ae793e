"""Finding 4 of issue 12: a full disk (workspace and run state on a 1 MiB tmpfs)
stops the run with one clear error and exit 1, never a traceback or a hang,
and once there is space again ``resume`` finishes with nothing lost."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from typing import TYPE_CHECKING, Any

import pytest

from coterie.events import read_events
from coterie.home import HOME_ENV
from coterie.runs import runs_root
from tests.agent.conftest import coterie, home, workspace
from tests.team.test_team_recovery import slow_team

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

__all__ = ["home", "workspace"]  # the fixtures, used by name below

#: Fill the file system but *leave* bytes, so that some writes still fit and
#: others do not (the run must stop at the first that does not).
FILL = "avail=$(df --output=avail -B1 . | tail -1); head -c $((avail-{leave})) /dev/zero > big"


@pytest.fixture
def disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A 1 MiB tmpfs holding the workspace (``ws``) and the coterie home (``home``)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        reason = f"cannot mount a tmpfs here: {done.stderr.strip()}"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    try:
        (mount / "ws").mkdir()
        (mount / "home").mkdir()
        monkeypatch.setenv(HOME_ENV, str(mount / "home"))  # runs_root() below, and the CLI
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _scenario(tmp_path: Path, tracks: dict[str, list[dict[str, Any]]]) -> Path:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"name": "disk-full", "tracks": tracks}))
    return path


def _bash(command: str) -> dict[str, Any]:
    return {"tool_uses": [{"name": "Bash", "input": {"command": command}}]}


def _write(name: str) -> dict[str, Any]:
    content = f"{name} " * 400
    return {"tool_uses": [{"name": "Write", "input": {"file_path": name, "content": content}}]}


def _cli(*args: str, disk: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {HOME_ENV: str(disk / "home")}
    return coterie(*args, cwd=disk / "ws", home=home, env=env, timeout=60)


def _the_run(disk: Path) -> Path:
    (run_dir,) = runs_root((disk / "ws").resolve()).iterdir()
    return run_dir


@pytest.mark.parametrize("leave", [0, 16384, 65536])
def test_a_full_disk_stops_a_run_with_one_clear_error_and_resume_finishes_it(
    disk: Path, home: Path, tmp_path: Path, leave: int
) -> None:
    writes = [f"file{i}.txt" for i in range(6)]  # each ~4 KiB: more than the space left
    steps = [_bash(FILL.format(leave=leave)), *map(_write, writes), {"text": "all written"}]
    scenario = _scenario(tmp_path, {"lead": steps})
    args = ("--scenario", str(scenario), "--permission-mode", "bypassPermissions", "-p")
    first = _cli("run", "write the files", *args, disk=disk, home=home)
    assert first.returncode == 1, first.stderr
    assert "No space left on device" in first.stderr
    assert "Traceback" not in first.stderr
    assert first.stdout == ""  # no result: the run is not over, let alone a success
    run_dir = _the_run(disk)
    listed = _cli("runs", "--json", disk=disk, home=home)
    assert json.loads(listed.stdout)["state"] == "interrupted"

    (disk / "ws" / "big").unlink()
    again = _cli("resume", run_dir.name, "-p", disk=disk, home=home)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "all written"
    # Nothing acknowledged is lost: every Write reported done is on disk, whole.
    # (The scripted model serves its next step for a request it has not seen, so a
    # step whose answer was never recorded is skipped, not repeated: what a real
    # model would redo is not the point here.)
    done = _written(run_dir)
    assert done, "no Write was done after the resume"
    for path in done:
        name = os.path.basename(path)
        assert (disk / "ws" / name).read_text() == f"{name} " * 400


def _written(run_dir: Path) -> list[str]:
    """The files the run's Write calls reported as written, from its event log."""
    calls: dict[str, str] = {}
    written: list[str] = []
    for event in read_events(run_dir / "events.jsonl"):
        if event.type == "agent.tool_call" and event.data.get("name") == "Write":
            calls[event.data["id"]] = event.data["input"]["file_path"]
        elif event.type == "agent.tool_result" and event.data["id"] in calls:
            written.extend([] if event.data.get("is_error") else [calls[event.data["id"]]])
    return written


def test_a_team_on_a_full_disk_stops_with_one_clear_error_and_resumes(
    disk: Path, home: Path, tmp_path: Path
) -> None:
    tracks = slow_team(4)
    tracks["alice"][1] = _bash(FILL.format(leave=8192))
    scenario = _scenario(tmp_path, tracks)
    args = ("--scenario", str(scenario), "--permission-mode", "bypassPermissions", "-p")
    first = _cli("team", "go", *args, "--output-format", "json", disk=disk, home=home)
    assert first.returncode == 1, first.stderr
    assert "No space left on device" in first.stderr
    assert "Traceback" not in first.stderr

    (disk / "ws" / "big").unlink()
    again = _cli(
        "resume", _the_run(disk).name, "-p", "--output-format", "json", disk=disk, home=home
    )
    assert again.returncode == 0, again.stderr
    out = json.loads(again.stdout)
    assert out["is_error"] is False
    assert [t["status"] for t in out["tasks"]] == ["completed"] * 4


def test_the_event_log_refers_to_a_large_write_instead_of_copying_it(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    content = "0123456789abcdef" * 8192  # 128 KiB
    step = {"tool_uses": [{"name": "Write", "input": {"file_path": "big.txt", "content": content}}]}
    scenario = _scenario(tmp_path, {"lead": [step, {"text": "written"}]})
    args = ("--scenario", str(scenario), "--permission-mode", "bypassPermissions", "-p")
    result = coterie("run", "write it", *args, cwd=workspace, home=home)
    assert result.returncode == 0, result.stderr
    assert (workspace / "big.txt").read_text() == content
    (run_dir,) = runs_root(workspace).iterdir()
    log = (run_dir / "events.jsonl").read_text()
    assert content not in log
    assert len(log) < len(content) // 4
    (call,) = [e for e in read_events(run_dir / "events.jsonl") if e.type == "agent.tool_call"]
    reference = call.data["input"]["content"]
    assert reference["chars"] == len(content)
    assert reference["sha256"] == hashlib.sha256(content.encode()).hexdigest()
