"""The system prompt states the environment and stays byte-stable; the context
reminder of the first user message carries the project's notes, git and the date."""

from __future__ import annotations

import datetime
import os
import subprocess
from typing import TYPE_CHECKING, Any

from coterie.agent import build_system_prompt, context_reminder

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def test_the_environment_is_stated(tmp_path: Path) -> None:
    prompt = build_system_prompt(tmp_path, headless=False)
    assert f"Working directory: {tmp_path}" in prompt
    assert "non-interactive" not in prompt
    reminder = context_reminder(
        tmp_path, today=datetime.date(2026, 11, 29), trusted=True, home=tmp_path
    )
    assert reminder.startswith("<system-reminder>")
    assert "Today's date is 2026-11-29." in reminder
    assert "Git repository: no" in reminder


def test_the_system_prompt_has_nothing_that_changes_between_runs(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("Never push to main.\n")
    prompt = build_system_prompt(tmp_path, headless=True)
    assert "Never push" not in prompt
    assert "date" not in prompt.lower()
    assert prompt == build_system_prompt(tmp_path, headless=True)


def test_system_prompt_options_replace_or_append(tmp_path: Path) -> None:
    replaced = build_system_prompt(tmp_path, headless=True, replace="Be a pirate.")
    assert replaced == "Be a pirate."
    appended = build_system_prompt(tmp_path, headless=True, append="Answer in French.")
    assert appended.startswith("You are coterie")
    assert appended.endswith("\n\nAnswer in French.")


def test_a_headless_run_is_told_nobody_can_approve(tmp_path: Path) -> None:
    assert "nobody can answer" in build_system_prompt(tmp_path, headless=True)


def test_claude_md_is_included_as_the_users_instructions(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("Never push to main.\n")
    (tmp_path / "AGENTS.md").write_text("ignored when CLAUDE.md exists\n")
    prompt = context_reminder(tmp_path, home=tmp_path)
    assert "Never push to main." in prompt
    assert "ignored when" not in prompt


def test_agents_md_is_used_without_claude_md(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Use tabs.\n")
    assert "Use tabs." in context_reminder(tmp_path, home=tmp_path)


def test_git_status_is_shown_in_a_repository(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "trunk"], cwd=tmp_path, check=True)
    (tmp_path / "new.txt").write_text("x")
    prompt = context_reminder(tmp_path, trusted=True, home=tmp_path)
    assert "Git repository: yes" in prompt
    assert "trunk" in prompt
    assert "?? new.txt" in prompt


def hostile_repository(folder: Path, marker: Path) -> None:
    """A repository whose configuration runs programs that create *marker*: an
    fsmonitor hook, a clean filter on every file, a post-index-change hook."""
    script = folder.parent / "evil.sh"
    script.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\ncat\n')
    script.chmod(0o755)
    git = ["git", "-c", "user.email=a@b", "-c", "user.name=a"]
    subprocess.run([*git, "init", "-q"], cwd=folder, check=True)
    (folder / ".gitattributes").write_text("* filter=evil\n")
    (folder / "tracked.txt").write_text("x\n")
    subprocess.run([*git, "add", "."], cwd=folder, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=folder, check=True)
    hooks = folder / ".git" / "hooks"
    (hooks / "post-index-change").write_text(script.read_text())
    (hooks / "post-index-change").chmod(0o755)
    for key, value in [
        ("core.fsmonitor", str(script)),
        ("filter.evil.clean", str(script)),
        ("filter.evil.process", str(script)),
        ("filter.evil.required", "true"),
    ]:
        subprocess.run(["git", "config", key, value], cwd=folder, check=True)
    # Stat data that no longer matches the index, so git must look at the content.
    os.utime(folder / "tracked.txt", (1_000_000, 1_000_000))


def test_a_repository_cannot_make_the_snapshot_run_its_programs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    marker = tmp_path / "ran"
    hostile_repository(repo, marker)
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", str(tmp_path / "evil.sh"))
    monkeypatch.setenv(
        "GIT_CONFIG_PARAMETERS", "'core.fsmonitor'='" + str(tmp_path / "evil.sh") + "'"
    )
    subprocess.run(["git", "status"], cwd=repo, capture_output=True, check=False)
    assert marker.exists(), "the hostile repository does not work as meant"
    marker.unlink()
    prompt = context_reminder(repo, trusted=True, home=tmp_path)
    assert "Git repository: yes" in prompt
    assert not marker.exists()


def test_an_untrusted_folder_runs_no_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    marker = tmp_path / "ran"
    hostile_repository(repo, marker)
    calls: list[object] = []
    real_run = subprocess.run

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return real_run(*args, **kwargs)

    monkeypatch.setattr(subprocess, "run", spy)
    prompt = context_reminder(repo, home=tmp_path)  # the store: never trusted
    assert "Git repository: not checked (the folder is not trusted" in prompt
    assert calls == []
    assert not marker.exists()


def test_git_from_the_environment_does_not_redirect_the_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "elsewhere"], cwd=other, check=True)
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    here = tmp_path / "here"
    here.mkdir()
    assert "Git repository: no" in context_reminder(here, trusted=True, home=tmp_path)
