"""A workflow script's ``meta``: found past strings and comments, read as a literal only."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.workflows.meta import Meta, ScriptError, find_literal, read_meta, script_body

SCRIPT = """\
export const meta = {
  name: 'review',
  description: 'Review the changes,\\n  twice',   // a comment with a } brace
  phases: [{ title: 'Find' }, { title: 'Verify', detail: "a { brace" }],
  whenToUse: `when a } is in a template ${'}'}`,
}
phase('Find')
return 1
"""


def test_the_literal_is_read_past_braces_in_strings_comments_and_templates() -> None:
    assert read_meta(SCRIPT) == Meta(
        name="review",
        description="Review the changes, twice",
        phases=("Find", "Verify"),
        when_to_use="when a } is in a template }",
    )


@pytest.mark.parametrize(
    ("source", "says"),
    [
        ("return 1", "must begin with `export const meta"),
        ("const meta = {name: 'a', description: 'b'}", "must begin with `export const meta"),
        ("export const meta = {name: 'a', description: 'b'", "must begin with"),
        ("export const meta = {name: NAME, description: 'b'}", "pure literal"),
        ("export const meta = {name: f(), description: 'b'}", "pure literal"),
        ("export const meta = {description: 'b'}", "meta.name"),
        ("export const meta = {name: ' ', description: 'b'}", "meta.name"),
        ("export const meta = {name: 'a'}", "meta.description"),
        ("export const meta = {name: 'a', description: 'b', phases: ['x']}", "meta.phases"),
    ],
)
def test_a_missing_or_bad_meta_is_one_line_naming_what_is_wrong(source: str, says: str) -> None:
    with pytest.raises(ScriptError) as raised:
        read_meta(source)
    assert says in str(raised.value)
    assert "\n" not in str(raised.value)


def test_the_body_keeps_its_lines_and_loses_only_the_export() -> None:
    body = script_body(SCRIPT)
    assert "export" not in body
    assert body.count("\n") == SCRIPT.count("\n")
    assert body == SCRIPT.replace("export", " " * len("export"), 1)


_text = st.text(alphabet="ab{}[]()'\"`/*\\\n $", max_size=30)


@given(st.lists(st.tuples(st.sampled_from(["'", '"', "`"]), _text), max_size=4), _text)
def test_braces_inside_strings_never_end_the_literal(
    strings: list[tuple[str, str]], tail: str
) -> None:
    """Whatever the strings hold, the literal found is the whole object: evaluating
    it gives back each string."""
    values = {f"k{i}": text for i, (_, text) in enumerate(strings)}
    parts = [f"k{i}: {json.dumps(text)}" for i, text in enumerate(values.values())]
    literal = "{name: 'n', description: 'd', " + ", ".join(parts) + "}"
    source = f"export const meta = {literal}\n{tail}"
    where = find_literal(source)
    assert where is not None
    assert source[where[0] : where[1]] == literal


@given(st.text(max_size=200))
def test_any_text_is_read_or_refused_with_a_script_error(source: str) -> None:
    with contextlib.suppress(ScriptError):
        read_meta(source)
