"""A scenario's cursor that cannot be written (a full disk) is not moved: the turn
is served again, on this player and on one that reads the file after a resume,
never skipped (found by the chaos harness's disk-full rounds)."""

from __future__ import annotations

import errno
from typing import TYPE_CHECKING

import pytest

from coterie.models import _player
from coterie.models._player import ScenarioPlayer, ScriptedReply
from tests.models.conftest import scenario

if TYPE_CHECKING:
    from pathlib import Path


def text_of(outcome: object) -> str:
    assert isinstance(outcome, ScriptedReply)
    return str(outcome.content[0]["text"])


def test_a_turn_whose_cursor_cannot_be_written_is_served_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scen = scenario({"lead": [{"text": "one"}, {"text": "two"}, {"text": "three"}]})
    state = tmp_path / "scenario-state.json"
    player = ScenarioPlayer(scen, state)
    assert text_of(player.next_turn("lead", "lead", "go", key="k1")) == "one"
    written = _player._write_state

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_player, "_write_state", full)
    with pytest.raises(OSError, match="No space left"):
        player.next_turn("lead", "lead", "next", key="k2")
    monkeypatch.setattr(_player, "_write_state", written)
    # Space again: the request sent again gets "two", and the file says so, so the
    # next request of a resumed run (a player reading the file) gets "three".
    assert text_of(player.next_turn("lead", "lead", "next", key="k2")) == "two"
    assert (
        text_of(ScenarioPlayer(scen, state).next_turn("lead", "lead", "more", key="k3")) == "three"
    )
