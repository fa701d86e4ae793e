"""The system prompt states the environment and carries the project's notes."""

from __future__ import annotations

import datetime
import subprocess
from typing import TYPE_CHECKING

from coterie.agent import build_system_prompt

if TYPE_CHECKING:
    from pathlib import Path


def test_the_environment_is_stated(tmp_path: Path) -> None:
    prompt = build_system_prompt(tmp_path, headless=False, today=datetime.date(2026, 11, 29))
    assert f"Working directory: {tmp_path}" in prompt
    assert "Today's date: 2026-11-29" in prompt
    assert "Git repository: no" in prompt
    assert "non-interactive" not in prompt


def test_a_headless_run_is_told_nobody_can_approve(tmp_path: Path) -> None:
    assert "nobody can answer" in build_system_prompt(tmp_path, headless=True)


def test_claude_md_is_included_as_the_users_instructions(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("Never push to main.\n")
    (tmp_path / "AGENTS.md").write_text("ignored when CLAUDE.md exists\n")
    prompt = build_system_prompt(tmp_path, headless=True)
    assert "Never push to main." in prompt
    assert "ignored when" not in prompt


def test_agents_md_is_used_without_claude_md(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Use tabs.\n")
    assert "Use tabs." in build_system_prompt(tmp_path, headless=True)


def test_git_status_is_shown_in_a_repository(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "trunk"], cwd=tmp_path, check=True)
    (tmp_path / "new.txt").write_text("x")
    prompt = build_system_prompt(tmp_path, headless=True)
    assert "Git repository: yes" in prompt
    assert "trunk" in prompt
    assert "?? new.txt" in prompt
