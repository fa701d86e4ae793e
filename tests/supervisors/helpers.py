"""Helpers for driving the pure supervisor state machine in tests."""

from __future__ import annotations

from typing import TYPE_CHECKING

from coterie.supervisors import ChildSpec, Restart, StartChild, StopChildren

if TYPE_CHECKING:
    from collections.abc import Sequence

    from coterie.supervisors import Decision, SupervisorMachine


async def never() -> None:
    raise AssertionError("the machine never runs a child")


def spec(name: str, restart: Restart = Restart.PERMANENT, **kwargs: object) -> ChildSpec:
    return ChildSpec(name, never, restart=restart, **kwargs)  # type: ignore[arg-type]


def settle(machine: SupervisorMachine, decisions: Sequence[Decision], now: float) -> list[Decision]:
    """Act as a perfect driver: confirm every start and stop at once; return all decisions."""
    done: list[Decision] = []
    pending = list(decisions)
    while pending:
        decision = pending.pop(0)
        done.append(decision)
        if isinstance(decision, StartChild):
            pending[:0] = machine.child_started(decision.name, now)
        elif isinstance(decision, StopChildren):
            for name in decision.names:
                pending.extend(machine.child_stopped(name, now))
    return done
