"""How long the inspection commands take on a Redis backend, from a second coterie home.

``python bench/inspect_redis.py [RUNS]``: starts a redis-server on 127.0.0.1
(``tests.redis_server``), runs RUNS scripted team runs on it (default 20),
then times ``runs``, ``runs --json``, ``tasks``, ``inbox lead`` and ``watch
--speed 0`` with ``--backend`` from a coterie home that never saw them
(median of 3 each), and ``runs`` on files for comparison. Each figure is a
whole CLI process, Python's start included. Needs ``redis-server`` on PATH.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.agent.test_resume_cli import write_scenario  # noqa: E402
from tests.redis_server import redis_server  # noqa: E402
from tests.team.test_team_cli import create, write  # noqa: E402


def cli(*args: str, cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    """Run the CLI; its wall time (s) and standard output."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "coterie", *args], cwd=cwd, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"coterie {' '.join(args)}: {done.stderr}")
    return time.monotonic() - started, done.stdout


def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        scenario = write_scenario(
            tmp / "s.json",
            {
                "lead": [
                    {"tool_uses": [create("one", "alice"), create("two", "bob")]},
                    {"text": "planned"},
                    {"text": "both done"},
                ],
                "alice": [write("one.txt", "1"), {"text": "one written"}],
                "bob": [write("two.txt", "2"), {"text": "two written"}],
            },
        )
        with redis_server(tmp / "redis") as server:
            url = server.url
            ws = tmp / "ws"
            ws.mkdir()
            env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
            env.update(PYTHONPATH=str(ROOT), COTERIE_HOME=str(tmp / "home"), HOME=str(tmp))
            for _ in range(runs):
                cli("team", "-p", "--permission-mode", "bypassPermissions", "--scenario",
                    str(scenario), "--backend", url, "go", cwd=ws, env=env)  # fmt: skip
            other = {**env, "COTERIE_HOME": str(tmp / "home2")}
            _, listed = cli("runs", "--json", "--backend", url, cwd=ws, env=other)
            last = json.loads(listed.splitlines()[-1])["run_id"]
            commands = {
                "runs": ["runs"],
                "runs --json": ["runs", "--json"],
                "tasks": ["tasks"],
                "inbox lead": ["inbox", "lead"],
                "watch --speed 0": ["watch", last, "--speed", "0"],
            }
            print(f"{runs} team runs on {url}; each command from a second coterie home")
            for label, args in commands.items():
                times = sorted(cli(*args, "--backend", url, cwd=ws, env=other)[0] for _ in range(3))
                print(f"  {label:16s} median {times[1] * 1000:6.0f} ms")
            on_files = sorted(cli("runs", cwd=ws, env=env)[0] for _ in range(3))
            print(f"  {'runs on files':16s} median {on_files[1] * 1000:6.0f} ms")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
