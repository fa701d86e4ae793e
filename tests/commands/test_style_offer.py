"""What the answer to a host's ``initialize`` says of the output styles
(coterie.commands.hostmode.style_offer), before the run opens."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from coterie.commands.hostmode import style_offer

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's Claude folder (through CLAUDE_CONFIG_DIR), with a style and settings."""
    folder = tmp_path / "config"
    (folder / "output-styles").mkdir(parents=True)
    (folder / "output-styles" / "mine.md").write_text("MINE\n")
    (folder / "settings.json").write_text(json.dumps({"outputStyle": "mine"}))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(folder))
    return folder


def test_the_users_style_and_folder(user: Path, workspace: Path) -> None:
    offer = style_offer(workspace)
    assert offer["output_style"] == "mine"
    assert offer["available_output_styles"][-1] == "mine"
    assert offer["user_output_styles_dir"] == str(user / "output-styles")


def test_settings_given_are_over_the_files_and_sources_leave_the_user_out(
    user: Path, workspace: Path
) -> None:
    assert style_offer(workspace, '{"outputStyle": "Concise"}')["output_style"] == "Concise"
    assert style_offer(workspace, sources=("project", "local"))["output_style"] == "default"


def test_settings_that_cannot_be_read_say_default(user: Path, workspace: Path) -> None:
    """The run reports the error itself when it opens."""
    offer = style_offer(workspace, "{not json")
    assert offer["output_style"] == "default"
    assert offer["available_output_styles"] == ["default"]
