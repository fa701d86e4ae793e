"""Hypothesis strategies for scenario files (valid ones, to mutate or round-trip)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from coterie.models.scenario import STOP_REASONS
from tests.strategies import json_values

track_names = st.from_regex(r"\A[a-z0-9][a-z0-9_-]{0,10}\Z")
file_paths = st.from_regex(r"\A[a-z]{1,6}(/[a-z]{1,6}){0,2}\.(txt|md)\Z")
usages = st.dictionaries(
    st.sampled_from(
        [
            "input_tokens",
            "output_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
        ]
    ),
    st.integers(min_value=0, max_value=10**9),
)
tool_inputs = st.dictionaries(st.text(max_size=8), json_values, max_size=2)
tool_uses = st.lists(
    st.fixed_dictionaries(
        {"name": st.text(min_size=1, max_size=12), "input": tool_inputs},
        optional={"id": st.just("placeholder")},
    ),
    min_size=1,
    max_size=2,
)


@st.composite
def replies(draw: st.DrawFn) -> dict[str, Any]:
    """A turn that answers: text and/or tool uses, maybe a stop reason and usage."""
    turn: dict[str, Any] = {}
    shape = draw(st.sampled_from(["text", "tools", "both"]))
    if shape != "tools":
        turn["text"] = draw(st.text(max_size=30))
    if shape != "text":
        turn["tool_uses"] = draw(tool_uses)
    if draw(st.booleans()):
        allowed = sorted(STOP_REASONS if "tool_uses" in turn else STOP_REASONS - {"tool_use"})
        turn["stop_reason"] = draw(st.sampled_from(allowed))
    if draw(st.booleans()):
        turn["usage"] = draw(usages)
    return turn


errors = st.fixed_dictionaries(
    {
        "status": st.integers(min_value=400, max_value=599).filter(lambda s: s != 418),
        "type": st.text(min_size=1, max_size=20),
    },
    optional={"message": st.text(max_size=30)},
)
turns = st.builds(
    lambda turn, expect: turn if expect is None else {**turn, "expect": expect},
    st.one_of(
        replies(),
        st.builds(lambda e: {"error": e}, errors),
        st.builds(lambda c: {"crash": c}, st.text(min_size=1, max_size=20)),
    ),
    st.none() | st.text(max_size=10),
)


def _unique_ids(data: dict[str, Any]) -> dict[str, Any]:
    # Explicit tool_use ids must be unique across the scenario.
    count = 0
    for track in data["tracks"].values():
        for turn in track:
            for use in turn.get("tool_uses", []):
                if "id" in use:
                    count += 1
                    use["id"] = f"toolu_explicit_{count}"
    return data


scenario_dicts = st.fixed_dictionaries(
    {"tracks": st.dictionaries(track_names, st.lists(turns, max_size=3), max_size=3)},
    optional={
        "name": st.text(min_size=1, max_size=20),
        "description": st.text(max_size=30),
        "setup": st.fixed_dictionaries(
            {}, optional={"files": st.dictionaries(file_paths, st.text(max_size=20), max_size=3)}
        ),
    },
).map(_unique_ids)
