"""How fast the conversation answers the person: start-up and Ctrl-C.

    python bench/interactive.py [--rounds 3]

Drives the real CLI in a pseudo-terminal (``coterie --scenario S
--permission-mode bypassPermissions`` in a fresh trusted workspace, as the
tests in tests/interactive do). Reports the time from the start of the
process to the first prompt, and for each round the time from Ctrl-C (SIGINT
to the process group, as a terminal sends it) while a Bash ``sleep 300`` runs
to the next prompt: the tool's process group killed, the interruption
recorded in the transcript and the run's state, the line editor back.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))

from tests.agent.conftest import coterie, wait_for
from tests.interactive.test_conversation_cli import Terminal

SLEEP = {"tool_uses": [{"name": "Bash", "input": {"command": "touch started; sleep 300"}}]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ws, home = root / "ws", root / "home"
        ws.mkdir()
        home.mkdir()
        os.environ.setdefault("COTERIE_HOME", str(root / "coterie-home"))
        coterie("trust", cwd=ws, home=home)
        scenario = root / "s.json"
        turns = [SLEEP, {"text": "ok"}] * rounds
        scenario.write_text(json.dumps({"tracks": {"lead": turns}}))
        began = time.monotonic()
        term = Terminal(
            "--scenario", str(scenario), "--permission-mode", "bypassPermissions", cwd=ws, home=home
        )
        term.prompt()
        print(f"start to the first prompt: {time.monotonic() - began:.2f} s")
        for _ in range(rounds):
            (ws / "started").unlink(missing_ok=True)
            term.type("sleep\r")
            wait_for(ws / "started", term.proc, "the tool never started", settle=0.1)
            pressed = time.monotonic()
            os.killpg(term.proc.pid, signal.SIGINT)
            term.wait_for("interrupted by user")
            term.prompt()
            print(f"Ctrl-C to the next prompt: {time.monotonic() - pressed:.3f} s")
            term.type("go on\r")
            term.wait_for("ok")
            term.prompt()
        term.type("/exit\r")
        assert term.close() == 0


if __name__ == "__main__":
    main()
