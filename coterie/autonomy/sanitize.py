"""What the Auto Mode classifier sees of a conversation (docs/autonomy.md).

Theory of operation. The classifier must judge the agent's *actions* against
what the *user* asked, without being talked into anything by the content the
agent has read. So the transcript keeps exactly two kinds of thing:

* the user's own words: text blocks of user messages, with
  ``<system-reminder>`` spans removed, coterie's own notes (``[coterie: ...]``,
  which include model-written summaries) dropped, each message capped;
* the agent's tool calls: name and input, never their results.

Everything else is left out: the assistant's prose (a model can be steered
into writing "the user approved this"), tool results (files and web pages are
where injected text lives), and messages from other agents, which the team
runtime delivers as user text starting with ``<agent-message from="NAME"``:
those become a neutral line naming the sender, never their content, so one
agent cannot lend another the user's consent.

Every entry is one line: a fixed label written here, then a JSON literal. JSON
escapes newlines and quotes, and ``<``, ``>`` and ``&`` are escaped as
``\\u003c``, ``\\u003e`` and ``\\u0026`` (as are line and paragraph separators,
control and format characters), so no text from the conversation can end a
line, open or close a tag, or pass for a tool call: the frame around it stays
intact, whatever the user or the agent wrote.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any, Final

__all__ = [
    "NOTE_LABEL",
    "NOTE_PREFIX",
    "PENDING_LABEL",
    "TOOL_LABEL",
    "USER_LABEL",
    "classifier_transcript",
    "escape_json",
]

#: coterie marks its own text in a history with this prefix
#: (``coterie.context.history.NOTE_PREFIX``, repeated here to keep this package
#: free of the context package's imports; a test checks they agree).
NOTE_PREFIX: Final = "[coterie:"
USER_LABEL: Final = "user:"
TOOL_LABEL: Final = "tool call:"
NOTE_LABEL: Final = "note:"
PENDING_LABEL: Final = "ACTION TO JUDGE:"

_REMINDER: Final = re.compile(r"<system-reminder>.*?(?:</system-reminder>|\Z)", re.DOTALL)
_AGENT_MESSAGE_START: Final = re.compile(r"\s*<agent-message\b")
_AGENT_NAME: Final = re.compile(r'\s*<agent-message\s+from="([a-z0-9][a-z0-9_-]{0,63})"')
# A whole delivered message anywhere in a block (or an unterminated one: to the end).
_AGENT_SPAN: Final = re.compile(r"<agent-message\b.*?(?:</agent-message>|\Z)", re.DOTALL)
_TOOL_CALLS: Final = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
_ESCAPED_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# json.dumps already escapes ASCII controls; DEL and non-ASCII get a closer look.
_SPECIAL: Final = re.compile(r"[<>&\x7f]|[^\x00-\x7f]")


def escape_json(value: object) -> str:
    """*value* as one line of compact JSON that cannot open or close a tag.

    ``<``, ``>`` and ``&`` become ``\\u003c``, ``\\u003e``, ``\\u0026``; so do
    line separators and control, format, private and unassigned characters
    (invisible to a reader, possibly not to a model). Non-ASCII letters stay
    readable. Values JSON cannot hold are written with ``str()``.
    """
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):  # keys JSON cannot hold, or a cycle: show it as text
        text = json.dumps(repr(value), ensure_ascii=False)
    return _SPECIAL.sub(_escape_match, text)


def _escape_match(match: re.Match[str]) -> str:
    char = match.group(0)
    if char.isascii() or unicodedata.category(char) in _ESCAPED_CATEGORIES:
        return "".join(f"\\u{unit:04x}" for unit in _utf16_units(char))
    return char


def _utf16_units(char: str) -> list[int]:
    code = ord(char)
    if code < 0x10000:
        return [code]
    code -= 0x10000
    return [0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF)]


def classifier_transcript(
    messages: Iterable[Mapping[str, Any]],
    pending: Mapping[str, Any],
    *,
    user_cap: int = 2000,
    tool_cap: int | None = 2000,
) -> str:
    """The sanitised transcript for the classifier, the pending action last.

    *messages* is an Anthropic-format history; *pending* is the tool call to
    judge, a ``tool_use`` block (``{"name", "input"}``, ``"tool"`` accepted
    for ``"name"``). If the history already holds that call (same ``id``),
    it is shown once, as the pending action. Each user message is capped to
    *user_cap* characters, each earlier tool call's JSON to *tool_cap*
    (``None``: no cap); the pending action is never cut.
    """
    if user_cap < 0 or (tool_cap is not None and tool_cap < 0):
        raise ValueError("caps must not be negative")
    pending_id = pending.get("id")
    lines: list[str] = []
    for message in messages:
        role = message.get("role")
        content = _blocks(message.get("content"))
        if role == "user":
            lines.extend(_user_lines(content, user_cap))
        elif role == "assistant":
            for block in content:
                if block.get("type") not in _TOOL_CALLS:
                    continue  # the assistant's prose and thinking are never shown
                if pending_id is not None and block.get("id") == pending_id:
                    continue
                lines.append(f"{TOOL_LABEL} {_cap(_tool_json(block), tool_cap)}")
    lines.append(f"{PENDING_LABEL} {_tool_json(pending)}")
    return "\n".join(lines)


def _blocks(content: object) -> list[Mapping[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, Mapping)]
    return []


def _user_lines(content: list[Mapping[str, Any]], cap: int) -> list[str]:
    """The user's own words in one message (at most *cap* characters in all), in order,
    with a neutral note in place of each other agent's message."""
    lines: list[str] = []
    budget = cap
    for block in content:
        if block.get("type") != "text":
            continue  # tool results (and images, documents) are never shown
        text = block.get("text")
        if not isinstance(text, str):
            continue
        if _AGENT_MESSAGE_START.match(text):
            lines.append(f"{NOTE_LABEL} {escape_json(_agent_note(text))}")
            continue
        # Agent messages first: a reminder tag inside one must not hide its end.
        text = _AGENT_SPAN.sub(lambda m: f"[{_agent_note(m.group(0))}]", text)
        text = _REMINDER.sub("", text).strip()
        if not text or text.startswith(NOTE_PREFIX):
            continue
        if budget <= 0:
            lines.append(f"{USER_LABEL} [{len(text)} more characters cut]")
            continue
        line = f"{USER_LABEL} {escape_json(text[:budget])}"
        if len(text) > budget:
            line += f" [{len(text) - budget} more characters cut]"
        budget -= len(text)
        lines.append(line)
    return lines


def _agent_note(text: str) -> str:
    match = _AGENT_NAME.match(text)
    sender = f"agent {match.group(1)}" if match else "another agent"
    return f"a message from {sender} was left out"


def _tool_json(block: Mapping[str, Any]) -> str:
    name = block.get("name", block.get("tool"))
    return escape_json({"tool": name, "input": block.get("input")})


def _cap(text: str, cap: int | None) -> str:
    if cap is None or len(text) <= cap:
        return text
    return f"{text[:cap]} [{len(text) - cap} more characters cut]"
