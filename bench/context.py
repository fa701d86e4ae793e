"""Context benchmark: tokens sent with and without the compaction funnel, and the
cost of the per-turn compaction check as the history grows.

    python bench/context.py [--turns N] [--quick]

1. A long synthetic scenario (default 500 turns; --quick 120): each turn the
   agent calls a tool whose output is drawn from 300 to 50,000 characters
   (Bash's cap). Measured in the same run:
     * baseline: the history grows untouched (what a loop without the funnel
       would send, until the API refuses it);
     * funnel: `Funnel.check` before every call, calibrated from each reply's
       usage, against a 200k window (compact at 80%, aim at 50%).
   Tokens are counted as the scripted model and mock server count them
   (characters of system + messages + tools, / 4).
2. The per-turn time of the compaction check at 100, 1,000 and 10,000
   messages (--quick: 100, 1,000, 5,000), without compaction happening
   (median over 200 turns, --quick 50):
     * baseline: a naive check that serialises the whole history every turn;
     * funnel: `Funnel.check` (stage 1 on the new messages, an O(new) count).
   The funnel's time should stay flat; the naive one grows with the history.
3. The prompt cache (--cache-turns N, default 200; --quick 60): the real CLI runs
   N tool turns (Bash, Read, Grep, TodoWrite) against an in-process mock server,
   and for each request the share of its bytes (tools, system, messages as sent,
   the cache_control markers left out) that repeats the previous request whole,
   between compactions; target >= 0.95. Then a second run in the same
   workspace: whether its system prompt and tools are the same bytes.

    python bench/context.py --cache-only      # just part 3
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coterie.context import Budget, Funnel, FunnelConfig, TokenCounter, check_history
from coterie.context.history import message_chars
from coterie.models import MockServer, parse_scenario, serve_scenario

SYSTEM = "You are a coding agent. " * 40
TOOLS = [
    {
        "name": name,
        "description": f"The {name} tool. " * 20,
        "input_schema": {"type": "object", "properties": {"x": {"type": "string"}}},
    }
    for name in ("Bash", "Read", "Write", "Edit", "Glob", "Grep", "TodoWrite")
]
SIZES = [300, 1_000, 3_000, 8_000, 20_000, 50_000]
FIXED = len(SYSTEM) + len(json.dumps(TOOLS, separators=(",", ":")))


def output(n: int, turn: int) -> str:
    line = f"turn {turn}: a line of tool output, say a test log or a file excerpt\n"
    return (line * (n // len(line) + 1))[:n]


def exchange(turn: int, size: int) -> list[dict[str, Any]]:
    call = {"type": "tool_use", "id": f"t{turn}", "name": "Bash", "input": {"x": f"step {turn}"}}
    result = {"type": "tool_result", "tool_use_id": f"t{turn}", "content": output(size, turn)}
    return [
        {"role": "assistant", "content": [{"type": "text", "text": f"Step {turn}."}, call]},
        {"role": "user", "content": [result]},
    ]


def api_tokens(message_chars_total: int, count: int) -> int:
    """The scripted model's count: JSON characters of system, messages and tools, / 4."""
    return math.ceil((FIXED + message_chars_total + count + 1) / 4)


# -- 1: tokens sent ----------------------------------------------------------------


def baseline_tokens(turns: int, seed: int, window: int) -> dict[str, Any]:
    rng = random.Random(seed)
    first = {"role": "user", "content": [{"type": "text", "text": "Refactor the parser."}]}
    chars, count, sent = message_chars(first), 1, []
    for turn in range(turns):
        sent.append(api_tokens(chars, count))
        for message in exchange(turn, rng.choice(SIZES)):
            chars += message_chars(message)
            count += 1
    over = [turn for turn, tokens in enumerate(sent) if tokens > window]
    return {"sent": sent, "first_refused_turn": over[0] if over else None}


