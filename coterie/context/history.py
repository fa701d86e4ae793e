"""Messages-format histories: what the user wrote, what is valid, and repair.

A history is a list of Messages-API dicts (``{"role", "content"}``). The
compaction stages and the transcript loader share three questions answered
here:

* which text is *user-authored*: the text blocks of user messages, except
  ``<system-reminder>`` blocks and coterie's own notes (text starting with
  ``[coterie:``). Every compacted history must keep all of it verbatim;
* whether a history is valid for the Messages API (:func:`check_history`,
  the same checks the mock server makes);
* how to make a damaged history valid again (:func:`repair_history`), used
  after a corrupt transcript record or a crash in the middle of a tool call.

Nothing here does I/O.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from coterie.errors import CoterieError
from coterie.models import RequestInvalid, validate_request

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "INTERRUPTED",
    "LOST",
    "NOTE_PREFIX",
    "NOT_RUN",
    "Block",
    "HistoryInvalid",
    "Message",
    "blocks",
    "changed_span",
    "check_history",
    "is_note",
    "is_reminder",
    "message_chars",
    "note",
    "repair_history",
    "succeeded_calls",
    "result_text",
    "tool_use_ids",
    "user_texts",
]

Message = dict[str, Any]
Block = dict[str, Any]

#: Text coterie itself puts into a history starts with this; it is never user-authored.
NOTE_PREFIX = "[coterie:"
_REMINDER_PREFIX = "<system-reminder>"

INTERRUPTED = (
    "[coterie: this tool call was interrupted: the session stopped while it was running, so "
    "its result was lost and its effects are unknown. It was not run again. Check the current "
    "state before relying on it or retrying it.]"
)
NOT_RUN = "[coterie: this tool call was not run: the session stopped before it started.]"
LOST = (
    "[coterie: the result of this tool call was lost (the conversation log was damaged); "
    "its effects are unknown.]"
)
_GAP = "[coterie: part of this conversation was lost (the conversation log was damaged).]"


class HistoryInvalid(CoterieError, ValueError):
    """A history the Messages API would refuse (roles, tool pairs, empty content)."""


def note(text: str) -> str:
    """*text* marked as coterie's own words (so never taken for the user's)."""
    return f"{NOTE_PREFIX} {text}]"


def is_note(text: str) -> bool:
    """Whether *text* is a note coterie wrote (a marker, a preview, a summary)."""
    return text.startswith(NOTE_PREFIX)


def is_reminder(text: str) -> bool:
    """Whether *text* is a ``<system-reminder>`` the loop attached."""
    return text.lstrip().startswith(_REMINDER_PREFIX)


def blocks(message: Message) -> list[Block]:
    """The message's content as a list of blocks (a string becomes one text block)."""
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def user_texts(messages: list[Message]) -> list[str]:
    """Every user-authored text block, oldest first (repeats included)."""
    found = []
    for message in messages:
        if message.get("role") != "user":
            continue
        for block in blocks(message):
            text = block.get("text")
            if (
                block.get("type") == "text"
                and isinstance(text, str)
                and text
                and not is_note(text)
                and not is_reminder(text)
            ):
                found.append(text)
    return found


def tool_use_ids(message: Message) -> list[str]:
    """The ids of the ``tool_use`` blocks of *message*, in order."""
    return [
        str(b["id"])
        for b in blocks(message)
        if b.get("type") == "tool_use" and isinstance(b.get("id"), str)
    ]


