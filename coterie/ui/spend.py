"""What one request spent, counted from the replies its agents received.

A run's result carries the lead's totals since the run began (its ``usage``
and ``total_cost_usd`` grow over a conversation's requests), while its
``num_turns`` counts this request's turns only. The line the console prints
after each request says what this request cost, so it counts the
``agent.message`` events of the request: every reply of every agent (the
lead and its subagents), each priced as the run's ledger prices it
(:func:`coterie.models.pricing.cost_usd` of the reply's model and usage).
Pure: fed events, asked for the sum.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from coterie.models import Usage
from coterie.models.pricing import cost_usd

if TYPE_CHECKING:
    from coterie.events import Event

__all__ = ["Spend", "SpendCounter"]


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
