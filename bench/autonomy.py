"""What the autonomy services cost with the scripted model: Auto Mode and --goal.

    python bench/autonomy.py [--actions 25,100,400] [--checks 10,50,200]
                             [--rounds 5] [--quick]

Every run is in process (``coterie.open_agent`` in ``trio.run``), in a fresh
temporary workspace, with the project's defaults (file mailboxes, durable
transcript, event log, the scripted model keeping its cursors in a state file
fsynced each turn, as ``coterie run --scenario`` does) and no user settings.
Only the queries are timed (not opening or closing the session): wall time
and process CPU (``time.process_time``: all threads, so the fsync worker
threads too; CPU is the steadier figure on a machine whose disk is shared).
Each figure is the median of --rounds runs, the variants of a size
interleaved. "+fsyncs" counts ``os.fsync``/``os.fdatasync`` calls beyond the
baseline's. "model" is the scripted model's own CPU on the service's track
(choosing the turn, writing its state file: what a real model's latency
replaces); "harness" is the rest of the added CPU.

1. Added latency per classified action. N turns each calling Bash ``touch done.txt`` (``true`` is read-only now and skips the classifier),
   then an answer, in ``bypassPermissions`` (the baseline) and in ``auto``
   with a classifier track answering ``<block>no</block>`` each time (stage
   1 allows), and again with ``<block>yes</block>`` then ``<block>no</block>``
   (stage 1 blocks, stage 2 clears: two classifier calls). What is added:
   the gate, the sanitised transcript (built from the whole history at every
   action), the round trip through the classifier's durable mailbox, the
   classifier's model call(s), the events.

2. Added latency per goal check. N lead turns: as a baseline, one query
   whose turns are chained by a TodoWrite call each (the cheapest tool);
   with ``goal=...``, one query whose evaluator answers "not met" N-1 times,
   then "met" (N checks, each reason fed back as the lead's next user
   message). Also against N separate queries (the same transcript shape as
   the goal's: a user text and an answer per turn), which is what a person
   re-prompting by hand would cost.

3. The share of actions that skip the classifier, on a scripted coding
   session in a small Python project (41 tool calls: orient with Glob, Read
   and TodoWrite; then, for each of 8 modules, Grep for its TODO, Read it,
   Edit it, check it with Bash; a TodoWrite every two modules; a final Bash
   and Read), run in ``auto``: ``auto_mode.decision`` events against tool
   calls, and its time against ``bypassPermissions``.

--quick: N = 10 and 25 actions, 5 and 10 checks, 2 rounds (a smoke run).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coterie import open_agent
from coterie.events import read_events
from coterie.models import ScriptedModel, load_scenario
from coterie.runs import runs_root

ALLOW = {"text": "<block>no</block>"}
FLAG = {"text": "<block>yes</block>"}
USAGE = {"input_tokens": 100, "output_tokens": 20}
READ_ONLY = frozenset({"Read", "Glob", "Grep", "TodoWrite", "TaskList", "TaskGet"})


# -- instruments -------------------------------------------------------------------


class SyncCounter:
    """Counts ``os.fsync`` and ``os.fdatasync`` calls (any thread) while installed."""

    def __init__(self) -> None:
        self.count = 0
        self._originals = (os.fsync, os.fdatasync)

    def install(self) -> None:
        fsync, fdatasync = self._originals

        def counted_fsync(fd: Any) -> None:
            self.count += 1
            fsync(fd)

        def counted_fdatasync(fd: Any) -> None:
            self.count += 1
            fdatasync(fd)

        os.fsync, os.fdatasync = counted_fsync, counted_fdatasync


SYNCS = SyncCounter()


class TimedPlayer:
    """Stands in for the scripted model's scenario player and times it per role.

    The player is the scripted model's own work (choose the turn, write and
    fsync the state file); ``ScriptedModel.complete`` yields before it, so it
    cannot be timed from outside without counting other tasks' work.
    """

    def __init__(self, player: Any) -> None:
        self.player = player
        self.wall: defaultdict[str, float] = defaultdict(float)
        self.cpu: defaultdict[str, float] = defaultdict(float)
        self.calls: Counter[str] = Counter()

    @property
    def cursors(self) -> dict[str, int]:
        return dict(self.player.cursors)

    def next_turn(self, actor: str, role: str, *args: Any, **kwargs: Any) -> Any:
        start, cpu = time.perf_counter(), time.process_time()
        try:
            return self.player.next_turn(actor, role, *args, **kwargs)
        finally:
            self.wall[role] += time.perf_counter() - start
            self.cpu[role] += time.process_time() - cpu
            self.calls[role] += 1


def timed_model(scenario: Path, state: Path) -> tuple[ScriptedModel, TimedPlayer]:
    """The scripted model as ``coterie run --scenario`` builds it, its player timed."""
    model = ScriptedModel(load_scenario(scenario), state_path=state)
    player = TimedPlayer(model._player)
    model._player = player  # type: ignore[assignment]
    return model, player


class Outcome:
    """One timed run of the query(ies): wall and process CPU seconds (all threads), the
    fsyncs, the scripted model's own time per role, the run's events."""

    def __init__(
        self, wall: float, cpu: float, syncs: int, player: TimedPlayer, events: list[Any]
    ) -> None:
        self.wall, self.cpu, self.syncs = wall, cpu, syncs
        self.model_wall, self.model_cpu = dict(player.wall), dict(player.cpu)
        self.events = events


def run(
    tracks: dict[str, list[dict[str, Any]]],
    *,
    mode: str,
    prompts: list[str],
    goal: str | None = None,
    files: dict[str, str] | None = None,
) -> Outcome:
    """Run *prompts* (one query each) on a scenario of *tracks*, in a fresh workspace."""
    with tempfile.TemporaryDirectory(prefix="coterie-autonomy-") as tmp:
        root = Path(tmp)
        workdir = root / "ws"
        workdir.mkdir()
        for name, text in (files or {}).items():
            (workdir / name).parent.mkdir(parents=True, exist_ok=True)
            (workdir / name).write_text(text)
        (root / "settings.json").write_text("{}")
        scenario = root / "scenario.json"
        scenario.write_text(json.dumps({"name": "autonomy-bench", "tracks": tracks}))
        model, player = timed_model(scenario, root / "scenario-state.json")

        async def go() -> tuple[float, float, int]:
            async with open_agent(
                workdir,
                model=model,
                permission_mode=mode,
                goal=goal,
                max_goal_iterations=len(tracks["lead"]) + 1,
                user_settings=root / "settings.json",
            ) as session:
                start, cpu, SYNCS.count = time.perf_counter(), time.process_time(), 0
                for prompt in prompts:
                    result = await session.query(prompt)
                    assert not result.is_error, result
                return time.perf_counter() - start, time.process_time() - cpu, SYNCS.count

        wall, cpu, syncs = trio.run(go)
        (run_dir,) = runs_root(workdir).iterdir()
        events = list(read_events(run_dir / "events.jsonl"))
    return Outcome(wall, cpu, syncs, player, events)


def median_runs(make: dict[str, Any], rounds: int) -> dict[str, list[Outcome]]:
    """Run every variant of *make* (name -> zero-argument function) *rounds* times,
    interleaved."""
    out: dict[str, list[Outcome]] = {name: [] for name in make}
    for _ in range(rounds):
        for name, fn in make.items():
            out[name].append(fn())
    return out


def med(values: list[float]) -> float:
    return statistics.median(values)


def decisions(outcome: Outcome) -> list[dict[str, Any]]:
    return [e.data for e in outcome.events if e.type == "auto_mode.decision"]


HEADER = (
    f"{'N':>5}  {'variant':<26} {'wall':>8} {'CPU':>8} {'+wall':>8} {'+CPU':>8}"
    f" {'model':>8} {'harness':>8} {'+fsyncs':>8} {'wall':>7} {'CPU':>7}"
)
UNITS = (
    f"{'':>5}  {'':<26} {'ms/' + '{u}':>8} {'ms/' + '{u}':>8} {'ms/' + '{a}':>8}"
    f" {'ms/' + '{a}':>8} {'CPU ms':>8} {'CPU ms':>8} {'/' + '{a}':>8} {'ratio':>7} {'ratio':>7}"
)


def table(unit: str, added_unit: str) -> None:
    """The header of a table whose rows are per *unit* and whose additions per *added_unit*."""
    print(HEADER)
    print(UNITS.format(u=unit, a=added_unit))


def row(n: int, name: str, runs: list[Outcome], base: list[Outcome] | None, role: str) -> None:
    """One variant: medians per unit; against *base*: what it adds per unit, the scripted
    model's own CPU on *role* (what a real model's latency replaces) and the rest (harness)."""
    wall = med([o.wall for o in runs]) / n * 1e3
    cpu = med([o.cpu for o in runs]) / n * 1e3
    if base is None:
        print(f"{n:>5}  {name:<26} {wall:>8.2f} {cpu:>8.2f}")
        return
    base_wall = med([o.wall for o in base]) / n * 1e3
    base_cpu = med([o.cpu for o in base]) / n * 1e3
    model = med([o.model_cpu.get(role, 0.0) for o in runs]) / n * 1e3
    syncs = (med([o.syncs for o in runs]) - med([o.syncs for o in base])) / n
    print(
        f"{n:>5}  {name:<26} {wall:>8.2f} {cpu:>8.2f} {wall - base_wall:>8.2f}"
        f" {cpu - base_cpu:>8.2f} {model:>8.2f} {cpu - base_cpu - model:>8.2f} {syncs:>8.1f}"
        f" {wall / base_wall:>6.2f}x {cpu / base_cpu:>6.2f}x"
    )


# -- 1. classified actions ---------------------------------------------------------


def bash_tracks(n: int, classifier: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    lead = [
        {"tool_uses": [{"name": "Bash", "input": {"command": "touch done.txt"}}], "usage": USAGE}
        for _ in range(n)
    ]
    return {"lead": [*lead, {"text": "done", "usage": USAGE}], "classifier": classifier}


def actions(sizes: list[int], rounds: int) -> None:
    print("1. added latency per classified action: N Bash `touch` calls, one per turn")
    table("act", "act")
    for n in sizes:
        one = [dict(ALLOW, usage=USAGE) for _ in range(n)]
        two = [dict(t, usage=USAGE) for _ in range(n) for t in (FLAG, ALLOW)]
        runs = median_runs(
            {
                "bypass": lambda n=n: run(bash_tracks(n, []), mode="bypassPermissions",
                                          prompts=["go"]),
                "auto": lambda n=n, one=one: run(bash_tracks(n, one), mode="auto",
                                                 prompts=["go"]),
                "two": lambda n=n, two=two: run(bash_tracks(n, two), mode="auto",
                                                prompts=["go"]),
            },
            rounds,
        )  # fmt: skip
        for outcome in runs["auto"] + runs["two"]:
            got = decisions(outcome)
            assert len(got) == n, got[:3]
            assert not any(d["block"] for d in got), got[:3]
        row(n, "bypassPermissions", runs["bypass"], None, "classifier")
        row(n, "auto, stage 1 allows", runs["auto"], runs["bypass"], "classifier")
        row(n, "auto, stage 2 clears", runs["two"], runs["bypass"], "classifier")
    print()


# -- 2. goal checks ----------------------------------------------------------------


def chained(n: int) -> list[dict[str, Any]]:
    """N lead turns in one request: N-1 each calling TodoWrite (the cheapest tool), then
    an answer."""
    todo = {"name": "TodoWrite", "input": {"todos": []}}
    turns = [{"text": f"step {i} done", "tool_uses": [todo], "usage": USAGE} for i in range(n - 1)]
    return [*turns, {"text": "all done", "usage": USAGE}]


def goal_checks(sizes: list[int], rounds: int) -> None:
    print("2. added latency per goal check: N lead turns")
    table("turn", "chk")
    for n in sizes:
        lead = [{"text": f"step {i} done", "usage": USAGE} for i in range(n)]
        verdicts = [
            {
                "text": json.dumps({"ok": False, "reason": f"step {i + 1} is missing"}),
                "usage": USAGE,
            }
            for i in range(n - 1)
        ] + [{"text": json.dumps({"ok": True, "reason": "all steps done"}), "usage": USAGE}]
        runs = median_runs(
            {
                "chained": lambda n=n: run(
                    {"lead": chained(n)}, mode="bypassPermissions", prompts=["do every step"],
                ),
                "queries": lambda lead=lead, n=n: run(
                    {"lead": lead}, mode="bypassPermissions",
                    prompts=[f"do step {i}" for i in range(n)],
                ),
                "goal": lambda lead=lead, verdicts=verdicts: run(
                    {"lead": lead, "evaluator": verdicts}, mode="bypassPermissions",
                    prompts=["do every step"], goal="every step is done",
                ),
            },
            rounds,
        )  # fmt: skip
        for outcome in runs["goal"]:
            checked = [e.data["status"] for e in outcome.events if e.type == "goal.checked"]
            assert checked == ["not_met"] * (n - 1) + ["met"], checked
        row(n, "one query, TodoWrite chain", runs["chained"], None, "evaluator")
        row(n, "--goal, N checks", runs["goal"], runs["chained"], "evaluator")
        row(n, "N queries", runs["queries"], None, "evaluator")
        row(n, "--goal against N queries", runs["goal"], runs["queries"], "evaluator")
    print()


# -- 3. a realistic session --------------------------------------------------------

MODULES = 8


def project() -> dict[str, str]:
    files = {"README.md": "# calc\n\nA small calculator package.\n"}
    for k in range(MODULES):
        files[f"calc/mod{k}.py"] = (
            f'"""Module {k}."""\n\n\ndef f{k}(x):\n    # TODO-{k}: handle None\n    return x + {k}\n'
        )
    return files


def call(name: str, **data: Any) -> dict[str, Any]:
    return {"name": name, "input": data}


def todos(done: int) -> dict[str, Any]:
    items = [
        {
            "content": f"fix mod{k}",
            "status": "completed" if k < done else "pending",
            "activeForm": f"fixing mod{k}",
        }
        for k in range(MODULES)
    ]
    return call("TodoWrite", todos=items)


def session_tracks() -> list[dict[str, Any]]:
    """The lead's turns: one or more tool calls each (parallel reads, as models do)."""
    turns: list[list[dict[str, Any]]] = [
        [call("Glob", pattern="**/*.py"), call("Read", file_path="README.md")],
        [todos(0)],
    ]
    for k in range(MODULES):
        path = f"calc/mod{k}.py"
        turns.append([call("Grep", pattern=f"TODO-{k}"), call("Read", file_path=path)])
        turns.append(
            [call("Edit", file_path=path, old_string=f"    # TODO-{k}: handle None\n",
                  new_string="    if x is None:\n        return None\n")]
        )  # fmt: skip
        turns.append([call("Bash", command=f"grep -c 'is None' {path}")])
        if k % 2 == 1:
            turns.append([todos(k + 1)])
    turns.append([call("Bash", command="ls calc")])
    turns.append([call("Read", file_path="calc/mod0.py")])
    lead = [{"tool_uses": t, "usage": USAGE} for t in turns]
    return [*lead, {"text": "All TODOs handled.", "usage": USAGE}]


