"""The acknowledged position of a mailbox, kept in one atomically replaced file.

``cursor`` holds ``{"v": 1, "at": [segment, offset], "acked": [[segment, offset], ...]}``:
everything before ``at`` is acknowledged, and so are the listed positions
after it. It is replaced atomically (temp file, fsync, rename, fsync of the
directory) so a crash leaves either the old or the new cursor, never a mix.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from coterie.errors import MailboxError
from coterie.fsutil import atomic_write

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.mailbox._base import Position

CURSOR_NAME = "cursor"
CURSOR_TMP = "cursor.tmp"


def read_cursor(directory: Path) -> tuple[Position, set[Position]]:
    """The stored cursor, or the start of the log if there is none yet."""
    path = directory / CURSOR_NAME
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return (0, 0), set()
    try:
        data = json.loads(raw)
        if data.get("v") != 1:
            raise ValueError(f"unknown version {data.get('v')!r}")
        at = _position(data["at"])
        acked = {_position(p) for p in data.get("acked", [])}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise MailboxError(
            f"{path}: not a coterie mailbox cursor ({exc}); move it away to reset the mailbox"
        ) from None
    return at, acked


def _position(value: object) -> Position:
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)
    ):
        raise ValueError(f"bad position {value!r}")
    return (value[0], value[1])


def encode_cursor(at: Position, acked: set[Position]) -> bytes:
    """The bytes :func:`write_cursor` stores."""
    return json.dumps(
        {"v": 1, "at": list(at), "acked": sorted([list(p) for p in acked])},
        separators=(",", ":"),
    ).encode()


def write_cursor(directory: Path, data: bytes, *, sync: bool) -> None:
    """Atomically replace the cursor with *data* (from :func:`encode_cursor`)."""
    atomic_write(directory / CURSOR_NAME, data, sync=sync)
