"""Events as the team runtime emits them, for the view's tests."""

from __future__ import annotations

from typing import Any

from coterie.ui.live import TeamState


def ev(type: str, **data: Any) -> dict[str, Any]:
    return {"type": type, "ts": 0.0, **data}


def started(actor: str, supervisor: str, kind: str = "worker", attempt: int = 1) -> dict[str, Any]:
    return ev("actor.started", supervisor=supervisor, actor=actor, attempt=attempt, kind=kind)


def team_tree() -> TeamState:
    """The default tree of a team run, started as the supervisors report it (children first)."""
    state = TeamState()
    for e in [
        started("evaluator", "services"),
        started("services", "root", kind="supervisor"),
        started("lead", "team"),
        started("alice", "team"),
        started("bob", "team"),
        started("team", "root", kind="supervisor"),
    ]:
        state.apply(e)
    return state
