"""The run's control channel: faults on demand into a live run (docs/faults.md).

This package owns the ``control`` actor every run starts (under its own
supervisor, the root's last child) and both ends of the channel it listens
on: a mailbox of the run's post office, so it works wherever the mailboxes
live. The pure rules
(``_rules``: the request, its checks, the answer's words), the actor that
records each fault (``fault.injected``) and applies it through the target's
own supervisor (``_actor``), and the sender's side, :func:`inject`, used by
``coterie crash`` / ``stop`` / ``cancel`` and the observer. It knows the
supervision tree only through :class:`~coterie.supervisors.Supervisor`'s
public ``walk``, ``find`` and ``inject``.
"""

from coterie.control._actor import Control, control_spec
from coterie.control._client import DEFAULT_TIMEOUT, RunOnServer, inject, live_mailboxes
from coterie.control._errors import (
    ControlError,
    FaultRefused,
    NoReply,
    NoSuchActor,
    RunNotRunning,
)
from coterie.control._rules import CONTROL, FAULTS, FaultName, FaultRequest

__all__ = [
    "CONTROL",
    "DEFAULT_TIMEOUT",
    "FAULTS",
    "Control",
    "ControlError",
    "FaultName",
    "FaultRefused",
    "FaultRequest",
    "NoReply",
    "NoSuchActor",
    "RunNotRunning",
    "RunOnServer",
    "control_spec",
    "inject",
    "live_mailboxes",
]
