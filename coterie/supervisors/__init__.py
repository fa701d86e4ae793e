"""Supervision: OTP-style supervisors that start, watch and restart Trio tasks.

This package owns the supervision tree: child specs and strategies
(``_spec``), the restart decisions as a pure, Trio-free state machine
(``_state`` and ``_rules`` over the records of ``_roster``, with their
vocabulary in ``_decisions``), and the thin Trio driver that runs children in
their own cancel scopes and carries those decisions out (``_driver``,
``_steps``, ``_tasks``), with a dynamic supervisor (``_dynamic``) and
per-child isolation (``_isolate``) on top, and faults injected into a
running child on demand (``_faults``: what a crash or a stop turns the
child's end into; ``Supervisor.inject`` aims one). It reports to the run's
:class:`coterie.events.EventLog` and raises the supervision errors of
:mod:`coterie.errors`, but must not touch mailboxes, actors, models or tools:
a child is just an async callable.
"""

from coterie.errors import (
    AlreadyPresent,
    AlreadyStarted,
    ChildIsRunning,
    ChildNotRunning,
    FailedToStartChild,
    InjectedCrash,
    InvalidChildSpec,
    NoSuchChild,
    ShutdownExit,
    SupervisionError,
    SupervisorGaveUp,
    TooManyChildren,
)
from coterie.supervisors._decisions import (
    ChildCounts,
    ChildInfo,
    ChildState,
    Decision,
    GiveUp,
    InitFailed,
    RemoveChild,
    RestartChild,
    ShutDown,
    StartChild,
    StartFailed,
    StopChildren,
    SupervisionProtocolError,
)
from coterie.supervisors._driver import Supervisor
from coterie.supervisors._dynamic import DynamicSupervisor
from coterie.supervisors._faults import Fault
from coterie.supervisors._isolate import isolated
from coterie.supervisors._spec import AutoShutdown, Backoff, ChildSpec, Restart, Strategy
from coterie.supervisors._state import SupervisorMachine

__all__ = [
    "AlreadyPresent",
    "AlreadyStarted",
    "AutoShutdown",
    "Backoff",
    "ChildCounts",
    "ChildInfo",
    "ChildIsRunning",
    "ChildNotRunning",
    "ChildSpec",
    "ChildState",
    "Decision",
    "DynamicSupervisor",
    "Fault",
    "FailedToStartChild",
    "GiveUp",
    "InitFailed",
    "InjectedCrash",
    "InvalidChildSpec",
    "NoSuchChild",
    "RemoveChild",
    "Restart",
    "RestartChild",
    "ShutDown",
    "ShutdownExit",
    "StartChild",
    "StartFailed",
    "StopChildren",
    "Strategy",
    "SupervisionError",
    "SupervisionProtocolError",
    "Supervisor",
    "SupervisorGaveUp",
    "SupervisorMachine",
    "TooManyChildren",
    "isolated",
]
