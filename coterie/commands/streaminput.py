"""``--input-format stream-json``: standard input as JSON lines of user messages.

Each line is one turn of the conversation, as Claude Code takes it::

    {"type": "user", "message": {"role": "user", "content": "..."}}

``content`` is a string or a list of content blocks, of which the ``text``
blocks are the prompt. :func:`parse_turn` reads one line (a pure function);
a line that is not such a message is an :class:`InputError` naming the line
and what is wrong with it.
"""

from __future__ import annotations

import json
from typing import Any

from coterie.errors import CoterieError

__all__ = ["InputError", "parse_turn", "turn_text"]


class InputError(CoterieError, ValueError):
    """A line of ``--input-format stream-json`` input is not a user message."""


def parse_turn(line: str, number: int) -> str | None:
    """The prompt of input line *number* (1-based), or None for a blank line."""
    if not line.strip():
        return None
    where = f"standard input, line {number}"
    try:
        raw: Any = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(raw, dict):
        raise InputError(f"{where}: expected a JSON object, got {_kind(raw)}")
    if raw.get("type") != "user":
        raise InputError(f"{where}: expected a message of type 'user', got {raw.get('type')!r}")
    return turn_text(raw, where)


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


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    return "a string" if isinstance(value, str) else type(value).__name__
