"""Custom subagents, skills, commands and settings through the real CLI.

On the scripted model, and through the real SDK against ``coterie mock-server``:
a custom subagent has only its tools (and its model), a skill is loaded and its
files read, a command is expanded, settings keys are reported, ``env`` reaches
the tools.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coterie.models import Usage
from coterie.models.pricing import cost_usd
from tests.agent.conftest import coterie
from tests.agent.test_resume_cli import write_scenario
from tests.team.test_team_cli import events_of

READER = """\
---
name: reader
description: Reads files and reports on them; cannot change anything.
tools: Read, Grep
model: claude-haiku-4-5
---
You are a careful reader. Report what the file says.
"""
NO_USAGE = {"input_tokens": 0, "output_tokens": 0}
MILLION = {"input_tokens": 1_000_000, "output_tokens": 0}


def trust(workspace: Path, home: Path) -> None:
    done = coterie("trust", str(workspace), cwd=workspace, home=home)
    assert done.returncode == 0, done.stderr


def put(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def results(workspace: Path, *, sub: bool) -> list[dict[str, Any]]:
    return [
        e.data
        for e in events_of(workspace)
        if e.type == "agent.tool_result" and ("-sub-" in e.data["actor"]) == sub
    ]


def reader_tracks() -> dict[str, list[dict[str, Any]]]:
    delegate = {"description": "read notes", "prompt": "what is in notes.txt?"}
    return {
        "lead": [
            {"tool_uses": [{"name": "Agent", "input": {**delegate, "subagent_type": "reader"}}],
             "usage": NO_USAGE},
            {"expect": "notes say hi", "text": "The reader says: notes say hi", "usage": NO_USAGE},
        ],
        "subagent": [
            {"tool_uses": [{"name": "Write", "input": {"file_path": "x.txt", "content": "no"}}],
             "usage": MILLION},
            {"expect": "No such tool", "tool_uses": [
                {"name": "Read", "input": {"file_path": "notes.txt"}}], "usage": NO_USAGE},
            {"expect": "hi", "text": "notes say hi", "usage": NO_USAGE},
        ],
    }  # fmt: skip


@pytest.mark.parametrize("via", ["scripted", "sdk"])
def test_a_custom_subagent_has_only_its_tools_and_its_model(
    workspace: Path, home: Path, mock_server: Any, via: str
) -> None:
    put(workspace / ".claude" / "agents" / "reader.md", READER)
    put(workspace / "notes.txt", "hi\n")
    trust(workspace, home)
    scenario = write_scenario(workspace.parent / "s.json", reader_tracks())
    if via == "sdk":
        source: tuple[str, ...] = ()
        env = {"ANTHROPIC_BASE_URL": mock_server(scenario)}
    else:
        source, env = ("--scenario", str(scenario)), {}
    done = coterie(
        "run", "-p", "--output-format", "json", *source, "--permission-mode", "bypassPermissions",
        "ask the reader", cwd=workspace, home=home, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["result"] == "The reader says: notes say hi"
    assert not (workspace / "x.txt").exists()
    write, read = results(workspace, sub=True)
    assert write["is_error"]
    assert "No such tool" in write["content"]
    assert not read["is_error"]
    started = next(e.data for e in events_of(workspace) if e.type == "subagent.started")
    assert started["subagent_type"] == "reader"
    if via == "sdk":  # the subagent's calls asked for its model: priced as haiku
        (sub,) = [
            e.data
            for e in events_of(workspace)
            if e.type == "agent.result" and "-sub-" in e.data["actor"]
        ]
        haiku = cost_usd("claude-haiku-4-5", Usage(**MILLION))
        assert sub["total_cost_usd"] == pytest.approx(haiku)


def test_a_checked_in_bypass_mode_bypasses_nothing_and_plan_mode_narrows(
    workspace: Path, home: Path
) -> None:
    agents = {
        "bypasser": {"description": "d", "prompt": "p", "permissionMode": "bypassPermissions"},
        "planner": {"description": "d", "prompt": "p", "permissionMode": "plan"},
    }
    write_file = {"name": "Write", "input": {"file_path": "out.txt", "content": "x"}}
    tracks = {
        "lead": [
            {"tool_uses": [{"name": "Task", "input": {
                "description": "w", "prompt": "write", "subagent_type": "bypasser"}}]},
            {"tool_uses": [{"name": "Agent", "input": {
                "description": "w", "prompt": "write", "subagent_type": "planner"}}]},
            {"text": "done"},
        ],
        "subagent": [
            {"tool_uses": [write_file]}, {"expect": "denied", "text": "could not"},
            {"tool_uses": [write_file]}, {"expect": "Plan mode", "text": "could not"},
        ],
    }  # fmt: skip
    scenario = write_scenario(workspace.parent / "s.json", tracks)
    done = coterie(
        "run", "-p", "--scenario", str(scenario), "--agents", json.dumps(agents), "go",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not (workspace / "out.txt").exists()
    denied = [r for r in results(workspace, sub=True) if r["is_error"]]
    assert len(denied) == 2


def test_a_bad_agents_value_is_a_usage_error(workspace: Path, home: Path) -> None:
    scenario = write_scenario(workspace.parent / "s.json", {"lead": [{"text": "x"}]})
    done = coterie(
        "run", "-p", "--scenario", str(scenario), "--agents", "{nope", "go",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--agents" in done.stderr


SKILL = """\
---
name: release-notes
description: Writes release notes in the house style
---
Read style.md beside this file and follow it.
"""


@pytest.mark.parametrize("via", ["scripted", "sdk"])
def test_a_user_skill_is_offered_loaded_and_its_files_read(
    workspace: Path, home: Path, mock_server: Any, via: str
) -> None:
    folder = home / ".claude" / "skills" / "release-notes"
    put(folder / "SKILL.md", SKILL)
    put(folder / "style.md", "Use haiku form.\n")
    tracks = {
        "lead": [
            {"tool_uses": [{"name": "Skill", "input": {"skill": "release-notes"}}]},
            {"expect": "follow it", "tool_uses": [
                {"name": "Read", "input": {"file_path": str(folder / "style.md")}}]},
            {"expect": "haiku form", "tool_uses": [
                {"name": "Write", "input": {"file_path": str(folder / "style.md"),
                                            "content": "changed"}}]},
            {"expect": "denied", "text": "notes written in haiku form"},
        ]
    }  # fmt: skip
    scenario = write_scenario(workspace.parent / "s.json", tracks)
    if via == "sdk":
        source: tuple[str, ...] = ()
        env = {"ANTHROPIC_BASE_URL": mock_server(scenario)}
    else:
        source, env = ("--scenario", str(scenario)), {}
    done = coterie(
        "run", "-p", "--output-format", "json", *source, "--permission-mode", "bypassPermissions",
        "write the release notes", cwd=workspace, home=home, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "notes written in haiku form"
    assert (folder / "style.md").read_text() == "Use haiku form.\n"  # read-only, even bypassed
    loaded = [e.data for e in events_of(workspace) if e.type == "skill.loaded"]
    assert loaded == [{"actor": "lead", "skill": "release-notes"}]


def test_a_command_is_expanded_with_its_arguments_and_model(workspace: Path, home: Path) -> None:
    put(
        workspace / ".claude" / "commands" / "git" / "fix-issue.md",
        "---\ndescription: Fix an issue\nmodel: claude-haiku-4-5\n"
        "allowed-tools: Edit(notes/*)\n---\nFix issue #$1 with priority $2. All: $ARGUMENTS\n",
    )
    trust(workspace, home)
    tracks = {
        "lead": [
            {"expect": "Fix issue #42 with priority high. All: 42 high",
             "tool_uses": [{"name": "Write",
                            "input": {"file_path": "notes/a.md", "content": "x"}}]},
            {"expect": "notes/a.md", "text": "fixed"},
        ]
    }  # fmt: skip
    scenario = write_scenario(workspace.parent / "s.json", tracks)
    done = coterie(
        "run", "-p", "--output-format", "json", "--scenario", str(scenario), "/fix-issue 42 high",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "fixed"
    assert (workspace / "notes" / "a.md").read_text() == "x"  # its allowed-tools, headless
    (expanded,) = [e.data for e in events_of(workspace) if e.type == "command.expanded"]
    assert expanded["command"] == "fix-issue"
    assert expanded["model"] == "claude-haiku-4-5"


def test_an_unknown_command_is_exit_2(workspace: Path, home: Path) -> None:
    scenario = write_scenario(workspace.parent / "s.json", {"lead": [{"text": "x"}]})
    done = coterie("run", "-p", "--scenario", str(scenario), "/nope 1", cwd=workspace, home=home)
    assert done.returncode == 2
    assert "unknown command /nope" in done.stderr


def test_an_untrusted_workspace_s_commands_are_not_loaded(workspace: Path, home: Path) -> None:
    put(workspace / ".claude" / "commands" / "go.md", "Go!")
    scenario = write_scenario(workspace.parent / "s.json", {"lead": [{"text": "x"}]})
    done = coterie("run", "-p", "--scenario", str(scenario), "/go", cwd=workspace, home=home)
    assert done.returncode == 2
    assert "unknown command /go" in done.stderr


def test_settings_keys_are_reported_and_env_and_model_honoured(workspace: Path, home: Path) -> None:
    put(
        home / ".claude" / "settings.json",
        json.dumps({"env": {"COTERIE_GREETING": "bonjour"}, "model": "claude-haiku-4-5",
                    "theme": "dark", "permisions": {}}),
    )  # fmt: skip
    put(workspace / ".claude" / "agents" / "a.md", "---\nname: a\ndescription: d\n---\np")
    tracks = {
        "lead": [
            {"tool_uses": [{"name": "Bash", "input": {"command": "echo $COTERIE_GREETING"}}]},
            {"expect": "bonjour", "text": "it said bonjour"},
        ]
    }  # fmt: skip
    scenario = write_scenario(workspace.parent / "s.json", tracks)
    done = coterie(
        "run", "-p", "--output-format", "stream-json", "--scenario", str(scenario),
        "--permission-mode", "bypassPermissions", "greet", cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["model"] == "scripted"
    settings = str(home / ".claude" / "settings.json")
    assert f"{settings}: unknown setting 'permisions' (ignored); did you mean 'permissions'?" in (
        done.stderr.replace("\n", " ")
    )
    assert "not supported by coterie (ignored): theme" in done.stderr
    assert "were not loaded" in done.stderr  # the untrusted workspace's agents
    assert done.stderr.count("not supported") == 1
    listed = coterie("runs", "--json", cwd=workspace, home=home)
    run_dir = json.loads(listed.stdout.splitlines()[0])["path"]
    config = json.loads((Path(run_dir) / "config.json").read_text())
    assert config["model"] == "claude-haiku-4-5"  # the settings' model, recorded for resume


def test_a_skill_s_allowed_tools_apply_once_it_is_loaded(workspace: Path, home: Path) -> None:
    put(
        home / ".claude" / "skills" / "scribe" / "SKILL.md",
        "---\ndescription: Writes notes\nallowed-tools: Write(out/*), Bash(rm:*)\n---\nWrite.\n",
    )
    write = {"name": "Write", "input": {"file_path": "out/a.txt", "content": "x"}}
    tracks = {
        "lead": [
            {"tool_uses": [write]},
            {"expect": "denied", "tool_uses": [{"name": "Skill", "input": {"skill": "scribe"}}]},
            {"expect": "Write.", "tool_uses": [write]},
            {"expect": "out/a.txt", "text": "noted"},
        ]
    }
    scenario = write_scenario(workspace.parent / "s.json", tracks)
    done = coterie("run", "-p", "--scenario", str(scenario), "note", cwd=workspace, home=home)
    assert done.returncode == 0, done.stderr
    assert (workspace / "out" / "a.txt").read_text() == "x"
    outcomes = [r["is_error"] for r in results(workspace, sub=False)]
    assert outcomes == [True, False, False]
