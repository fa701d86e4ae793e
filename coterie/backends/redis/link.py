"""What the Redis mailboxes of one post office share: the client, the run's
keys, the consumer name and the policy (dead-lettering, replication), and the
one way a message is written to a stream."""

from __future__ import annotations

import functools
import hashlib
from typing import TYPE_CHECKING, Any

import attrs

from coterie.backends.redis import scripts
from coterie.errors import BackendLost, UnknownActor
from coterie.journal import Durability

if TYPE_CHECKING:
    import coredis

    from coterie.backends.redis.client import RedisTarget
    from coterie.events import EventLog
    from coterie.mailbox.base import Position
    from coterie.messages import Message

#: The consumer group of every mailbox stream (one group per stream: the
#: mailbox's receiver; the consumer inside it is the receiving process).
GROUP = "receiver"


def entry_position(entry_id: bytes | str) -> Position:
    """A stream entry id ``MS-SEQ`` as a mailbox position ``(ms, seq)``."""
    text = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    ms, _, seq = text.partition("-")
    return int(ms), int(seq or 0)


def entry_id(position: Position) -> str:
    """The stream entry id of a mailbox position."""
    return f"{position[0]}-{position[1]}"


def stream_key(target: RedisTarget, run_id: str, name: str) -> str:
    """The stream of actor *name*'s mailbox in run *run_id*."""
    return target.key("run", run_id, "mailbox", name)


def registry_key(target: RedisTarget, run_id: str) -> str:
    """The set of every actor with a mailbox in run *run_id*."""
    return target.key("run", run_id, "mailboxes")


@functools.cache
def _sha(source: str) -> str:
    return hashlib.sha1(source.encode()).hexdigest()


@attrs.frozen
class Policy:
    """How a Redis post office's mailboxes behave (docs/scale-out.md)."""

    #: The run's durability policy; on Redis the server's AOF setting is what
    #: makes a write durable, this only decides whether ``WAIT`` is used.
    durability: Durability = Durability.BATCH
    #: A message delivered more than this many times goes to the dead letters.
    max_deliveries: int = 10
    #: Reopening a mailbox takes over in-flight messages idle this long (s).
    claim_idle: float = 0.0
    #: How long one blocking ``XREADGROUP`` waits on the server (s).
    block: float = 5.0
    #: ``WAIT`` for this many replicas after a durable send (0: no ``WAIT``).
    replicas: int = 0
    replica_timeout: float = 1.0


@attrs.frozen
class RedisLink:
    """The Redis side of one post office, shared by its mailboxes."""

    client: coredis.Redis[bytes]
    target: RedisTarget
    run_id: str
    consumer: str
    policy: Policy
    #: What the server promises, as ``statistics().durability`` reports it.
    label: str
    events: EventLog | None
    #: The run's mailboxes this process has seen registered (at open, or by opening
    #: them): once there was one, a registry gone means the server lost the run.
    registered: set[str] = attrs.field(factory=set, eq=False)

    async def run_script(self, source: str, keys: list[str], args: list[str | int]) -> Any:
        """Run one of :mod:`coterie.backends.redis.scripts` by its SHA, sending
        its text only when the server does not have it (a restarted server
        has lost its script cache)."""
        from coredis.exceptions import NoScriptError

        try:
            return await self.client.evalsha(_sha(source), keys, args)
        except NoScriptError:
            return await self.client.eval(source, keys, args)

    def lost(self, what: str) -> BackendLost:
        """The error of the run's *what* gone from the server: coterie never removes
        a mailbox while the run lives, so the server lost it."""
        return BackendLost(
            f"the Redis server at {self.target.url} no longer holds run {self.run_id}'s"
            f" {what} (restarted without its data, or flushed); the run stopped: what"
            " the server kept for it is gone"
        )

    async def ack(self, key: str, ids: list[str]) -> None:
        await self.run_script(scripts.ACK, [key], [GROUP, *ids])

    async def open_mailbox(self, key: str, name: str, idle_ms: int, count: int) -> Any:
        """Open mailbox *name* (its stream *key*) on the server for this consumer:
        :data:`~coterie.backends.redis.scripts.OPEN`; its first page of
        :meth:`own_pending`."""
        args: list[str | int] = [GROUP, self.consumer, "-", count, name, idle_ms]
        return await self.run_script(scripts.OPEN, [key, self.registry()], args)

    async def own_pending(self, key: str, start: str, count: int) -> Any:
        return await self.run_script(scripts.MINE, [key], [GROUP, self.consumer, start, count])

    async def dead_letter(
        self, key: str, dead_key: str, entry: str, count: int, reason: str
    ) -> Any:
        return await self.run_script(
            scripts.DEAD_LETTER, [key, dead_key], [GROUP, entry, count, reason]
        )

    def stream(self, name: str) -> str:
        """The stream of actor *name*'s mailbox."""
        return stream_key(self.target, self.run_id, name)

    def dead_letters(self, name: str) -> str:
        """The dead-letter stream of actor *name*'s mailbox."""
        return self.target.key("run", self.run_id, "dead-letter", name)

    def registry(self) -> str:
        """The set of every actor with a mailbox in the run."""
        return registry_key(self.target, self.run_id)

    async def append(self, message: Message, known: str) -> Position:
        """XADD *message* to its recipient's stream, which must exist already
        (``NOMKSTREAM``: an unknown actor gets nothing written)."""
        payload = message.to_json_bytes()  # refuses a body that is not JSON
        key = self.stream(message.recipient)
        wait = self.policy.replicas > 0 and message.durable
        if wait and self.policy.durability is not Durability.NONE:
            timeout_ms = max(1, int(self.policy.replica_timeout * 1000))
            with self.client.ensure_replication(self.policy.replicas, timeout_ms):
                written = await self.client.xadd(key, {"m": payload}, nomkstream=True)
        else:
            written = await self.client.xadd(key, {"m": payload}, nomkstream=True)
        if written is None:
            if self.registered and not await self.client.exists([self.registry()]):
                raise self.lost("mailboxes")
            raise UnknownActor(
                f"cannot send {message.kind!r} to {message.recipient!r}: "
                f"no such actor (known: {known})"
            )
        return entry_position(written)
