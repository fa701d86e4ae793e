"""The latency of an MCP tool call against a built-in tool's, in the same run.

    python bench/mcp_calls.py [--calls 50] [--rounds 3] [--quick]

One ``coterie run -p`` (the real CLI, the scripted model, bypassPermissions,
no user settings) whose lead makes --calls turns alternating a call of the
test suite's stdio MCP server (``mcp__bench__echo``, on the ``mcp``
package's server side) and a Read of a small file, then answers. Each call's
latency is the time from its ``agent.tool_call`` event to its
``agent.tool_result`` (the gate, the tool, the events: what the turn loop
waits for); the model's turns are not counted. Figures are medians and 90th
percentiles per kind over every call of --rounds runs, and the ratio of the
medians. Nothing is asserted: the figures depend on the machine.

--quick: 10 calls, 1 round (a smoke run).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SERVER = REPO / "tests" / "mcpclient" / "mcp_server.py"


def scenario(calls: int) -> dict[str, object]:
    turns: list[dict[str, object]] = []
    for i in range(calls):
        if i % 2 == 0:
            use = {"name": "mcp__bench__echo", "input": {"text": f"call {i}"}}
        else:
            use = {"name": "Read", "input": {"file_path": "small.txt"}}
        turns.append({"tool_uses": [use]})
    turns.append({"text": "done"})
    return {"name": "bench-mcp", "tracks": {"lead": turns}}


def one_run(calls: int) -> dict[str, list[float]]:
    """Seconds per call, by kind (``mcp``, ``builtin``), of one run."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ws, home = root / "ws", root / "home"
        ws.mkdir()
        home.mkdir()
        (ws / "small.txt").write_text("a small file\n" * 10)
        (root / "scenario.json").write_text(json.dumps(scenario(calls)))
        server = {"command": sys.executable, "args": [str(SERVER)]}
        (root / "mcp.json").write_text(json.dumps({"mcpServers": {"bench": server}}))
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
        env.update(HOME=str(home), PYTHONPATH=str(REPO), COTERIE_HOME=str(home / ".coterie"))
        argv = [sys.executable, "-m", "coterie", "run", "bench", "-p"]
        argv += ["--scenario", str(root / "scenario.json"), "--mcp-config", str(root / "mcp.json")]
        argv += ["--permission-mode", "bypassPermissions"]
        done = subprocess.run(
            argv,
            cwd=ws,
            env=env,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(f"the run failed: {done.stderr or done.stdout}")
        [log] = (home / ".coterie").glob("projects/*/runs/*/events.jsonl")
        started: dict[str, float] = {}
        took: dict[str, list[float]] = {"mcp": [], "builtin": []}
        for line in log.read_text().splitlines():
            event = json.loads(line)
            if event["type"] == "agent.tool_call":
                started[event["id"]] = event["ts"]
            elif event["type"] == "agent.tool_result":
                if event["is_error"]:
                    raise SystemExit(f"a call failed: {event['content']}")
                kind = "mcp" if event["name"].startswith("mcp__") else "builtin"
                took[kind].append(event["ts"] - started[event["id"]])
        return took


def p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1] if len(values) > 1 else values[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    report(*((10, 1) if args.quick else (args.calls, args.rounds)))


def report(calls: int, rounds: int) -> None:
    """Measure *rounds* runs of *calls* calls of each kind, and print the figures."""
    took: dict[str, list[float]] = {"mcp": [], "builtin": []}
    for _ in range(rounds):
        for kind, values in one_run(calls).items():
            took[kind].extend(values)
    print(f"{calls} calls per run, {rounds} run(s); latency per tool call (ms)")
    print(f"{'tool':<28}{'calls':>7}{'median':>10}{'p90':>10}")
    labels = {"mcp": "mcp__bench__echo (stdio)", "builtin": "Read (built-in)"}
    for kind in ("mcp", "builtin"):
        values = took[kind]
        median, high = statistics.median(values) * 1000, p90(values) * 1000
        print(f"{labels[kind]:<28}{len(values):>7}{median:>10.2f}{high:>10.2f}")
    ratio = statistics.median(took["mcp"]) / statistics.median(took["builtin"])
    print(f"MCP call / built-in call (medians): {ratio:.1f}x")


if __name__ == "__main__":
    main()
