"""The first user message's opening: what every agent of a run sends alike, then its own.

An agent's first user message opens with the run's context reminder (the
project's memory, the git snapshot, the date: :mod:`coterie.context.memory`)
and the reminder naming its deferred tools. Every member of a team sends those
byte for byte alike, after the same tools and system prompt; only then comes
what is the agent's own: its **role note** (a team's lead, or a teammate with
its name and checkout), then its prompt. So a client with prompt caching puts
a breakpoint at the end of the shared opening, and what the first agent's call
writes (a large CLAUDE.md included) every other agent's first call reads,
instead of each writing its own copy (docs/teams.md, "What a team costs").

Compaction keeps the role note, word for word, as it keeps the context
reminder (:mod:`coterie.context.summary`). Pure: text in, text out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

__all__ = [
    "ROLE_OPENING",
    "Placement",
    "has_role_note",
    "is_role_note",
    "place_role",
    "role_block",
    "shared_opening",
]

#: How a role note opens.
ROLE_OPENING = "<system-reminder>\n# Your part in this run\n"


def role_block(text: str) -> dict[str, Any]:
    """*text* (a role prompt) as the block the first user message carries."""
    return {"type": "text", "text": f"{ROLE_OPENING}{text.strip()}\n</system-reminder>"}


def is_role_note(text: str) -> bool:
    """Whether *text* is a role note."""
    return text.startswith(ROLE_OPENING)


@attrs.frozen
class Placement:
    """Where an agent's own text goes: its system prompt, and how many of its leading
    characters every agent of the run sends alike, and the role note, if any."""

    system: str
    shared: int = 0
    note: str | None = None


def place_role(
    base: str, own: str, messages: Sequence[Mapping[str, Any]], *, in_system: bool = False
) -> Placement:
    """Where *own* (an agent's role, name and checkout note) goes beside *base* (the
    run's system prompt), for an agent whose history is *messages*.

    In a role note of the first message, after what every agent of the run sends
    alike; in the system prompt, after *base* and a breakpoint, when *in_system*
    (a subagent, whose type prompt is its system prompt) or when *messages* began
    with the role there (a conversation recorded before role notes)."""
    if not own.strip():
        return Placement(base)
    if not in_system and (not messages or has_role_note(messages)):
        return Placement(base, note=own)
    return Placement(f"{base}\n\n{own.lstrip()}", len(base) + 2)


def has_role_note(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the first message of *messages* carries a role note (a conversation
    begun before role notes had the role in its system prompt)."""
    content = messages[0].get("content") if messages else None
    if not isinstance(content, list):
        return False
    return any(is_role_note(text) for text in map(_text, content) if text is not None)


def _text(block: Any) -> str | None:
    if isinstance(block, Mapping) and block.get("type") == "text":
        text = block.get("text")
        return text if isinstance(text, str) else None
    return None


def shared_opening(messages: Sequence[Mapping[str, Any]], shared: Callable[[str], bool]) -> int:
    """How many leading blocks of the first (user) message of *messages* every agent
    of the run sends alike: the run of text blocks *shared* accepts (the context
    reminder, the tools' announcement), when something of the agent's own follows
    them; 0 when nothing does (the conversation's own breakpoint covers them)."""
    if not messages or messages[0].get("role") != "user":
        return 0
    content = messages[0].get("content")
    if not isinstance(content, list):
        return 0
    count = 0
    for block in content:
        text = _text(block)
        if text is None or not shared(text):
            break
        count += 1
    more = count < len(content) or len(messages) > 1
    return count if more else 0
