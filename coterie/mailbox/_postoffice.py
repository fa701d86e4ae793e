"""The post office: every mailbox of one run, found by actor name.

Sending goes through here so that a bad address fails at the sender with a
clear error and nothing written. A recipient is known if its mailbox is open
in this post office or its directory exists under the run's mailbox root
(another process owns it); in the second case the record is appended under
the directory's lock, and the owner is woken by inotify (or notices it on
its next poll).
"""

from __future__ import annotations

import os
from collections import OrderedDict
from typing import TYPE_CHECKING

import trio

from coterie.errors import InvalidMessage, MailboxError, UnknownActor
from coterie.journal import Durability, encode
from coterie.mailbox._file import open_file_mailbox, owner_of
from coterie.mailbox._memory import MemoryMailbox
from coterie.mailbox._segments import DEFAULT_SEGMENT_BYTES, SegmentWriter, check_directory
from coterie.messages import ACTOR_NAME_RE, Message, check_actor_name

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.events import EventLog
    from coterie.mailbox._base import Mailbox
    from coterie.mailbox._reader import CorruptRecord
    from coterie.mailbox._redis_mailboxes import RedisMailboxes


class MailboxWriter:
    """Appends to a mailbox owned elsewhere (another process, or not open yet)."""

    def __init__(
        self,
        directory: Path,
        durability: Durability = Durability.BATCH,
        segment_bytes: int = DEFAULT_SEGMENT_BYTES,
    ) -> None:
        check_directory(directory)
        self.name = directory.name
        self._writer = SegmentWriter(directory, durability, segment_bytes)

    def _append(self, message: Message) -> int:
        if message.recipient != self.name:
            raise InvalidMessage(
                f"message for {message.recipient!r} sent to the mailbox of {self.name!r}"
            )
        _start, _end, fd = self._writer.append(encode(message.to_json_bytes()))
        return fd

    async def send(self, message: Message) -> None:
        """Append *message*; returns once it is as durable as the policy promises."""
        await trio.lowlevel.checkpoint_if_cancelled()
        fd = self._append(message)
        if message.durable:
            await self._writer.make_durable(fd)
        await trio.lowlevel.cancel_shielded_checkpoint()

    def send_nowait(self, message: Message) -> None:
        """Append *message*, blocking for any fsync."""
        fd = self._append(message)
        if message.durable:
            self._writer.make_durable_now(fd)

    def close(self) -> None:
        """Release the file descriptors."""
        self._writer.close()


#: Writers of mailboxes owned elsewhere a post office keeps open at most.
WRITERS = 64


class PostOffice:
    """The mailboxes of one run. ``root=None`` keeps them in memory; ``redis=``
    (given by :func:`~coterie.mailbox.open_redis_post_office`) on Redis streams."""

    def __init__(
        self,
        root: Path | None = None,
        *,
        durability: Durability = Durability.BATCH,
        poll_interval: float | None = 0.2,
        watch: bool = True,
        segment_bytes: int = DEFAULT_SEGMENT_BYTES,
        events: EventLog | None = None,
        redis: RedisMailboxes | None = None,
    ) -> None:
        self.root = root
        self.durability = durability
        self.poll_interval = poll_interval
        self.watch = watch
        self.segment_bytes = segment_bytes
        self.events = events
        self.redis = redis
        self._boxes: dict[str, Mailbox] = {}
        # Writers of mailboxes owned elsewhere, the most recently used last: at most
        # WRITERS open (a run answers many short-lived reply mailboxes: the
        # observer's questions, the fault commands), the rest closed.
        self._writers: OrderedDict[str, MailboxWriter] = OrderedDict()
        if root is not None:
            root.mkdir(parents=True, exist_ok=True)

    def open(self, name: str) -> Mailbox:
        """The mailbox of actor *name*, opened (and created) as its receiver."""
        check_actor_name(name)
        if name in self._boxes:
            return self._boxes[name]
        box: Mailbox
        if self.redis is not None:
            box = self.redis.open(name)
        elif self.root is None:
            box = MemoryMailbox(name)
        else:
            box = open_file_mailbox(
                self.root / name,
                name=name,
                durability=self.durability,
                poll_interval=self.poll_interval,
                watch=self.watch,
                segment_bytes=self.segment_bytes,
                on_corruption=self._report_corruption,
            )
        self._boxes[name] = box
        return box

    def _report_corruption(self, record: CorruptRecord) -> None:
        if self.events is not None:
            self.events.emit(
                "mailbox.corrupt",
                actor=record.mailbox,
                segment=record.segment,
                start=record.start,
                end=record.end,
                action=record.action,
                saved_to=record.saved_to,
            )

    def __getitem__(self, name: str) -> Mailbox:
        try:
            return self._boxes[name]
        except KeyError:
            raise UnknownActor(f"no mailbox open for {name!r} in this post office") from None

    def __contains__(self, name: object) -> bool:
        if name in self._boxes:
            return True
        if self.redis is not None:
            return self.redis.knows(name)
        return (
            isinstance(name, str)
            and self.root is not None
            and ACTOR_NAME_RE.fullmatch(name) is not None
            and (self.root / name).is_dir()
        )

    def names(self) -> list[str]:
        """Every actor with a mailbox here (open in this process or on disk)."""
        found = set(self._boxes)
        if self.redis is not None:
            found |= self.redis.names()
        if self.root is not None:
            for entry in os.listdir(self.root):
                if (self.root / entry).is_dir():
                    if not ACTOR_NAME_RE.fullmatch(entry):
                        raise MailboxError(
                            f"{self.root / entry}: not a valid actor name; "
                            "the mailbox root holds something coterie did not write"
                        )
                    found.add(entry)
        return sorted(found)

    def _target(self, message: Message) -> Mailbox | MailboxWriter | RedisMailboxes:
        name = message.recipient
        box = self._boxes.get(name)
        if box is not None:
            return box
        if self.redis is not None:
            return self.redis  # the server refuses an unknown actor, nothing written
        if self.root is not None and (self.root / name).is_dir():
            owner = owner_of(self.root / name)
            if owner is not None:
                return owner
            writer = self._writers.get(name)
            if writer is None:
                writer = MailboxWriter(self.root / name, self.durability, self.segment_bytes)
                self._writers[name] = writer
                if len(self._writers) > WRITERS:
                    _, oldest = self._writers.popitem(last=False)
                    oldest.close()
            self._writers.move_to_end(name)
            return writer
        stale = self._writers.pop(name, None)
        if stale is not None:  # its mailbox was removed (a reply mailbox, after its call)
            stale.close()
        known = ", ".join(self.names()) or "none"
        raise UnknownActor(
            f"cannot send {message.kind!r} to {name!r}: no such actor (known: {known})"
        )

    async def send(self, message: Message) -> None:
        """Deliver *message* to its recipient's mailbox."""
        await self._target(message).send(message)

    def send_nowait(self, message: Message) -> None:
        """Deliver *message* without waiting (any fsync blocks)."""
        self._target(message).send_nowait(message)

    async def aclose(self) -> None:
        """Close every mailbox and writer this post office opened."""
        for box in self._boxes.values():
            await box.aclose()
        for writer in self._writers.values():
            writer.close()
        self._boxes.clear()
        self._writers.clear()
        await trio.lowlevel.checkpoint()
