"""An interactive ``coterie run`` in a pseudo-terminal: a person answers the prompt."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pytest

from tests.agent.conftest import SCENARIOS, clean_env

if TYPE_CHECKING:
    from pathlib import Path


def read_until(fd: int, needle: str, timeout: float = 60) -> str:
    seen = ""
    deadline = time.monotonic() + timeout
    while needle not in seen:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"never saw {needle!r}; got:\n{seen}"
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            try:
                chunk = os.read(fd, 4096).decode(errors="replace")
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
    return seen


@pytest.mark.parametrize(("answer", "created"), [("1", True), ("\x1b", False)])
def test_the_person_at_the_terminal_decides(
    workspace: Path, home: Path, answer: str, created: bool
) -> None:
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "coterie",
            "run",
            "touch it",
            "--scenario",
            str(SCENARIOS / "approve.json"),
        ],
        cwd=workspace,
        env=clean_env(HOME=str(home), COLUMNS="200"),
        stdin=slave,
        stdout=slave,
        stderr=slave,
        close_fds=True,
    )
    os.close(slave)
    try:
        read_until(master, "trust this folder? [y/N]")  # a first run in this folder asks
        os.write(master, b"n\n")
        screen = read_until(master, "choose 1-3")
        assert "touch approved.txt" in screen
        os.write(master, f"{answer}\n".encode())
        screen = read_until(master, "turns")
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
        os.close(master)
    assert (workspace / "approved.txt").exists() is created
    assert "Finished." in screen


def test_a_notification_hook_hears_the_permission_prompt(workspace: Path, home: Path) -> None:
    """Claude Code's Notification event: fired when a permission prompt is shown,
    with the agent named (issue 13)."""
    import json

    log = workspace.parent / "notified.jsonl"
    hook = {"type": "command", "command": f"cat >> {log}; echo >> {log}"}
    (home / ".claude").mkdir(exist_ok=True)
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"Notification": [{"hooks": [hook]}]}})
    )
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "coterie", "run", "touch it", "--scenario",
         str(SCENARIOS / "approve.json")],
        cwd=workspace, env=clean_env(HOME=str(home), COLUMNS="200"),
        stdin=slave, stdout=slave, stderr=slave, close_fds=True,
    )  # fmt: skip
    os.close(slave)
    try:
        read_until(master, "trust this folder? [y/N]")
        os.write(master, b"n\n")
        read_until(master, "choose 1-3")
        os.write(master, b"\x1b\n")
        read_until(master, "turns")
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
        os.close(master)
    (sent,) = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    assert sent["hook_event_name"] == "Notification"
    assert "touch approved.txt" in sent["message"] or "Bash" in sent["message"]
    assert sent["agent"]["name"] == "lead"
