"""``--input-format stream-json``: the prompt of a ``user`` line.

Each such line is one turn of the conversation, as Claude Code takes it::

    {"type": "user", "message": {"role": "user", "content": "..."}}

``content`` is a string or a list of content blocks, of which the ``text``
blocks are the prompt. The line itself is read by :mod:`coterie.hostlink`
(which tells it from the control protocol's lines); :func:`turn_text` takes
its prompt (a pure function), and a message that has none is an
:class:`InputError` naming it and what is wrong with it.
"""

from __future__ import annotations

from typing import Any

from coterie.errors import CoterieError

__all__ = ["InputError", "turn_text"]


class InputError(CoterieError, ValueError):
    """A line of ``--input-format stream-json`` input is not a user message."""


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
