"""The control channel's pure rules: a fault request, its checks, and the words of its answer.

No Trio, no I/O: the control actor (:mod:`._actor`) and the sender
(:mod:`._client`) both read and write what is defined here, so that the two
ends of the channel agree on one vocabulary.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any, Final, Literal

import attrs

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

__all__ = [
    "CONTROL",
    "FAULTS",
    "INJECT",
    "INJECTED",
    "STATISTICS",
    "STATS",
    "FaultName",
    "FaultRequest",
    "Refusal",
    "check",
    "closest",
    "done_message",
    "parse_request",
]

#: The control actor's name (its mailbox is the run's control channel).
CONTROL: Final = "control"
#: The kind of a fault request, and of its answer.
INJECT: Final = "inject"
INJECTED: Final = "injected"
#: The kinds of a question about the live run's mailboxes, and its answer.
STATS: Final = "stats"
STATISTICS: Final = "statistics"

FaultName = Literal["crash", "stop", "cancel"]
FAULTS: Final[tuple[FaultName, ...]] = ("crash", "stop", "cancel")

#: What each fault does, in past tense, for the answer's one line.
_DONE: Final = {"crash": "crashed", "stop": "stopped", "cancel": "cancelled"}


@attrs.frozen
class FaultRequest:
    """One fault asked for: *actor* for a crash or a stop, none for a cancel."""

    fault: FaultName
    actor: str | None
    by: str
    reason: str | None = None

    def __attrs_post_init__(self) -> None:
        if self.fault not in FAULTS:
            raise ValueError(f"unknown fault {self.fault!r} (one of {', '.join(FAULTS)})")
        if self.fault == "cancel" and self.actor is not None:
            raise ValueError("cancel stops the whole run: it takes no actor")
        if self.fault != "cancel" and not self.actor:
            raise ValueError(f"{self.fault} needs the name of an actor")
        if not self.by.strip():
            raise ValueError("a fault must say who injects it (by)")

    def to_body(self) -> dict[str, Any]:
        """The request's message body."""
        return attrs.asdict(self)

    @property
    def crash_reason(self) -> str:
        """What the actor's crash says: the reason given, else who injected it."""
        return self.reason or f"injected by {self.by}"


def parse_request(body: object) -> FaultRequest:
    """The request in a message *body*; :class:`ValueError` naming what is wrong."""
    if not isinstance(body, dict):
        raise ValueError("a fault request is a JSON object")
    fields = {"fault": str, "by": str}
    for key, kind in fields.items():
        if not isinstance(body.get(key), kind):
            raise ValueError(f"a fault request needs {key!r} as a string")
    for key in ("actor", "reason"):
        if body.get(key) is not None and not isinstance(body[key], str):
            raise ValueError(f"a fault request's {key!r} is a string or null")
    return FaultRequest(body["fault"], body.get("actor"), body["by"], body.get("reason"))


@attrs.frozen
class Refusal:
    """Why a fault is not applied: ``unknown_actor`` (with the actors known and the
    closest name), ``refused`` (it may not be aimed there), ``bad_request``."""

    code: Literal["unknown_actor", "refused", "bad_request", "not_running"]
    message: str
    known: tuple[str, ...] = ()
    closest: str | None = None

    def to_body(self) -> dict[str, Any]:
        """The refusal's answer body."""
        return {"ok": False, **attrs.asdict(self, value_serializer=_lists)}


def _lists(_inst: object, _field: object, value: object) -> object:
    return list(value) if isinstance(value, tuple) else value


def closest(name: str, known: Sequence[str]) -> str | None:
    """The known name closest to *name* (a likely typo), if any is close enough."""
    matches = difflib.get_close_matches(name, list(known), n=1, cutoff=0.5)
    return matches[0] if matches else None


def check(
    request: FaultRequest, known: Sequence[str], carrying: Collection[str] = (CONTROL,)
) -> Refusal | None:
    """Whether *request* may be applied in a run whose tree holds *known* children;
    *carrying*: the control actor and its supervisors, which may not take a fault."""
    actor = request.actor
    if actor is None:
        return None
    if actor in carrying:
        return Refusal(
            "refused", f"{actor} carries the control channel; it cannot take a fault itself"
        )
    if actor == "root":
        return Refusal("refused", "root has no supervisor to restart it: use `coterie cancel`")
    if actor not in known:
        near = closest(actor, known)
        hint = f"; did you mean {near!r}?" if near else ""
        return Refusal(
            "unknown_actor",
            f"no actor {actor!r} in this run (known: {', '.join(known)}){hint}",
            tuple(known),
            near,
        )
    return None


def done_message(request: FaultRequest, supervisor: str | None, restart: str | None) -> str:
    """The answer's one line: what was done, and what the supervisor does next."""
    if request.fault == "cancel":
        return "cancelled the run (as Ctrl-C in its terminal); `coterie resume` finishes it"
    what = f"{_DONE[request.fault]} {request.actor}"
    if request.fault == "crash":
        what += f" (InjectedCrash: {request.crash_reason})"
        then = "restarts it unless its restart intensity is exceeded"
        if restart == "temporary":
            then = "does not restart it (temporary)"
    else:
        then = "restarts it (permanent: as in OTP, even after a normal exit)"
        if restart in ("transient", "temporary"):
            then = f"does not restart it ({restart}: a normal exit)"
    return f"{what}; its supervisor {supervisor} {then}"
