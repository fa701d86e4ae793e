"""A scenario's tool names are checked against the tools a run can have."""

from __future__ import annotations

import difflib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.models import ScenarioError, parse_scenario
from coterie.runtime.scenariotools import check_tool_names, closest_tool, run_tool_names
from coterie.tools import builtin_tools

KNOWN = run_tool_names()


def calling(*names: str, **top: Any) -> dict[str, Any]:
    """A scenario whose lead calls *names*, one turn each, then answers."""
    turns: list[dict[str, Any]] = [{"tool_uses": [{"name": n, "input": {}}]} for n in names]
    return {**top, "tracks": {"lead": [*turns, {"text": "done"}]}}


def refusal(data: dict[str, Any], known: frozenset[str] = KNOWN) -> str:
    with pytest.raises(ScenarioError) as info:
        check_tool_names(parse_scenario(data, source="scen.json"), known)
    return str(info.value)


def test_every_tool_a_run_can_have_passes() -> None:
    """The built-in tools (the team's, the lead's, aliases), Skill, StructuredOutput,
    ToolSearch."""
    names = {n for t in builtin_tools() for n in (t.name, *getattr(t, "aliases", ()))}
    assert {"Bash", "Agent", "Task", "SendMessage", "ApprovePlan", "MergeTask"} <= names
    assert names | {"Skill", "StructuredOutput", "ToolSearch"} == KNOWN
    check_tool_names(parse_scenario(calling(*sorted(KNOWN))), KNOWN)


def test_an_mcp_servers_tool_passes_whatever_its_name() -> None:
    check_tool_names(parse_scenario(calling("mcp__anything__at_all")), KNOWN)


def test_a_typo_is_refused_naming_the_place_and_the_closest_tool() -> None:
    message = refusal(calling("Read", "Bsh"))
    assert message == (
        "scen.json: tracks.lead[1].tool_uses[0]: no tool is called 'Bsh'; did you mean 'Bash'?"
        ' (a call of a missing tool on purpose is listed in "unknown_tools")'
    )


def test_a_name_close_to_nothing_lists_the_tools() -> None:
    message = refusal(calling("Quux"))
    assert "no tool is called 'Quux'; the tools: Agent, ApprovePlan, AskUserQuestion," in message
    assert "\n" not in message


def test_a_name_declared_unknown_passes() -> None:
    data = calling("Frobnicate", unknown_tools=["Frobnicate"])
    check_tool_names(parse_scenario(data), KNOWN)
    assert "'Frobnicat'" in refusal(calling("Frobnicat", unknown_tools=["Frobnicate"]))


def test_a_known_name_declared_unknown_is_refused() -> None:
    message = refusal(calling("Bash", unknown_tools=["Bash"]))
    assert message == (
        "scen.json: unknown_tools: 'Bash' is a tool a run can have;"
        " list only names no tool answers to"
    )


@pytest.mark.parametrize("value", ["Bash", [""], [1], {"Bash": True}])
def test_unknown_tools_must_be_a_list_of_names(value: object) -> None:
    with pytest.raises(ScenarioError, match="unknown_tools: must be a list of tool names"):
        parse_scenario(calling("Bash", unknown_tools=value), source="scen.json")


def test_unknown_tools_round_trips() -> None:
    scenario = parse_scenario(calling("Zap", unknown_tools=["Zap", "Zop"]))
    assert scenario.unknown_tools == ("Zap", "Zop")
    assert scenario.to_dict()["unknown_tools"] == ["Zap", "Zop"]
    assert parse_scenario(scenario.to_dict()) == scenario
    assert "unknown_tools" not in parse_scenario(calling("Bash")).to_dict()


@st.composite
def typos(draw: st.DrawFn) -> tuple[str, str]:
    """A tool's name and a slip of the keyboard on it: a letter dropped, doubled,
    swapped with the next, or in the wrong case, or the whole name in capitals."""
    name = draw(st.sampled_from(sorted(KNOWN)))
    i = draw(st.integers(0, len(name) - 1))
    slip = draw(st.sampled_from(["drop", "double", "swap", "case", "caps"]))
    if slip == "caps":
        typo = name.upper()
    elif slip == "drop":
        typo = name[:i] + name[i + 1 :]
    elif slip == "double":
        typo = name[:i] + name[i] + name[i:]
    elif slip == "swap":
        i = min(i, len(name) - 2)  # every tool's name has two letters or more
        typo = name[:i] + name[i + 1] + name[i] + name[i + 2 :]
    else:
        typo = name[:i] + name[i].swapcase() + name[i + 1 :]
    return name, typo


@given(typos())
def test_a_slip_on_a_tools_name_suggests_that_tool(pair: tuple[str, str]) -> None:
    name, typo = pair
    if typo in KNOWN:
        return  # a slip that spells another tool is that tool
    assert closest_tool(typo, KNOWN) == name
    assert f"did you mean {name!r}?" in refusal(calling(typo))


names = st.text(st.sampled_from("abcdeABCDE_"), min_size=1, max_size=8)


@given(st.frozensets(names, min_size=1, max_size=6), names)
def test_the_suggestion_is_a_closest_known_name(known: frozenset[str], name: str) -> None:
    """Whatever the names: a suggestion is known, and no known name is closer."""
    close = closest_tool(name, known)
    if close is None:
        return
    assert close in known

    def ratio(other: str) -> float:  # difflib's own orientation: the ratio is not symmetric
        return difflib.SequenceMatcher(None, other.casefold(), name.casefold()).ratio()

    assert all(ratio(other) <= ratio(close) for other in known)
