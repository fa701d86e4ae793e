"""What a host costs: the control protocol's round trips per tool call, and an
SDK session's harness time per turn against ``coterie -p``'s.

    python bench/sdk_roundtrip.py [--calls 200] [--rounds 5] [--turns 50] [--quick]

Every run is the CLI as a subprocess against ``coterie mock-server`` (one
server per part, whose lead track holds every run's turns in the order the
runs happen), through ``ANTHROPIC_BASE_URL`` and the real ``anthropic``
client, in a temporary workspace and home. A session run is driven as the
Agent SDK drives it: ``--output-format stream-json --verbose --input-format
stream-json``, an ``initialize`` request, one prompt, the host answering
coterie's control requests at once, and its standard input closed at the
``result`` (the end of the SDK's ``query()``). The host is this script: it
speaks the protocol itself, so its own cost is a JSON line read and written.

1. Round trips. A run makes --calls tool calls, then answers: each a Read
   of a small file (in process, so that a subprocess's noise does not drown
   a millisecond), a.txt and b.txt in turn, with ``--permission-prompt-tool
   stdio`` and an ask rule on ``Read(b.txt)``: the built-in gate allows
   a.txt (reading in the workspace needs no one), the host is asked about
   b.txt (``can_use_tool``) and allows it. Two runs alternate, --rounds times:
   a plain one, and one whose host registered a PreToolUse hook callback on
   Read in ``initialize``, answered ``{}`` on every call (``hook_callback``).
   Per tool call, the host's clock from the ``assistant`` line asking for the
   tool to the ``user`` line with its result (the model is not in it).
   Paired, call by call: can_use_tool = b.txt's call minus the a.txt call
   before it in the same run; hook_callback = an a.txt call of the hooked run
   minus the same call of the plain run of its round; "both" (a hook, then
   the question, as Claude Code does both) = b.txt's of the hooked run minus
   a.txt's of the plain run. "added" is the median and p90 of those
   differences. Target (issue 25): each round trip adds at most 2 ms.

2. Harness time per turn. The same work, --turns model turns (a ``Read`` of
   a small file each, under an allow rule, then the answer), as an SDK
   session and as ``coterie -p`` (with ``--output-format stream-json
   --verbose``, so that the bench reads the same lines), alternated,
   --turn-rounds times. Harness time = the bench's clock from the
   ``system/init`` line to the ``result`` line (start-up and exit left out:
   on a loaded machine they vary by seconds) minus the model's time (the
   result's ``duration_api_ms``: the client's time in the mock server's
   calls), over the turns. Target: the session's within 1.1x of ``-p``'s.
   Beside it, the run's own reckoning ((``duration_ms`` -
   ``duration_api_ms``) / turns), and the median time from one
   ``assistant`` line to the next (a tool call and a model call, the model
   in it: a median, so a moment of load on the machine moves it less).

Nothing is asserted but that every call was asked and every run succeeded:
the figures are printed. --quick: 10 calls, 2 rounds, 10 turns, 1 round (a
smoke run).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
COTERIE = [sys.executable, "-m", "coterie"]
SESSION = ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"]
READ = {"tool_uses": [{"name": "Read", "input": {"file_path": "a.txt"}}]}
DONE = {"text": "done"}
#: Reading b.txt asks (the host, with --permission-prompt-tool stdio); a.txt does not.
ASK_B = {"permissions": {"ask": ["Read(b.txt)"]}}
MODES = ("coterie -p", "SDK session")


def reads(calls: int) -> list[dict[str, Any]]:
    """*calls* turns, each a Read: a.txt, b.txt, a.txt..."""
    files = ("a.txt", "b.txt")
    return [{"tool_uses": [{"name": "Read", "input": {"file_path": files[i % 2]}}]}
            for i in range(calls)]  # fmt: skip


def line(frame: dict[str, Any]) -> str:
    return json.dumps(frame) + "\n"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Place:
    """A workspace, a home and a mock server playing the turns of every run in order
    (``runs``: how many have started)."""

    def __init__(self, root: Path, turns: list[dict[str, Any]]) -> None:
        self.workspace, home = root / "ws", root / "home"
        self.workspace.mkdir()
        home.mkdir()
        for name in ("a.txt", "b.txt"):
            (self.workspace / name).write_text("hello\n")
        scenario = root / "scenario.json"
        scenario.write_text(json.dumps({"name": "sdk-bench", "tracks": {"lead": turns}}))
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
        env.update(PYTHONPATH=str(REPO), HOME=str(home), COTERIE_HOME=str(home / ".coterie"))
        self.server = subprocess.Popen(
            [*COTERIE, "mock-server", "--scenario", str(scenario), "--port", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        assert self.server.stdout is not None
        url = self.server.stdout.readline().strip()
        if not url.startswith("http"):
            raise SystemExit(f"the mock server did not start: {self.server.communicate()[1]}")
        self.env = {**env, "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "bench"}
        # Each run's prompt is its own: the server answers a request it has just
        # answered (the same conversation) again, as a retry, from the same turn.
        self.runs = 0

    def close(self) -> None:
        self.server.terminate()
        self.server.communicate(timeout=10)


class Run:
    """What one run showed the bench, on the bench's clock."""

    def __init__(self) -> None:
        self.spans: list[float] = []  # per tool call: assistant line -> tool result line
        self.turns: list[float] = []  # one assistant line -> the next (a tool, a model call)
        self.asked = 0  # control requests coterie sent
        self.result: dict[str, Any] = {}
        self.inner = 0.0  # the system/init line -> the result line

    def harness(self) -> float:
        """Seconds from init to result that were not the model's."""
        return self.inner - float(self.result["duration_api_ms"]) / 1e3


