"""Scenario files: what is accepted, what is refused and how it is named."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from coterie.models import ScenarioError, Turn, Usage, load_scenario, parse_scenario
from coterie.models.scenario import ToolUse, TurnError
from tests.models.conftest import SCENARIOS

if TYPE_CHECKING:
    from pathlib import Path


def refusal(data: object) -> str:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(data, source="scen.json")
    return str(info.value)


def test_design_example_loads() -> None:
    scen = load_scenario(SCENARIOS / "pursue-goal.json")
    assert scen.name == "pursue-goal"
    assert scen.setup_files == {"README.md": "hi\n"}
    assert scen.tracks["lead"][1].tool_uses == (
        ToolUse(name="Write", input={"file_path": "done.txt", "content": "ok"}),
    )
    assert scen.tracks["lead"][2] == Turn(text="Created done.txt.", expect="done.txt")
    assert scen.source == "pursue-goal.json"


def test_full_turn_parses() -> None:
    scen = parse_scenario(
        {
            "tracks": {
                "lead": [
                    {
                        "text": "hi",
                        "tool_uses": [
                            {"name": "Bash", "input": {"command": "ls"}, "id": "toolu_1"}
                        ],
                        "stop_reason": "max_tokens",
                        "usage": {"input_tokens": 5, "cache_read_input_tokens": 7},
                        "expect": "go",
                    },
                    {"error": {"status": 529, "type": "overloaded_error", "message": "busy"}},
                    {"crash": "boom"},
                ]
            }
        }
    )
    first, second, third = scen.tracks["lead"]
    assert first.usage == Usage(input_tokens=5, cache_read_input_tokens=7)
    assert first.tool_uses[0].id == "toolu_1"
    assert second.error == TurnError(529, "overloaded_error", "busy")
    assert third.crash == "boom"


def test_name_defaults_to_file_stem(tmp_path: Path) -> None:
    path = tmp_path / "my-scen.json"
    path.write_text('{"tracks": {}}')
    assert load_scenario(path).name == "my-scen"


def test_error_message_defaults_to_type() -> None:
    scen = parse_scenario({"tracks": {"lead": [{"error": {"status": 500, "type": "api_error"}}]}})
    assert scen.tracks["lead"][0].error == TurnError(500, "api_error", "api_error")


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            {"tracks": {"lead": [{}, {}, {"tool_uses": [{"name": 7, "input": {}}]}]}},
            "scen.json: tracks.lead[0]: a turn needs 'text', 'tool_uses', 'error' or 'crash'",
        ),
        (
            {"tracks": {"lead": [{"text": "a"}, {"text": "b"}, {"tool_uses": [{"name": 7}]}]}},
            "scen.json: tracks.lead[2].tool_uses[0]: 'name' must be a string, not a number",
        ),
        ([], "scen.json: must be an object, not a list"),
        ({}, "scen.json: missing 'tracks'"),
        ({"tracks": [], "name": "x"}, "scen.json: tracks: must be an object, not a list"),
        ({"tracks": {}, "nmae": "x"}, "scen.json: unknown key 'nmae'"),
        ({"tracks": {"Lead": []}}, "scen.json: tracks['Lead']: a track name must match"),
        ({"tracks": {"lead": {}}}, "scen.json: tracks.lead: must be a list of turns"),
        (
            {"tracks": {"lead": [{"text": "a", "expcet": "b"}]}},
            "tracks.lead[0]: unknown key 'expcet'",
        ),
        (
            {"tracks": {"lead": [{"text": None}]}},
            "tracks.lead[0]: 'text' must be a string, not null",
        ),
        ({"tracks": {"lead": [{"tool_uses": []}]}}, "'tool_uses' must be a non-empty list"),
        ({"tracks": {"lead": [{"tool_uses": [{"name": "X"}]}]}}, "tool_uses[0]: missing 'input'"),
        (
            {"tracks": {"lead": [{"tool_uses": [{"name": "X", "input": []}]}]}},
            "tool_uses[0]: 'input' must be an object, not a list",
        ),
        (
            {"tracks": {"lead": [{"tool_uses": [{"name": "X", "input": {}, "id": "a b"}]}]}},
            "'id' must match",
        ),
        (
            {"tracks": {"lead": [{"tool_uses": [{"name": "X", "input": {}, "x": 1}]}]}},
            "tool_uses[0]: unknown key 'x'",
        ),
        (
            {"tracks": {"lead": [{"text": "a", "stop_reason": "done"}]}},
            "'stop_reason' must be one of",
        ),
        (
            {"tracks": {"lead": [{"text": "a", "stop_reason": "tool_use"}]}},
            "'stop_reason' is 'tool_use' but the turn has no tool_uses",
        ),
        (
            {"tracks": {"lead": [{"text": "a", "usage": {"input_tokens": -1}}]}},
            "tracks.lead[0].usage: 'input_tokens' must be a non-negative integer",
        ),
        (
            {"tracks": {"lead": [{"text": "a", "usage": {"input_tokens": True}}]}},
            "'input_tokens' must be a non-negative integer",
        ),
        ({"tracks": {"lead": [{"text": "a", "usage": {"tokens": 1}}]}}, "unknown key 'tokens'"),
        (
            {"tracks": {"lead": [{"error": {"type": "x"}}]}},
            "tracks.lead[0].error: missing 'status'",
        ),
        (
            {"tracks": {"lead": [{"error": {"status": 200, "type": "x"}}]}},
            "'status' must be an HTTP error status",
        ),
        (
            {"tracks": {"lead": [{"error": {"status": 418, "type": "x"}}]}},
            "418 is reserved for crash turns",
        ),
        (
            {"tracks": {"lead": [{"crash": "x", "text": "y"}]}},
            "a turn is a reply, an 'error' or a 'crash', not several",
        ),
        (
            {"tracks": {"lead": [{"crash": "x", "error": {"status": 500, "type": "t"}}]}},
            "not several",
        ),
        ({"tracks": {"lead": [{"crash": ""}]}}, "'crash' must not be empty"),
        ({"tracks": {"lead": [{"expect": "x"}]}}, "a turn needs"),
        ({"tracks": {}, "setup": {"dirs": {}}}, "setup: unknown key 'dirs'"),
        ({"tracks": {}, "setup": {"files": {"../x": "y"}}}, "must be a relative path inside"),
        ({"tracks": {}, "setup": {"files": {"/etc/x": "y"}}}, "must be a relative path inside"),
        ({"tracks": {}, "setup": {"files": {"a.txt": 1}}}, "content must be a string"),
        ({"tracks": {}, "name": ""}, "'name' must not be empty"),
        (
            {
                "tracks": {
                    "lead": [{"tool_uses": [{"name": "X", "input": {}, "id": "t1"}]}],
                    "bob": [{"tool_uses": [{"name": "X", "input": {}, "id": "t1"}]}],
                }
            },
            "tracks.bob[0].tool_uses[0]: id 't1' is already used at tracks.lead[0].tool_uses[0]",
        ),
    ],
)
def test_malformed_scenarios_are_refused_with_their_place(data: object, expected: str) -> None:
    assert expected in refusal(data)


def test_the_brief_example_message() -> None:
    """The place and wording the brief promises, for a non-string tool name."""
    message = refusal(
        {
            "tracks": {
                "lead": [{"text": "a"}, {"text": "b"}, {"tool_uses": [{"name": 7, "input": {}}]}]
            }
        }
    )
    assert message.startswith("scen.json: tracks.lead[2].tool_uses[0]: 'name' must be a string")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"{", "not valid JSON: Expecting property name"),
        (b"\xff\xfe\x00", "not UTF-8"),
        (b"[" * 100_000, "nested too deeply"),
    ],
)
def test_unreadable_files_are_refused(tmp_path: Path, raw: bytes, expected: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(raw)
    with pytest.raises(ScenarioError, match=r"bad\.json") as info:
        load_scenario(path)
    assert expected in str(info.value)


def test_missing_file_is_a_scenario_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="cannot read scenario"):
        load_scenario(tmp_path / "nope.json")


def test_malformed_fixture_names_its_place() -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario(SCENARIOS / "malformed.json")
    assert str(info.value).startswith(
        "malformed.json: tracks.lead[2].tool_uses[0]: 'name' must be a string"
    )


@pytest.mark.parametrize(
    ("actor", "role", "track"),
    [
        ("alice", "teammate", "alice"),
        ("bob", "teammate", "teammate"),
        ("lead", "lead", "lead"),
        ("judge", "evaluator", None),
    ],
)
def test_track_selection_prefers_the_actor_then_the_role(
    actor: str, role: str, track: str | None
) -> None:
    scen = parse_scenario(
        {"tracks": {"alice": [], "teammate": [{"text": "t"}], "lead": [{"text": "l"}]}}
    )
    assert scen.select_track(actor, role) == track


def test_to_dict_is_the_file_form() -> None:
    raw = json.loads((SCENARIOS / "pursue-goal.json").read_text())
    assert load_scenario(SCENARIOS / "pursue-goal.json").to_dict() == raw


def test_setup_files_seed_the_workspace_without_overwriting(tmp_path: Path) -> None:
    scen = parse_scenario(
        {"tracks": {}, "setup": {"files": {"README.md": "hi\n", "src/app.py": "x = 1\n"}}}
    )
    (tmp_path / "README.md").write_text("mine\n")
    written = scen.write_setup_files(tmp_path)
    assert written == [tmp_path.resolve() / "src" / "app.py"]
    assert (tmp_path / "src" / "app.py").read_text() == "x = 1\n"
    assert (tmp_path / "README.md").read_text() == "mine\n"


def test_setup_files_cannot_escape_through_a_symlink(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "link").symlink_to(outside)
    scen = parse_scenario({"tracks": {}, "setup": {"files": {"link/x.txt": "x"}}})
    with pytest.raises(ScenarioError, match="leads outside"):
        scen.write_setup_files(workspace)
    assert not (outside / "x.txt").exists()