async def funnel_tokens(turns: int, seed: int, budget: Budget, directory: Path) -> dict[str, Any]:
    rng = random.Random(seed)
    funnel = Funnel(
        directory,
        budget=budget,
        config=FunnelConfig(),
        counter=TokenCounter.for_request(SYSTEM, TOOLS),
        fsync=False,
    )
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "Refactor the parser."}]}
    ]
    sent: list[int] = []
    check_time = 0.0
    stages: dict[int, int] = {}
    for turn in range(turns):
        start = time.perf_counter()
        report = await funnel.check(messages)
        check_time += time.perf_counter() - start
        for stage in report.stages:
            stages[stage] = stages.get(stage, 0) + 1
        sent.append(api_tokens(sum(map(message_chars, messages)), len(messages)))
        funnel.record_usage(messages, sent[-1])
        messages += exchange(turn, rng.choice(SIZES))
    check_history(messages)
    return {
        "sent": sent,
        "stages": dict(sorted(stages.items())),
        "check_ms_per_turn": check_time / turns * 1e3,
    }


# -- 2: per-turn check time ----------------------------------------------------------


def history(size: int) -> list[dict[str, Any]]:
    messages = [{"role": "user", "content": [{"type": "text", "text": "Go."}]}]
    turn = 0
    while len(messages) < size:
        messages += exchange(turn, 400)
        turn += 1
    return messages[: size - (size % 2 == 0)]


def naive_check(messages: list[dict[str, Any]], limit: int) -> bool:
    return math.ceil(len(json.dumps(messages, separators=(",", ":"))) / 4) > limit


async def check_times(size: int, rounds: int, directory: Path) -> tuple[float, float]:
    """Median microseconds per turn of ``Funnel.check`` and of the naive check at *size*
    messages (medians: a garbage-collector pass landing in one turn is not the check's).

    Each is timed in its own pass over its own copy of the history, so that
    one does not run on caches the other just flushed.
    """
    limit = 10**12  # never compact: this measures the check itself
    messages = history(size)
    funnel = Funnel(
        directory,
        budget=Budget(window=limit),
        config=FunnelConfig(max_messages=10**9),
        fsync=False,
    )
    await funnel.check(messages)  # the first look measures everything once
    funnel_times = []
    for i in range(rounds):
        funnel.record_usage(messages, 1_000_000 + i)
        messages += exchange(100_000 + i, 400)
        start = time.perf_counter()
        await funnel.check(messages)
        funnel_times.append(time.perf_counter() - start)
    messages = history(size)
    naive_times = []
    for i in range(rounds):
        messages += exchange(100_000 + i, 400)
        start = time.perf_counter()
        naive_check(messages, limit)
        naive_times.append(time.perf_counter() - start)
    return statistics.median(funnel_times) * 1e6, statistics.median(naive_times) * 1e6


# -- 3: the prompt cache ------------------------------------------------------------


def _strip_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip_cache_control(v) for v in value]
    return value


def request_bytes(body: dict[str, Any]) -> tuple[bytes, int]:
    """What the cache keys on, in the API's order (tools, system, messages), and the
    number of messages."""
    body = _strip_cache_control(body)
    parts = [json.dumps(body.get("tools", []), sort_keys=True), json.dumps(body.get("system"))]
    parts += [json.dumps(m, sort_keys=True) for m in body["messages"]]
    return "\n".join(parts).encode(), len(body["messages"])