def drive(place: Place, flags: list[str], hooks: dict[str, Any] | None, *, sdk: bool) -> Run:
    """One run of one prompt, read line by line; with *sdk* driven as the SDK does
    (the host answering every request at once), else as ``coterie -p`` with
    stream-json output (no standard input)."""
    place.runs += 1
    prompt = f"go {place.runs}"
    args = [*SESSION, *flags] if sdk else ["-p", prompt, *SESSION[:3], *flags]
    # Standard error in a file: a pipe nobody reads could fill up and stop the run.
    with tempfile.TemporaryFile("w+") as stderr:
        proc = subprocess.Popen(
            [*COTERIE, *args], cwd=place.workspace, env=place.env, text=True, bufsize=1,
            stdin=subprocess.PIPE if sdk else subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=stderr,
        )  # fmt: skip
        if sdk:
            assert proc.stdin is not None
            initialize = {"subtype": "initialize", **({"hooks": hooks} if hooks else {})}
            proc.stdin.write(line({"type": "control_request", "request_id": "init",
                                   "request": initialize}))  # fmt: skip
            message = {"role": "user", "content": [{"type": "text", "text": prompt}]}
            proc.stdin.write(line({"type": "user", "session_id": "", "message": message,
                                   "parent_tool_use_id": None}))  # fmt: skip
        seen = host(proc)
        proc.wait(timeout=60)
        if proc.returncode != 0 or seen.result.get("subtype") != "success":
            stderr.seek(0)
            raise SystemExit(f"a run failed ({proc.returncode}): {stderr.read()[-2000:]}")
    return seen


def host(proc: subprocess.Popen[str]) -> Run:
    """Read the run's lines to its end, timing them and answering its requests."""
    assert proc.stdout is not None
    seen = Run()
    began = asked_at = replied_at = 0.0
    for text in proc.stdout:
        now = time.perf_counter()
        frame = json.loads(text)
        kind = frame.get("type")
        if kind == "control_request":
            assert proc.stdin is not None
            request = frame["request"]
            seen.asked += 1
            answer = {}
            if request["subtype"] == "can_use_tool":
                answer = {"behavior": "allow", "updatedInput": request["input"]}
            proc.stdin.write(line({"type": "control_response", "response": {
                "subtype": "success", "request_id": frame["request_id"], "response": answer}}))  # fmt: skip
        elif kind == "system" and frame.get("subtype") == "init":
            began = now
        elif kind == "assistant":
            if replied_at:
                seen.turns.append(now - replied_at)
            replied_at = now
            if frame["message"].get("stop_reason") == "tool_use":
                asked_at = now
        elif kind == "user" and asked_at:
            seen.spans.append(now - asked_at)
            asked_at = 0.0
        elif kind == "result":
            seen.inner, seen.result = now - began, frame
            if proc.stdin is not None:
                proc.stdin.close()  # the end of the SDK's query()
    return seen


# -- 1. round trips -------------------------------------------------------------------


