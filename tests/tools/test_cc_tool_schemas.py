"""coterie's tools take the inputs Claude Code's tools of the same name take.

``claude_code_tools.json`` holds what Claude Code 2.1.332 sends for each of
its tools (recorded once from its requests to ``coterie mock-server``): the
input schema's property names, their JSON types and the required set, no
description text. Every tool coterie offers under one of those names must
have the same three, so a tool added later is held to it as well. Where an
existing tool still differs, :data:`KNOWN` says how and why; the test of
such a tool is an expected failure, and once the tool is brought in line it
passes and has to leave :data:`KNOWN`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coterie.tools import SkillTool
from coterie.tools.catalogue import builtin_tools

CAPTURED = json.loads((Path(__file__).parent / "claude_code_tools.json").read_text())

#: Tools of coterie that still differ from Claude Code 2.1.332's, and why.
KNOWN: dict[str, str] = {}


def offered() -> list[Any]:
    """Every tool coterie offers, whatever the agent (the Skill tool with no skills)."""
    return [*builtin_tools(), SkillTool(())]


def shape(schema: dict[str, Any]) -> dict[str, Any]:
    """What is compared: each property's JSON type (None: any), and the required set."""
    properties = schema.get("properties", {})
    return {
        "properties": {name: spec.get("type") for name, spec in sorted(properties.items())},
        "required": sorted(schema.get("required", [])),
    }


def cases() -> list[Any]:
    found = []
    for tool in offered():
        if tool.name not in CAPTURED["tools"]:
            continue
        marks = [pytest.mark.xfail(reason=KNOWN[tool.name])] if tool.name in KNOWN else []
        found.append(pytest.param(tool, id=tool.name, marks=marks))
    return found


@pytest.mark.parametrize("tool", cases())
def test_the_input_schema_is_claude_codes(tool: Any) -> None:
    theirs = CAPTURED["tools"][tool.name]
    expected = {"properties": theirs["properties"], "required": theirs["required"]}
    assert shape(tool.input_schema) == expected


def test_webfetch_is_held_to_it() -> None:
    """The comparison covers WebFetch (and so will cover each tool added under a
    name Claude Code has)."""
    names = {p.id for p in cases()}
    assert {"WebFetch", "WebSearch", "Write", "Edit", "Skill"} <= names


def test_the_capture_names_its_version_and_holds_facts_only() -> None:
    assert CAPTURED["claude_code_version"] == "2.1.332"
    for name, tool in CAPTURED["tools"].items():
        assert set(tool) == {"deferred", "properties", "required"}, name
        assert set(tool["required"]) <= set(tool["properties"]), name
    assert CAPTURED["tools"]["WebFetch"]["deferred"] is True


def test_the_cron_worktree_and_messaging_tools_are_held_to_it() -> None:
    names = {p.id for p in cases()}
    mine = {"CronCreate", "CronList", "CronDelete", "EnterWorktree", "ExitWorktree"}
    mine |= {"ListAgents", "SendMessage"}
    assert mine <= names
    deferred = {t.name: t.capabilities.deferred for t in offered() if t.name in mine}
    assert deferred == {name: CAPTURED["tools"][name]["deferred"] for name in mine}
