"""The StructuredOutput tool and ``--json-schema``'s reading (coterie/tools/structured.py)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.tools import (
    STRUCTURED_OUTPUT,
    SchemaError,
    StructuredOutputTool,
    ToolContext,
    check_schema,
    load_schema,
)

if TYPE_CHECKING:
    from pathlib import Path

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"n": {"type": "integer", "exclusiveMinimum": 0}},
    "required": ["n"],
    "additionalProperties": False,
}


def test_the_tool_is_claude_codes_and_read_only() -> None:
    tool = StructuredOutputTool(SCHEMA)
    assert tool.name == STRUCTURED_OUTPUT == "StructuredOutput"
    assert tool.input_schema == SCHEMA
    assert tool.capabilities.read_only


async def test_an_answer_that_fits_is_kept_once(tmp_path: Path) -> None:
    tool = StructuredOutputTool(SCHEMA)
    done = await tool.run({"n": 3}, ToolContext(workspace=tmp_path))
    assert not done.is_error
    assert tool.take() == {"n": 3}
    assert tool.take() is None


async def test_an_answer_that_does_not_fit_says_where(tmp_path: Path) -> None:
    tool = StructuredOutputTool(SCHEMA)
    done = await tool.run({"n": 0, "extra": 1}, ToolContext(workspace=tmp_path))
    assert done.is_error
    assert "$.n" in done.content
    assert "extra" in done.content
    assert tool.take() is None


@pytest.mark.parametrize(
    "schema",
    [
        [],
        {"type": 12},
        {"type": "array"},
        {"properties": {"a": {"type": "nope"}}, "type": "object", "required": 1},
    ],
)
def test_check_schema_refuses_what_is_not_an_objects_schema(schema: Any) -> None:
    with pytest.raises(SchemaError):
        check_schema(schema)


def test_a_schema_is_read_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(SCHEMA))
    assert load_schema(str(path)) == SCHEMA


properties = st.dictionaries(
    st.text(min_size=1, max_size=8),
    st.sampled_from([{"type": "string"}, {"type": "integer"}, {"type": "boolean"}]),
    max_size=4,
)


@given(properties, st.sampled_from(["", "  ", "\n"]))
def test_any_objects_schema_text_reads_back_as_itself(props: dict[str, Any], pad: str) -> None:
    schema = {"type": "object", "properties": props, "required": sorted(props)}
    assert load_schema(pad + json.dumps(schema)) == schema


@given(st.text(max_size=20).filter(lambda t: not t.lstrip().startswith("{")))
def test_text_that_is_no_schema_is_a_schema_error(text: str) -> None:
    with pytest.raises(SchemaError):
        load_schema(text)


def test_a_schema_path_that_is_no_regular_file_or_too_large_is_refused_at_once(
    tmp_path: Path,
) -> None:
    """``--json-schema /dev/zero`` read until memory ran out (a Hypothesis run drew it
    from the project's own strings and the suite's worker was killed); a FIFO would
    wait forever. Only a regular file of at most a megabyte is read."""
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big.json"
    big.write_text(" " * (2 << 20) + "{}")
    for value, said in (("/dev/zero", "not a regular file"), (str(fifo), "not a regular file"),
                        (str(big), "larger than")):  # fmt: skip
        with pytest.raises(SchemaError, match=said):
            load_schema(value)
