"""Looking into a file mailbox from outside: the unacknowledged messages, read-only.

For inspection (``coterie inbox``) while the owner may be running in another
process. :func:`peek_mailbox` takes no lock and writes nothing: it reads the
cursor (replaced atomically, so always whole), then the segments from the
cursor's one on. Whatever the owner or a sender does meanwhile can make the
answer slightly stale, never wrong in another way: a record still being
written, or torn by a crash, looks unfinished and is left out; a damaged
record or one that is not a message is skipped; a segment deleted under us
was fully acknowledged.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from coterie.journal import Corrupt, Incomplete, is_seal, scan
from coterie.mailbox._cursor import CursorState, read_cursor
from coterie.mailbox._segments import list_segments, segment_path
from coterie.messages import Message

if TYPE_CHECKING:
    import os


def peek_mailbox(directory: str | os.PathLike[str]) -> list[Message]:
    """The unacknowledged messages (pending or in flight) of the mailbox in *directory*,
    in log order, without taking its lock or changing any file.

    A missing directory holds no messages. Raises :class:`coterie.errors.MailboxError`
    if the cursor file is not a mailbox cursor.
    """
    path = Path(directory)
    if not path.is_dir():
        return []
    state = read_cursor(path)
    found: list[Message] = []
    for number in list_segments(path):
        if number < state.at[0]:
            continue  # acknowledged whole, not deleted yet
        try:
            data = segment_path(path, number).read_bytes()
        except FileNotFoundError:
            continue  # acknowledged and deleted since we listed it
        found.extend(_unacknowledged(number, data, state))
    return found


def _unacknowledged(number: int, data: bytes, state: CursorState) -> list[Message]:
    messages: list[Message] = []
    for item in scan(data):
        if isinstance(item, Incomplete):
            break  # being written, or torn by a crash: not a message (yet)
        if isinstance(item, Corrupt):
            continue
        if is_seal(item):
            break
        position = (number, item.start)
        if state.is_acked(position):
            continue
        try:
            messages.append(Message.from_json_bytes(item.payload))
        except (ValueError, TypeError):
            continue  # checksummed but not a message: the owner skips it too
    return messages
