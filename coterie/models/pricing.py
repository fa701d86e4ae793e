"""What model calls cost, and a ledger of usage and cost per actor.

Prices are USD per million tokens from Anthropic's published pricing page
(platform.claude.com/docs/en/about-claude/pricing), checked October 2026:
base input, output, 5-minute cache writes (what an ``ephemeral`` breakpoint
costs) and cache reads. Batch, 1-hour cache, data-residency and fast-mode
surcharges are not modelled: coterie uses none of them.

A search of Anthropic's server-side web search tool (the WebSearch tool's
side call) costs :data:`WEB_SEARCH_USD` on top of the call's tokens: $10 per
1,000 searches on the same pricing page, whatever the model, counted from
the reply's ``usage.server_tool_use.web_search_requests``.

A model id is priced by the longest entry that is a prefix of it ending at a
boundary (``-``, ``@``, ``[`` or the end), so dated ids
(``claude-haiku-4-5-20251001``), Vertex ids (``claude-opus-4-5@20251101``),
Bedrock ids (``us.anthropic.claude-sonnet-4-5-...``) and 1M-context ids
(``claude-sonnet-5-5[1m]``) all find their model. A Claude model not listed
(``claude-opus-6``) falls back to the newest listed model of its family.

Anything else — ``scripted``, or a model served by some compatible local
server — is priced as :data:`DEFAULT_MODEL_PRICE`, Claude Sonnet 5.5's rates
(the default model's), so offline runs report costs of the same order as a
real run and ``--max-budget-usd`` can be exercised without an API key.
"""

from __future__ import annotations

import attrs

from coterie.models._base import Usage


@attrs.frozen
class ModelPrice:
    """USD per million tokens. ``long_prompt_*``: a request whose prompt
    (input + cache reads + cache writes) exceeds the threshold pays every rate
    times the factor, output included (Claude Haiku 5.5)."""

    input: float
    output: float
    cache_write: float
    cache_read: float
    long_prompt_threshold: int | None = None
    long_prompt_factor: float = 1.0


_FABLE_51 = ModelPrice(10.0, 50.0, 12.5, 0.25)
_FABLE_5 = ModelPrice(10.0, 50.0, 12.5, 1.0)
_OPUS_55 = ModelPrice(4.0, 20.0, 5.0, 0.20)
_OPUS_45 = ModelPrice(5.0, 25.0, 6.25, 0.50)  # Opus 4.5 through Opus 5
_OPUS_4 = ModelPrice(15.0, 75.0, 18.75, 1.50)  # Opus 3, 4 and 4.1
_SONNET_55 = ModelPrice(2.0, 10.0, 2.5, 0.10)  # cache reads cut to 0.05x on 2026-10-07
_SONNET_5 = ModelPrice(2.0, 10.0, 2.5, 0.20)
_SONNET_4 = ModelPrice(3.0, 15.0, 3.75, 0.30)  # Sonnet 3.5 through 4.6
_HAIKU_55 = ModelPrice(0.10, 0.50, 0.125, 0.01, long_prompt_threshold=100_000, long_prompt_factor=5)
_HAIKU_45 = ModelPrice(1.0, 5.0, 1.25, 0.10)
_HAIKU_35 = ModelPrice(0.80, 4.0, 1.0, 0.08)
_HAIKU_3 = ModelPrice(0.25, 1.25, 0.30, 0.03)

#: Model id prefixes and their prices; the bare family names are the fallbacks.
PRICES: dict[str, ModelPrice] = {
    "claude-fable-5-1": _FABLE_51,
    "claude-fable-5": _FABLE_5,
    "claude-fable": _FABLE_51,
    "claude-mythos-5-1": _FABLE_51,
    "claude-mythos-5": _FABLE_5,
    "claude-mythos": _FABLE_51,
    "claude-opus-5-5": _OPUS_55,
    "claude-opus-5": _OPUS_45,
    "claude-opus-4-8": _OPUS_45,
    "claude-opus-4-7": _OPUS_45,
    "claude-opus-4-6": _OPUS_45,
    "claude-opus-4-5": _OPUS_45,
    "claude-opus-4-1": _OPUS_4,
    "claude-opus-4": _OPUS_4,
    "claude-3-opus": _OPUS_4,
    "claude-opus": _OPUS_55,
    "claude-sonnet-5-5": _SONNET_55,
    "claude-sonnet-5": _SONNET_5,
    "claude-sonnet-4-6": _SONNET_4,
    "claude-sonnet-4-5": _SONNET_4,
    "claude-sonnet-4": _SONNET_4,
    "claude-3-7-sonnet": _SONNET_4,
    "claude-3-5-sonnet": _SONNET_4,
    "claude-sonnet": _SONNET_55,
    "claude-haiku-5-5": _HAIKU_55,
    "claude-haiku-4-5": _HAIKU_45,
    "claude-3-5-haiku": _HAIKU_35,
    "claude-3-haiku": _HAIKU_3,
    "claude-haiku": _HAIKU_55,
}

