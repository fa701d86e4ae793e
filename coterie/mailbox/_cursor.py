"""The acknowledged position of a mailbox, kept in one atomically replaced file.

``cursor`` holds ``{"v": 2, "at": P, "upto": Q, "unacked": [...], "acked": [...]}``
(positions are ``[segment, offset]``): every record before ``at`` is
acknowledged; so is every record from ``at`` up to ``upto`` but those listed
in ``unacked``; and so are the positions listed in ``acked`` (at or after
``upto``). A message held unacknowledged for long (a lead's request, kept
until its team is done) then costs one entry, not one entry per message
acknowledged after it. Version 1 files (``at`` and ``acked`` only) still
read. The file is replaced atomically (temp file, fsync, rename, fsync of the
directory) so a crash leaves either the old or the new cursor, never a mix.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import attrs

from coterie.errors import MailboxError
from coterie.fsutil import atomic_write

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from coterie.mailbox.base import Position

CURSOR_NAME = "cursor"
CURSOR_TMP = "cursor.tmp"


@attrs.frozen
class CursorState:
    """What a cursor file says is acknowledged (see the module docstring)."""

    at: Position = (0, 0)
    acked: frozenset[Position] = frozenset()
    upto: Position = (0, 0)
    unacked: frozenset[Position] = frozenset()

    def is_acked(self, pos: Position) -> bool:
        if pos < self.at or pos in self.acked:
            return True
        return pos < self.upto and pos not in self.unacked


def read_cursor(directory: Path) -> CursorState:
    """The stored cursor, or the start of the log if there is none yet."""
    path = directory / CURSOR_NAME
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return CursorState()
    try:
        data = json.loads(raw)
        if data.get("v") not in (1, 2):
            raise ValueError(f"unknown version {data.get('v')!r}")
        at = _position(data["at"])
        acked = frozenset(_position(p) for p in data.get("acked", []))
        upto = _position(data["upto"]) if data["v"] == 2 else at
        unacked = frozenset(_position(p) for p in data.get("unacked", []))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise MailboxError(
            f"{path}: not a coterie mailbox cursor ({exc}); move it away to reset the mailbox"
        ) from None
    return CursorState(at, acked, max(upto, at), unacked)


def _position(value: object) -> Position:
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)
    ):
        raise ValueError(f"bad position {value!r}")
    return (value[0], value[1])


def encode_cursor(
    at: Position,
    acked: set[Position],
    upto: Position | None = None,
    unacked: Iterable[Position] = (),
) -> bytes:
    """The bytes :func:`write_cursor` stores: records from *at* up to *upto* are
    acknowledged but *unacked*, and so are the *acked* positions at or after *upto*."""
    upto = at if upto is None else max(upto, at)
    return json.dumps(
        {
            "v": 2,
            "at": list(at),
            "upto": list(upto),
            "unacked": sorted([list(p) for p in unacked if at <= p < upto]),
            "acked": sorted([list(p) for p in acked if p >= upto]),
        },
        separators=(",", ":"),
    ).encode()


def write_cursor(directory: Path, data: bytes, *, sync: bool) -> None:
    """Atomically replace the cursor with *data* (from :func:`encode_cursor`)."""
    atomic_write(directory / CURSOR_NAME, data, sync=sync)
