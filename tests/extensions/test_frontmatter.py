"""The frontmatter parser: the YAML subset Claude Code's agent, skill and command files use."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.extensions import FrontmatterError, parse_frontmatter
from coterie.extensions.frontmatter import as_list

KEYS = st.from_regex(r"[a-z][a-zA-Z0-9_-]{0,12}", fullmatch=True)
#: Text a value may hold: no line breaks (the parser sees one entry a line).
TEXT = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=30)
PLAIN = st.from_regex(r"[A-Za-z0-9_./(): *-]*[A-Za-z0-9_./()*-]", fullmatch=True).filter(
    lambda s: not s.startswith(("-", "[", "{", "'", '"', "|", ">", "#"))
)


def double(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def single(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@given(st.dictionaries(KEYS, st.one_of(TEXT, st.lists(TEXT, max_size=4)), max_size=6), TEXT)
def test_quoted_values_and_lists_read_back_as_written(
    entries: dict[str, str | list[str]], body: str
) -> None:
    lines = []
    for i, (key, value) in enumerate(entries.items()):
        if isinstance(value, str):
            lines.append(f"{key}: {(double if i % 2 else single)(value)}")
        elif i % 2:
            lines.append(f"{key}: [{', '.join(double(v) for v in value)}]")
        else:
            lines.append(f"{key}:" if value else f"{key}: []")
            lines.extend(f"  - {single(v)}" for v in value)
    text = "---\n" + "\n".join(lines) + "\n---\n" + body
    meta, rest = parse_frontmatter(text)
    assert meta == entries
    assert rest == body


@given(KEYS, PLAIN)
def test_a_plain_scalar_is_its_text(key: str, value: str) -> None:
    meta, _ = parse_frontmatter(f"---\n{key}: {value}\n---\n")
    assert meta == {key: value.strip()}


@given(st.text(max_size=200))
def test_any_text_parses_or_is_a_frontmatter_error(text: str) -> None:
    try:
        meta, body = parse_frontmatter(text)
    except FrontmatterError:
        return
    assert isinstance(meta, dict)
    assert body in text


def test_a_file_without_frontmatter_is_all_body() -> None:
    assert parse_frontmatter("# Title\n---\n") == ({}, "# Title\n---\n")


def test_claude_code_style_agent_file() -> None:
    text = (
        "---\nname: code-reviewer\ndescription: Reviews code. Use after changes.  # why\n"
        "tools: Read, Grep, Glob\nmodel: inherit\n---\nYou are a reviewer.\n"
    )
    meta, body = parse_frontmatter(text)
    assert meta == {
        "name": "code-reviewer",
        "description": "Reviews code. Use after changes.",
        "tools": "Read, Grep, Glob",
        "model": "inherit",
    }
    assert body == "You are a reviewer.\n"


def test_folded_and_literal_blocks() -> None:
    meta, _ = parse_frontmatter(
        "---\na: >\n  one\n  two\nb: |\n  x\n   y\nc:\n  more\n  text\n---\n"
    )
    assert meta == {"a": "one two", "b": "x\n y", "c": "more text"}


@pytest.mark.parametrize(
    "inner",
    [
        "a: 1\na: 2",  # set twice
        "a: {b: 1}",  # a map
        'a: "open',  # unterminated
        "a: [x, y",  # unterminated list
        "  a: 1",  # indented key
        "just text",  # no key
        'a: "x" tail',  # text after quotes
        "a: [x, , y]",  # empty item
        "a:\n  - x\n  y",  # a list mixed with text
    ],
)
def test_what_it_cannot_read_is_an_error(inner: str) -> None:
    with pytest.raises(FrontmatterError):
        parse_frontmatter(f"---\n{inner}\n---\nbody")


def test_an_unclosed_block_is_an_error() -> None:
    with pytest.raises(FrontmatterError, match="closing"):
        parse_frontmatter("---\nname: x\n")


@given(st.lists(st.from_regex(r"[A-Za-z]+(\([a-z :*]+\))?", fullmatch=True), max_size=5))
def test_a_comma_list_splits_outside_parentheses(items: list[str]) -> None:
    assert as_list(", ".join(items)) == [i.strip() for i in items if i.strip()]


def test_a_space_list_keeps_rules_whole() -> None:
    assert as_list("Bash(git diff:*) Read") == ["Bash(git diff:*)", "Read"]
    assert as_list(None) is None
    assert as_list(["a"]) == ["a"]
