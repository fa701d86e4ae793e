"""The small JSON Schema validator behind tool input checks."""

from __future__ import annotations

from typing import Any

import pytest

from coterie.tools._schema import validate

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "count": {"type": "integer", "minimum": 1, "maximum": 10},
        "mode": {"type": "string", "enum": ["a", "b"]},
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"status": {"type": "string", "enum": ["x", "y"]}},
                "required": ["status"],
            },
        },
    },
    "required": ["name"],
    "additionalProperties": False,
}


def test_valid_input_has_no_errors() -> None:
    assert (
        validate(SCHEMA, {"name": "n", "count": 3, "mode": "a", "items": [{"status": "x"}]}) == []
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({}, "missing the required property 'name'"),
        ({"name": 3}, "name must be a string, got an integer 3"),
        ({"name": ""}, "name must have at least 1 character"),
        ({"name": "n", "count": 0}, "count must be at least 1"),
        ({"name": "n", "count": 11}, "count must be at most 10"),
        ({"name": "n", "count": "3"}, "count must be an integer"),
        ({"name": "n", "count": True}, "count must be an integer, got a boolean true"),
        ({"name": "n", "mode": "c"}, 'mode must be one of "a", "b"'),
        ({"name": "n", "extra": 1}, "unexpected property 'extra'"),
        ({"name": "n", "items": [{"status": "z"}]}, "items[0].status must be one of"),
        ({"name": "n", "items": [{}]}, "items[0] is missing the required property 'status'"),
        ([], "input must be an object"),
    ],
)
def test_invalid_input_is_explained(value: Any, expected: str) -> None:
    errors = validate(SCHEMA, value)
    assert any(expected in e for e in errors), errors


def test_integral_float_counts_as_integer() -> None:
    """JSON has one number type: 5.0 is a valid integer, 5.5 is not."""
    assert validate({"type": "integer"}, 5.0) == []
    assert validate({"type": "integer"}, 5.5) != []


def test_every_error_is_reported_at_once() -> None:
    assert len(validate(SCHEMA, {"count": 0, "mode": "z"})) == 3
