"""The closing summary of a team run: tasks, who did what, turns, tokens, cost, restarts."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from coterie.board import TaskStatus
from coterie.events import read_events
from coterie.ui.spend import spend_by_actor

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.board import Task


#: The token counts each actor's row adds up, as the API's ``usage`` names them.
_TOKENS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
)


def team_summary(run_dir: Path, result: dict[str, Any], tasks: list[Task]) -> dict[str, Any]:
    """*result* (the lead's, as a dict) with the board's tasks and per-actor figures
    taken from the run's whole event log (every process that worked on it).

    ``actors`` maps each agent to ``{turns, input_tokens,
    cache_creation_input_tokens, cache_read_input_tokens, output_tokens,
    cost_usd, restarts, tasks_completed}`` (input is the uncached part, as the
    API counts it); ``num_turns``, ``usage`` and ``total_cost_usd`` become the
    team's totals.
    """
    actors: dict[str, dict[str, Any]] = defaultdict(
        lambda: {
            "turns": 0,
            "input_tokens": 0,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 0,
            "cost_usd": 0.0,
            "restarts": 0,
            "tasks_completed": 0,
        }
    )
    events = list(read_events(run_dir / "events.jsonl"))
    for replier, spent in spend_by_actor(events).items():
        figures = spent.to_json()
        actors[replier].update({key: figures[key] for key in ("turns", *_TOKENS)})
    for event in events:
        name = event.data.get("actor")
        if not isinstance(name, str):
            continue
        if event.type == "agent.result":
            # Each loop's cost is a running total, restored on resume.
            actors[name]["cost_usd"] = float(event.data.get("total_cost_usd", 0.0))
        elif event.type == "actor.restarted":
            actors[name]["restarts"] += 1
    for task in tasks:
        if task.status is TaskStatus.COMPLETED and task.owner:
            actors[task.owner]["tasks_completed"] += 1
    rows = dict(actors)
    usage = dict(result.get("usage") or {})
    for key in _TOKENS:
        usage[key] = sum(r[key] for r in rows.values())
    return {
        **result,
        "num_turns": sum(r["turns"] for r in rows.values()),
        "usage": usage,
        "total_cost_usd": round(sum(r["cost_usd"] for r in rows.values()), 6),
        "tasks": [t.to_json() for t in tasks],
        "actors": rows,
    }