def round_trips(calls: int, rounds: int) -> None:
    flags = ["--permission-prompt-tool", "stdio", "--settings", json.dumps(ASK_B)]
    hooks = {"PreToolUse": [{"matcher": "Read", "hookCallbackIds": ["bench"]}]}
    # spans[run kind][round][file]: the calls' spans in order
    spans: dict[str, list[dict[str, list[float]]]] = {"plain": [], "hooked": []}
    with tempfile.TemporaryDirectory(prefix="coterie-sdk-bench-") as tmp:
        place = Place(Path(tmp), [*reads(calls), DONE] * 2 * rounds)
        try:
            for _ in range(rounds):
                for kind in spans:
                    seen = drive(place, flags, hooks if kind == "hooked" else None, sdk=True)
                    asked = calls // 2 + (calls if kind == "hooked" else 0)
                    assert len(seen.spans) == calls, (kind, len(seen.spans))
                    assert seen.asked == asked, (kind, seen.asked)  # each call was asked
                    spans[kind].append({"a.txt": seen.spans[0::2], "b.txt": seen.spans[1::2]})
        finally:
            place.close()
    rows = [  # name, (kind, file) measured, (kind, file) it is paired with
        ("gate", ("plain", "a.txt"), None),
        ("can_use_tool", ("plain", "b.txt"), ("plain", "a.txt")),
        ("hook_callback", ("hooked", "a.txt"), ("plain", "a.txt")),
        ("both", ("hooked", "b.txt"), ("plain", "a.txt")),
    ]
    print(f"1. a round trip through the host, per tool call ({calls} Read calls x {rounds}"
          " rounds of two runs)")  # fmt: skip
    print(f"{'variant':<14} {'median ms':>9} {'p90 ms':>8} {'added: median':>13} {'p90':>7}"
          f" {'diff of medians':>15}  target")  # fmt: skip
    for name, (kind, file), paired in rows:
        mine = [run[file] for run in spans[kind]]
        flat = [s for run in mine for s in run]
        median, p90 = statistics.median(flat) * 1e3, percentile(flat, 0.9) * 1e3
        row = f"{name:<14} {median:>9.2f} {p90:>8.2f}"
        if paired is None:
            print(f"{row} {'(baseline)':>13}")
            continue
        theirs = [run[paired[1]] for run in spans[paired[0]]]
        added = [m - t for ms, ts in zip(mine, theirs, strict=True)
                 for m, t in zip(ms, ts, strict=True)]  # fmt: skip
        base = statistics.median([s for run in theirs for s in run]) * 1e3
        more = statistics.median(added) * 1e3
        target = "" if name == "both" else f"  <= 2 ms: {'met' if more <= 2.0 else 'NOT met'}"
        print(f"{row} {more:>13.2f} {percentile(added, 0.9) * 1e3:>7.2f}"
              f" {median - base:>15.2f}{target}")  # fmt: skip


# -- 2. harness time per turn -----------------------------------------------------------


def harness_per_turn(turns: int, rounds: int) -> None:
    flags = ["--allowedTools", "Read"]
    harness: dict[str, list[float]] = {mode: [] for mode in MODES}
    inner: dict[str, list[float]] = {mode: [] for mode in MODES}
    intervals: dict[str, list[float]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory(prefix="coterie-sdk-bench-") as tmp:
        place = Place(Path(tmp), ([READ] * (turns - 1) + [DONE]) * len(MODES) * rounds)
        try:
            for _ in range(rounds):
                for mode in MODES:
                    run = drive(place, flags, None, sdk=mode == "SDK session")
                    assert run.result["num_turns"] == turns, (mode, run.result)
                    harness[mode].append(run.harness() / turns)
                    intervals[mode] += run.turns
                    result = run.result
                    inner[mode].append((result["duration_ms"] - result["duration_api_ms"]) / turns)
        finally:
            place.close()
    print(f"2. harness time per turn: {turns} model turns (Read, then the answer),"
          f" {rounds} round(s), medians")  # fmt: skip
    print(f"{'run':<12} {'harness ms/turn':>15} {'in-run ms/turn':>14} {'turn ms, model in':>17}")
    for mode in MODES:
        print(f"{mode:<12} {statistics.median(harness[mode]) * 1e3:>15.2f}"
              f" {statistics.median(inner[mode]):>14.2f}"
              f" {statistics.median(intervals[mode]) * 1e3:>17.2f}")  # fmt: skip
    ratio = statistics.median(harness["SDK session"]) / statistics.median(harness["coterie -p"])
    in_run = statistics.median(inner["SDK session"]) / statistics.median(inner["coterie -p"])
    met = "met" if ratio <= 1.1 else "NOT met"
    print(f"SDK session / coterie -p, harness per turn: {ratio:.2f}x (target <= 1.1x: {met});"
          f" in-run: {in_run:.2f}x")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=200, help="tool calls per run, even (part 1)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of part 1")
    parser.add_argument("--turns", type=int, default=50, help="model turns per run (part 2)")
    parser.add_argument("--turn-rounds", type=int, default=15, help="rounds of part 2")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.calls, args.rounds, args.turns, args.turn_rounds = 10, 2, 10, 1
    if args.calls < 2 or args.calls % 2:
        parser.error("--calls: an even number (a.txt and b.txt in turn)")
    print(f"load average at the start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    round_trips(args.calls, args.rounds)
    print()
    harness_per_turn(args.turns, args.turn_rounds)


if __name__ == "__main__":
    main()
