"""Property tests for the scenario parser: round trips; refusals are always ScenarioError."""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from coterie.models import Scenario, ScenarioError, load_scenario, parse_scenario
from tests.strategies import json_values, scenario_dicts

#: Where a scenario's fixed-schema objects sit: an unknown key in any is refused.
SCHEMA_OBJECTS = ("top", "setup", "turn", "tool_use", "error", "usage")


def parse_or_refuse(data: object) -> Scenario | None:
    """Parse *data*; a refusal must be a ScenarioError, nothing else."""
    try:
        return parse_scenario(data, source="mutant.json")
    except ScenarioError as exc:
        message = str(exc)
    assert message.startswith("mutant.json: ")
    return None


@settings(max_examples=60)
@given(scenario_dicts)
def test_valid_scenarios_round_trip_through_json(data: dict[str, Any]) -> None:
    scen = parse_scenario(data)
    again = parse_scenario(json.loads(json.dumps(scen.to_dict())))
    assert again == scen


@settings(max_examples=60)
@given(scenario_dicts)
def test_round_trip_through_a_file(data: dict[str, Any]) -> None:
    scen = parse_scenario(data, source="s.json", default_name="s")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.json"
        path.write_text(json.dumps(scen.to_dict()))
        assert load_scenario(path) == scen


def _containers(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths of every dict and list inside *data* (the root included)."""
    found: list[tuple[Any, ...]] = []
    if isinstance(data, dict | list):
        found.append(path)
        items = data.items() if isinstance(data, dict) else enumerate(data)
        for key, value in items:
            found.extend(_containers(value, (*path, key)))
    return found


def _at(data: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        data = data[key]
    return data


@settings(max_examples=60)
@given(scenario_dicts, st.data())
def test_random_mutations_are_refused_only_as_scenario_errors(
    data: dict[str, Any], draw: st.DataObject
) -> None:
    mutant = copy.deepcopy(data)
    path = draw.draw(st.sampled_from(_containers(mutant)))
    target = _at(mutant, path)
    keys = list(target.keys()) if isinstance(target, dict) else list(range(len(target)))
    action = draw.draw(st.sampled_from(["replace", "delete", "insert"] if keys else ["insert"]))
    if action == "replace":
        target[draw.draw(st.sampled_from(keys))] = draw.draw(json_values)
    elif action == "delete":
        del target[draw.draw(st.sampled_from(keys))]
    elif isinstance(target, dict):
        target[draw.draw(st.text(max_size=8))] = draw.draw(json_values)
    else:
        target.insert(draw.draw(st.integers(0, len(target))), draw.draw(json_values))
    parse_or_refuse(mutant)


def _schema_objects(data: dict[str, Any]) -> list[tuple[Any, ...]]:
    paths: list[tuple[Any, ...]] = [()]
    if "setup" in data:
        paths.append(("setup",))
    for track, turns in data["tracks"].items():
        for i, turn in enumerate(turns):
            paths.append(("tracks", track, i))
            for j in range(len(turn.get("tool_uses", []))):
                paths.append(("tracks", track, i, "tool_uses", j))
            for key in ("error", "usage"):
                if key in turn:
                    paths.append(("tracks", track, i, key))
    return paths


@settings(max_examples=60)
@given(scenario_dicts, st.data())
def test_an_unknown_key_anywhere_in_the_schema_is_refused(
    data: dict[str, Any], draw: st.DataObject
) -> None:
    path = draw.draw(st.sampled_from(_schema_objects(data)))
    _at(data, path)["zz_unknown"] = 1
    assert parse_or_refuse(data) is None


@given(json_values)
def test_arbitrary_json_never_raises_anything_else(data: object) -> None:
    parse_or_refuse(data)


@given(st.binary(max_size=200))
def test_arbitrary_bytes_in_a_file_are_refused_as_scenario_errors(raw: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "mutant.json"
        path.write_bytes(raw)
        try:
            load_scenario(path)
        except ScenarioError as exc:
            message = str(exc)
        else:
            return
    assert message.startswith("mutant.json: ")
