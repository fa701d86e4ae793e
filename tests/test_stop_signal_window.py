"""A SIGTERM where no run listens for it yet, inside a Trio run (found by bench/chaos.py).

The process-wide SIGTERM/SIGHUP handler raised its exception wherever the
signal landed; inside Trio's own machinery (before a run's signal receiver
is installed, or in a command with none) that was a ``TrioInternalError``
and a traceback, or a half-torn-down run. Now such a signal is handed to
Trio's Ctrl-C handling, which delivers it where it is safe: exit 143, no
traceback. Each trial is a busy Trio program sent SIGTERM from a thread.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.agent.conftest import REPO, clean_env

pytestmark = pytest.mark.slow

SCRIPT = """
import os, signal, sys, threading, trio
from coterie import cli

async def busy():
    async with trio.open_nursery() as nursery:
        for _ in range(50):
            nursery.start_soon(spin)

async def spin():
    while True:
        await trio.sleep(0)

signal.signal(signal.SIGTERM, cli._stop)
threading.Timer(float(sys.argv[1]), os.kill, (os.getpid(), signal.SIGTERM)).start()
try:
    trio.run(busy)
except BaseException as exc:
    code = cli.stop_exit_code(exc)
    if code is None:
        raise
    sys.exit(code)
"""


@pytest.mark.parametrize("delay", [0.05, 0.1, 0.2, 0.3, 0.4, 0.5])
def test_a_stop_signal_in_a_busy_trio_run_ends_it_as_ctrl_c_would(delay: float) -> None:
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT, str(delay)],
            capture_output=True, text=True, timeout=60, cwd=REPO, env=clean_env(),
        )  # fmt: skip
        assert done.returncode == 143, done.stderr
        assert "Traceback" not in done.stderr
        assert "Exception ignored" not in done.stderr
