"""The task board's log on a Redis/Valkey server: its key, its records, a whole read.

The log is a stream (``<prefix>run:<run_id>:board:log``) whose entry ``0-<n>``
holds the n-th record in field ``r``: the file board's JSON, with the nonce of
the attempt that wrote it as its first member (:func:`tagged`).
:mod:`coterie.backends.redis.board` keeps a board on it; readers that only
look (audits, ``coterie tasks``, ``watch``) use :func:`read_redis_log`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coterie.backends.redis.client import connect
from coterie.board.log import LogEntry, log_entry

if TYPE_CHECKING:
    from coterie.backends.redis.client import RedisTarget

__all__ = ["BATCH", "log_key", "payload", "read_redis_log", "tagged", "text"]

#: How many records one round trip brings back when catching up.
BATCH = 1000


def log_key(target: RedisTarget, run_id: str) -> str:
    """The key of a run's board log (the board's other keys are named after it)."""
    return target.key("run", run_id, "board", "log")


async def read_redis_log(target: RedisTarget, run_id: str) -> list[LogEntry]:
    """Every readable record of run *run_id*'s board on *target*, in log order
    (``read_log`` for the Redis board: audits and ``coterie tasks``)."""
    entries: list[LogEntry] = []
    async with connect(target) as client:
        start = "-"
        while True:
            batch = await client.xrange(log_key(target, run_id), start, "+", count=BATCH)
            for entry in batch:
                found = log_entry(payload(entry.field_values))
                if found is not None:
                    entries.append(found)
            if len(batch) < BATCH:
                return entries
            start = "(" + text(batch[-1].identifier)


def text(value: str | bytes) -> str:
    """A stream entry's id (or field) as text."""
    return value.decode() if isinstance(value, bytes) else value


def payload(fields: Any) -> bytes:
    """The record a stream entry's fields hold."""
    value = fields.get(b"r", fields.get("r", b""))
    return value.encode() if isinstance(value, str) else bytes(value)


def tagged(nonce: bytes, record: bytes) -> bytes:
    """The record's JSON object with the attempt's nonce as its first member."""
    return nonce + record[1:]
