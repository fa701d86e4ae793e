"""What a team costs against one agent doing the same work, through the real SDK path.

    python bench/team_cost.py [--quick] [--team 4] [--latency 0.5] [--memory CHARS]

The work is ``bench/team_latency.py``'s (each turn one ``Write``; a team's
lead creates the tasks, each teammate does its tasks' turns and answers each
task): 4 tasks of 5 turns, and 8 tasks of 1 turn, done by one agent and by a
team of ``--team`` teammates. Every run is the CLI as a subprocess against its
own ``coterie mock-server`` through ``ANTHROPIC_BASE_URL`` and the real
``anthropic`` client, and the mock server answers each request's ``usage``
as a real server's prompt cache would (``coterie/models/promptcache.py``:
what earlier requests of the run marked with ``cache_control`` is read, what
this one marks is written, the rest is input; caches shared by every agent of
the run, as Anthropic's are within an organisation).

Per run, over every model call of every actor (the run's ``agent.message``
events): requests, uncached input, cache writes, cache reads, output, and the
cost priced by ``coterie.models.pricing`` (cache writes at 1.25x input, reads
at 0.1x, output at 5x, on the default model). Then the team's figures over one
agent's. Targets (issue 30): the team's cost at most 1.2x one agent's on the
5-turn work and 1.5x on the 1-turn work; the team's wall time within 1.3x its
critical path (a run at ``--latency`` seconds per call, as
``bench/team_latency.py`` computes it, in the same run).

--quick: 2 tasks of 1 turn, one agent and a team of 2 (a smoke run). --memory: the
workspace has a CLAUDE.md of about that many characters, which every agent's first
message carries (the targets are for none).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import attrs

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from team_latency import chain_calls, measure, run_cli  # noqa: E402

from coterie.models import Usage  # noqa: E402
from coterie.models.pricing import cost_usd  # noqa: E402


@attrs.frozen
class Spend:
    """What one run's model calls cost, over every actor."""

    requests: int
    input: int
    cache_write: int
    cache_read: int
    output: int
    cost: float
    #: Per actor kind (``lead``, ``teammates``, ``agent``): requests and cost.
    by_kind: dict[str, tuple[int, float]]

    @property
    def prompt(self) -> int:
        """Every prompt token, however it was billed."""
        return self.input + self.cache_write + self.cache_read


def read_spend(home: Path) -> Spend:
    """The run's spend from its events (each reply's model and usage)."""
    (events,) = home.glob(".coterie/**/events.jsonl")
    totals = Usage()
    cost = 0.0
    requests = 0
    kinds: dict[str, tuple[int, float]] = {}
    for line in events.read_text().splitlines():
        event = json.loads(line)
        if event.get("type") != "agent.message":
            continue
        data = event.get("data", event)
        raw = data.get("usage") or {}
        usage = Usage(**{k: int(raw.get(k) or 0) for k in attrs.fields_dict(Usage)})
        price = cost_usd(str(data.get("model") or ""), usage)
        totals = totals + usage
        cost += price
        requests += 1
        actor = str(data.get("actor"))
        kind = "lead" if actor == "lead" else "teammates"
        n, c = kinds.get(kind, (0, 0.0))
        kinds[kind] = (n + 1, c + price)
    return Spend(
        requests,
        totals.input_tokens,
        totals.cache_creation_input_tokens,
        totals.cache_read_input_tokens,
        totals.output_tokens,
        cost,
        kinds,
    )


def spend_of(size: int | None, tasks: int, turns: int, memory: str = "") -> Spend:
    _wall, spend = run_cli(size, tasks, turns, 0.0, "batched", read_spend, memory)
    return spend


def project_memory(chars: int) -> str:
    """A CLAUDE.md of about *chars* characters (lines of conventions)."""
    line = "- Keep functions short; name them for what they return; test every branch.\n"
    return "# Conventions\n\n" + line * max(chars // len(line), 1) if chars else ""


def row(label: str, s: Spend) -> str:
    return (
        f"  {label:<12} {s.requests:>4} req  {s.input:>8,} in  {s.cache_write:>8,} write"
        f"  {s.cache_read:>9,} read  {s.output:>6,} out  {s.prompt:>9,} prompt  ${s.cost:.4f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run of 2 tasks of 1 turn")
    parser.add_argument("--team", type=int, default=4, help="teammates (default 4)")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per call (wall time)")
    parser.add_argument(
        "--memory", type=int, default=0, metavar="CHARS",
        help="give the workspace a CLAUDE.md of about this many characters (default none)",
    )  # fmt: skip
    args = parser.parse_args()
    if args.memory < 0:
        parser.error("--memory must be 0 or more")
    memory = project_memory(args.memory)
    works = [(2, 1)] if args.quick else [(4, 5), (8, 1)]
    size = 2 if args.quick else args.team
    limits = {5: 1.2, 1: 1.5}
    verdicts: list[str] = []
    for tasks, turns in works:
        solo, team = spend_of(None, tasks, turns, memory), spend_of(size, tasks, turns, memory)
        print(f"{tasks} tasks of {turns} turn{'s' * (turns != 1)}:")
        print(row("one agent", solo))
        print(row(f"team of {size}", team))
        for kind, (n, cost) in sorted(team.by_kind.items()):
            print(f"    {kind:<10} {n:>4} req  ${cost:.4f}")
        ratio = team.cost / solo.cost
        prompt_ratio = team.prompt / solo.prompt
        print(
            f"  team / one agent: cost {ratio:.2f}x, prompt tokens {prompt_ratio:.2f}x,"
            f" requests {team.requests / solo.requests:.2f}x"
        )
        limit = limits.get(turns)
        if limit is not None and not args.quick:
            met = "met" if ratio <= limit else "NOT met"
            verdicts.append(
                f"  {tasks}x{turns}: team cost {ratio:.2f}x one agent's, target ≤ {limit}x ({met})"
            )
    if not args.quick:
        zero = measure(size, 4, 5, 0.0, "batched", 1)  # the same work at L = 0, just before
        run = attrs.evolve(measure(size, 4, 5, args.latency, "batched", 1), zero=zero.wall)
        critical = run.critical
        met = "met" if run.wall <= 1.3 * critical else "NOT met"
        verdicts.append(
            f"  team wall time {run.wall:.1f} s against its critical path {critical:.1f} s"
            f" ({chain_calls(4, 5, size)} calls x {args.latency:g} s + the work at L = 0):"
            f" {run.wall / critical:.2f}x, target ≤ 1.3x ({met})"
        )
        print("targets:")
        print("\n".join(verdicts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
