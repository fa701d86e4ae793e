"""The durable log under the mailbox, the task board and the transcripts.

This package owns what those three logs share: the record framing (magic,
length, two CRC-32 checksums, payload; the bytes every run on disk is made
of), scanning a buffer into records, damage and an unfinished tail, the seal
that closes a segment, the file operations of an append-only log (whole
writes, cutting a torn tail and keeping its bytes, the ``flock`` of the
writers), and durability (the ``always`` / ``batch`` / ``none`` policies,
group commit for Trio tasks and for threads, and the runner that puts fsyncs
inline or in a worker thread by how fast the disk is).

It knows nothing of what the records mean (messages, task operations,
conversation entries), of the file names and directory layouts of the logs,
or of how each reports damage: those stay with the mailbox, the board and
the transcript. It must not import from any other coterie package.

Guarantees: a record is read back only if both checksums match, so a torn
tail is told apart from a damaged record in the middle (:func:`scan`);
whoever holds the writers' lock cuts a torn tail before appending after it
(:func:`cut_tail`); an append under ``always`` or ``batch`` returns only once
an fsync that covers it has finished, and a cancelled wait never abandons an
fsync half done.
"""

from coterie.journal._commit import GroupCommit, ThreadGroupCommit
from coterie.journal._files import FileLock, cut_tail, write_all
from coterie.journal._framing import (
    HEADER_SIZE,
    MAGIC,
    MAX_RECORD,
    SEAL,
    Corrupt,
    Incomplete,
    Item,
    Record,
    encode,
    is_seal,
    scan,
    torn_tail,
)
from coterie.journal._policy import Durability, SyncPolicy
from coterie.journal._sync import DISK, SyncRunner

__all__ = [
    "DISK",
    "HEADER_SIZE",
    "MAGIC",
    "MAX_RECORD",
    "SEAL",
    "Corrupt",
    "Durability",
    "FileLock",
    "GroupCommit",
    "Incomplete",
    "Item",
    "Record",
    "SyncPolicy",
    "SyncRunner",
    "ThreadGroupCommit",
    "cut_tail",
    "encode",
    "is_seal",
    "scan",
    "torn_tail",
    "write_all",
]
