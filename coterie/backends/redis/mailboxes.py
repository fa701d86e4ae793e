"""The Redis side of a post office: opening mailboxes, writing to the others."""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from coterie.backends.redis.mailbox import SEND_NOWAIT_REFUSED, RedisMailbox
from coterie.errors import MailboxError

if TYPE_CHECKING:
    from coterie.backends.redis.intake import Intake
    from coterie.backends.redis.link import RedisLink
    from coterie.messages import Message


class RedisMailboxes:
    """A post office's :class:`~coterie.mailbox.NameRegistry` on Redis: opens mailboxes
    (each with its task in the post office's nursery) and writes to the others."""

    def __init__(
        self, link: RedisLink, nursery: trio.Nursery, known: set[str], intake: Intake
    ) -> None:
        self.link = link
        self._nursery = nursery
        self._intake = intake
        # Actors with a mailbox on the server, as far as this process has seen
        # (read when the post office opened, then every open and send).
        self._known = known

    def open(self, name: str) -> RedisMailbox:
        """Actor *name*'s mailbox, received here (read by the post office's one reader)."""
        box = RedisMailbox(name, self.link, self._intake)
        self._known.add(name)
        self._nursery.start_soon(box.run, name=f"mailbox reader {name}")
        return box

    def knows(self, name: object) -> bool:
        return isinstance(name, str) and name in self._known

    def names(self) -> set[str]:
        return set(self._known)

    async def send(self, message: Message) -> None:
        """XADD to a mailbox received elsewhere (another process)."""
        await trio.lowlevel.checkpoint_if_cancelled()
        known = ", ".join(sorted(self._known)) or "none"
        await self.link.append(message, known=known)
        self._known.add(message.recipient)

    def send_nowait(self, message: Message) -> None:
        """Refused on Redis: a send is a round trip to the server."""
        raise MailboxError(SEND_NOWAIT_REFUSED)

    def close(self) -> None:
        """Nothing to release: the connection is the post office's opener's."""
