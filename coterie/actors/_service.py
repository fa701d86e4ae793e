"""What the GoalEvaluator and the AutoModeClassifier share: a judging service actor.

Theory of operation. A service answers one kind of request with one kind of
reply, and every way of failing has a *safe* answer (not met; block):

- a request of the right kind is judged by :meth:`ServiceActor.judge`, which
  may call a model; a :class:`~coterie.models.ModelError` there is the
  service's to turn into the safe answer;
- a request delivered again after a crash (``ctx.redelivered``) is answered
  with the safe answer at once, without judging again: the crash may have
  come from judging it (a bug, a scenario ``crash`` turn), and trying again
  could crash again, so the service fails safe instead of looping;
- a body of the wrong shape gets the safe answer, naming the problem;
- any other message kind is reported and left unanswered.

On the client side, :func:`ask_service` maps a timeout, a failure to send or
a reply of the wrong kind to ``None``, which the typed helpers turn into
their own safe answer. Cancellation always passes through.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coterie.actors._actor import Actor

if TYPE_CHECKING:
    from coterie.actors._context import ActorContext
    from coterie.messages import Message

__all__ = ["ServiceActor", "ask_service", "optional_text_field", "text_field"]


class ServiceActor(Actor):
    """Answers ``request_kind`` messages with ``reply_kind`` replies; fails safe.

    Subclasses set the two kinds and implement :meth:`judge` (the real work)
    and :meth:`safe_answer` (the body to reply with when judging is not
    possible or not trustworthy).
    """

    request_kind: str
    reply_kind: str
    crash_reason: str = "the service crashed while handling this request"

    async def handle(self, ctx: ActorContext, message: Message) -> None:
        """Judge one request and reply; fail safe on a redelivery or a bad body."""
        if message.kind != self.request_kind:
            ctx.emit("actor.unexpected_message", kind=message.kind, sender=message.sender)
            return
        if ctx.redelivered:
            ctx.emit("service.redelivered", request=message.id, kind=message.kind)
            answer = self.safe_answer(self.crash_reason)
        elif not isinstance(message.body, dict):
            answer = self.safe_answer("the request's body is not a JSON object")
        else:
            answer = await self.judge(ctx, message.body)
        await ctx.reply(message, self.reply_kind, answer)

    async def judge(self, ctx: ActorContext, body: dict[str, Any]) -> dict[str, Any]:
        """The reply body for a well-formed request *body*."""
        raise NotImplementedError

    def safe_answer(self, reason: str) -> dict[str, Any]:
        """The reply body that fails safe, saying *reason*."""
        raise NotImplementedError


def text_field(body: dict[str, Any], key: str) -> str:
    """``body[key]``, which must be a string; else :class:`ValueError` naming the problem."""
    value = body.get(key)
    if not isinstance(value, str):
        kind = "missing" if key not in body else f"a {type(value).__name__}, not a string"
        raise ValueError(f"the request's {key!r} is {kind}")
    return value


def optional_text_field(body: dict[str, Any], key: str) -> str | None:
    """``body[key]`` if it is a string, ``None`` if it is missing or null; else
    :class:`ValueError`."""
    return None if body.get(key) is None else text_field(body, key)


async def ask_service(
    ctx: ActorContext,
    to: str,
    kind: str,
    body: dict[str, Any],
    *,
    reply_kind: str,
    timeout: float,  # noqa: ASYNC109 - an ask always has a deadline
    durable: bool = True,
) -> dict[str, Any] | str:
    """Ask service *to* and return the reply's body, or a string saying why there is none.

    A timeout, a failure to send (an unknown actor, a closed mailbox) and a
    reply of the wrong kind or shape all come back as that string; callers
    turn it into their safe answer. Cancellation propagates. ``durable=False``:
    the request and its reply are not fsynced (an answer that can be asked again).
    """
    try:
        reply = await ctx.call(to, kind, body, timeout=timeout, durable=durable)
    except TimeoutError:
        return f"no answer from {to!r} within {timeout:g} s"
    except Exception as exc:
        return f"asking {to!r} failed ({type(exc).__name__}: {exc})"
    if reply.kind != reply_kind or not isinstance(reply.body, dict):
        return f"{to!r} answered {reply.kind!r} instead of a {reply_kind!r}"
    return reply.body