def realistic(rounds: int) -> None:
    lead = session_tracks()
    calls = [c["name"] for turn in lead for c in turn.get("tool_uses", [])]
    classified = sum(name not in READ_ONLY for name in calls)
    classifier = [dict(ALLOW, usage=USAGE) for _ in range(classified)]
    runs = median_runs(
        {
            "bypass": lambda: run({"lead": lead}, mode="bypassPermissions", prompts=["fix TODOs"],
                                  files=project()),
            "auto": lambda: run({"lead": lead, "classifier": classifier}, mode="auto",
                                prompts=["fix TODOs"], files=project()),
        },
        rounds,
    )  # fmt: skip
    outcome = runs["auto"][0]
    results = [e.data for e in outcome.events if e.type == "agent.tool_result"]
    assert len(results) == len(calls), results
    assert not any(r["is_error"] for r in results), [r for r in results if r["is_error"]]
    got = Counter(d["tool"] for d in decisions(outcome))
    mix = Counter(calls)
    print(f"3. a scripted coding session: {len(calls)} tool calls in {len(lead) - 1} turns")
    print("   tool        calls  classified")
    for name in ("Read", "Grep", "Glob", "TodoWrite", "Edit", "Bash"):
        print(f"   {name:<10} {mix[name]:>6} {got[name]:>11}")
    total = sum(got.values())
    print(
        f"   skipped the classifier: {len(calls) - total}/{len(calls)}"
        f" = {(len(calls) - total) / len(calls):.0%}  (classified: {total})"
    )
    for what, key in (("wall", "wall"), ("CPU", "cpu")):
        base = med([getattr(o, key) for o in runs["bypass"]])
        auto = med([getattr(o, key) for o in runs["auto"]])
        print(
            f"   {what:<4} bypass {base * 1e3:6.1f} ms, auto {auto * 1e3:6.1f} ms ({auto / base:.2f}x):"
            f" {(auto - base) / max(total, 1) * 1e3:.2f} ms per classified action,"
            f" {(auto - base) / len(calls) * 1e3:.2f} ms per tool call"
        )


def sizes(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--actions", default="25,100,400", help="sizes N for part 1")
    parser.add_argument("--checks", default="10,50,200", help="sizes N for part 2")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    SYNCS.install()
    if args.quick:
        args.actions, args.checks, args.rounds = "10,25", "5,10", 2
    actions(sizes(args.actions), args.rounds)
    goal_checks(sizes(args.checks), args.rounds)
    realistic(args.rounds)


if __name__ == "__main__":
    # The runs' state goes to a coterie home of the bench's own, not the user's
    # (child processes inherit it).
    os.environ.setdefault("COTERIE_HOME", tempfile.mkdtemp(prefix="coterie-bench-home-"))
    main()