def result_text(block: Block) -> str:
    """The text of a ``tool_result`` block (its string, or its text blocks joined)."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


#: What a picture counts for in a token estimate, in characters: the API scales
#: an image down to about 1.15 megapixels, some 1,600 tokens, at 4 characters a
#: token; its base64 text (up to 5 MB) says nothing of what it costs.
IMAGE_CHARS = 6_400


def message_chars(message: Message) -> int:
    """The length of *message* as compact JSON, an image counted as
    :data:`IMAGE_CHARS`: what a token estimate is based on."""
    content = message.get("content")
    images = [0]
    if isinstance(content, list) and any(_holds_image(b) for b in content):
        message = {**message, "content": _without_images(content, images)}
    return len(json.dumps(message, separators=(",", ":"), default=str)) + images[0] * IMAGE_CHARS


def _holds_image(block: object) -> bool:
    if not isinstance(block, dict):
        return False
    if block.get("type") == "image":
        return True
    inner = block.get("content") if block.get("type") == "tool_result" else None
    return isinstance(inner, list) and any(_holds_image(b) for b in inner)


def _without_images(content: list[Any], images: list[int]) -> list[Any]:
    """*content* with each image block reduced to its type, counted in *images*."""
    out: list[Any] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "image":
            images[0] += 1
            block = {"type": "image"}
        elif isinstance(block, dict) and isinstance(block.get("content"), list):
            block = {**block, "content": _without_images(block["content"], images)}
        out.append(block)
    return out


def check_history(messages: list[Message]) -> None:
    """Raise :class:`HistoryInvalid` if the Messages API would refuse *messages*.

    The checks are the mock server's (``coterie.models.validate_request``): roles
    alternate starting with ``user``, every ``tool_use`` is answered by a
    ``tool_result`` first in the next message, no empty text.
    """
    try:
        validate_request({"model": "coterie", "max_tokens": 1, "messages": messages})
    except RequestInvalid as exc:
        raise HistoryInvalid(str(exc)) from None


def changed_span(before: list[Message], after: list[Message]) -> tuple[int, int, int]:
    """``(start, end_before, end_after)``: ``before[start:end_before]`` became
    ``after[start:end_after]``. Messages are compared by identity, as the
    compaction stages keep the objects they do not change."""
    limit = min(len(before), len(after))
    start = 0
    while start < limit and before[start] is after[start]:
        start += 1
    tail = 0
    while tail < limit - start and before[-1 - tail] is after[-1 - tail]:
        tail += 1
    return start, len(before) - tail, len(after) - tail


# -- repair ------------------------------------------------------------------


def repair_history(messages: list[Message], *, missing: str = LOST) -> list[Message]:
    """A valid history as close to *messages* as possible.

    Unknown roles and malformed or misplaced blocks are dropped, same-role
    neighbours merged, stray ``tool_result`` blocks dropped, and every
    unanswered ``tool_use`` gets an ``is_error`` result saying *missing*.
    Messages that need no change are returned as the same objects, so the
    caller can tell what changed by identity. An empty history stays empty.
    """
    cleaned = _merge(_clean(m) for m in messages)
    if cleaned and cleaned[0][1]["role"] != "user":
        cleaned.insert(0, (None, {"role": "user", "content": [_text(_GAP)]}))
    out: list[Message] = []
    seen: set[str] = set()
    pending: list[str] = []
    for original, message in cleaned:
        content = message["content"]
        if message["role"] == "assistant":
            kept = []
            for block in content:
                if block["type"] == "tool_use":
                    if block["id"] in seen:
                        continue  # the API wants tool_use ids unique
                    seen.add(block["id"])
                kept.append(block)
            content = kept
            pending = [b["id"] for b in content if b["type"] == "tool_use"]
        else:
            content = _answer(content, pending, missing)
            pending = []
        if not content:
            content = [_text(_GAP)]
        out.append(_same_or_new(original, message["role"], content))
    if pending:
        out.append({"role": "user", "content": _answer([], pending, missing)})
    return out


def _text(text: str) -> Block:
    return {"type": "text", "text": text}


def _result(tool_use_id: str, text: str) -> Block:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": text, "is_error": True}


def _clean(message: object) -> tuple[Message | None, Message] | None:
    """The message with only blocks its role may carry, or None if nothing is left."""
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
        return None
    role = message["role"]
    kept = []
    for block in blocks(message):
        kind = block.get("type")
        if not isinstance(kind, str):
            continue
        if kind == "text" and not (isinstance(block.get("text"), str) and block["text"]):
            continue
        if kind == "tool_use" and (
            role != "assistant"
            or not isinstance(block.get("id"), str)
            or not block["id"]
            or not isinstance(block.get("name"), str)
            or not isinstance(block.get("input"), dict)
        ):
            continue
        if kind == "tool_result" and (
            role != "user" or not isinstance(block.get("tool_use_id"), str)
        ):
            continue
        kept.append(block)
    if not kept:
        return None
    return message, {"role": role, "content": kept}


def _merge(
    items: Iterable[tuple[Message | None, Message] | None],
) -> list[tuple[Message | None, Message]]:
    out: list[tuple[Message | None, Message]] = []
    for item in items:
        if item is None:
            continue
        if out and out[-1][1]["role"] == item[1]["role"]:
            prev = out[-1][1]
            out[-1] = (
                None,
                {"role": prev["role"], "content": prev["content"] + item[1]["content"]},
            )
        else:
            out.append(item)
    return out


def _answer(content: list[Block], pending: list[str], missing: str) -> list[Block]:
    """User content with exactly one result per pending id, results first."""
    results: dict[str, Block] = {}
    others = []
    for block in content:
        if block["type"] == "tool_result":
            if block["tool_use_id"] in pending and block["tool_use_id"] not in results:
                results[block["tool_use_id"]] = block
        else:
            others.append(block)
    ordered = [results.get(i) or _result(i, missing) for i in pending]
    return ordered + others


def _same_or_new(original: Message | None, role: str, content: list[Block]) -> Message:
    if original is not None and original.get("content") == content:
        return original
    if original is not None:
        return {**original, "role": role, "content": content}
    return {"role": role, "content": content}


def succeeded_calls(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``tool_use`` blocks of the latest turn in *messages* (since its prompt: the
    last user message with text) whose results were not errors, latest first."""
    succeeded: set[str] = set()
    found: list[dict[str, Any]] = []
    for message in reversed(messages):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        if message.get("role") == "user":
            for block in content:
                if block.get("type") == "tool_result" and not block.get("is_error"):
                    succeeded.add(str(block.get("tool_use_id")))
            if any(b.get("type") == "text" for b in content):
                return found  # reached the prompt of the turn
            continue
        found += [
            block
            for block in reversed(content)
            if block.get("type") == "tool_use" and block.get("id") in succeeded
        ]
    return found