#: USD per search of the server-side web search tool ($10 per 1,000 searches).
WEB_SEARCH_USD = 10.0 / 1000

#: The price of any model :data:`PRICES` does not know: Claude Sonnet 5.5's.
DEFAULT_MODEL_PRICE = _SONNET_55
_BOUNDARY = ("-", "@", "[")


def price_for(model: str) -> ModelPrice:
    """The price of *model*; :data:`DEFAULT_MODEL_PRICE` when it is unknown."""
    found = _lookup(model)
    return found if found is not None else DEFAULT_MODEL_PRICE


def is_known_model(model: str) -> bool:
    """Whether *model* has its own entry (or family) in :data:`PRICES`."""
    return _lookup(model) is not None


def _lookup(model: str) -> ModelPrice | None:
    name = model.strip().lower()
    start = name.find("claude-")
    if start < 0:
        return None
    # Bedrock and Vertex put region and vendor prefixes before the id.
    name = name[start:]
    matches = [
        prefix
        for prefix in PRICES
        if name.startswith(prefix) and (len(name) == len(prefix) or name[len(prefix)] in _BOUNDARY)
    ]
    return PRICES[max(matches, key=len)] if matches else None


def cost_usd(model: str, usage: Usage) -> float:
    """The cost in USD of one call to *model* that used *usage*.

    Price each call on its own and add the costs: a sum of usages would hide
    which calls crossed a long-prompt threshold.
    """
    price = price_for(model)
    factor = 1.0
    prompt = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    if price.long_prompt_threshold is not None and prompt > price.long_prompt_threshold:
        factor = price.long_prompt_factor
    total = (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_creation_input_tokens * price.cache_write
        + usage.cache_read_input_tokens * price.cache_read
    )
    return total * factor / 1_000_000 + usage.web_search_requests * WEB_SEARCH_USD


@attrs.define
class UsageLedger:
    """Token usage and cost per actor, summed over calls (docs/engine.md).

    A run has one, behind its :class:`~coterie.models.MeteredModel`; a model
    client given one records its own calls in it too (for standalone use).
    """

    _usage: dict[str, Usage] = attrs.field(init=False, factory=dict)
    _cost: dict[str, float] = attrs.field(init=False, factory=dict)
    _calls: dict[str, int] = attrs.field(init=False, factory=dict)

    def record(self, actor: str, model: str, usage: Usage) -> float:
        """Add one call's *usage* under *actor*; returns that call's cost in USD."""
        cost = cost_usd(model, usage)
        self._usage[actor] = self._usage.get(actor, Usage()) + usage
        self._cost[actor] = self._cost.get(actor, 0.0) + cost
        self._calls[actor] = self._calls.get(actor, 0) + 1
        return cost

    def restore(self, actor: str, usage: Usage, cost: float) -> None:
        """Start *actor*'s account at *usage* and *cost* (what its transcript recorded,
        on a resume) unless this ledger has counted calls of it already."""
        if actor not in self._usage:
            self._usage[actor] = usage
            self._cost[actor] = cost
            self._calls[actor] = 0

    @property
    def actors(self) -> list[str]:
        """Actors with at least one recorded call, in the order they first called."""
        return list(self._usage)

    def usage(self, actor: str | None = None) -> Usage:
        """Usage of *actor*, or of everyone when ``None``."""
        if actor is not None:
            return self._usage.get(actor, Usage())
        return sum(self._usage.values(), Usage())

    def cost_usd(self, actor: str | None = None) -> float:
        """Cost in USD of *actor*'s calls, or of everyone's when ``None``."""
        if actor is not None:
            return self._cost.get(actor, 0.0)
        return sum(self._cost.values())

    def calls(self, actor: str | None = None) -> int:
        """Number of recorded calls of *actor*, or of everyone when ``None``."""
        if actor is not None:
            return self._calls.get(actor, 0)
        return sum(self._calls.values())
