"""Record framing shared by every durable log: magic, length, checksums, payload.

Theory of operation
-------------------
A record is ``MAGIC | length:u32 | payload_crc:u32 | header_crc:u32 | payload``
(little-endian, 16-byte header). The header has its own checksum so that a
flipped bit in ``length`` is caught before it is trusted: a corrupt length can
never make the reader swallow the good records behind it, or mistake a
corrupt record for an unfinished one.

Scanning a buffer gives, in order, either complete valid records or one of:

* ``Corrupt``: bytes that are not a valid record, followed later in the same
  buffer by a valid one (found again by searching for ``MAGIC``). The reader
  skips them and reports them.
* A record with an empty payload is a *seal*: in a segmented log (the
  mailbox's) the writer moved on to the next segment, and the reader should
  too. Logs without segments never write one.
* ``Incomplete``: the buffer ends inside what could still become a valid
  record (a prefix of a header, or a valid header whose payload runs past the
  end). A live reader waits for more bytes; on open, after a crash, it is a
  torn tail and is cut off.

The byte layout is the on-disk format of every run ever written (mailbox
segments, ``board.log``, transcripts): it must never change. Nothing here
does I/O.
"""

from __future__ import annotations

import struct
import zlib
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from collections.abc import Iterator

MAGIC = b"\xc7\x0e\x7e\x1e"
_HEADER = struct.Struct("<4sIII")
HEADER_SIZE = _HEADER.size
MAX_RECORD = 64 * 1024 * 1024


def is_seal(record: Record) -> bool:
    """Whether *record* is the seal a writer appends to a segment it leaves behind."""
    return not record.payload


def encode(payload: bytes) -> bytes:
    """Frame *payload* as one record."""
    if len(payload) > MAX_RECORD:
        raise ValueError(f"record of {len(payload)} bytes exceeds the {MAX_RECORD}-byte limit")
    length = len(payload)
    payload_crc = zlib.crc32(payload)
    head = MAGIC + struct.pack("<II", length, payload_crc)
    return head + struct.pack("<I", zlib.crc32(head)) + payload


@attrs.frozen
class Record:
    """A valid record at ``[start, end)`` of the scanned buffer."""

    start: int
    end: int
    payload: bytes


@attrs.frozen
class Corrupt:
    """Bytes ``[start, end)`` that are not a record; a valid record follows."""

    start: int
    end: int


@attrs.frozen
class Incomplete:
    """The buffer ends at ``start`` inside something that may still become a record."""

    start: int


Item = Record | Corrupt | Incomplete


def _parse_at(buf: bytes, pos: int) -> Record | Incomplete | None:
    """The record at *pos*, ``Incomplete`` if the buffer ends first, ``None`` if invalid."""
    avail = len(buf) - pos
    if avail < HEADER_SIZE:
        # A short tail is a torn header only if what is there matches MAGIC.
        head = buf[pos : pos + min(avail, 4)]
        return Incomplete(pos) if MAGIC.startswith(head) else None
    magic, length, payload_crc, header_crc = _HEADER.unpack_from(buf, pos)
    if magic != MAGIC or zlib.crc32(buf[pos : pos + 12]) != header_crc:
        return None
    if length > MAX_RECORD:
        return None
    end = pos + HEADER_SIZE + length
    if end > len(buf):
        return Incomplete(pos)
    payload = buf[pos + HEADER_SIZE : end]
    if zlib.crc32(payload) != payload_crc:
        return None
    return Record(pos, end, payload)


def scan(buf: bytes, base: int = 0) -> Iterator[Item]:
    """Yield the records of *buf* in order; offsets are reported relative to *base*.

    Stops after an ``Incomplete``; never yields two ``Corrupt`` in a row.
    """
    pos = 0
    size = len(buf)
    while pos < size:
        item = _parse_at(buf, pos)
        if isinstance(item, Record):
            yield Record(base + item.start, base + item.end, item.payload)
            pos = item.end
            continue
        # Invalid (or torn) at pos: look for the next record that parses.
        search = pos + 1
        while True:
            nxt = buf.find(MAGIC, search)
            if nxt < 0:
                # Nothing valid follows: the rest may be a record still being
                # written (or torn by a crash).
                yield Incomplete(base + pos)
                return
            candidate = _parse_at(buf, nxt)
            if isinstance(candidate, Record):
                yield Corrupt(base + pos, base + nxt)
                pos = nxt
                break
            if isinstance(candidate, Incomplete):
                # Bad bytes followed by a record still being written: wait for
                # it to complete, then report the bad bytes as corrupt.
                yield Incomplete(base + pos)
                return
            search = nxt + 1


def torn_tail(buf: bytes) -> int | None:
    """Where the unfinished record at the end of *buf* starts, or ``None`` if it ends whole.

    After a crash, under the writers' lock, that is a torn tail to cut off.
    """
    for item in scan(buf):
        if isinstance(item, Incomplete):
            return item.start  # scan stops after an Incomplete: it is the last item
    return None


SEAL = encode(b"")
"""The empty record that closes a segment. Payloads that carry data are never empty."""
