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
"""

from __future__ import annotations

import argparse
import json
import math
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


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--quick", action="store_true", help="fewer turns and smaller histories")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
