"""Supervision: OTP-style supervisors that start, watch and restart Trio tasks.

This package owns the supervision tree: child specs and strategies
(``_spec``), the restart decisions as a pure, Trio-free state machine
(``_state`` with its vocabulary in ``_decisions``), and the thin Trio driver
that runs children in their own cancel scopes and carries those decisions out
(``_driver``). It reports to the run's :class:`coterie.events.EventLog` and
raises :class:`coterie.errors.SupervisorGaveUp`, but must not touch mailboxes,
actors, models or tools: a child is just a zero-argument async callable.
"""

from coterie.errors import SupervisorGaveUp
from coterie.supervisors._decisions import (
    ChildInfo,
    ChildState,
    Decision,
    GiveUp,
    RemoveChild,
    RestartChild,
    ShutDown,
    StartChild,
    StopChildren,
    SupervisionProtocolError,
)
from coterie.supervisors._driver import Supervisor
from coterie.supervisors._isolate import isolated
from coterie.supervisors._spec import AutoShutdown, Backoff, ChildSpec, Restart, Strategy
from coterie.supervisors._state import SupervisorMachine

__all__ = [
    "AutoShutdown",
    "Backoff",
    "ChildInfo",
    "ChildSpec",
    "ChildState",
    "Decision",
    "GiveUp",
    "RemoveChild",
    "Restart",
    "RestartChild",
    "ShutDown",
    "StartChild",
    "StopChildren",
    "Strategy",
    "SupervisionProtocolError",
    "Supervisor",
    "SupervisorGaveUp",
    "SupervisorMachine",
    "isolated",
]
