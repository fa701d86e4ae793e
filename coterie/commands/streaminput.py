"""``--input-format stream-json``: the turn of a ``user`` line.

Each such line is one turn of the conversation, as Claude Code takes it::

    {"type": "user", "message": {"role": "user", "content": "..."},
     "origin": {"kind": "human"}, "uuid": "..."}

``content`` is a string or a list of content blocks, of which the ``text``
blocks are the prompt. ``origin`` (optional) is the host's stamp on the line,
echoed on that turn's ``result`` so a host can tell the answer to its prompt
from other results; ``uuid`` (optional) is the host's id of the line. A prompt
that is ``/clear`` is no prompt for the model: it starts a new conversation
(:attr:`HostTurn.clears`). The line itself is read by :mod:`coterie.hostlink`
(which tells it from the control protocol's lines); :func:`read_turn` takes its
turn (a pure function), and a message that has no prompt is an
:class:`InputError` naming it and what is wrong with it.
"""

from __future__ import annotations

from typing import Any

import attrs

from coterie.errors import CoterieError
from coterie.interactive.slash import parse_slash

__all__ = ["HostTurn", "InputError", "read_turn", "turn_text"]


class InputError(CoterieError, ValueError):
    """A line of ``--input-format stream-json`` input is not a user message."""


@attrs.frozen
class HostTurn:
    """One ``user`` line of the host: its prompt, and what its result says of it."""

    text: str
    #: The host's stamp on the line (the SDK's ``origin``, such as ``{"kind":
    #: "human"}``), echoed on the turn's result; None when the line has none.
    origin: dict[str, Any] | None = None
    #: The host's id of the line (its ``uuid``), when it gave one.
    uuid: str | None = None
    #: The line's ``message`` as the host wrote it (written back with
    #: ``--replay-user-messages``); None: not kept. Not part of the turn's identity.
    message: dict[str, Any] | None = attrs.field(default=None, eq=False)
    #: Whether the line is written back on the stream (``--replay-user-messages``).
    replay: bool = attrs.field(default=False, eq=False)

    @property
    def clears(self) -> bool:
        """Whether the prompt is ``/clear``: the conversation starts over (a new run),
        and the model is not asked."""
        slash = parse_slash(self.text)
        return slash is not None and slash.name == "clear"

    def stamped(self, result: dict[str, Any]) -> dict[str, Any]:
        """*result*, the answer to this turn, with the host's ``origin`` (if any)."""
        return result if self.origin is None else {**result, "origin": self.origin}


def read_turn(raw: dict[str, Any], where: str, *, replay: bool = False) -> HostTurn:
    """The turn of a ``user`` line already read as JSON (*where* names it in errors),
    to be written back if *replay*. An ``origin`` that is not a JSON object, or a
    ``uuid`` that is not a string, is not the host's stamp and is left out."""
    origin, uuid = raw.get("origin"), raw.get("uuid")
    return HostTurn(
        turn_text(raw, where),
        origin if isinstance(origin, dict) else None,
        uuid if isinstance(uuid, str) and uuid else None,
        raw["message"],  # turn_text checked it is an object
        replay,
    )


def turn_text(raw: dict[str, Any], where: str) -> str:
    """The prompt of a ``user`` line already read as JSON (*where* names it in errors)."""
    message = raw.get("message")
    if not isinstance(message, dict):
        raise InputError(f"{where}: 'message' must be an object")
    if message.get("role", "user") != "user":
        raise InputError(f"{where}: the message's role must be 'user'")
    content = message.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = "\n\n".join(_block_text(block, where, i) for i, block in enumerate(content))
    else:
        raise InputError(f"{where}: 'content' must be a string or a list of blocks")
    if not text.strip():
        raise InputError(f"{where}: the message has no text")
    return text


def _block_text(block: Any, where: str, index: int) -> str:
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        raise InputError(f"{where}: content[{index}] must be an object with a 'type'")
    if block["type"] != "text" or not isinstance(block.get("text"), str):
        raise InputError(
            f"{where}: content[{index}] is a {block['type']!r} block; only text blocks are taken"
        )
    return str(block["text"])
