"""A small JSON Schema validator for the subset tool input schemas use.

Supported keywords: ``type`` (a name or a list of names), ``properties``,
``required``, ``additionalProperties`` (``false`` or a schema), ``enum``,
``items``, ``minimum``, ``maximum``, ``minLength``, ``minItems``,
``maxItems``. Unknown keywords (``description``, ``default``...) are ignored.
Messages name the offending location (``todos[0].status``) so the model can
fix its call.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["validate"]

_TYPE_NAMES = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
}


def validate(schema: dict[str, Any], value: Any) -> list[str]:
    """Every way *value* fails *schema*, as readable sentences; empty if valid."""
    errors: list[str] = []
    _check(schema, value, "input", errors)
    return errors


def _is_type(value: Any, name: str) -> bool:
    # bool is an int subclass in Python, but never a number in JSON.
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if isinstance(value, bool):
        return False
    if name == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if name == "number":
        return isinstance(value, int | float)
    return True  # an unknown type name constrains nothing


def _check(schema: dict[str, Any], value: Any, where: str, errors: list[str]) -> None:
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        if not any(_is_type(value, t) for t in names):
            wanted = " or ".join(_TYPE_NAMES.get(t, t) for t in names)
            errors.append(f"{where} must be {wanted}, got {_describe(value)}")
            return
    if "enum" in schema and value not in schema["enum"]:
        options = ", ".join(json.dumps(v) for v in schema["enum"])
        errors.append(f"{where} must be one of {options}, got {_describe(value)}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{where} must be at least {schema['minimum']}, got {value}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{where} must be at most {schema['maximum']}, got {value}")
    if isinstance(value, str) and len(value) < schema.get("minLength", 0):
        errors.append(f"{where} must have at least {schema['minLength']} character(s)")
    if isinstance(value, dict):
        _check_object(schema, value, where, errors)
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            errors.append(f"{where} must have at least {schema['minItems']} item(s)")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(f"{where} must have at most {schema['maxItems']} item(s)")
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                _check(items, item, f"{where}[{i}]", errors)


def _check_object(
    schema: dict[str, Any], value: dict[str, Any], where: str, errors: list[str]
) -> None:
    properties: dict[str, Any] = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in value:
            errors.append(f"{where} is missing the required property {name!r}")
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        path = f"{name}" if where == "input" else f"{where}.{name}"
        if name in properties:
            _check(properties[name], item, path, errors)
        elif extra is False:
            known = ", ".join(properties) or "none"
            errors.append(f"{where} has an unexpected property {name!r} (known: {known})")
        elif isinstance(extra, dict):
            _check(extra, item, path, errors)


def _describe(value: Any) -> str:
    text = json.dumps(value, default=repr)
    if len(text) > 60:
        text = text[:57] + "..."
    kind = next((n for n in _TYPE_NAMES if _is_type(value, n)), type(value).__name__)
    return f"{_TYPE_NAMES.get(kind, kind)} {text}" if kind not in ("null",) else "null"
