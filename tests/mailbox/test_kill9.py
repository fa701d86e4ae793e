"""kill -9 a sending process at random moments: every send that returned survives."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import trio

from coterie.mailbox import open_file_mailbox

# 12 rounds per policy in the suite; COTERIE_KILL9_ROUNDS=200 for a long soak.
ROUNDS = int(os.environ.get("COTERIE_KILL9_ROUNDS", "12"))


def run_and_kill(directory: Path, durability: str, senders: int, rng: random.Random) -> list[str]:
    """Start a sender, kill -9 it after a random delay; return the ids it printed."""
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.mailbox.kill9_sender",
            str(directory),
            durability,
            str(senders),
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parents[2],
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    time.sleep(rng.uniform(0.0, 0.15))
    os.kill(child.pid, signal.SIGKILL)
    out, _ = child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL
    # The last line may itself be torn by the kill; only complete lines count.
    return [line for line in out.split("\n")[:-1] if line]


@pytest.mark.slow
@pytest.mark.parametrize(("durability", "senders"), [("always", 1), ("batch", 8)])
def test_every_returned_send_survives_kill_9(tmp_path: Path, durability: str, senders: int) -> None:
    rng = random.Random(f"{durability}-{os.getpid()}")
    directory = tmp_path / "sink"
    acknowledged: set[str] = set()
    total = 0
    for _ in range(ROUNDS):
        printed = run_and_kill(directory, durability, senders, rng)
        total += len(printed)

        async def check(printed: list[str]) -> None:
            box = open_file_mailbox(directory)
            seen: list[str] = []
            while True:
                try:
                    delivery = box.receive_nowait()
                except trio.WouldBlock:
                    break
                seen.append(delivery.message.id)
                await box.ack(delivery)
            box.close()
            assert len(seen) == len(set(seen)), "a message was delivered twice"
            assert not (set(seen) & acknowledged), "an acknowledged message came back"
            missing = set(printed) - set(seen)
            assert not missing, f"{len(missing)} of {len(printed)} returned sends lost"
            acknowledged.update(seen)

        trio.run(check, printed)
    assert total > ROUNDS  # the test really sent something
    print(f"kill -9 {durability}: {ROUNDS} rounds, {total} returned sends, none lost")
