"""Looking into a run's Redis mailboxes from outside: read-only, or one removal.

For ``coterie inbox``, ``coterie watch`` and the observer on the Redis
backend, from any host. A mailbox's stream holds exactly its unacknowledged
messages (an acknowledgement deletes the entry, see ``_redis_scripts.ACK``):
:func:`peek_redis_mailbox` reads them with ``XRANGE``, which neither
delivers nor claims anything and leaves delivery counts as they are; the
consumer group's pending list (``XPENDING``) says which of them are in
flight. :func:`remove_redis_mailbox` deletes a mailbox nobody will read
again (the reply mailbox of a control call).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coterie.backends.protocol import Pending
from coterie.backends.redis.link import GROUP, registry_key, stream_key
from coterie.errors import InvalidMessage
from coterie.messages import Message

if TYPE_CHECKING:
    import coredis

    from coterie.backends.redis.client import RedisTarget

BATCH = 500


async def redis_mailbox_names(
    client: coredis.Redis[bytes], target: RedisTarget, run_id: str
) -> list[str]:
    """The actors that have a mailbox in run *run_id*, sorted."""
    members = await client.smembers(registry_key(target, run_id))
    return sorted(_text(m) for m in members)


async def peek_redis_mailbox(
    client: coredis.Redis[bytes], target: RedisTarget, run_id: str, name: str
) -> list[Pending]:
    """The unacknowledged messages of actor *name*'s mailbox in run *run_id*, in
    stream order, without delivering, claiming or acknowledging any (entries that
    are not messages are left out)."""
    from coredis.exceptions import ResponseError  # here: a run on files never pays for it
    from coredis.response.types import StreamPending

    key = stream_key(target, run_id, name)
    counts: dict[str, int] = {}
    start = "-"
    while True:
        try:
            rows = await client.xpending(key, GROUP, start=start, end="+", count=BATCH)
        except ResponseError as exc:  # no such stream or group yet: nothing in flight
            if "NOGROUP" not in str(exc):
                raise
            break
        if isinstance(rows, StreamPending):  # the summary form: not asked for
            break
        for row in rows:
            counts[_text(row.identifier)] = int(row.delivered)
        if len(rows) < BATCH:
            break
        start = "(" + _text(rows[-1].identifier)
    found: list[Pending] = []
    start = "-"
    while True:
        entries = await client.xrange(key, start, "+", count=BATCH)
        for entry in entries:
            ident = _text(entry.identifier)
            payload = entry.field_values.get(b"m", b"")
            raw = payload.encode() if isinstance(payload, str) else bytes(payload)
            try:
                message = Message.from_json_bytes(raw)
            except (ValueError, TypeError, InvalidMessage):
                continue
            found.append(Pending(message, ident in counts, counts.get(ident, 0)))
        if len(entries) < BATCH:
            return found
        start = "(" + _text(entries[-1].identifier)


async def redis_mail_counts(
    client: coredis.Redis[bytes], target: RedisTarget, run_id: str
) -> dict[str, int]:
    """Each actor's unacknowledged messages (pending or in flight) in run *run_id*:
    the length of its stream, which holds exactly those."""
    return {
        name: int(await client.xlen(stream_key(target, run_id, name)))
        for name in await redis_mailbox_names(client, target, run_id)
    }


async def remove_redis_mailbox(
    client: coredis.Redis[bytes], target: RedisTarget, run_id: str, name: str
) -> None:
    """Delete actor *name*'s mailbox in run *run_id* (its stream and its name)."""
    async with client.pipeline(transaction=True) as pipe:
        pipe.delete([stream_key(target, run_id, name)])
        pipe.srem(registry_key(target, run_id), [name])


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value
