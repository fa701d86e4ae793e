"""The real command line, run as a subprocess in a temporary workspace."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
import trio

from coterie.events import read_events
from coterie.mailbox import PostOffice
from coterie.runs import runs_root

if TYPE_CHECKING:
    from pathlib import Path


def coterie(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "coterie", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_help_explains_the_commands(tmp_path: Path) -> None:
    result = coterie("--help", cwd=tmp_path)
    assert result.returncode == 0
    assert "demo" in result.stdout


@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help_shows_the_default_commands_options_too(tmp_path: Path, flag: str) -> None:
    """As ``claude --help``: ``coterie`` without a COMMAND takes these."""
    result = coterie(flag, cwd=tmp_path)
    assert result.returncode == 0
    commands, options = result.stdout.split("The default command's", 1)
    assert "worker" in commands
    for option in (
        "-p, --print",
        "-c, --continue",
        "-r RUN_ID, --resume RUN_ID",
        "--model",
        "--permission-mode",
        "--output-format",
        "--dangerously-skip-permissions",
    ):
        assert option in options, option  # fmt: skip


def test_no_command_is_a_usage_error(tmp_path: Path) -> None:
    assert coterie(cwd=tmp_path).returncode == 2


def test_an_unknown_demo_is_a_usage_error(tmp_path: Path) -> None:
    result = coterie("demo", "nosuch", cwd=tmp_path)
    assert result.returncode == 2
    assert "invalid choice" in result.stderr


def test_a_workdir_that_is_no_directory_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    for args in (("demo", "--workdir"), ("runs", "--workdir")):
        result = coterie(*args, str(tmp_path / "file"), cwd=tmp_path)
        assert result.returncode == 2
        assert "not a directory" in result.stderr
    result = coterie("runs", "--workdir", str(tmp_path / "absent"), cwd=tmp_path)
    assert (result.returncode, "not a directory" in result.stderr) == (2, True)


def test_the_runtime_demo_crashes_restarts_and_finishes(tmp_path: Path) -> None:
    # A demo makes the folder it is given (docs/lab.md starts so: --workdir /tmp/lab).
    lab = tmp_path / "lab"
    result = coterie("demo", "runtime", "--workdir", str(lab), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "CRASHED" in out
    assert "restarting bob" in out
    assert "delivered again" in out
    assert "6/6 results" in out

    (run_dir,) = (runs_root(lab)).iterdir()
    config = json.loads((run_dir / "config.json").read_text())
    assert config["command"] == "demo"
    types = [e.type for e in read_events(run_dir / "events.jsonl")]
    assert types.count("actor.crashed") == 1
    assert types.count("actor.restarted") == 1
    assert "supervisor.stopped" in types

    async def nothing_left_unacknowledged() -> None:
        post = PostOffice(run_dir / "mailboxes")
        for name in post.names():
            stats = post.open(name).statistics()
            assert (name, stats.pending) == (name, 0)
        await post.aclose()

    trio.run(nothing_left_unacknowledged)
