"""Durable mailboxes: how actors receive messages (docs/runtime.md).

This package owns message storage and delivery: the file-backed record log
(the default), the in-memory mailbox for tests, Redis Streams (for a run
spread over hosts, docs/scale-out.md) and the post office that finds a run's
mailboxes by actor name. It guarantees at-least-once delivery
with explicit acknowledgement and knows nothing of actors, supervision or
agents; it must not import from those packages.

The API is modelled on Trio's memory channels: ``send`` / ``send_nowait``,
``receive`` / ``receive_nowait`` (raising ``trio.WouldBlock``),
``statistics()`` and ``aclose()`` (after which waiting receivers get
``trio.ClosedResourceError``), plus ``ack`` and ``requeue_in_flight``.

The record framing, torn-tail repair and durability policies (group commit
included) come from :mod:`coterie.journal`, through its public names only;
``Durability`` is the journal's, re-exported here.
"""

from coterie.journal import Durability
from coterie.mailbox._base import Delivery, Mailbox, MailboxStatistics, Position
from coterie.mailbox._file import FileMailbox, open_file_mailbox
from coterie.mailbox._memory import MemoryMailbox
from coterie.mailbox._peek import peek_mailbox
from coterie.mailbox._postoffice import MailboxWriter, PostOffice
from coterie.mailbox._reader import CorruptRecord
from coterie.mailbox._redis_box import RedisMailbox
from coterie.mailbox._redis_office import open_redis_post_office
from coterie.mailbox._redis_peek import (
    PeekedMessage,
    peek_redis_mailbox,
    redis_mail_counts,
    redis_mailbox_names,
    remove_redis_mailbox,
)

__all__ = [
    "CorruptRecord",
    "Delivery",
    "Durability",
    "FileMailbox",
    "Mailbox",
    "MailboxStatistics",
    "MailboxWriter",
    "MemoryMailbox",
    "PeekedMessage",
    "Position",
    "PostOffice",
    "RedisMailbox",
    "open_file_mailbox",
    "open_redis_post_office",
    "peek_mailbox",
    "peek_redis_mailbox",
    "redis_mail_counts",
    "redis_mailbox_names",
    "remove_redis_mailbox",
]
