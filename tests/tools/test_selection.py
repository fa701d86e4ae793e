"""``--allowedTools`` / ``--tools`` lists (coterie.tools.selection)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.tools import (
    ListError,
    UnknownTool,
    builtin_tools,
    split_list,
    tool_choice,
    tool_names,
)

NAME = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,10}", fullmatch=True)
#: A specifier: anything but parentheses (spaces and commas included).
SPECIFIER = st.text(st.characters(blacklist_characters="()", codec="utf-8"), max_size=15)
ITEM = st.one_of(NAME, st.builds(lambda n, s: f"{n}({s})", NAME, SPECIFIER))
SEPARATOR = st.sampled_from([" ", ",", ", ", "  ,\t", "\n"])


@given(st.lists(st.tuples(ITEM, SEPARATOR), max_size=8), SEPARATOR)
def test_items_joined_by_any_separators_come_back(pairs: list[tuple[str, str]], lead: str) -> None:
    text = lead + "".join(item + sep for item, sep in pairs)
    assert split_list(text) == [item for item, _sep in pairs]


@given(st.text(max_size=40))
def test_any_text_splits_or_is_a_list_error(text: str) -> None:
    try:
        items = split_list(text)
    except ListError:
        assert text.count("(") != text.count(")") or ")" in text
        return
    for item in items:
        assert item
        assert item == item.strip()
        assert item.count("(") == item.count(")")
    # nothing but the separators is lost
    assert "".join(items) == "".join(c for c in text if not (c.isspace() or c == ",")) or any(
        "(" in i for i in items
    )


@pytest.mark.parametrize(
    ("text", "items"),
    [
        ("Bash(git log *),Edit Read", ["Bash(git log *)", "Edit", "Read"]),
        ("", []),
        ("  ,, ", []),
        ("mcp__srv__tool", ["mcp__srv__tool"]),
        ("Bash(a (b) c) Read", ["Bash(a (b) c)", "Read"]),
    ],
)
def test_examples(text: str, items: list[str]) -> None:
    assert split_list(text) == items


@pytest.mark.parametrize("text", ["Bash(", "Bash)", "Read(a))", "(("])
def test_unbalanced_parentheses_are_list_errors(text: str) -> None:
    with pytest.raises(ListError):
        split_list(text)


def test_the_names_come_from_the_tools_themselves() -> None:
    names = tool_names()
    for tool in builtin_tools():
        assert names[tool.name] == tool.name
        for alias in getattr(tool, "aliases", ()):
            assert names[alias] == tool.name


@given(st.lists(st.sampled_from(sorted(tool_names())), unique=True))
def test_a_choice_keeps_exactly_the_named_tools_the_teams_and_the_loops(chosen: list[str]) -> None:
    keep = tool_choice(chosen)
    names = tool_names()
    for tool in builtin_tools():
        named = tool.name in {names[c] for c in chosen}
        kept = tool.capabilities.team_only or tool.capabilities.needs == "loop"
        assert keep(tool) == (named or kept)


@pytest.mark.parametrize("chosen", [None, ["default"]])
def test_default_keeps_everything(chosen: list[str] | None) -> None:
    keep = tool_choice(chosen)
    assert all(keep(t) for t in builtin_tools())


def test_tools_that_are_not_built_in_are_kept() -> None:
    class Mcp:
        name = "mcp__srv__tool"
        capabilities = builtin_tools()[0].capabilities

    assert tool_choice([])(Mcp())  # type: ignore[arg-type]


@given(NAME.filter(lambda n: n not in tool_names() and n != "default"))
def test_an_unknown_name_is_refused(name: str) -> None:
    with pytest.raises(UnknownTool, match=repr(name)):
        tool_choice([name])


def test_the_close_match_is_named() -> None:
    with pytest.raises(UnknownTool, match="did you mean 'Read'"):
        tool_choice(["Raed"])
