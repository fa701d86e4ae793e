"""Where a remote team's round trips to Redis go, counted in each process (issue 32).

    python bench/redis_round_trips.py [--teammates N] [--workers W] [--top K]

Runs the team of ``bench/backends.py --team`` (N teammates, one task each: a
Write and a final answer, the model a local ``coterie mock-server``) with the
lead (``coterie team --remote``) and W ``coterie worker`` processes on a Redis
server started here. Each process runs under a small bootstrap that counts,
by the coterie code that made it, every command the Redis client sends
(``execute_command``) and every pipeline it opens (one round trip each,
whatever it holds). Printed: the round trips per task of the lead and of the
workers together, then the K call sites that make the most. Figures are
counts, not times: on this machine one round trip costs the client about
0.2 ms of CPU (coredis under Trio).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backends import team_scenario

from tests.redis_server import redis_server

REPO = Path(__file__).resolve().parents[1]

#: Runs ``python -m coterie ARGS`` counting the Redis client's round trips into
#: the JSON file argv[1] at exit, by (command, the two innermost coterie frames).
COUNTED = """
import atexit, collections, json, sys, traceback
import coredis
counts = collections.Counter()
def site():
    frames = [f for f in traceback.extract_stack() if "/coterie/" in f.filename][-2:]
    return " <- ".join(
        f"{f.name} ({f.filename.rsplit('/coterie/', 1)[1]}:{f.lineno})" for f in reversed(frames)
    )
send = coredis.Redis.execute_command
async def execute_command(self, command, *args, **kwargs):
    name = command.name.decode() if isinstance(command.name, bytes) else str(command.name)
    counts[name.rpartition(".")[2] + "  " + site()] += 1
    return await send(self, command, *args, **kwargs)
coredis.Redis.execute_command = execute_command
opened = coredis.Redis.pipeline
def pipeline(self, *args, **kwargs):
    counts["pipeline  " + site()] += 1
    return opened(self, *args, **kwargs)
coredis.Redis.pipeline = pipeline
out = sys.argv[1]
atexit.register(lambda: open(out, "w").write(json.dumps(counts)))
from coterie.cli import main  # not coterie.entry: its fast exit skips atexit
sys.exit(main(sys.argv[2:]))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--teammates", type=int, default=50, metavar="N")
    parser.add_argument("--workers", type=int, default=4, metavar="W")
    parser.add_argument("--top", type=int, default=15, metavar="K")
    args = parser.parse_args()
    names = [f"mate{i:02d}" for i in range(args.teammates)]
    with tempfile.TemporaryDirectory(prefix="coterie-round-trips-") as tmp:
        directory = Path(tmp)
        scenario = team_scenario(directory / "team.json", names)
        home, workdir = directory / "home", directory / "ws"
        home.mkdir()
        workdir.mkdir()
        (directory / "redis").mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
        env |= {"COTERIE_HOME": str(home), "HOME": str(home), "ANTHROPIC_API_KEY": "k",
                "PYTHONPATH": str(REPO)}  # fmt: skip
        mock = subprocess.Popen(
            [sys.executable, "-m", "coterie", "mock-server", "--scenario", str(scenario)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
        )  # fmt: skip
        assert mock.stdout is not None
        env["ANTHROPIC_BASE_URL"] = mock.stdout.readline().strip()
        outs = [directory / f"counts-{i}.json" for i in range(args.workers + 1)]
        workers: list[subprocess.Popen[bytes]] = []
        try:
            with redis_server(directory / "redis", appendonly=True, appendfsync="always") as s:
                for i in range(args.workers):
                    argv = ["worker", "--backend", s.url, "--capacity", str(len(names)),
                            "--id", f"w{i}", "--workdir", str(workdir),
                            "--permission-mode", "bypassPermissions"]  # fmt: skip
                    workers.append(counted(outs[i + 1], argv, env, workdir))
                time.sleep(2)  # the workers' first heartbeats: every one takes a share
                team = ["team", "-p", "--permission-mode", "bypassPermissions",
                        *[a for n in names for a in ("--teammate", n)],
                        "--backend", s.url, "--remote", "go"]  # fmt: skip
                lead = counted(outs[0], team, env, workdir)
                if lead.wait() != 0:
                    sys.exit(f"the team run failed (exit {lead.returncode})")
                for proc in workers:
                    proc.send_signal(signal.SIGTERM)
                    proc.wait(timeout=60)
        finally:
            for proc in workers:
                if proc.poll() is None:
                    proc.kill()
            mock.terminate()
            mock.wait()
        counts = [collections.Counter(json.loads(out.read_text())) for out in outs]
    tasks = len(names)
    on_workers = sum(counts[1:], collections.Counter())
    print(f"## {tasks} teammates, one task each; the lead and {args.workers} workers on Redis")
    print(f"round trips per task: lead {counts[0].total() / tasks:.1f},"
          f" workers {on_workers.total() / tasks:.1f}")  # fmt: skip
    for title, counter in (("lead", counts[0]), ("workers", on_workers)):
        print(f"### {title}: per task, by call site")
        for where, n in counter.most_common(args.top):
            print(f"{n / tasks:6.1f}  {where}")


def counted(out: Path, argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", COUNTED, str(out), *argv],
        env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


if __name__ == "__main__":
    main()