def common_prefix(a: bytes, b: bytes) -> int:
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:  # binary search on the equality of prefixes: O(n log n) at worst
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def cache_scenario(turns: int) -> dict[str, Any]:
    calls: list[dict[str, Any]] = []
    for i in range(turns):
        kind = i % 4
        if i % 25 == 0:
            todo = [{"content": f"step {i}", "status": "in_progress", "activeForm": f"Doing {i}"}]
            use = {"name": "TodoWrite", "input": {"todos": todo}}
        elif kind == 0:
            use = {"name": "Bash", "input": {"command": f"seq {i} {i + 40}"}}
        elif kind == 1:
            use = {"name": "Read", "input": {"file_path": "src/mod.py"}}
        elif kind == 2:
            use = {"name": "Grep", "input": {"pattern": f"value_{i}", "path": "src"}}
        else:
            use = {"name": "Bash", "input": {"command": f"echo turn {i}; date +%s%N"}}
        calls.append({"text": f"Step {i}.", "tool_uses": [use]})
    calls.append({"text": "done"})
    return {"tracks": {"lead": calls}}


async def _cli(workspace: Path, home: Path, url: str, prompt: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    root = str(Path(__file__).resolve().parents[1])
    env.update(
        HOME=str(home), PYTHONPATH=root, ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="bench-key"
    )
    done = await trio.run_process(
        [sys.executable, "-m", "coterie", "run", "-p", "--permission-mode",
         "bypassPermissions", prompt],
        cwd=workspace, env=env, capture_stdout=True, capture_stderr=True, check=False,
        stdin=b"",
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"the run failed: {done.stderr.decode()[-2000:]}")


async def cache_prefix(turns: int, tmp: Path) -> dict[str, Any]:
    workspace, home = tmp / "ws", tmp / "home"
    (workspace / "src").mkdir(parents=True)
    home.mkdir()
    (workspace / ".git").mkdir()
    (workspace / "CLAUDE.md").write_text("Run the tests with make test. @docs/style.md\n")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "style.md").write_text("Four spaces; no tabs.\n")
    (workspace / "src" / "mod.py").write_text(
        "".join(f"value_{i} = compute(value_{i - 1})\n" for i in range(1, 400))
    )
    scenario = parse_scenario(cache_scenario(turns), source="cache.json")
    second = parse_scenario({"tracks": {"lead": [{"text": "again"}]}}, source="again.json")
    seen: list[dict[str, Any]] = []
    async with trio.open_nursery() as nursery:
        server: MockServer = await nursery.start(serve_scenario, scenario)
        taken: set[int] = set()

        async def collect() -> None:
            while True:
                for request in list(server.requests):
                    if id(request) not in taken and request.path == "/v1/messages":
                        taken.add(id(request))
                        seen.append(json.loads(request.body))
                await trio.sleep(0.002)

        nursery.start_soon(collect)
        await _cli(workspace, home, server.url, "work through the steps")
        await trio.sleep(0.05)
        other: MockServer = await nursery.start(serve_scenario, second)
        await _cli(workspace, home, other.url, "once more")
        later = json.loads(other.requests[-1].body)
        nursery.cancel_scope.cancel()
    shares, prefix_total, byte_total, compactions, broken = [], 0, 0, 0, 0
    previous: tuple[bytes, int] | None = None
    for body in seen:
        current = request_bytes(body)
        if previous is not None:
            notes = (previous[0].count(b"[coterie: "), current[0].count(b"[coterie: "))
            if current[1] <= previous[1] or notes[0] != notes[1]:
                compactions += 1  # the history was compacted: a new prefix starts
            else:
                same = common_prefix(previous[0], current[0])
                broken += same < len(previous[0])
                shares.append(same / len(current[0]))
                prefix_total += same
                byte_total += len(current[0])
        previous = current
    first = _strip_cache_control(seen[0])
    again = _strip_cache_control(later)
    return {
        "requests": len(seen),
        "shares": shares,
        "weighted": prefix_total / byte_total if byte_total else 0.0,
        "compactions": compactions,
        "broken": broken,
        "same_system": first["system"] == again["system"],
        "same_tools": first["tools"] == again["tools"],
    }


