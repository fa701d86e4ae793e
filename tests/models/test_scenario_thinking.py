"""A scenario turn's ``thinking`` (docs/scenarios.md): parsed, refused, round-tripped."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coterie.models import ScenarioError, Turn, parse_scenario
from tests.strategies import replies


def refusal(turn: dict[str, Any]) -> str:
    with pytest.raises(ScenarioError) as info:
        parse_scenario({"tracks": {"lead": [turn]}}, source="s.json")
    return str(info.value)


def test_a_turn_may_think_before_its_text() -> None:
    scen = parse_scenario({"tracks": {"lead": [{"thinking": "hmm", "text": "4"}]}})
    assert scen.tracks["lead"][0] == Turn(thinking="hmm", text="4")


@pytest.mark.parametrize(
    ("turn", "says"),
    [
        ({"thinking": "", "text": "4"}, "'thinking' must not be empty"),
        ({"thinking": 3, "text": "4"}, "'thinking' must be a string"),
        ({"thinking": "hmm"}, "a turn needs 'text', 'tool_uses'"),
        ({"thinking": "hmm", "crash": "boom"}, "'thinking'"),
    ],
)
def test_a_bad_thinking_is_refused(turn: dict[str, Any], says: str) -> None:
    assert says in refusal(turn)


def _thinking(turn: dict[str, Any], thought: str) -> dict[str, Any]:
    # Explicit tool_use ids must be unique in a file: let the parser make them.
    uses = [{k: v for k, v in use.items() if k != "id"} for use in turn.get("tool_uses", [])]
    return {**turn, "thinking": thought, **({"tool_uses": uses} if uses else {})}


thinking_turns = st.builds(_thinking, replies(), st.text(min_size=1, max_size=30))


@settings(max_examples=60)
@given(st.lists(thinking_turns, min_size=1, max_size=3))
def test_thinking_turns_round_trip_through_json(turns: list[dict[str, Any]]) -> None:
    scen = parse_scenario({"tracks": {"lead": turns}})
    assert [t.thinking for t in scen.tracks["lead"]] == [t["thinking"] for t in turns]
    assert parse_scenario(json.loads(json.dumps(scen.to_dict()))) == scen
