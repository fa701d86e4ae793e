"""A corpus of skills and commands in public shapes, loaded and used through the CLI.

Every file loads (no notice), ``system/init`` lists them as Claude Code would,
the model is told of each skill it may load, and skills and commands run:
a Title Case skill by the Skill tool with its reference file read, a
command with a ``!`` line and an ``@`` file among decorators and at-rules,
positional arguments, a namespaced command, and skills as ``/name``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from coterie.extensions import load_extensions
from tests.agent.conftest import coterie
from tests.agent.test_resume_cli import write_scenario
from tests.extensions.corpusfiles import write_corpus
from tests.extensions.test_extensions_cli import trust

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path


def run(
    workspace: Path, home: Path, prompt: str, lead: list[dict[str, Any]]
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    scenario = write_scenario(workspace.parent / "s.json", {"lead": lead})
    done = coterie(
        "run", "-p", prompt, "--output-format", "stream-json", "--scenario", str(scenario),
        cwd=workspace, home=home,
    )  # fmt: skip
    return done, [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def corpus(workspace: Path, home: Path) -> None:
    write_corpus(workspace)
    trust(workspace, home)


def test_every_file_loads_and_system_init_lists_them(workspace: Path, home: Path) -> None:
    corpus(workspace, home)
    done, out = run(workspace, home, "hi", [{"text": "ok"}])
    assert done.returncode == 0, done.stderr
    assert "not loaded" not in done.stderr
    init = out[0]
    assert init["skills"] == [
        "code-style", "deploy-checklist", "hook-dev", "pdf-tools", "release-notes",
    ]  # fmt: skip
    assert {
        "code-style", "deploy-checklist", "hook-dev", "notes-first", "pdf-tools",
        "release-notes", "commit", "review-pr", "component", "frontend:component", "explain",
    } <= set(init["slash_commands"])  # fmt: skip


def test_the_skill_listing_follows_claude_code_s(workspace: Path, home: Path) -> None:
    corpus(workspace, home)
    loaded = load_extensions(workspace, trusted=True, home=home)
    assert not loaded.notices
    listing = {name: skill.listing for name, skill in loaded.skills.items()}
    # A quoted name with spaces is not shown; when_to_use follows the description.
    assert listing["code-style"] == (
        "- code-style: Applies the team's code style: naming, imports,"
        " error handling. - when writing or reviewing Python code"
    )
    assert listing["hook-dev"].startswith(
        '- hook-dev: This skill should be used when the user asks to "add a hook",'
        ' "validate tool use" or "run a check before a command".'
    )
    assert listing["notes-first"] == "- notes-first: Keep a notes file while you work"
    assert listing["pdf-tools"].startswith("- pdf-tools: Extracts text and tables from PDF")
    assert not loaded.skills["deploy-checklist"].model_invocable
    assert loaded.skills["release-notes"].allowed_tools == (
        "Bash(git log:*)", "Bash(git describe:*)", "Read",
    )  # fmt: skip


def test_a_title_case_skill_and_its_reference_file(workspace: Path, home: Path) -> None:
    corpus(workspace, home)
    events = workspace / ".claude" / "skills" / "hook-dev" / "references" / "events.md"
    lead: list[dict[str, Any]] = [
        {"tool_uses": [{"name": "Skill", "input": {"skill": "hook-dev"}}]},
        {"tool_uses": [{"name": "Read", "input": {"file_path": str(events)}}],
         "expect": "Read `references/events.md`"},
        {"text": "read it", "expect": "PreToolUse, Stop"},
    ]  # fmt: skip
    done, out = run(workspace, home, "add a hook", lead)
    assert done.returncode == 0, done.stderr
    assert out[-1]["result"] == "read it"


def test_commands_of_the_corpus_run(workspace: Path, home: Path) -> None:
    corpus(workspace, home)
    cases = [
        ("/commit fix the parser", "- Status: clean-tree"),
        ("/commit fix the parser", "Commit with the message: fix the parser"),
        ("/review-pr 42 tests", "Review PR #42 with a focus on tests."),
        ("/review-pr 42 tests", "Small pull requests, please."),
        ("/frontend:component Button", "Create the component Button following"),
        ("/explain src/app.py", "Explain what the code in src/app.py does"),
    ]
    for prompt, expect in cases:
        done, out = run(workspace, home, prompt, [{"text": "done", "expect": expect}])
        assert done.returncode == 0, (prompt, done.stderr)
        assert out[-1]["result"] == "done"


def test_review_pr_leaves_decorators_at_rules_scopes_and_mentions_as_text(
    workspace: Path, home: Path
) -> None:
    corpus(workspace, home)
    expect = "Check decorators like @dataclass and @pytest.fixture, CSS like @media"
    done, _ = run(workspace, home, "/review-pr 7 style", [{"text": "done", "expect": expect}])
    assert done.returncode == 0, done.stderr


def test_skills_of_the_corpus_run_as_commands(workspace: Path, home: Path) -> None:
    corpus(workspace, home)
    folder = (workspace / ".claude" / "skills").resolve()
    cases = [
        ("/release-notes 2.0", "Draft the notes for version 2.0."),
        ("/release-notes 2.0", "Recent tags: v1.0.0"),
        ("/deploy-checklist staging", "Target: staging"),
        ("/hook-dev", f"Base directory for this skill: {folder / 'hook-dev'}"),
    ]
    for prompt, expect in cases:
        done, out = run(workspace, home, prompt, [{"text": "done", "expect": expect}])
        assert done.returncode == 0, (prompt, done.stderr)
        assert out[-1]["result"] == "done"
