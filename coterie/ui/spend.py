"""What a request, and each actor of a run, spent: counted from the replies they received.

A run's result carries the lead's totals since the run began (its ``usage``
and ``total_cost_usd`` grow over a conversation's requests), while its
``num_turns`` counts this request's turns only. The line the console prints
after each request says what this request cost, so it counts the
``agent.message`` events of the request: every reply of every agent (the
lead and its subagents), each priced as the run's ledger prices it
(:func:`coterie.models.pricing.cost_usd` of the reply's model and usage).
Pure: fed events, asked for the sum.

:class:`ActorSpend` is one actor's share of a run (its turns, the four kinds
of tokens the API counts, and the dollars), as ``/cost`` and the observer
show it; :func:`spend_by_actor` folds a run's events into one per actor.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from coterie.models import Usage
from coterie.models.pricing import cost_usd

if TYPE_CHECKING:
    from coterie.events import Event

__all__ = ["ActorSpend", "Spend", "SpendCounter", "spend_by_actor", "spend_lines"]


@attrs.frozen
class Spend:
    """Tokens and dollars of some model calls."""

    calls: int = 0
    usage: Usage = attrs.field(factory=Usage)
    cost_usd: float = 0.0


@attrs.define
class SpendCounter:
    """Sums the replies of the request under way; :meth:`take` ends it."""

    _calls: int = 0
    _usage: Usage = attrs.field(factory=Usage)
    _cost: float = 0.0

    def event(self, event: Event) -> None:
        """Count *event* if it is a reply (an ``agent.message`` with its usage)."""
        if event.type != "agent.message":
            return
        usage = _usage(event.data.get("usage"))
        if usage is None:
            return
        self._calls += 1
        self._usage = self._usage + usage
        self._cost += cost_usd(str(event.data.get("model") or ""), usage)

    def take(self) -> Spend:
        """What was counted since the last call, and start counting afresh."""
        spent = Spend(self._calls, self._usage, self._cost)
        self._calls, self._usage, self._cost = 0, Usage(), 0.0
        return spent


def _usage(data: Any) -> Usage | None:
    if not isinstance(data, dict):
        return None
    fields = {f.name for f in attrs.fields(Usage)}
    try:
        return Usage(**{k: int(v) for k, v in data.items() if k in fields})
    except (TypeError, ValueError):
        return None


@attrs.define
class ActorSpend:
    """One actor's turns, tokens and cost so far (see the module docstring)."""

    turns: int = 0
    usage: Usage = attrs.field(factory=Usage)
    cost_usd: float = 0.0

    def add(self, model: str, usage: Mapping[str, Any]) -> None:
        """Count one reply of *model* that used *usage* (the API's usage fields)."""
        counts = Usage.from_api(dict(usage))  # the searches too, priced per search
        self.turns += 1
        self.usage = self.usage + counts
        self.cost_usd += cost_usd(model, counts)

    def to_json(self) -> dict[str, Any]:
        """Turns, the API's four token counts (input: the uncached part) and USD."""
        return {
            "turns": self.turns,
            "input_tokens": self.usage.input_tokens,
            "cache_creation_input_tokens": self.usage.cache_creation_input_tokens,
            "cache_read_input_tokens": self.usage.cache_read_input_tokens,
            "output_tokens": self.usage.output_tokens,
            "cost_usd": round(self.cost_usd, 6),
        }


def spend_by_actor(events: Iterable[Event], model: str = "") -> dict[str, ActorSpend]:
    """Each actor's spend in *events* (its ``agent.message`` replies, each priced by
    the model that wrote it, *model* when the event does not say), in the order
    the actors first replied."""
    spent: dict[str, ActorSpend] = {}
    for event in events:
        actor = event.data.get("actor")
        if event.type != "agent.message" or not isinstance(actor, str):
            continue
        usage = event.data.get("usage")
        replied = str(event.data.get("model") or model)
        spent.setdefault(actor, ActorSpend()).add(
            replied, usage if isinstance(usage, Mapping) else {}
        )
    return spent


def spend_lines(spent: Mapping[str, ActorSpend]) -> list[str]:
    """One line per actor (``/cost``): turns, tokens by kind, dollars."""
    return [
        f"  {name}: {a.turns} turns, {a.usage.input_tokens:,} input,"
        f" {a.usage.cache_creation_input_tokens:,} cache write,"
        f" {a.usage.cache_read_input_tokens:,} cache read,"
        f" {a.usage.output_tokens:,} output, ${a.cost_usd:.4f}"
        for name, a in spent.items()
    ]
