"""Hooks through the real CLI on scenarios (and the real SDK against `coterie mock-server`).

Each test writes the user's settings (``$HOME/.claude/settings.json``, which
always applies) with hooks that log their input to ``hooks.jsonl`` beside the
workspace, then runs ``coterie run`` or ``coterie team``. A turn's ``expect``
checks what reached the model.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from tests.agent.conftest import coterie
from tests.agent.test_resume_cli import only_run, write_scenario
from tests.team.test_team_cli import BYPASS, create, events_of, write

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path

#: Appends the hook's input (one JSON line) to ../hooks.jsonl.
LOG = 'cat >> "$CLAUDE_PROJECT_DIR/../hooks.jsonl"; echo >> "$CLAUDE_PROJECT_DIR/../hooks.jsonl"'


def settings(home: Path, hooks: dict[str, Any]) -> None:
    (home / ".claude").mkdir(exist_ok=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))


def on(event: str, command: str, matcher: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"hooks": [{"type": "command", "command": command}]}
    if matcher is not None:
        entry["matcher"] = matcher
    return {event: [entry]}


def logged(workspace: Path) -> list[dict[str, Any]]:
    path = workspace.parent / "hooks.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(params=["scripted", "sdk"])
def run(request: Any, workspace: Path, home: Path, tmp_path: Path, mock_server: Any) -> Any:
    """``coterie run -p`` on tracks: the scripted model, or the real SDK over HTTP."""

    def start(tracks: dict[str, Any], *extra: str) -> subprocess.CompletedProcess[str]:
        scenario = write_scenario(tmp_path / "s.json", tracks)
        args = ["run", "-p", *BYPASS, *extra, "go"]
        if request.param == "scripted":
            return coterie(*args, "--scenario", str(scenario), cwd=workspace, home=home)
        env = {"ANTHROPIC_BASE_URL": mock_server(scenario), "ANTHROPIC_API_KEY": "test-key"}
        return coterie(*args, cwd=workspace, home=home, env=env)

    return start


def test_a_pre_tool_use_hook_blocks_with_exit_2_and_its_reason_reaches_the_model(
    run: Any, workspace: Path, home: Path
) -> None:
    settings(home, on("PreToolUse", f"{LOG}; echo 'secrets stay out' >&2; exit 2", "Write|Edit"))
    done = run(
        {
            "lead": [
                write("secret.txt", "leak"),
                {"expect": "A PreToolUse hook blocked Write: secrets stay out", "text": "ok"},
            ]
        }
    )
    assert done.returncode == 0, done.stderr
    assert not (workspace / "secret.txt").exists()
    (seen,) = logged(workspace)
    assert (seen["hook_event_name"], seen["tool_name"]) == ("PreToolUse", "Write")
    assert seen["tool_input"] == {"file_path": "secret.txt", "content": "leak"}
    assert seen["agent"] == {"name": "lead", "role": "lead"}
    assert seen["permission_mode"] == "bypassPermissions"


def test_a_pre_tool_use_hook_rewrites_the_input(run: Any, workspace: Path, home: Path) -> None:
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "updatedInput": {"file_path": "note.txt", "content": "rewritten\n"},
        }
    }
    settings(
        home, on("PreToolUse", f"cat > /dev/null; printf '%s' '{json.dumps(answer)}'", "Write")
    )
    done = run({"lead": [write("note.txt", "original\n"), {"text": "ok"}]})
    assert done.returncode == 0, done.stderr
    assert (workspace / "note.txt").read_text() == "rewritten\n"


def test_a_rewritten_input_that_breaks_the_schema_is_refused(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    answer = {"hookSpecificOutput": {"updatedInput": {"file_path": 3}}}
    settings(home, on("PreToolUse", f"printf '%s' '{json.dumps(answer)}'", "Write"))
    scenario = write_scenario(
        tmp_path / "s.json",
        {"lead": [write("a.txt", "x"), {"expect": "does not fit its schema", "text": "ok"}]},
    )
    done = coterie(
        "run", "-p", *BYPASS, "--scenario", str(scenario), "go", cwd=workspace, home=home
    )
    assert done.returncode == 0, done.stderr
    assert not (workspace / "a.txt").exists()


def test_a_pre_tool_use_allow_never_overrides_a_deny_rule(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    allow = {"hookSpecificOutput": {"permissionDecision": "allow"}}
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(
        json.dumps(
            {
                "permissions": {"deny": ["Write(secret.txt)"]},
                "hooks": on("PreToolUse", f"printf '%s' '{json.dumps(allow)}'"),
            }
        )
    )
    scenario = write_scenario(
        tmp_path / "s.json",
        {"lead": [write("secret.txt", "x"), {"expect": "A deny rule forbids", "text": "ok"}]},
    )
    done = coterie("run", "-p", "--scenario", str(scenario), "go", cwd=workspace, home=home)
    assert done.returncode == 0, done.stderr
    assert not (workspace / "secret.txt").exists()


def test_a_pre_tool_use_allow_answers_the_headless_question(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """Headless in default mode a Write would be refused (nobody to ask); the hook says yes."""
    allow = {
        "hookSpecificOutput": {"permissionDecision": "allow", "permissionDecisionReason": "ok"}
    }
    settings(home, on("PreToolUse", f"printf '%s' '{json.dumps(allow)}'", "Write"))
    scenario = write_scenario(tmp_path / "s.json", {"lead": [write("a.txt", "x"), {"text": "ok"}]})
    done = coterie("run", "-p", "--scenario", str(scenario), "go", cwd=workspace, home=home)
    assert done.returncode == 0, done.stderr
    assert (workspace / "a.txt").read_text() == "x"


def test_post_tool_use_additional_context_reaches_the_next_request(
    run: Any, workspace: Path, home: Path
) -> None:
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "additionalContext": "lint: 2 warnings in a.txt",
        }
    }
    settings(home, on("PostToolUse", f"{LOG}; printf '%s' '{json.dumps(answer)}'", "Write"))
    done = run(
        {"lead": [write("a.txt", "x"), {"expect": "lint: 2 warnings in a.txt", "text": "ok"}]}
    )
    assert done.returncode == 0, done.stderr
    (seen,) = logged(workspace)
    assert seen["hook_event_name"] == "PostToolUse"
    assert "a.txt" in seen["tool_response"]


def test_a_stop_hook_keeps_the_agent_going_once(run: Any, workspace: Path, home: Path) -> None:
    script = (
        'input=$(cat); echo "$input" >> "$CLAUDE_PROJECT_DIR/../hooks.jsonl";'
        ' case "$input" in *\'"stop_hook_active": true\'*) exit 0;; esac;'
        ' echo "run the tests first" >&2; exit 2'
    )
    settings(home, on("Stop", script))
    done = run(
        {
            "lead": [
                {"text": "all done"},
                {"expect": "run the tests first", "text": "tests pass, really done"},
            ]
        }
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "tests pass, really done"
    assert [s["stop_hook_active"] for s in logged(workspace)] == [False, True]


def test_a_user_prompt_submit_hook_adds_context_or_blocks(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    settings(home, on("UserPromptSubmit", "echo 'the build is red'"))
    scenario = write_scenario(
        tmp_path / "s.json", {"lead": [{"expect": "the build is red", "text": "noted"}]}
    )
    done = coterie("run", "-p", "--scenario", str(scenario), "go", cwd=workspace, home=home)
    assert (done.returncode, done.stdout.strip()) == (0, "noted"), done.stderr
    settings(home, on("UserPromptSubmit", "echo 'no prompts today' >&2; exit 2"))
    done = coterie("run", "-p", "--scenario", str(scenario), "go", cwd=workspace, home=home)
    assert done.returncode == 1
    assert "no prompts today" in done.stdout + done.stderr


def test_hooks_fire_for_a_teammates_and_its_subagents_tool_calls(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    settings(home, on("PreToolUse", LOG, "Write|Task"))
    task = {"description": "delegated", "prompt": "write sub.txt"}
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [{"tool_uses": [create("work", "alice")]}, {"text": "planned"}, {"text": "ok"}],
            "alice": [
                write("alice.txt", "a"),
                {"tool_uses": [{"name": "Task", "input": task}]},
                {"text": "alice done"},
            ],
            "subagent": [write("sub.txt", "s"), {"text": "sub done"}],
        },
    )
    done = coterie(
        "team", "-p", *BYPASS, "--teammate", "alice", "--scenario", str(scenario), "go",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    calls = [(s["tool_name"], s["agent"]) for s in logged(workspace)]
    assert calls[0] == ("Write", {"name": "alice", "role": "teammate"})
    assert calls[1] == ("Task", {"name": "alice", "role": "teammate"})
    name, agent = calls[2]
    assert name == "Write"
    assert agent["role"] == "subagent"
    assert (agent["parent"], agent["type"]) == ("alice", "general-purpose")
    assert agent["name"].startswith("alice-sub-")
    assert (workspace / "sub.txt").read_text() == "s"


def test_task_completed_exit_2_keeps_the_task_open(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """The first completion is refused (no tests yet); alice hears why and finishes again."""
    script = (
        f'{LOG}; n=$(wc -l < "$CLAUDE_PROJECT_DIR/../hooks.jsonl");'
        ' [ "$n" -ge 2 ] && exit 0; echo "add a test first" >&2; exit 2'
    )
    settings(home, on("TaskCompleted", script))
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {"tool_uses": [create("feature", "alice")]},
                {"text": "planned"},
                {"text": "ok"},
            ],
            "alice": [
                {"text": "feature done"},
                {"expect": "add a test first", "text": "feature and test done"},
            ],
        },
    )
    done = coterie(
        "team", "-p", "--output-format", "json", *BYPASS, "--teammate", "alice",
        "--scenario", str(scenario), "go", cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (task,) = json.loads(done.stdout)["tasks"]
    assert (task["status"], task["result"]) == ("completed", "feature and test done")
    seen = logged(workspace)
    assert [(s["task_id"], s["result"]) for s in seen] == [
        ("task_1", "feature done"),
        ("task_1", "feature and test done"),
    ]
    assert seen[0]["agent"] == {"name": "alice", "role": "teammate"}


def test_the_lead_cannot_complete_a_task_a_hook_refuses(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    settings(home, on("TaskCompleted", "echo 'not reviewed' >&2; exit 2"))
    update = {"name": "TaskUpdate", "input": {"task_id": "task_1", "status": "completed"}}
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {"tool_uses": [create("review")]},
                {"tool_uses": [update]},
                {"expect": "Could not complete task_1", "text": "left open"},
            ],
        },
    )
    coterie(
        "team", "-p", "--output-format", "json", *BYPASS, "--scenario", str(scenario), "go",
        cwd=workspace, home=home, timeout=60,
    )  # fmt: skip
    assert "not reviewed" in json.dumps([e.data for e in events_of(workspace)])


def test_a_malformed_hooks_entry_is_a_one_line_error_naming_the_file(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    settings(home, {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command"}]}]})
    scenario = write_scenario(tmp_path / "s.json", {"lead": [{"text": "never"}]})
    done = coterie("run", "-p", "--scenario", str(scenario), "go", cwd=workspace, home=home)
    assert done.returncode == 2
    path = home / ".claude" / "settings.json"
    line = f"{path}: hooks.PreToolUse[0].hooks[0].command: must be a non-empty string"
    assert line in done.stderr.replace("\n", "")


def test_an_untrusted_workspaces_hooks_do_not_run(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": on("PreToolUse", "touch ../ran; exit 2")})
    )
    scenario = write_scenario(tmp_path / "s.json", {"lead": [write("a.txt", "x"), {"text": "ok"}]})
    done = coterie(
        "run", "-p", *BYPASS, "--scenario", str(scenario), "go", cwd=workspace, home=home
    )
    assert done.returncode == 0, done.stderr
    assert not (workspace.parent / "ran").exists()
    assert "its hooks were ignored: the workspace is not trusted" in done.stderr


def test_hook_runs_are_in_the_event_log(workspace: Path, home: Path, tmp_path: Path) -> None:
    settings(home, on("PreToolUse", "exit 0"))
    scenario = write_scenario(tmp_path / "s.json", {"lead": [write("a.txt", "x"), {"text": "ok"}]})
    done = coterie(
        "run", "-p", *BYPASS, "--scenario", str(scenario), "go", cwd=workspace, home=home
    )
    assert done.returncode == 0, done.stderr
    (ran,) = [e.data for e in events_of(workspace) if e.type == "hook.ran"]
    assert (ran["event"], ran["handler"], ran["exit_code"], ran["blocked"], ran["actor"]) == (
        "PreToolUse",
        "exit 0",
        0,
        False,
        "lead",
    )


def test_what_a_hook_says_to_the_user_is_shown_on_stderr(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """Claude Code shows a hook's systemMessage and a non-blocking error to the user."""
    message = json.dumps({"systemMessage": "lint is slow today"})
    settings(home, {
        **on("PreToolUse", f"echo '{message}'"),
        **on("PostToolUse", "echo 'lint failed: 3 problems' >&2; exit 1"),
    })  # fmt: skip
    scenario = write_scenario(tmp_path / "s.json", {"lead": [write("a.txt", "x"), {"text": "ok"}]})
    done = coterie(
        "run", "-p", *BYPASS, "--scenario", str(scenario), "go", cwd=workspace, home=home
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
    assert "hook: lint is slow today" in done.stderr
    assert "hook: PostToolUse hook exited 1: lint failed: 3 problems" in done.stderr
    assert (workspace / "a.txt").read_text() == "x"  # a non-blocking error blocks nothing


def test_task_created_exit_2_refuses_the_task(workspace: Path, home: Path, tmp_path: Path) -> None:
    settings(home, on("TaskCreated", f"{LOG}; echo 'one task at a time' >&2; exit 2"))
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {"tool_uses": [create("first")]},
                {"expect": "a TaskCreated hook refused it: one task at a time", "text": "none"},
            ]
        },
    )
    done = coterie(
        "team", "-p", "--output-format", "json", *BYPASS, "--scenario", str(scenario), "go",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["tasks"] == []
    (seen,) = logged(workspace)
    assert (seen["task_subject"], seen["agent"]["role"]) == ("first", "lead")


def test_session_start_context_reaches_the_model(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """The context is in the request: a turn that forbids it fails saying so."""
    settings(home, on("SessionStart", f"{LOG}; echo 'branch: feature-x'"))
    scenario = write_scenario(
        tmp_path / "s.json", {"lead": [{"expect_not": "branch: feature-x", "text": "ok"}]}
    )
    done = coterie("run", "-p", "--scenario", str(scenario), "go", cwd=workspace, home=home)
    assert done.returncode == 1
    assert "the request contains 'branch: feature-x'" in done.stdout + done.stderr
    (seen,) = logged(workspace)
    assert (seen["hook_event_name"], seen["source"]) == ("SessionStart", "startup")


def test_a_permission_request_hook_approves_what_would_be_asked(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    allow = {"hookSpecificOutput": {"decision": {"behavior": "allow"}}}
    settings(home, on("PermissionRequest", f"{LOG}; printf '%s' '{json.dumps(allow)}'", "Write"))
    scenario = write_scenario(tmp_path / "s.json", {"lead": [write("a.txt", "x"), {"text": "ok"}]})
    done = coterie("run", "-p", "--scenario", str(scenario), "go", cwd=workspace, home=home)
    assert done.returncode == 0, done.stderr
    assert (workspace / "a.txt").read_text() == "x"
    (seen,) = logged(workspace)
    assert seen["tool_name"] == "Write"


def test_subagent_start_and_stop_hooks_see_the_subagent(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """SubagentStart adds context to the subagent's prompt; SubagentStop keeps it going once."""
    start = {"hookSpecificOutput": {"additionalContext": "use the fixtures in tests/data"}}
    stop = (
        'input=$(cat); echo "$input" >> "$CLAUDE_PROJECT_DIR/../hooks.jsonl";'
        ' case "$input" in *\'"stop_hook_active": true\'*) exit 0;; esac;'
        ' echo "list what you changed" >&2; exit 2'
    )
    settings(
        home,
        {
            **on("SubagentStart", f"{LOG}; printf '%s' '{json.dumps(start)}'", "Explore"),
            **on("SubagentStop", stop, "Explore"),
        },
    )
    task = {"description": "look", "prompt": "find the tests", "subagent_type": "Explore"}
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [{"tool_uses": [{"name": "Task", "input": task}]}, {"text": "lead done"}],
            "subagent": [
                {"expect": "use the fixtures in tests/data", "text": "found them"},
                {"expect": "list what you changed", "text": "nothing changed"},
            ],
        },
    )
    done = coterie(
        "run", "-p", *BYPASS, "--scenario", str(scenario), "go", cwd=workspace, home=home
    )
    assert done.returncode == 0, done.stderr
    seen = logged(workspace)
    assert [(s["hook_event_name"], s.get("stop_hook_active")) for s in seen] == [
        ("SubagentStart", None),
        ("SubagentStop", False),
        ("SubagentStop", True),
    ]
    assert seen[0]["agent_type"] == "Explore"
    assert seen[1]["agent"]["role"] == "subagent"
    assert seen[1]["agent"]["type"] == "Explore"


def test_teammate_idle_exit_2_gives_the_teammate_another_turn(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    script = (
        f'{LOG}; n=$(wc -l < "$CLAUDE_PROJECT_DIR/../hooks.jsonl");'
        ' [ "$n" -ge 2 ] && exit 0; echo "tidy up before idling" >&2; exit 2'
    )
    settings(home, on("TeammateIdle", script))
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [{"tool_uses": [create("work", "alice")]}, {"text": "planned"}, {"text": "ok"}],
            "alice": [
                {"text": "work done"},
                {"expect": "tidy up before idling", "text": "tidied"},
            ],
        },
    )
    done = coterie(
        "team", "-p", *BYPASS, "--teammate", "alice", "--scenario", str(scenario), "go",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    seen = logged(workspace)
    assert [(s["teammate_name"], s["task_id"]) for s in seen] == [("alice", "task_1")] * 2


def test_a_blocked_prompt_ends_a_team_run_cleanly(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    settings(home, on("UserPromptSubmit", "echo 'frozen until Monday' >&2; exit 2"))
    scenario = write_scenario(tmp_path / "s.json", {"lead": [{"text": "never"}], "alice": []})
    done = coterie(
        "team", "-p", *BYPASS, "--teammate", "alice", "--scenario", str(scenario), "go",
        cwd=workspace, home=home, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1
    assert "frozen until Monday" in done.stdout + done.stderr


def test_pre_and_post_compact_hooks_see_the_compaction(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """``coterie compact``: PreCompact with the trigger and the focus, PostCompact
    with the summary."""
    settings(home, {**on("PreCompact", LOG), **on("PostCompact", LOG)})
    scenario = write_scenario(tmp_path / "s.json", {
        "lead": [
            {"tool_uses": [{"name": "Bash", "input": {"command": "seq 1 3000"}}]},
            {"text": "first pass done"},
        ],
        "summarizer": [{"text": "SUMMARY: seq ran."}],
    })  # fmt: skip
    first = coterie(
        "run", "-p", *BYPASS, "--scenario", str(scenario), "go", cwd=workspace, home=home
    )
    assert first.returncode == 0, first.stderr
    run_id = only_run(workspace)
    done = coterie("compact", run_id, "keep the parser", cwd=workspace, home=home)
    assert done.returncode == 0, done.stderr
    pre, post = logged(workspace)
    assert (pre["hook_event_name"], pre["trigger"], pre["custom_instructions"]) == (
        "PreCompact", "manual", "keep the parser",
    )  # fmt: skip
    assert (post["hook_event_name"], post["compact_summary"]) == (
        "PostCompact",
        "SUMMARY: seq ran.",
    )
    assert pre["session_id"] == run_id
