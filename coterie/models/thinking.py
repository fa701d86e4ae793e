"""Extended thinking and effort: what a run asks for, and what each request sends.

Claude Code's ``--max-thinking-tokens N``, ``--thinking enabled|adaptive|disabled``,
``--thinking-display`` and the ``MAX_THINKING_TOKENS`` environment variable
(which wins over the flag, as in Claude Code 2.1.332) choose a
:class:`Thinking`; ``--effort`` a level. :class:`Reasoning` holds both and
turns them into a request's fields, the way Claude Code does for the model
called (docs/sdk.md):

- a model of the ``budget`` families (Claude 4 and 4.5: Opus 4 to 4.5, Sonnet 4
  and 4.5, Haiku 4.5) thinks with ``{"type": "enabled", "budget_tokens": N}``,
  N at least 1024 and below ``max_tokens``; ``adaptive`` is not theirs, so it
  is sent as ``enabled`` with the largest budget;
- any later or unknown model thinks ``{"type": "adaptive"}`` (a budget is not
  sent to it), and takes ``output_config.effort`` under the
  ``effort-2025-11-24`` beta (so does Opus 4.5);
- a Claude 3 model is sent neither;
- thinking makes ``max_tokens`` at least :data:`THINKING_MAX_TOKENS` (Claude
  Code sends the model's output ceiling, 32000 for the budget families) and
  comes with the ``interleaved-thinking-2025-05-14`` beta, so the model may
  think between tool calls.

Only the agents' calls (lead, teammates, subagents) think: the services'
(evaluator, classifier, summarizer) are short structured answers. Nothing is
sent unless asked: unlike Claude Code, whose default is to think, a run
without these options sends no ``thinking`` field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, Literal

import attrs

__all__ = [
    "EFFORT_LEVELS",
    "MAX_THINKING_TOKENS_ENV",
    "THINKING_DISPLAYS",
    "THINKING_TYPES",
    "Reasoning",
    "Thinking",
    "takes_effort",
    "thinking_enabled",
    "thinks_adaptively",
]

ThinkingType = Literal["enabled", "adaptive", "disabled"]
THINKING_TYPES: Final = ("enabled", "adaptive", "disabled")
#: ``--thinking-display``: how the thinking's text comes back (Claude Code's choices).
THINKING_DISPLAYS: Final = ("summarized", "omitted", "highlights")
#: ``--effort`` (``output_config.effort``).
EFFORT_LEVELS: Final = ("low", "medium", "high", "xhigh", "max")
#: Claude Code's environment variable for the budget; it wins over the flag.
MAX_THINKING_TOKENS_ENV: Final = "MAX_THINKING_TOKENS"
#: The API's smallest thinking budget.
MIN_BUDGET: Final = 1024
#: The least ``max_tokens`` of a request that thinks.
THINKING_MAX_TOKENS: Final = 32000
#: The roles whose calls think.
THINKING_ROLES: Final = frozenset({"lead", "teammate", "subagent"})
INTERLEAVED_BETA: Final = "interleaved-thinking-2025-05-14"
EFFORT_BETA: Final = "effort-2025-11-24"

# Model families, matched anywhere in the id (Bedrock's ``us.anthropic.`` prefix)
# and ending at a boundary; the longest match decides.
_BUDGET = "budget"  # enabled + budget_tokens, no effort
_BUDGET_EFFORT = "budget+effort"
_ADAPTIVE = "adaptive"  # adaptive + effort (also any model not listed)
_NONE = "none"
_FAMILIES: Final[dict[str, str]] = {
    "claude-3": _NONE,
    "claude-opus-4": _BUDGET,
    "claude-opus-4-1": _BUDGET,
    "claude-opus-4-5": _BUDGET_EFFORT,
    "claude-opus-4-6": _ADAPTIVE,
    "claude-opus-4-7": _ADAPTIVE,
    "claude-opus-4-8": _ADAPTIVE,
    "claude-sonnet-4": _BUDGET,
    "claude-sonnet-4-5": _BUDGET,
    "claude-sonnet-4-6": _ADAPTIVE,
    "claude-haiku-4-5": _BUDGET,
}
_BOUNDARY = re.compile(r"[-@\[.:]|$")


def takes_effort(model: str) -> bool:
    """Whether *model* takes ``output_config.effort`` (``--effort``)."""
    return _family(model) in (_BUDGET_EFFORT, _ADAPTIVE)


def thinks_adaptively(model: str) -> bool:
    """Whether *model* thinks ``adaptive`` (the model decides how much)."""
    return _family(model) == _ADAPTIVE


def _family(model: str) -> str:
    name = model.lower()
    best = ""
    for prefix in _FAMILIES:
        at = name.find(prefix)
        if at >= 0 and _BOUNDARY.match(name, at + len(prefix)) and len(prefix) > len(best):
            best = prefix
    return _FAMILIES[best] if best else _ADAPTIVE


def _budget(_inst: object, _attribute: object, value: int | None) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(f"thinking budget_tokens must be a positive whole number, got {value!r}")


@attrs.frozen
class Thinking:
    """What a run asked of extended thinking, in the Agent SDK's ``ThinkingConfig``
    shape: ``enabled`` (with ``budget_tokens``, or None for the largest),
    ``adaptive`` or ``disabled``; ``display`` as asked (None: the API's default)."""

    type: ThinkingType = attrs.field(validator=attrs.validators.in_(THINKING_TYPES))
    budget_tokens: int | None = attrs.field(default=None, validator=_budget)
    display: str | None = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.in_(THINKING_DISPLAYS))
    )

    @classmethod
    def from_json(cls, data: object) -> Thinking:
        """The config *data* (:meth:`to_json`'s shape); ValueError if it is not one."""
        if not isinstance(data, Mapping) or not set(data) <= {"type", "budget_tokens", "display"}:
            raise ValueError(f"not a thinking config: {data!r}")
        try:
            return cls(**data)
        except TypeError as exc:
            raise ValueError(f"not a thinking config: {data!r}") from exc

    def to_json(self) -> dict[str, Any]:
        """The config as JSON (the keys that are set)."""
        return {k: v for k, v in attrs.asdict(self).items() if v is not None}

    @classmethod
    def from_options(
        cls, budget: int | None, mode: str | None, display: str | None
    ) -> Thinking | None:
        """From ``--max-thinking-tokens`` (0: off), ``--thinking`` and
        ``--thinking-display``; None when neither of the first two is given."""
        if mode == "disabled" or (mode is None and budget == 0):
            return cls("disabled")
        if mode is None and budget is None:
            return None
        chosen: ThinkingType = "adaptive" if mode == "adaptive" else "enabled"
        return cls(chosen, budget_tokens=budget if chosen == "enabled" else None, display=display)

    @staticmethod
    def from_env(asked: Thinking | None, env: Mapping[str, str]) -> Thinking | None:
        """*asked* under ``MAX_THINKING_TOKENS``: a budget wins over the flag's (``0``
        turns thinking off); ``--thinking disabled`` wins over it. ValueError if the
        variable is not a whole number."""
        raw = (env.get(MAX_THINKING_TOKENS_ENV) or "").strip()
        if not raw or (asked is not None and asked.type == "disabled"):
            return asked
        if not raw.isdigit():
            raise ValueError(f"{MAX_THINKING_TOKENS_ENV} must be a whole number, got {raw!r}")
        display = asked.display if asked is not None else None
        return Thinking.from_options(int(raw), None, display)


