"""How a run ended: :class:`RunResult`, the fields of Claude Code's ``result`` message.

It is what every agent's loop returns, what the Lead replies with (as
:meth:`RunResult.to_dict`), what the CLI's views print and what an embedding
program gets from :meth:`coterie.session.AgentSession.query`.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

import attrs

from coterie.models import Usage

__all__ = ["SUBTYPES", "RunResult", "Subtype"]

#: How a run ended (Claude Code's result subtypes, and coterie's own for what
#: only it does: goals, a team's tasks).
Subtype = Literal[
    "success",
    "error_max_turns",
    "error_max_budget_usd",
    "error_model",
    "error_during_execution",
    "error_max_structured_output_retries",
    "error_goal_impossible",
    "error_max_goal_iterations",
    "error_tasks",
    "error_interrupted",
]
SUBTYPES: tuple[Subtype, ...] = get_args(Subtype)


def _subtype(value: str) -> Subtype:
    if value not in SUBTYPES:
        raise ValueError(f"unknown result subtype {value!r}; expected one of {', '.join(SUBTYPES)}")
    return value


@attrs.frozen
class RunResult:
    """How a run ended; the fields of Claude Code's ``result`` message."""

    result: str
    is_error: bool
    subtype: Subtype = attrs.field(converter=_subtype)
    num_turns: int
    usage: Usage
    total_cost_usd: float
    duration_ms: int
    #: With ``--goal``: the condition, how the pursuit ended and why, its checks.
    goal: dict[str, Any] | None = None
    #: With ``--json-schema``: the answer the model gave through StructuredOutput,
    #: which fits the schema (``result`` is then its JSON text); None without one.
    structured_output: dict[str, Any] | None = None
    #: ``error_model`` after the API answered with an error: its HTTP status and
    #: error type (``404``, ``not_found_error``); None otherwise.
    api_error_status: int | None = None
    api_error_type: str | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunResult:
        """A result sent as :meth:`to_dict` (other keys of the message are ignored)."""
        fields = {f.name for f in attrs.fields(cls)}
        kept = {k: v for k, v in data.items() if k in fields}
        return cls(**{**kept, "usage": Usage(**kept["usage"])})

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON; ``goal``, ``structured_output`` and the API error's
        fields only when there is one."""
        data = {**attrs.asdict(self, recurse=False), "usage": self.usage.to_dict()}
        for optional in ("goal", "structured_output", "api_error_status", "api_error_type"):
            if data[optional] is None:
                del data[optional]
        return data
