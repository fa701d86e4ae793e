"""Commands a Redis/Valkey server refuses for a while, waited out instead of failing.

A server out of memory under ``noeviction`` answers every write with ``OOM
command not allowed ...``; one loading its data after a restart answers
``LOADING``; one running a long script ``BUSY``; a replica ``READONLY`` and a
cut-off master ``MASTERDOWN``. None of these is the run's fault, and each ends
when the server recovers, so a client of :func:`coterie.backends.redis.client.connect`
sends the command again after a growing pause (:class:`WaitOutRefusals`)
rather than crash the actor that sent it (a storm of restarts that ends a
supervisor, and a run that never ends once the server recovers). The user is
told once per episode, for the whole process, in one line on stderr
(:class:`RefusalEpisode`), and once more when the server accepts commands again.
Writers that batch their commands in pipelines and retry them themselves (the
event stream, the run's mirror) report through the same episode.

:func:`refusal` is the decision, on the error's text alone; the rest is the thin
layer coredis calls around every command.
"""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING, Any

import attrs
from coredis.exceptions import ResponseError
from coredis.retry import RetryPolicy

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = ["REFUSALS", "RefusalEpisode", "WaitOutRefusals", "refusal", "transaction"]

#: The error codes that mean "not now" (Redis's first word of the error), and
#: what each means for the user.
WAITED_OUT = {
    "OOM": "is out of memory and refuses writes",
    "LOADING": "is loading its data",
    "BUSY": "is busy running a script",
    "READONLY": "is a read-only replica",
    "MASTERDOWN": "has lost its master",
}
#: How coredis introduces the server's error about one command of a pipeline.
_IN_PIPELINE = " of pipeline caused error: "
#: The first pause (s), doubled after each refusal up to :data:`LONGEST`.
FIRST = 0.05
LONGEST = 2.0


def pause(attempt: int) -> float:
    """The pause after the *attempt*-th refusal (from 1): doubling from :data:`FIRST`
    up to :data:`LONGEST`."""
    return float(min(LONGEST, FIRST * 2 ** (attempt - 1)))


def server_text(message: str) -> str:
    """The server's own words in the text of an error: for a command of a pipeline,
    what follows coredis's naming of the command (whose arguments are the run's
    data, never to be printed)."""
    return message.rsplit(_IN_PIPELINE, 1)[1] if _IN_PIPELINE in message else message


def refusal(message: str) -> str | None:
    """The code of a refusal worth waiting out (``OOM``, ``LOADING``, ...) in the
    text of a server's error, or None for any other error (a bad command, a
    missing group: those are not waited out). coredis names a refused command of
    a pipeline first (``Command # 1 (HSET ...) of pipeline caused error: OOM ...``):
    the server's own text is after the last such marker, whatever the command's
    arguments say."""
    word = server_text(message).lstrip("-").split(" ", 1)[0].upper()
    return word if word in WAITED_OUT else None


@attrs.define
class RefusalEpisode:
    """The process's one report of a refusing server: a line when the first
    command is refused, a line when a command is accepted again after that."""

    write: Callable[[str], object] = attrs.field(default=lambda line: _stderr(line))
    _refusing: str | None = None
    _lock: threading.Lock = attrs.field(factory=threading.Lock)

    def refused(self, exc: BaseException) -> bool:
        """Whether *exc* is a refusal to wait out (:func:`refusal`); the first of
        an episode is said."""
        code = refusal(str(exc)) if isinstance(exc, ResponseError) else None
        if code is None:
            return False
        with self._lock:
            if self._refusing is not None:
                return True
            self._refusing = code
        self.write(
            f"note: the Redis server {WAITED_OUT[code]} ({server_text(str(exc)).strip()});"
            " the run waits for it"
        )
        return True

    def accepted(self) -> None:
        """A command refused before went through: the episode, if any, is over."""
        with self._lock:
            if self._refusing is None:
                return
            self._refusing = None
        self.write("note: the Redis server accepts commands again; the run goes on")


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


#: The process's episode: every client of the process reports through it.
REFUSALS = RefusalEpisode()


class WaitOutRefusals(RetryPolicy):
    """coredis's retry policy for one client: a refused command (:func:`refusal`)
    is sent again after a pause doubling from :data:`FIRST` to :data:`LONGEST`,
    with no limit (a cancellation still ends the wait); anything else is raised."""

    def __init__(self, episode: RefusalEpisode = REFUSALS) -> None:
        super().__init__(retryable_exceptions=(ResponseError,), retries=None)
        self._episode = episode

    def delay(self, attempt_number: int) -> float:
        return pause(attempt_number)

    def will_retry(self, exc: BaseException) -> bool:
        return self._episode.refused(exc)

    async def call_with_retries(
        self,
        func: Callable[..., Awaitable[Any]],
        before_hook: Callable[..., Awaitable[Any] | None] | None = None,
        failure_hook: Any = None,
    ) -> Any:
        tries = 0

        async def counted() -> Any:
            nonlocal tries
            tries += 1
            return await func()

        result = await super().call_with_retries(counted, before_hook, failure_hook)
        if tries > 1:  # a command refused before went through: the episode is over
            self._episode.accepted()
        return result


async def transaction(client: Any, fill: Callable[[Any], object]) -> None:
    """Run one ``MULTI``/``EXEC`` transaction, *fill* queueing its commands on the
    pipeline, sent again while the server refuses it (:func:`refusal`), as a
    client's single commands are (a pipeline bypasses the client's retry policy)."""
    import trio

    attempt = 0
    while True:
        attempt += 1
        try:
            async with client.pipeline(transaction=True) as pipe:
                fill(pipe)
        except ResponseError as exc:
            if not REFUSALS.refused(exc):
                raise
            await trio.sleep(pause(attempt))
            continue
        if attempt > 1:
            REFUSALS.accepted()
        return
