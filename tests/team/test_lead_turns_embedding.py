"""``open_team(..., lead_turns=...)``: the embedding face carries the lead's turns."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from coterie import RunOptions, open_team
from coterie.cli import command_parser
from coterie.team import LEAD_TURNS_MODES
from tests.team.test_team_cli import create, write

if TYPE_CHECKING:
    from pathlib import Path


def scenario(tmp_path: Path, lead_answers: list[str]) -> Path:
    tracks = {
        "lead": [
            {"tool_uses": [create("one", "ana"), create("two", "ben")]},
            {"text": "assigned"},
            *({"text": text} for text in lead_answers),
        ],
        "ana": [write("a.txt", "a"), {"text": "wrote a"}],
        "ben": [write("b.txt", "b"), {"text": "wrote b"}],
    }
    path = tmp_path / "team.json"
    path.write_text(json.dumps({"name": "pair", "tracks": tracks}))
    return path


@pytest.mark.parametrize(
    ("lead_turns", "answers", "expected"),
    [("batched", ["both done"], "both done"), ("each", ["one done", "both done"], "both done")],
)
async def test_open_team_takes_the_leads_turns_option(
    tmp_path: Path, lead_turns: str, answers: list[str], expected: str
) -> None:
    work = tmp_path / "ws"
    work.mkdir()
    async with open_team(
        work,
        names=["ana", "ben"],
        scenario=scenario(tmp_path, answers),
        permission_mode="acceptEdits",
        lead_turns=lead_turns,
    ) as team:
        result = await team.query("write a.txt and b.txt")
    assert result.result == expected


def test_the_option_is_recorded_for_resume_and_checked() -> None:
    options = RunOptions(lead_turns="each")
    assert RunOptions.from_json(options.to_json()).lead_turns == "each"
    assert RunOptions.from_json({}).lead_turns == "batched"
    with pytest.raises(ValueError, match="lead_turns"):
        RunOptions(lead_turns="sometimes")  # type: ignore[arg-type]


def test_the_cli_takes_each_mode_and_defaults_to_the_first() -> None:
    """The modes are declared once (``LeadTurns``); the option and the CLI take them."""
    parser, _ = command_parser()
    assert parser.parse_args(["team", "g"]).lead_turns == LEAD_TURNS_MODES[0]
    assert RunOptions().lead_turns == LEAD_TURNS_MODES[0]
    for mode in LEAD_TURNS_MODES:
        assert parser.parse_args(["team", "g", "--lead-turns", mode]).lead_turns == mode
    with pytest.raises(SystemExit):
        parser.parse_args(["team", "g", "--lead-turns", "sometimes"])
