"""The post office: every mailbox of one run, found by actor name.

Sending goes through here so that a bad address fails at the sender with a
clear error and nothing written. Where the run's mailboxes are is the post
office's :class:`NameRegistry` (OTP's ``via``): it opens a mailbox, knows
and names the actors that have one, and delivers to those received in
another process. :class:`FileNames` keeps them under the run's mailbox root
(a recipient is known if its directory exists; a record for another
process's mailbox is appended under the directory's lock, and the owner is
woken by inotify or notices it on its next poll), :class:`MemoryNames` in
this process; a backend brings its own (a server's streams).
"""

from __future__ import annotations

import os
from collections import OrderedDict
from typing import TYPE_CHECKING, Protocol

import trio

from coterie.errors import InvalidMessage, MailboxError, UnknownActor
from coterie.journal import Durability, encode
from coterie.mailbox._file import open_file_mailbox, owner_of
from coterie.mailbox._memory import MemoryMailbox
from coterie.mailbox._segments import DEFAULT_SEGMENT_BYTES, SegmentWriter, check_directory
from coterie.messages import ACTOR_NAME_RE, Message, check_actor_name

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from coterie.events import EventLog
    from coterie.mailbox._reader import CorruptRecord
    from coterie.mailbox.base import Mailbox


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


class NameRegistry(Protocol):
    """Where a post office's mailboxes are: how it opens one, knows and names the
    actors with one, and delivers to a mailbox not open in this process."""

    def open(self, name: str) -> Mailbox:
        """Actor *name*'s mailbox, received in this process (made if need be)."""
        ...

    def knows(self, name: object) -> bool:
        """Whether actor *name* has a mailbox (here or in another process)."""
        ...

    def names(self) -> set[str]:
        """Every actor with a mailbox."""
        ...

    async def send(self, message: Message) -> None:
        """Deliver *message* to a mailbox not open here; :class:`UnknownActor` if its
        recipient has none (nothing written)."""
        ...

    def send_nowait(self, message: Message) -> None:
        """Deliver *message* without waiting (or refuse to, where a send must wait)."""
        ...

    def close(self) -> None:
        """Release what the registry holds (not the mailboxes it opened)."""
        ...


def unknown(message: Message, known: set[str]) -> UnknownActor:
    """The refusal of a message for an actor without a mailbox."""
    listed = ", ".join(sorted(known)) or "none"
    return UnknownActor(
        f"cannot send {message.kind!r} to {message.recipient!r}: no such actor (known: {listed})"
    )


class MemoryNames:
    """Mailboxes in this process only (tests, a run that keeps nothing)."""

    def __init__(self) -> None:
        self._boxes: dict[str, MemoryMailbox] = {}

    def open(self, name: str) -> Mailbox:
        box = self._boxes[name] = MemoryMailbox(name)
        return box

    def knows(self, name: object) -> bool:
        return name in self._boxes

    def names(self) -> set[str]:
        return set(self._boxes)

    async def send(self, message: Message) -> None:
        await trio.lowlevel.checkpoint()
        raise unknown(message, self.names())

    def send_nowait(self, message: Message) -> None:
        raise unknown(message, self.names())

    def close(self) -> None:
        self._boxes.clear()


