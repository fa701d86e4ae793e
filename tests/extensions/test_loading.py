"""Loading custom subagents, skills and commands: precedence, trust, expansion."""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.extensions import (
    AgentsError,
    CommandDefinition,
    CommandError,
    expand,
    load_extensions,
    parse_agents_json,
)
from coterie.extensions.agents import narrower_mode
from coterie.projectconfig import project_items
from coterie.trust import set_trust

if TYPE_CHECKING:
    from pathlib import Path


def agent_file(root: Path, name: str, body: str, **meta: str) -> Path:
    folder = root / ".claude" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    lines = [f"name: {name}", *(f"{k}: {v}" for k, v in meta.items())]
    path = folder / f"{name}.md"
    path.write_text("---\n" + "\n".join(lines) + "\n---\n" + body)
    return path


def test_project_agents_override_user_ones_and_agents_json_overrides_both(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    agent_file(home, "reviewer", "user prompt", description="user's")
    agent_file(home, "helper", "helps", description="only the user's")
    agent_file(ws, "reviewer", "project prompt", description="project's", tools="Read, Grep")
    set_trust(ws, trusted=True, items=project_items(ws))  # records the project's agent as it is
    loaded = load_extensions(ws, trusted=True, home=home)
    assert loaded.agents["reviewer"].prompt == "project prompt"
    assert loaded.agents["reviewer"].tools == ("Read", "Grep")
    assert loaded.agents["helper"].scope == "user"
    cli = json.dumps({"reviewer": {"description": "cli's", "prompt": "cli prompt"}})
    loaded = load_extensions(ws, trusted=True, home=home, agents_json=cli)
    assert loaded.agents["reviewer"].prompt == "cli prompt"
    assert loaded.agents["reviewer"].tools is None


def test_an_untrusted_workspace_s_files_are_not_loaded_and_that_is_said_once(
    tmp_path: Path,
) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    agent_file(ws, "reviewer", "p", description="d")
    (ws / ".claude" / "commands").mkdir()
    (ws / ".claude" / "commands" / "go.md").write_text("go")
    loaded = load_extensions(ws, trusted=False, home=home)
    assert loaded.agents == {}
    assert loaded.commands == {}
    (notice,) = loaded.notices
    assert "not trusted" in notice
    assert "agents,commands" in notice


def test_a_bad_file_is_a_notice_and_the_others_load(tmp_path: Path) -> None:
    agent_file(tmp_path, "good", "p", description="d")
    agent_file(tmp_path, "bad", "p")  # no description
    loaded = load_extensions(tmp_path / "ws", trusted=True, home=tmp_path)
    assert list(loaded.agents) == ["good"]
    assert any("bad.md" in n and "description" in n for n in loaded.notices)


def test_unknown_tools_are_reported(tmp_path: Path) -> None:
    agent_file(tmp_path, "a", "p", description="d", tools="Read, Frobnicate")
    loaded = load_extensions(tmp_path / "ws", trusted=True, home=tmp_path, known_tools={"Read"})
    assert any("unknown tools Frobnicate" in n for n in loaded.notices)


def test_agents_json_is_checked() -> None:
    with pytest.raises(AgentsError, match="valid JSON"):
        parse_agents_json("{")
    with pytest.raises(AgentsError, match="needs a prompt"):
        parse_agents_json('{"x": {"description": "d"}}')
    with pytest.raises(AgentsError, match="permissionMode"):
        parse_agents_json('{"x": {"description": "d", "prompt": "p", "permissionMode": "yolo"}}')
    (one,) = parse_agents_json(
        '{"x": {"description": "d", "prompt": "p", "tools": ["Read"], "model": "inherit"}}'
    )
    assert one.tools == ("Read",)
    assert one.model is None


MODES = ["plan", "dontAsk", "default", "acceptEdits", "auto", "bypassPermissions"]


@given(st.sampled_from(MODES), st.sampled_from([*MODES, None, "nonsense"]))
def test_a_subagent_s_mode_is_taken_only_when_it_narrows(parent: str, wanted: str | None) -> None:
    chosen = narrower_mode(parent, wanted)
    assert chosen in (None, wanted)
    assert chosen != "bypassPermissions"  # never narrower than anything
    if chosen is not None:
        assert MODES.index(chosen) < MODES.index(parent) or parent == "bypassPermissions"
    if wanted == "plan" and parent != "plan":
        assert chosen == "plan"


def test_skills_with_their_folders(tmp_path: Path) -> None:
    folder = tmp_path / ".claude" / "skills" / "deploy"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\ndescription: Deploys the app\nallowed-tools: Bash(make deploy:*), Read\n---\nSteps\n"
    )
    loaded = load_extensions(tmp_path / "ws", trusted=True, home=tmp_path)
    skill = loaded.skills["deploy"]
    assert skill.folder == folder
    assert skill.body == "Steps"
    assert skill.allowed_tools == ("Bash(make deploy:*)", "Read")


def command(body: str, **kw: str) -> dict[str, CommandDefinition]:
    return {"fix": CommandDefinition(name="fix", body=body, source="fix.md", **kw)}


def test_arguments_are_substituted() -> None:
    done = expand('/fix 123 "high prio"', command("Fix #$1 ($2): $ARGUMENTS"))
    assert done is not None
    assert done.prompt == 'Fix #123 (high prio): 123 "high prio"'


def test_arguments_without_placeholders_are_appended() -> None:
    done = expand("/fix the bug", command("Fix it."))
    assert done is not None
    assert done.prompt == "Fix it.\n\nARGUMENTS: the bug"


def test_not_a_command_or_a_builtin_is_left_alone() -> None:
    assert expand("fix /this", command("x")) is None
    assert expand("/compact", command("x")) is None


def test_an_unknown_command_is_an_error_naming_those_there_are() -> None:
    with pytest.raises(CommandError, match=r"unknown command /nope .*?/fix"):
        expand("/nope", command("x"))


def test_shell_lines_and_file_references_are_found_not_refused() -> None:
    done = expand("/fix", command("Status: !`git status`, see @src/main.py"))
    assert done is not None
    assert [line.command for line in done.shell] == ["git status"]
    assert done.files == ("src/main.py",)


def test_subfolders_are_namespaces(tmp_path: Path) -> None:
    folder = tmp_path / ".claude" / "commands" / "frontend"
    folder.mkdir(parents=True)
    (folder / "component.md").write_text("---\ndescription: Make one\nmodel: haiku\n---\nMake $1")
    loaded = load_extensions(tmp_path / "ws", trusted=True, home=tmp_path)
    for spelled in ("/component Button", "/frontend:component Button"):
        done = loaded.expand(spelled)
        assert done is not None
        assert done.prompt == "Make Button"
        assert done.command.label == "(user:frontend)"
        assert done.command.model == "haiku"


@given(st.text(max_size=40))
def test_expanding_never_fails_but_by_command_error(prompt: str) -> None:
    with contextlib.suppress(CommandError):
        expand(prompt, command("Do $ARGUMENTS and $1 $9"))


def test_the_run_records_its_agents_and_allowed_tools_for_resume() -> None:
    from coterie.runtime import RunOptions

    options = RunOptions(
        agents='{"a": {}}', allowed_tools=["Write(x)"], allowed_tools_scope="project"
    )
    again = RunOptions.from_json(json.loads(json.dumps(options.to_json())))
    assert again == options
