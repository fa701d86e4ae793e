"""Hypothesis strategies for Messages-format histories."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from coterie.context.history import is_note, is_reminder
from tests.context.helpers import big

Message = dict[str, Any]

#: Text a user might write: never empty or blank, never mistaken for coterie's notes.
user_text = st.text(
    st.characters(codec="utf-8", categories=["L", "N", "P", "Zs"]), min_size=1, max_size=30
).filter(lambda t: bool(t.strip()) and not is_note(t) and not is_reminder(t))

outputs = st.one_of(
    st.text(max_size=50).filter(lambda t: "\x00" not in t),
    st.integers(0, 60_000).map(big),
)


@st.composite
def histories(draw: st.DrawFn, *, max_rounds: int = 25) -> list[Message]:
    """A valid history: a first prompt, then rounds of text or tool calls and their answers,
    with user instructions and large tool results sprinkled in."""
    messages: list[Message] = [_user([draw(user_text)])]
    next_id = 0
    for _ in range(draw(st.integers(0, max_rounds))):
        content: list[dict[str, Any]] = []
        if draw(st.booleans()):
            content.append({"type": "text", "text": "Thinking: " + draw(st.text(max_size=20))})
        calls = draw(st.integers(0 if content else 1, 3))
        ids = []
        for _ in range(calls):
            ids.append(f"toolu_{next_id}")
            next_id += 1
            content.append({"type": "tool_use", "id": ids[-1], "name": "Bash", "input": {"n": 1}})
        messages.append({"role": "assistant", "content": content})
        answer: list[dict[str, Any]] = [
            {
                "type": "tool_result",
                "tool_use_id": tool_id,
                "content": draw(outputs),
                "is_error": draw(st.booleans()),
            }
            for tool_id in ids
        ]
        extra = draw(st.lists(user_text, max_size=2, min_size=0 if ids else 1))
        answer += [{"type": "text", "text": t} for t in extra]
        if ids and draw(st.integers(0, 5)) == 0:
            answer.append({"type": "text", "text": "<system-reminder>stale plan</system-reminder>"})
        messages.append({"role": "user", "content": answer})
    if draw(st.booleans()):
        messages.append({"role": "assistant", "content": [{"type": "text", "text": "Done."}]})
    return messages


def _user(texts: list[str]) -> Message:
    return {"role": "user", "content": [{"type": "text", "text": t} for t in texts]}
