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

A server that stops taking connections for a moment (restarted, failed over,
its host rebooting) is waited out the same way, for at most :data:`AWAY_FOR`
seconds, by a client it has answered before: a command that could not even be
sent is safe to send again, whatever it does. Without this, every actor whose
call came in the gap crashed, and crashed again as soon as it was restarted,
until its supervisor gave up within milliseconds (its tasks handed back, the
run's ending left to chance). A server that was never reached, or stays away
longer, is still an error at once, as it was. A command whose connection broke
after it was sent may have been carried out, so it is never sent again here:
its caller decides (the board finds its own records by their nonce).

:func:`refusal_of` (the error's class, else its text: :func:`refusal`) and
:func:`not_connected` are the decisions; the rest is the thin layer coredis
calls around every command.
"""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING, Any

import attrs
from coredis.exceptions import BusyLoadingError, ReadOnlyError, ResponseError
from coredis.exceptions import ConnectionError as ClientConnectionError
from coredis.retry import RetryPolicy

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = [
    "AWAY_FOR", "REFUSALS", "REFUSING", "RefusalEpisode", "WaitOutRefusals", "not_connected",
    "refusal", "refusal_of", "transaction",
]  # fmt: skip

#: The error codes that mean "not now" (Redis's first word of the error), and
#: what each means for the user.
WAITED_OUT = {
    "OOM": "is out of memory and refuses writes",
    "LOADING": "is loading its data",
    "BUSY": "is busy running a script",
    "READONLY": "is a read-only replica",
    "MASTERDOWN": "has lost its master",
}
#: How long (s) a client the server has answered before waits for it to take
#: connections again, from the first command that could not be sent.
AWAY_FOR = 30.0
#: How coredis's error begins when it could not connect: nothing was sent.
_NOT_CONNECTED = "Unable to establish a connection"
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


#: What coredis raises for a refusal: most as a ResponseError with the server's
#: words, two as errors of their own with the code cut from them (``LOADING`` is
#: even a connection error to coredis).
REFUSING = (ResponseError, BusyLoadingError)


def refusal_of(exc: BaseException) -> str | None:
    """The code of the refusal *exc* is (:func:`refusal`), or None: coredis's own
    errors for ``LOADING`` and ``READONLY`` by their class, as their text no
    longer starts with the code."""
    if isinstance(exc, BusyLoadingError):
        return "LOADING"
    if isinstance(exc, ReadOnlyError):
        return "READONLY"
    return refusal(str(exc)) if isinstance(exc, ResponseError) else None


def not_connected(exc: BaseException) -> bool:
    """Whether *exc* says the client could not connect to the server (refused,
    unreachable, timed out): the command was never sent."""
    return isinstance(exc, ClientConnectionError) and str(exc).startswith(_NOT_CONNECTED)


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
        code = refusal_of(exc)
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

    def away(self, exc: BaseException) -> None:
        """The server took no connection (*exc*, :func:`not_connected`): the first
        command of an episode that could not be sent is said."""
        with self._lock:
            if self._refusing is not None:
                return
            self._refusing = "AWAY"
        self.write(
            f"note: the Redis server does not take connections ({exc}); the run waits"
            f" up to {AWAY_FOR:g} s for it"
        )

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
    with no limit (a cancellation still ends the wait); one that could not be
    sent (:func:`not_connected`) likewise for up to :data:`AWAY_FOR` seconds,
    once the server has answered this client. Anything else is raised."""

    def __init__(self, episode: RefusalEpisode = REFUSALS, away_for: float = AWAY_FOR) -> None:
        super().__init__(retryable_exceptions=(ResponseError,), retries=None)
        self._episode = episode
        self._away_for = away_for
        #: Whether the server has answered a command of this client: one never
        #: reached (a wrong address, nothing listening) is an error at once.
        self._answered = False

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
        import trio

        attempt = 0
        away_since: float | None = None
        while True:
            attempt += 1
            try:
                if before_hook is not None and (hooked := before_hook()) is not None:
                    await hooked
                result = await func()
            except Exception as exc:
                if not self.will_retry(exc):
                    if not (self._answered and not_connected(exc)):
                        raise
                    now = trio.current_time()
                    away_since = now if away_since is None else away_since
                    if now - away_since >= self._away_for:
                        raise
                    self._episode.away(exc)
                await trio.sleep(self.delay(attempt))
                continue
            self._answered = True
            if attempt > 1:  # a command refused before went through: the episode is over
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
        except REFUSING as exc:
            if not REFUSALS.refused(exc):
                raise
            await trio.sleep(pause(attempt))
            continue
        if attempt > 1:
            REFUSALS.accepted()
        return
