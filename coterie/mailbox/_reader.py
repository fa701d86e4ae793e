"""Reading a mailbox's log: repair on open, then records into the inbox.

On open (under the writers' lock) a torn tail is cut off the newest segment
and kept aside; the write point (where the next record will go) bounds the
cursor. While open, :class:`LogReader` reads complete records from the scan
position into the inbox, skipping what is acknowledged, reporting what is
corrupt, and moving to the next segment at a seal (or, if a seal was lost to
damage, on a thorough look).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import attrs

from coterie.journal import SEAL, Corrupt, Record, cut_tail, is_seal, scan, torn_tail
from coterie.mailbox._segments import list_segments, segment_path
from coterie.mailbox.base import Delivery, Inbox, Position
from coterie.messages import Message

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


@attrs.frozen
class CorruptRecord:
    """Bytes in a mailbox log that are not a valid record, skipped or cut off."""

    mailbox: str
    segment: int
    start: int
    end: int | None
    action: str  # "skipped" or "truncated"
    saved_to: str | None = None


def repair_tail(directory: Path, name: str, report: Callable[[CorruptRecord], None]) -> int:
    """Cut a torn record off the newest segment; returns the oldest segment number.

    The caller holds the writers' lock, so no live writer is mid-append.
    """
    segments = list_segments(directory)
    if not segments:
        return 0
    number = segments[-1]
    path = segment_path(directory, number)
    data = path.read_bytes()
    tail = torn_tail(data)
    if tail is not None:
        saved = directory / f"corrupt-{number:016d}-{tail}.bin"
        fd = os.open(path, os.O_RDWR)
        try:
            cut_tail(fd, tail, data[tail:], saved, sync=True)
        finally:
            os.close(fd)
        report(CorruptRecord(name, number, tail, len(data), "truncated", str(saved)))
    return segments[0]


def log_end(directory: Path) -> Position:
    """The end of the newest segment (``(0, 0)`` for an empty log)."""
    segments = list_segments(directory)
    if not segments:
        return (0, 0)
    return (segments[-1], segment_path(directory, segments[-1]).stat().st_size)


def write_point(directory: Path, end: Position) -> Position:
    """Where the next record will be written, given the log's end."""
    seg, size = end
    if seg == 0:
        return (0, 0)
    with open(segment_path(directory, seg), "rb") as f:
        f.seek(max(0, size - len(SEAL)))
        sealed = size >= len(SEAL) and f.read() == SEAL
    return (seg + 1, 0) if sealed else (seg, size)


class LogReader:
    """Reads records past the inbox's scan position into the inbox."""

    def __init__(
        self,
        directory: Path,
        name: str,
        inbox: Inbox,
        open_end: Position,
        report: Callable[[CorruptRecord], None],
    ) -> None:
        self.directory = directory
        self.name = name
        self.inbox = inbox
        self.open_end = open_end  # records before it may have been delivered before
        self.report = report
        # Look for a next segment even without a seal (set on open, after a
        # poll or a write from elsewhere, for statistics).
        self.look_further = True
        self._segment = -1
        self._fd: int | None = None
        segments = list_segments(directory)
        seg, _off = inbox.scan_pos
        if segments and seg not in segments:
            later = [s for s in segments if s > seg]
            if later:  # the cursor's segment was deleted: start at the next one
                inbox.moved_scan((later[0], 0))

    def _segment_fd(self, segment: int) -> int | None:
        if self._segment != segment:
            self.close()
            try:
                self._fd = os.open(segment_path(self.directory, segment), os.O_RDONLY)
            except FileNotFoundError:
                return None
            self._segment = segment
        return self._fd

    def refill(self, unarrived: set[Position]) -> bool:
        """Read what the log holds past the scan position.

        Records in *unarrived* (appended by this process, not yet durable) are
        delivered by their own send, never read early: returns True if reading
        stopped at one of them.
        """
        inbox = self.inbox
        while True:
            seg, off = inbox.scan_pos
            if seg == 0:  # nothing had been written when we last looked
                segments = list_segments(self.directory)
                if not segments:
                    return False
                inbox.moved_scan((segments[0], 0))
                continue
            fd = self._segment_fd(seg)
            if fd is None:
                return False
            size = os.fstat(fd).st_size
            horizon = min(unarrived) if unarrived else None
            capped = horizon is not None and horizon[0] <= seg
            if capped:
                assert horizon is not None
                size = min(size, horizon[1])
            stuck_at: int | None = None
            sealed = False
            if size > off:
                for item in scan(os.pread(fd, size - off, off), base=off):
                    if isinstance(item, Record):
                        if is_seal(item):
                            sealed = True
                            break
                        self._take(seg, item)
                    elif isinstance(item, Corrupt):
                        self.report(CorruptRecord(self.name, seg, item.start, item.end, "skipped"))
                        inbox.moved_scan((seg, item.end))
                    else:
                        stuck_at = item.start
                        break
            if capped and not sealed:
                return True
            if not sealed:
                if not self.look_further:
                    return False
                if not segment_path(self.directory, seg + 1).exists():
                    self.look_further = False
                    return False  # the newest segment: an incomplete tail may still finish
            if stuck_at is not None:
                # Writers have moved on: the tail of this segment will never finish.
                self.report(CorruptRecord(self.name, seg, stuck_at, size, "skipped"))
            inbox.moved_scan((seg + 1, 0))

    def _take(self, seg: int, item: Record) -> None:
        pos = (seg, item.start)
        inbox = self.inbox
        if not inbox.is_acked(pos):
            try:
                message = Message.from_json_bytes(item.payload)
            except ValueError:
                self.report(CorruptRecord(self.name, seg, item.start, item.end, "skipped"))
            else:
                inbox.add(Delivery(message, pos, redelivered=pos < self.open_end))
        inbox.moved_scan((seg, item.end))

    def close(self) -> None:
        """Close the segment being read."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._segment = -1
