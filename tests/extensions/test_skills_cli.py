"""Skills through the real CLI, on the scripted model, as Claude Code 2.1 treats them.

A ``name: Hook Development`` skill loads under its folder's name; skills are
listed in ``system/init`` (``skills``, and ``slash_commands`` with the command
files) and run as ``/name args``; a command's ``@dir`` lists the directory.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tests.agent.conftest import coterie
from tests.agent.test_resume_cli import write_scenario
from tests.extensions.test_extensions_cli import put, trust

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path

HOOK_DEV = """\
---
name: Hook Development
description: This skill should be used when the user asks to "create a hook".
version: 0.1.0
license: MIT
---

# Hook development

Write the hook for: $ARGUMENTS
"""


def run(
    workspace: Path, home: Path, prompt: str, lead: list[dict[str, Any]]
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    trust(workspace, home)
    scenario = write_scenario(workspace.parent / "s.json", {"lead": lead})
    done = coterie(
        "run", "-p", prompt, "--output-format", "stream-json", "--scenario", str(scenario),
        cwd=workspace, home=home,
    )  # fmt: skip
    return done, [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def test_system_init_lists_skills_by_folder_and_as_commands(workspace: Path, home: Path) -> None:
    skills = workspace / ".claude" / "skills"
    put(skills / "hook-dev" / "SKILL.md", HOOK_DEV)
    put(skills / "nodesc" / "SKILL.md", "---\nname: nodesc\n---\n\nFirst line.\n")
    put(skills / "private" / "SKILL.md", "---\ndescription: d\nuser-invocable: false\n---\nB\n")
    put(workspace / ".claude" / "commands" / "review.md", "Review it.\n")
    done, out = run(workspace, home, "hi", [{"text": "ok"}])
    assert done.returncode == 0, done.stderr
    init = out[0]
    assert init["subtype"] == "init"
    # As Claude Code lists them: described, user-invocable skills in `skills`;
    # every user-invocable skill and command in `slash_commands`.
    assert init["skills"] == ["hook-dev"]
    assert {"hook-dev", "nodesc", "review"} <= set(init["slash_commands"])
    assert "private" not in init["slash_commands"]
    assert "Hook Development" not in json.dumps(init)


def test_the_model_loads_a_title_case_skill_by_its_folder(workspace: Path, home: Path) -> None:
    put(workspace / ".claude" / "skills" / "hook-dev" / "SKILL.md", HOOK_DEV)
    lead: list[dict[str, Any]] = [
        {"tool_uses": [{"name": "Skill", "input": {"skill": "hook-dev"}}]},
        {"text": "loaded", "expect": "Write the hook for:"},
    ]
    done, out = run(workspace, home, "make a hook", lead)
    assert done.returncode == 0, done.stderr
    assert out[-1]["result"] == "loaded"


def test_a_skill_runs_as_a_slash_command_with_its_arguments(workspace: Path, home: Path) -> None:
    folder = workspace / ".claude" / "skills" / "hook-dev"
    put(folder / "SKILL.md", HOOK_DEV)
    expect = f"Base directory for this skill: {folder.resolve()}"
    lead = [{"text": "done", "expect": expect}]
    done, out = run(workspace, home, "/hook-dev a Stop hook", lead)
    assert done.returncode == 0, done.stderr
    assert out[-1]["result"] == "done"
    lead = [{"text": "ok", "expect": "Write the hook for: a Stop hook"}]
    done, out = run(workspace, home, "/hook-dev a Stop hook", lead)
    assert done.returncode == 0, done.stderr


def test_a_private_skill_is_no_command(workspace: Path, home: Path) -> None:
    put(workspace / ".claude" / "skills" / "quiet" / "SKILL.md",
        "---\ndescription: d\nuser-invocable: false\n---\nB\n")  # fmt: skip
    done, _ = run(workspace, home, "/quiet", [{"text": "never"}])
    assert done.returncode != 0
    assert "unknown command /quiet" in done.stdout + done.stderr


def test_a_command_s_at_dir_lists_the_directory(workspace: Path, home: Path) -> None:
    put(workspace / ".claude" / "commands" / "seedir.md", "Look at @sub please.\n")
    put(workspace / "sub" / "a.txt", "a")
    put(workspace / "sub" / ".hidden", "")
    (workspace / "sub" / "inner").mkdir()
    listing = '<attached-directory path="sub">\n.hidden\na.txt\ninner\n</attached-directory>'
    lead = [{"text": "seen", "expect": listing}]
    done, out = run(workspace, home, "/seedir", lead)
    assert done.returncode == 0, done.stderr
    assert out[-1]["result"] == "seen"
