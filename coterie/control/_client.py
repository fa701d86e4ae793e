"""The sender's side of the control channel: :func:`inject`, from any process.

The request goes through the run's post office like any message: appended
to the ``control`` mailbox (by a :class:`~coterie.mailbox.MailboxWriter`
when the run is another process), with ``reply_to`` naming a reply mailbox
of the sender's own (``reply-<random>``), which is opened for the call and
removed after it. The call returns once the control actor has answered,
which it does only after ``fault.injected`` is in the run's event log.

The run is a run directory on files, or a :class:`RunOnServer` on the Redis
backend (any host: the run's post office there, its liveness from the
server's registry, :mod:`coterie.runregistry`); :func:`_post_office` is the
one place that knows which.
"""

from __future__ import annotations

import contextlib
import secrets
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import trio

from coterie.actors import ActorContext
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
from coterie.mailbox import PostOffice, RedisMailbox
from coterie.runs import UnknownRun, is_live

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from coterie.messages import Message
    from coterie.redisclient import RedisTarget

__all__ = ["DEFAULT_TIMEOUT", "RunOnServer", "inject", "live_mailboxes"]


@attrs.frozen
class RunOnServer:
    """Run *run_id* on the Redis server *target* (its full id)."""

    target: RedisTarget
    run_id: str

    @property
    def name(self) -> str:
        return self.run_id


#: The verb of each fault in "nothing to ..." refusals.
_VERB = {"crash": "crash", "stop": "stop", "cancel": "cancel"}


async def inject(
    run_dir: Path | RunOnServer,
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
    run_dir: Path | RunOnServer,
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
    run_dir: Path | RunOnServer,
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
    if isinstance(run_dir, Path) and not (run_dir / "config.json").is_file():
        raise UnknownRun(f"no run in {run_dir}")
    if not await _is_live(run_dir):
        raise RunNotRunning(f"run {run_dir.name} is not running; {idle}")
    name = f"reply-{secrets.token_hex(6)}"
    async with _post_office(run_dir, name) as post:
        mailbox = post.open(name)
        if isinstance(mailbox, RedisMailbox):
            await mailbox.sync()  # on the server before the run can answer into it
        ctx = ActorContext(name=name, mailbox=mailbox, post=post)
        # Raised after the post office has closed: on Redis its block is a
        # nursery's, which would wrap the error in a group.
        failure: ControlError | None = None
        try:
            reply = await ctx.call(CONTROL, kind, body, timeout=timeout, durable=durable)
        except AskTimeout:
            said = f"run {run_dir.name} did not answer within {timeout:g} s"
            failure = NoReply(f"{said}; {late}" if late else said)
        except UnknownActor:
            failure = ControlError(f"run {run_dir.name} has no control channel")
    if failure is not None:
        raise failure
    return reply


async def _is_live(run: Path | RunOnServer) -> bool:
    if isinstance(run, Path):
        return is_live(run)
    from coterie.redisclient import connect
    from coterie.runregistry import dead_here, live_holder

    async with connect(run.target) as client:
        holder = await live_holder(client, run.target, run.run_id)
    return holder is not None and not dead_here(holder)


@contextlib.asynccontextmanager
async def _post_office(run: Path | RunOnServer, reply: str) -> AsyncIterator[PostOffice]:
    """The run's post office as a sender in another process opens it (the one
    place that knows where the run's mailboxes live), the mailbox *reply*
    removed when it closes."""
    if isinstance(run, Path):
        post = PostOffice(run / "mailboxes", poll_interval=0.05)
        try:
            yield post
        finally:
            await post.aclose()
            if post.root is not None:
                shutil.rmtree(post.root / reply, ignore_errors=True)
        return
    from coterie.mailbox import open_redis_post_office, remove_redis_mailbox
    from coterie.redisclient import connect

    try:
        async with open_redis_post_office(run.target, run.run_id, block=0.5) as post:
            yield post
    finally:
        with trio.CancelScope(shield=True), trio.move_on_after(5.0):
            async with connect(run.target) as client:
                await remove_redis_mailbox(client, run.target, run.run_id, reply)


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
