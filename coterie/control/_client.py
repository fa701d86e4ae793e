"""The sender's side of the control channel: :func:`inject`, from any process.

The request goes through the run's post office like any message: appended
to the ``control`` mailbox (by a :class:`~coterie.mailbox.MailboxWriter`
when the run is another process), with ``reply_to`` naming a reply mailbox
of the sender's own (``reply-<random>``), which is opened for the call and
removed after it. The call returns once the control actor has answered,
which it does only after ``fault.injected`` is in the run's event log.
"""

from __future__ import annotations

import secrets
import shutil
from typing import TYPE_CHECKING, Any

from coterie.actors import ActorContext
from coterie.control._errors import ControlError, FaultRefused, NoReply, NoSuchActor, RunNotRunning
from coterie.control._rules import CONTROL, INJECT, INJECTED, FaultName, FaultRequest
from coterie.errors import AskTimeout, UnknownActor
from coterie.mailbox import PostOffice
from coterie.runs import UnknownRun, is_live

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["DEFAULT_TIMEOUT", "inject"]

#: Seconds to wait for the run's answer (a crash waits for the actor's clean-up).
DEFAULT_TIMEOUT = 30.0

#: The verb of each fault in "nothing to ..." refusals.
_VERB = {"crash": "crash", "stop": "stop", "cancel": "cancel"}


async def inject(
    run_dir: Path,
    fault: FaultName,
    actor: str | None = None,
    *,
    reason: str | None = None,
    by: str,
    timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109 - a call always has a deadline
) -> dict[str, Any]:
    """Inject *fault* into the live run in *run_dir*; the control actor's answer.

    ``crash`` and ``stop`` name an *actor* (``reason``: what its crash
    says); ``cancel`` stops the whole run as Ctrl-C in its terminal would.
    *by* says who injects it (``fault.injected``'s ``by``). Raises
    :class:`ValueError` for a malformed request, :class:`UnknownRun` for no
    run there, :class:`RunNotRunning`, :class:`NoSuchActor`,
    :class:`FaultRefused`, or :class:`NoReply` after *timeout* seconds.
    """
    request = FaultRequest(fault, actor, by, reason)
    if not (run_dir / "config.json").is_file():
        raise UnknownRun(f"no run in {run_dir}")
    if not is_live(run_dir):
        raise RunNotRunning(f"run {run_dir.name} is not running; nothing to {_VERB[fault]}")
    post = _post_office(run_dir)
    name = f"reply-{secrets.token_hex(6)}"
    try:
        ctx = ActorContext(name=name, mailbox=post.open(name), post=post)
        try:
            reply = await ctx.call(CONTROL, INJECT, request.to_body(), timeout=timeout)
        except AskTimeout:
            raise NoReply(
                f"run {run_dir.name} did not answer within {timeout:g} s; the fault may"
                " still be applied (see its events)"
            ) from None
        except UnknownActor:
            raise ControlError(f"run {run_dir.name} has no control channel") from None
    finally:
        await post.aclose()
        if post.root is not None:
            shutil.rmtree(post.root / name, ignore_errors=True)
    return _answer(reply.kind, reply.body)


def _post_office(run_dir: Path) -> PostOffice:
    """The run's post office as a sender in another process opens it (the one
    place that knows where the run's mailboxes live)."""
    return PostOffice(run_dir / "mailboxes", poll_interval=0.05)


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