class FileNames:
    """Mailboxes under a run's mailbox root, one directory per actor."""

    def __init__(
        self,
        root: Path,
        *,
        durability: Durability,
        poll_interval: float | None,
        watch: bool,
        segment_bytes: int,
        on_corruption: Callable[[CorruptRecord], None],
    ) -> None:
        self.root = root
        self._durability, self._poll_interval, self._watch = durability, poll_interval, watch
        self._segment_bytes, self._on_corruption = segment_bytes, on_corruption
        # Writers of mailboxes owned elsewhere, the most recently used last: at most
        # WRITERS open (a run answers many short-lived reply mailboxes: the
        # observer's questions, the fault commands), the rest closed.
        self._writers: OrderedDict[str, MailboxWriter] = OrderedDict()
        root.mkdir(parents=True, exist_ok=True)

    def open(self, name: str) -> Mailbox:
        return open_file_mailbox(
            self.root / name,
            name=name,
            durability=self._durability,
            poll_interval=self._poll_interval,
            watch=self._watch,
            segment_bytes=self._segment_bytes,
            on_corruption=self._on_corruption,
        )

    def knows(self, name: object) -> bool:
        return (
            isinstance(name, str)
            and ACTOR_NAME_RE.fullmatch(name) is not None
            and (self.root / name).is_dir()
        )

    def names(self) -> set[str]:
        found = set()
        for entry in os.listdir(self.root):
            if (self.root / entry).is_dir():
                if not ACTOR_NAME_RE.fullmatch(entry):
                    raise MailboxError(
                        f"{self.root / entry}: not a valid actor name; "
                        "the mailbox root holds something coterie did not write"
                    )
                found.add(entry)
        return found

    def _target(self, message: Message) -> Mailbox | MailboxWriter:
        name = message.recipient
        if (self.root / name).is_dir():
            owner = owner_of(self.root / name)
            if owner is not None:
                return owner
            writer = self._writers.get(name)
            if writer is None:
                writer = MailboxWriter(self.root / name, self._durability, self._segment_bytes)
                self._writers[name] = writer
                if len(self._writers) > WRITERS:
                    _, oldest = self._writers.popitem(last=False)
                    oldest.close()
            self._writers.move_to_end(name)
            return writer
        stale = self._writers.pop(name, None)
        if stale is not None:  # its mailbox was removed (a reply mailbox, after its call)
            stale.close()
        raise unknown(message, self.names())

    async def send(self, message: Message) -> None:
        await self._target(message).send(message)

    def send_nowait(self, message: Message) -> None:
        self._target(message).send_nowait(message)

    def close(self) -> None:
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()


class PostOffice:
    """The mailboxes of one run: under *root*, in memory (``root=None``), or where a
    backend's registry (``via=``) keeps them."""

    def __init__(
        self,
        root: Path | None = None,
        *,
        durability: Durability = Durability.BATCH,
        poll_interval: float | None = 0.2,
        watch: bool = True,
        segment_bytes: int = DEFAULT_SEGMENT_BYTES,
        events: EventLog | None = None,
        via: NameRegistry | None = None,
    ) -> None:
        self.durability = durability
        self.events = events
        self._boxes: dict[str, Mailbox] = {}
        if via is not None:
            self.via: NameRegistry = via
        elif root is None:
            self.via = MemoryNames()
        else:
            self.via = FileNames(
                root,
                durability=durability,
                poll_interval=poll_interval,
                watch=watch,
                segment_bytes=segment_bytes,
                on_corruption=self._report_corruption,
            )

    def open(self, name: str) -> Mailbox:
        """The mailbox of actor *name*, opened (and created) as its receiver."""
        check_actor_name(name)
        if name not in self._boxes:
            self._boxes[name] = self.via.open(name)
        return self._boxes[name]

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
        return name in self._boxes or self.via.knows(name)

    def names(self) -> list[str]:
        """Every actor with a mailbox here (open in this process or elsewhere)."""
        return sorted(set(self._boxes) | self.via.names())

    async def send(self, message: Message) -> None:
        """Deliver *message* to its recipient's mailbox."""
        box = self._boxes.get(message.recipient)
        await (self.via.send(message) if box is None else box.send(message))

    def send_nowait(self, message: Message) -> None:
        """Deliver *message* without waiting (any fsync blocks)."""
        box = self._boxes.get(message.recipient)
        if box is None:
            self.via.send_nowait(message)
        else:
            box.send_nowait(message)

    async def aclose(self) -> None:
        """Close every mailbox this post office opened, and its registry's writers."""
        for box in self._boxes.values():
            await box.aclose()
        self._boxes.clear()
        self.via.close()
        await trio.lowlevel.checkpoint()
