"""The Redis/Valkey backend: a run's state on a server every host of the run reaches.

Everything coterie does with a Redis server lives here, and nothing outside
:mod:`coterie.backends` imports it (``tests/test_architecture.py``): the
client and its URL (``client``), the server's refusals (``refusals``), the
post office on streams (``office``, ``mailboxes``, ``mailbox``, ``link``,
``scripts``, ``peek``), the task board on a stream (``board``, its log's
keys and records in ``boardlog``), the run
registry and its live key (``registry``), the run directory's copy
(``mirror``), the event stream (``eventstream``), fetching a run to another
host (``fetch``), the worker directory (``workers``), and the readers of a
run on the server (``inspect``, ``watch``). ``coredis`` itself is imported
only when a server is used, so that naming this package costs a run on files
nothing. docs/scale-out.md is the user's page; docs/architecture.md shows
where it sits.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coterie.backends.redis.board import RedisBoard, open_redis_board
    from coterie.backends.redis.boardlog import read_redis_log
    from coterie.backends.redis.client import RedisTarget, connect, parse_backend, server_errors
    from coterie.backends.redis.mailbox import RedisMailbox
    from coterie.backends.redis.office import open_redis_post_office
    from coterie.backends.redis.peek import (
        peek_redis_mailbox,
        redis_mail_counts,
        redis_mailbox_names,
        remove_redis_mailbox,
    )

__all__ = [
    "RedisBoard",
    "RedisMailbox",
    "RedisTarget",
    "connect",
    "open_redis_board",
    "open_redis_post_office",
    "parse_backend",
    "peek_redis_mailbox",
    "read_redis_log",
    "redis_mail_counts",
    "redis_mailbox_names",
    "remove_redis_mailbox",
    "server_errors",
]

#: Where each public name is defined, imported on first use (PEP 562): choosing
#: a backend reads a URL with ``client`` alone, never the stores.
_HOMES = {
    "RedisBoard": "coterie.backends.redis.board",
    "RedisMailbox": "coterie.backends.redis.mailbox",
    "RedisTarget": "coterie.backends.redis.client",
    "connect": "coterie.backends.redis.client",
    "open_redis_board": "coterie.backends.redis.board",
    "open_redis_post_office": "coterie.backends.redis.office",
    "parse_backend": "coterie.backends.redis.client",
    "peek_redis_mailbox": "coterie.backends.redis.peek",
    "read_redis_log": "coterie.backends.redis.boardlog",
    "redis_mail_counts": "coterie.backends.redis.peek",
    "redis_mailbox_names": "coterie.backends.redis.peek",
    "remove_redis_mailbox": "coterie.backends.redis.peek",
    "server_errors": "coterie.backends.redis.client",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # once is enough
    return value
