"""The sender's side of the control channel: :func:`inject`, from any process.

The request goes through the run's post office like any message: appended
to the ``control`` mailbox (by a :class:`~coterie.mailbox.MailboxWriter`
when the run is another process), with ``reply_to`` naming a reply mailbox
of the sender's own (``reply-<random>``), which is opened for the call and
removed after it. The call returns once the control actor has answered,
which it does only after ``fault.injected`` is in the run's event log.

The run is a run directory, or any backend's
:class:`~coterie.backends.protocol.RunAddress` (on a server: the run's post
office there, its liveness from the server, from any host); the address is
the one thing that knows where the run lives.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coterie.actors import ActorContext
from coterie.backends import RunDirectory
from coterie.control._errors import ControlError, FaultRefused, NoReply, NoSuchActor, RunNotRunning
from coterie.control._rules import (
    CONTROL,
    INJECT,
    INJECTED,
    STATISTICS,
    STATS,
    FaultName,
    FaultRequest,
)
from coterie.control.timeouts import DEFAULT_TIMEOUT
from coterie.errors import AskTimeout, UnknownActor
from coterie.runs import UnknownRun

if TYPE_CHECKING:
    from coterie.backends.protocol import RunAddress
    from coterie.messages import Message

__all__ = ["DEFAULT_TIMEOUT", "inject", "live_mailboxes"]

#: The verb of each fault in "nothing to ..." refusals.
_VERB = {"crash": "crash", "stop": "stop", "cancel": "cancel"}


async def inject(
    run_dir: Path | RunAddress,
    fault: FaultName,
    actor: str | None = None,
    *,
    reason: str | None = None,
    by: str,
    timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109 - a call always has a deadline
) -> dict[str, Any]:
    """Inject *fault* into the live run in *run_dir* (or on a server); the control
    actor's answer.

    ``crash`` and ``stop`` name an *actor* (``reason``: what its crash
    says); ``cancel`` stops the whole run as Ctrl-C in its terminal would.
    *by* says who injects it (``fault.injected``'s ``by``). Raises
    :class:`ValueError` for a malformed request, :class:`UnknownRun` for no
    run there, :class:`RunNotRunning`, :class:`NoSuchActor`,
    :class:`FaultRefused`, or :class:`NoReply` after *timeout* seconds.
    """
    request = FaultRequest(fault, actor, by, reason)
    reply = await _call(
        run_dir, INJECT, request.to_body(), timeout, f"nothing to {_VERB[fault]}",
        "the fault may still be applied (see its events)",
    )  # fmt: skip
    return _answer(reply.kind, reply.body)


async def live_mailboxes(
    run_dir: Path | RunAddress,
    *,
    timeout: float = 5.0,  # noqa: ASYNC109 - a call always has a deadline
) -> dict[str, dict[str, int]]:
    """Each open mailbox of the live run in *run_dir* (or on a server): its
    ``pending`` and ``in_flight`` messages, as only the running process knows
    them (a question nothing records: no fsync, no event). Raises
    :class:`RunNotRunning` or :class:`NoReply` as :func:`inject` does."""
    reply = await _call(run_dir, STATS, None, timeout, "no mailbox is open", "", durable=False)
    counts = reply.body.get("mailboxes") if isinstance(reply.body, dict) else None
    if reply.kind != STATISTICS or not isinstance(counts, dict):
        raise ControlError(f"the run answered {reply.kind!r} instead of {STATISTICS!r}")
    return {str(name): dict(c) for name, c in counts.items() if isinstance(c, dict)}


async def _call(
    run_dir: Path | RunAddress,
    kind: str,
    body: object,
    timeout: float,  # noqa: ASYNC109 - a call always has a deadline
    idle: str,
    late: str,
    *,
    durable: bool = True,
) -> Message:
    """One question to the run's control actor and its answer, through a reply
    mailbox of this call's own (*idle*: what a run that is not running means;
    *late*: what a call that timed out leaves unsaid)."""
    if isinstance(run_dir, Path):
        if not (run_dir / "config.json").is_file():
            raise UnknownRun(f"no run in {run_dir}")
        run_dir = RunDirectory(run_dir)
    if not await run_dir.live():
        raise RunNotRunning(f"run {run_dir.run_id} is not running; {idle}")
    name = f"reply-{secrets.token_hex(6)}"
    async with run_dir.post_office(name) as post:
        mailbox = post.open(name)
        await mailbox.sync()  # with the backend before the run can answer into it
        ctx = ActorContext(name=name, mailbox=mailbox, post=post)
        # Raised after the post office has closed: on Redis its block is a
        # nursery's, which would wrap the error in a group.
        failure: ControlError | None = None
        try:
            reply = await ctx.call(CONTROL, kind, body, timeout=timeout, durable=durable)
        except AskTimeout:
            said = f"run {run_dir.run_id} did not answer within {timeout:g} s"
            failure = NoReply(f"{said}; {late}" if late else said)
        except UnknownActor:
            failure = ControlError(f"run {run_dir.run_id} has no control channel")
    if failure is not None:
        raise failure
    return reply


def _answer(kind: str, body: object) -> dict[str, Any]:
    """The answer's body if the fault was applied (or was already); else the refusal raised."""
    if kind != INJECTED or not isinstance(body, dict):
        raise ControlError(f"the run answered {kind!r} instead of {INJECTED!r}")
    if body.get("ok"):
        return body
    message = str(body.get("message", "refused"))
    code = body.get("code")
    if code == "unknown_actor":
        known = tuple(str(n) for n in body.get("known", ()))
        near = body.get("closest")
        raise NoSuchActor(message, known, near if isinstance(near, str) else None)
    raise FaultRefused(message, 1 if code == "not_running" else 2)