def print_cache(turns: int, got: dict[str, Any]) -> None:
    shares = got["shares"]
    print(f"3. prompt cache over a {turns}-turn run (real CLI, mock server)")
    print(
        f"   requests {got['requests']}, pairs compared {len(shares)}, compactions"
        f" {got['compactions']}"
    )
    print(
        f"   share of each request repeating the previous one: min {min(shares):.4f},"
        f" median {statistics.median(shares):.4f}, over all bytes {got['weighted']:.4f}"
        f" (target >= 0.95); under 0.95: {sum(x < 0.95 for x in shares)} (a request"
        " adding a large result to a short history)"
    )
    print(
        f"   requests that did not repeat the previous one whole: {got['broken']}"
        " (what a reminder or a changing system prompt would cause)"
    )
    print(
        f"   a second run in the same workspace: system prompt the same bytes:"
        f" {got['same_system']}, tools the same: {got['same_tools']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--quick", action="store_true", help="fewer turns and smaller histories")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--cache-turns", type=int, default=200)
    parser.add_argument("--cache-only", action="store_true", help="only part 3")
    args = parser.parse_args()
    cache_turns = 60 if args.quick else args.cache_turns
    if args.cache_only:
        with tempfile.TemporaryDirectory(prefix="coterie-cache-") as tmp:
            print_cache(cache_turns, trio.run(cache_prefix, cache_turns, Path(tmp)))
        return
    turns = 120 if args.quick else args.turns
    sizes = (100, 1_000, 5_000) if args.quick else (100, 1_000, 10_000)
    rounds = 50 if args.quick else 200
    budget = Budget(window=200_000, threshold=0.8, target=0.5)
    with tempfile.TemporaryDirectory(prefix="coterie-context-") as tmp:
        base = baseline_tokens(turns, args.seed, budget.window)
        funneled = trio.run(funnel_tokens, turns, args.seed, budget, Path(tmp) / "run")
        trio.run(check_times, sizes[0], rounds, Path(tmp) / "warm-up")  # imports, caches
        times = [trio.run(check_times, n, rounds, Path(tmp) / f"c{n}") for n in sizes]

    print(f"1. input tokens over {turns} turns (tool outputs 300-50,000 chars, 200k window)")
    print(f"   {'':24}{'total sent':>14}{'largest request':>17}{'requests > window':>19}")
    for name, sent in (("baseline (no funnel)", base["sent"]), ("funnel", funneled["sent"])):
        over = sum(tokens > budget.window for tokens in sent)
        print(f"   {name:24}{sum(sent):>14,}{max(sent):>17,}{over:>19,}")
    print(
        f"   funnel / baseline tokens: {sum(funneled['sent']) / sum(base['sent']):.3f}; "
        f"compactions by stage: {funneled['stages']}; "
        f"check incl. compactions: {funneled['check_ms_per_turn']:.2f} ms/turn"
    )
    fits = base["first_refused_turn"]
    if fits is not None:
        ratio = sum(funneled["sent"][:fits]) / sum(base["sent"][:fits])
        print(
            f"   without the funnel the API refuses every request from turn {fits}; over the "
            f"first {fits} turns the funnel sends {ratio:.3f} of the baseline's tokens"
        )
    print()
    print(f"2. per-turn compaction check as the history grows (median of {rounds} turns)")
    print(f"   {'messages':>10}{'funnel.check':>16}{'naive (serialise all)':>24}")
    for n, (funnel_us, naive_us) in zip(sizes, times, strict=True):
        print(f"   {n:>10,}{funnel_us:>13.1f} us{naive_us:>21.1f} us")
    flat = times[-1][0] / times[0][0]
    grows = times[-1][1] / times[0][1]
    print(f"   {sizes[-1]:,} vs {sizes[0]:,} messages: funnel x{flat:.2f}, naive x{grows:.1f}")
    print()
    with tempfile.TemporaryDirectory(prefix="coterie-cache-") as tmp:
        print_cache(cache_turns, trio.run(cache_prefix, cache_turns, Path(tmp)))


if __name__ == "__main__":
    main()
