"""Claude Code's matchers: exact names, `|` lists, regular expressions, everything."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.hooks import matches
from coterie.hooks.matching import check_matcher
from tests.strategies import tool_names


@given(tool_names, st.sampled_from([None, "", "*", "  "]))
def test_an_empty_or_star_matcher_matches_every_tool(name: str, matcher: str | None) -> None:
    assert matches(matcher, name)


@given(tool_names, tool_names)
def test_a_plain_name_matches_only_itself(name: str, other: str) -> None:
    assert matches(name, name)
    assert matches(name, other) == (name == other)


@given(st.lists(tool_names, min_size=1, max_size=4), tool_names)
def test_a_bar_list_matches_exactly_its_names(names: list[str], name: str) -> None:
    assert matches("|".join(names), name) == (name in names)


@pytest.mark.parametrize(
    ("matcher", "name", "expected"),
    [
        ("Edit|Write", "Write", True),
        ("Edit|Write", "MultiEdit", False),
        ("Notebook.*", "NotebookEdit", True),
        ("mcp__memory__.*", "mcp__memory__create_entities", True),
        ("mcp__memory__.*", "mcp__github__search", False),
        ("mcp__.*__write.*", "mcp__fs__write_file", True),
        ("Bash", "bash", False),
    ],
)
def test_matchers_as_claude_code_documents_them(matcher: str, name: str, expected: bool) -> None:
    assert matches(matcher, name) is expected


def test_an_invalid_regular_expression_is_reported() -> None:
    problem = check_matcher("Write(")
    assert problem is not None
    assert "invalid regular expression" in problem
