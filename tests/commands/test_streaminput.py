"""``--input-format stream-json`` lines (coterie.commands.streaminput)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.commands.streaminput import InputError, parse_turn

TEXT = st.text(min_size=1).filter(str.strip)


def line(content: Any, **extra: Any) -> str:
    return json.dumps({"type": "user", "message": {"role": "user", "content": content}, **extra})


@given(TEXT)
def test_a_string_content_is_the_prompt(text: str) -> None:
    assert parse_turn(line(text), 1) == text


@given(st.lists(TEXT, min_size=1, max_size=4))
def test_text_blocks_are_joined(texts: list[str]) -> None:
    blocks = [{"type": "text", "text": t} for t in texts]
    assert parse_turn(line(blocks), 3) == "\n\n".join(texts)


@given(st.text(max_size=60), st.integers(min_value=1, max_value=10_000))
def test_any_line_is_a_prompt_none_or_an_input_error_naming_it(text: str, n: int) -> None:
    try:
        parse_turn(text, n)
    except InputError as exc:
        problem = str(exc)
    else:
        return
    assert problem.startswith(f"standard input, line {n}: ")


@pytest.mark.parametrize("blank", ["", "\n", "   \t\n"])
def test_blank_lines_are_skipped(blank: str) -> None:
    assert parse_turn(blank, 1) is None


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("{oops", "not JSON"),
        ("[1]", "expected a JSON object, got an array"),
        (json.dumps({"type": "control_request"}), "type 'user', got 'control_request'"),
        (json.dumps({"type": "user"}), "'message' must be an object"),
        (json.dumps({"type": "user", "message": {"role": "assistant", "content": "x"}}), "role"),
        (line(7), "'content' must be a string or a list"),
        (line([{"type": "image", "source": {}}]), "'image' block; only text blocks"),
        (line("   "), "no text"),
    ],
)
def test_bad_lines_say_what_is_wrong(text: str, why: str) -> None:
    with pytest.raises(InputError, match="line 4") as caught:
        parse_turn(text, 4)
    assert why in str(caught.value)
