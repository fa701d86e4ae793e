"""docs/scenarios.md: every example parses, and the first one runs as written."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import attrs

from coterie.models.scenario import Turn, parse_scenario
from tests.agent.conftest import coterie

DOC = Path(__file__).parents[2] / "docs" / "scenarios.md"


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(), re.S)


def test_every_json_example_is_a_valid_scenario() -> None:
    examples = blocks("json")
    assert len(examples) >= 3
    for text in examples:
        parse_scenario(json.loads(text), source="docs/scenarios.md")


def test_every_turn_key_is_documented() -> None:
    # A row of the turn table, or a section reserved for a key still to be written up.
    doc = DOC.read_text()
    for key in attrs.fields_dict(Turn):
        assert f"| `{key}`" in doc or f"Reserved: `{key}`" in doc, key


def test_the_first_example_runs_as_written(workspace: Path, home: Path) -> None:
    (workspace / "pursue-goal.json").write_text(blocks("json")[0])
    (command,) = blocks("sh")
    argv = shlex.split(command.replace("\\\n", " "))
    assert argv[0] == "coterie"
    result = coterie(*argv[1:], cwd=workspace, home=home)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (workspace / "done.txt").read_text() == "ok"
