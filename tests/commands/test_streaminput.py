"""The prompt of a ``--input-format stream-json`` user line (coterie.commands.streaminput)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.commands.streaminput import InputError, turn_text
from tests.strategies import json_values

TEXT = st.text(min_size=1).filter(str.strip)


def user(content: Any, **message: Any) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": content, **message}}


@given(TEXT)
def test_a_string_content_is_the_prompt(text: str) -> None:
    assert turn_text(user(text), "line 1") == text


@given(st.lists(TEXT, min_size=1, max_size=4))
def test_text_blocks_are_joined(texts: list[str]) -> None:
    blocks = [{"type": "text", "text": t} for t in texts]
    assert turn_text(user(blocks), "line 3") == "\n\n".join(texts)


@given(json_values)
def test_any_message_is_a_prompt_or_an_input_error_naming_it(message: Any) -> None:
    problem = ""
    try:
        turn_text({"type": "user", "message": message}, "user message 9")
    except InputError as exc:
        problem = str(exc)
    assert problem == "" or problem.startswith("user message 9: ")


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ({"type": "user"}, "'message' must be an object"),
        ({"type": "user", "message": {"role": "assistant", "content": "x"}}, "role"),
        (user(7), "'content' must be a string or a list"),
        (user([{"type": "image", "source": {}}]), "'image' block; only text blocks"),
        (user("   "), "no text"),
    ],
)
def test_bad_messages_say_what_is_wrong(raw: dict[str, Any], why: str) -> None:
    with pytest.raises(InputError, match="user message 4") as caught:
        turn_text(raw, "user message 4")
    assert why in str(caught.value)
