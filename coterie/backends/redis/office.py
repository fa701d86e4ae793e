"""A post office on Redis: :func:`open_redis_post_office` (docs/scale-out.md).

The mailboxes' reader (:mod:`coterie.backends.redis.intake`, one per post
office, with a connection of its own) needs a Trio nursery and the client an
open connection pool, so a Redis post office only exists inside
``async with open_redis_post_office(target, run_id) as post:``; on the way out
every mailbox is closed and the client disconnected. The object it yields is
a plain :class:`~coterie.mailbox.PostOffice`, so everything that takes one
runs on Redis unchanged.
"""

from __future__ import annotations

import os
import re
import secrets
import socket
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import trio

from coterie.backends.redis.intake import Intake
from coterie.backends.redis.link import Policy, RedisLink, registry_key
from coterie.backends.redis.mailboxes import RedisMailboxes
from coterie.errors import MailboxError
from coterie.journal import Durability
from coterie.mailbox import PostOffice

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    import coredis

    from coterie.backends.redis.client import RedisTarget
    from coterie.events import EventLog

_RUN_ID_RE = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


async def _server_promise(client: coredis.Redis[bytes]) -> str:
    """What a write acknowledged by this server survives, from its AOF setting."""
    from coredis.exceptions import ResponseError

    try:
        config = await client.config_get(["appendonly", "appendfsync"])
    except ResponseError:  # CONFIG disabled (managed services)
        return "redis:unknown"
    appendonly = config.get(b"appendonly", b"no")
    if appendonly != b"yes":
        return "redis:no-aof"
    return "redis:aof-" + config.get(b"appendfsync", b"everysec").decode()


@asynccontextmanager
async def open_redis_post_office(
    target: RedisTarget,
    run_id: str,
    *,
    durability: Durability = Durability.BATCH,
    max_deliveries: int = 10,
    claim_idle: float = 0.0,
    block: float = 5.0,
    replicas: int = 0,
    replica_timeout: float = 1.0,
    events: EventLog | None = None,
) -> AsyncIterator[PostOffice]:
    """The post office of run *run_id* on the Redis server *target*.

    Its keys are ``target.key("run", run_id, ...)``. ``max_deliveries``: a
    message delivered more often goes to the dead letters. ``claim_idle``:
    opening a mailbox takes over in-flight messages idle at least this long
    (0: all of them; a mailbox has one receiver at a time). ``replicas``:
    ``WAIT`` for that many replicas after each durable send.
    """
    if not _RUN_ID_RE.fullmatch(run_id):
        raise MailboxError(f"run id {run_id!r}: use 1-128 letters, digits or _.-")
    from coterie.backends.redis.client import connect

    policy = Policy(
        durability=durability,
        max_deliveries=max_deliveries,
        claim_idle=claim_idle,
        block=block,
        replicas=replicas,
        replica_timeout=replica_timeout,
    )
    consumer = f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(4)}"
    async with connect(target) as client, trio.open_nursery() as nursery:
        label = await _server_promise(client)
        members = await client.smembers(registry_key(target, run_id))
        known = {m.decode() if isinstance(m, bytes) else str(m) for m in members}
        link = RedisLink(client, target, run_id, consumer, policy, label, events, set(known))
        intake = Intake(link)
        await nursery.start(intake.run, name="mailbox intake")
        post = PostOffice(
            durability=durability, events=events, via=RedisMailboxes(link, nursery, known, intake)
        )
        try:
            yield post
        finally:
            await post.aclose()
            nursery.cancel_scope.cancel()