@attrs.frozen
class Reasoning:
    """A run's thinking and effort, and the request fields they make (module docstring)."""

    thinking: Thinking | None = None
    effort: str | None = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.in_(EFFORT_LEVELS))
    )

    @classmethod
    def from_run(
        cls,
        thinking: Mapping[str, Any] | None,
        effort: str | None,
        env: Mapping[str, str],
    ) -> Reasoning | None:
        """From a run's recorded options and the environment; None if nothing is asked."""
        asked = Thinking.from_json(thinking) if thinking is not None else None
        chosen = Thinking.from_env(asked, env)
        if chosen is None and effort is None:
            return None
        return cls(chosen, effort)

    def fields(self, model: str, role: str, max_tokens: int) -> dict[str, Any]:
        """The request fields for a call of *role* to *model* that would ask for
        *max_tokens*: ``max_tokens`` always, ``thinking`` and ``output_config`` when
        sent."""
        out: dict[str, Any] = {"max_tokens": max_tokens}
        family = _family(model)
        if role not in THINKING_ROLES or family == _NONE:
            return out
        thinking = self.thinking
        if thinking is not None:
            out["thinking"] = self._thinking(thinking, family, out)
        if self.effort is not None and family != _BUDGET:
            out["output_config"] = {"effort": self.effort}
        return out

    @staticmethod
    def _thinking(thinking: Thinking, family: str, out: dict[str, Any]) -> dict[str, Any]:
        if thinking.type == "disabled":
            return {"type": "disabled"}
        out["max_tokens"] = most = max(out["max_tokens"], THINKING_MAX_TOKENS)
        sent: dict[str, Any]
        if family == _ADAPTIVE:
            sent = {"type": "adaptive"}
        else:
            budget = thinking.budget_tokens if thinking.type == "enabled" else None
            budget = most - 1 if budget is None else budget
            sent = {"type": "enabled", "budget_tokens": min(max(budget, MIN_BUDGET), most - 1)}
        if thinking.display is not None:
            sent["display"] = thinking.display
        return sent

    @staticmethod
    def betas(fields: Mapping[str, Any]) -> list[str]:
        """The ``anthropic-beta`` values the request *fields* need."""
        betas = [INTERLEAVED_BETA] if thinking_enabled(fields.get("thinking")) else []
        return betas + ([EFFORT_BETA] if "output_config" in fields else [])


def thinking_enabled(thinking: object) -> bool:
    """Whether a request's ``thinking`` field asks the model to think (``enabled``
    or ``adaptive``; ``disabled`` or absent is no): the API returns thinking
    blocks only then, and the scripted models serve a turn's ``thinking`` only then."""
    return isinstance(thinking, Mapping) and thinking.get("type") in ("enabled", "adaptive")
