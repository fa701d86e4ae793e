"""Durable mailboxes: how actors receive messages (docs/runtime.md).

This package owns message storage and delivery: the file-backed record log
(the default), the in-memory mailbox for tests, and the post office that
finds a run's mailboxes by actor name through its name registry (files,
memory, or a backend's: Redis streams live in ``coterie/backends/redis/``,
built on this package's public core, :mod:`coterie.mailbox.base`). It
guarantees at-least-once delivery with explicit acknowledgement and knows
nothing of actors, supervision or agents; it must not import from those
packages.

The API is modelled on Trio's memory channels: ``send`` / ``send_nowait``,
``receive`` / ``receive_nowait`` (raising ``trio.WouldBlock``),
``statistics()`` and ``aclose()`` (after which waiting receivers get
``trio.ClosedResourceError``), plus ``ack`` and ``requeue_in_flight``.

The record framing, torn-tail repair and durability policies (group commit
included) come from :mod:`coterie.journal`, through its public names only;
``Durability`` is the journal's, re-exported here.
"""

from coterie.journal import Durability
from coterie.mailbox._file import FileMailbox, open_file_mailbox
from coterie.mailbox._memory import MemoryMailbox
from coterie.mailbox._peek import peek_mailbox
from coterie.mailbox._postoffice import (
    FileNames,
    MailboxWriter,
    MemoryNames,
    NameRegistry,
    PostOffice,
)
from coterie.mailbox._reader import CorruptRecord
from coterie.mailbox.base import Delivery, Mailbox, MailboxStatistics, Position

__all__ = [
    "CorruptRecord",
    "Delivery",
    "Durability",
    "FileMailbox",
    "FileNames",
    "Mailbox",
    "MailboxStatistics",
    "MailboxWriter",
    "MemoryMailbox",
    "MemoryNames",
    "NameRegistry",
    "Position",
    "PostOffice",
    "open_file_mailbox",
    "peek_mailbox",
]
