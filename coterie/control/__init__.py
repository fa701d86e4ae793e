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

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coterie.control._actor import Control, control_spec
    from coterie.control._client import inject, live_mailboxes
    from coterie.control._errors import (
        ControlError,
        FaultRefused,
        NoReply,
        NoSuchActor,
        RunNotRunning,
    )
    from coterie.control._rules import CONTROL, FAULTS, FaultName, FaultRequest
    from coterie.control.timeouts import DEFAULT_TIMEOUT

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
    "control_spec",
    "inject",
    "live_mailboxes",
]


#: Where each public name is defined. Imported on first use (PEP 562), so that one
#: light module of the package can be imported by its full dotted path (the
#: command line's parser does) without loading the whole package.
_HOMES = {
    "Control": "coterie.control._actor",
    "control_spec": "coterie.control._actor",
    "DEFAULT_TIMEOUT": "coterie.control.timeouts",
    "inject": "coterie.control._client",
    "live_mailboxes": "coterie.control._client",
    "ControlError": "coterie.control._errors",
    "FaultRefused": "coterie.control._errors",
    "NoReply": "coterie.control._errors",
    "NoSuchActor": "coterie.control._errors",
    "RunNotRunning": "coterie.control._errors",
    "CONTROL": "coterie.control._rules",
    "FAULTS": "coterie.control._rules",
    "FaultName": "coterie.control._rules",
    "FaultRequest": "coterie.control._rules",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, _, attribute = home.partition(":")
    value = getattr(importlib.import_module(module), attribute or name)
    globals()[name] = value  # once is enough
    return value
