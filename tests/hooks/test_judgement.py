"""How a model's answer to a ``prompt``/``agent`` hook is read, and how such hooks load."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.hooks import HooksConfigError, load_hooks
from coterie.hooks.catalogue import EVENTS, JUDGE_FAILS_CLOSED, MODEL_JUDGED
from coterie.hooks.config import PROMPT_TIMEOUT
from coterie.hooks.judgement import judge_failed, read_judgement, with_arguments
from coterie.hooks.readtools import ReadOnlyTools

if TYPE_CHECKING:
    from pathlib import Path


def test_arguments_replace_the_placeholder_or_follow_the_prompt() -> None:
    assert with_arguments("check $ARGUMENTS now", '{"a": 1}') == 'check {"a": 1} now'
    assert with_arguments("check", '{"a": 1}') == 'check\n\n{"a": 1}'


@pytest.mark.parametrize("event", sorted(MODEL_JUDGED))
def test_ok_true_goes_ahead_and_grants_nothing(event: Any) -> None:
    outcome = read_judgement(event, '{"ok": true, "permissionDecision": "allow"}')
    assert not outcome.blocked
    assert outcome.permission is None


def test_ok_false_on_a_tool_call_denies_it_and_stops_the_agent() -> None:
    outcome = read_judgement("PreToolUse", '{"ok": false, "reason": "no"}')
    assert (outcome.blocked, outcome.permission, outcome.stop) == (True, "deny", True)
    assert outcome.reason == outcome.stop_reason == outcome.notice == "no"


@pytest.mark.parametrize("event", ["Stop", "SubagentStop"])
def test_ok_false_on_stop_sends_the_agent_back_to_work(event: Any) -> None:
    outcome = read_judgement(event, 'Here: {"ok": false, "reason": "finish the tests"}')
    assert outcome.blocked
    assert not outcome.stop
    assert outcome.reason == "finish the tests"


def test_the_older_decision_field_is_read_too() -> None:
    assert read_judgement("PreToolUse", '{"decision": "block", "reason": "x"}').blocked
    assert not read_judgement("PreToolUse", '{"decision": "approve"}').blocked


@pytest.mark.parametrize("event", sorted(MODEL_JUDGED))
@pytest.mark.parametrize("text", ["", "yes", "{", '{"ok": "yes"}', "[true]", '{"reason": "x"}'])
def test_no_usable_answer_fails_closed_where_a_block_prevents_an_action(
    event: Any, text: str
) -> None:
    outcome = read_judgement(event, text)
    assert outcome.blocked == (event in JUDGE_FAILS_CLOSED)
    assert outcome.permission in (None, "deny")
    assert outcome.notice


@given(st.text())
def test_no_answer_ever_grants_a_permission(text: str) -> None:
    for event in MODEL_JUDGED:
        assert read_judgement(event, text).permission in (None, "deny")


def test_a_judge_that_could_not_answer_blocks_a_tool_call() -> None:
    outcome = judge_failed("PreToolUse", "timed out after 30s")
    assert outcome.blocked
    assert outcome.permission == "deny"
    assert not judge_failed("PostToolUse", "timed out").blocked


def settings(tmp_path: Path, hooks: dict[str, Any]) -> Path:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"hooks": hooks}))
    return path


def test_prompt_agent_and_async_handlers_load(tmp_path: Path) -> None:
    path = settings(
        tmp_path,
        {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [
                        {"type": "prompt", "prompt": "p $ARGUMENTS", "model": "haiku"},
                        {"type": "agent", "prompt": "a", "timeout": 90},
                        {"type": "command", "command": "x", "async": True},
                    ],
                }
            ]
        },
    )
    prompt, agent, command = load_hooks([(path, True)]).handlers("PreToolUse", "Bash")
    assert (prompt.type, prompt.target, prompt.model, prompt.timeout) == (
        "prompt",
        "p $ARGUMENTS",
        "haiku",
        PROMPT_TIMEOUT,
    )
    assert (agent.type, agent.timeout, agent.model) == ("agent", 90.0, None)
    assert command.background
    assert not prompt.background


@pytest.mark.parametrize(
    ("hooks", "message"),
    [
        (
            {"SessionStart": [{"hooks": [{"type": "prompt", "prompt": "x"}]}]},
            "SessionStart hooks cannot be prompt hooks",
        ),
        ({"Stop": [{"hooks": [{"type": "prompt", "prompt": ""}]}]}, "prompt: must be"),
        ({"Stop": [{"hooks": [{"type": "agent", "prompt": "x", "async": True}]}]}, "'async'"),
        ({"Stop": [{"hooks": [{"type": "command", "command": "x", "async": 1}]}]}, "true or"),
        ({"Stop": [{"hooks": [{"type": "prompt", "prompt": "x", "model": 3}]}]}, "model name"),
        ({"Stop": [{"hooks": [{"type": "mcp_tool"}]}]}, "'mcp_tool' is not supported"),
    ],
)
def test_a_malformed_model_hook_is_one_line_naming_the_file(
    tmp_path: Path, hooks: dict[str, Any], message: str
) -> None:
    path = settings(tmp_path, hooks)
    with pytest.raises(HooksConfigError) as caught:
        load_hooks([(path, True)])
    assert message in str(caught.value)
    assert str(path) in str(caught.value)
    assert "\n" not in str(caught.value)


def test_only_events_with_something_to_decide_are_judged() -> None:
    assert set(EVENTS) >= MODEL_JUDGED
    assert JUDGE_FAILS_CLOSED <= MODEL_JUDGED
    assert "SessionStart" not in MODEL_JUDGED


async def test_the_verifier_reads_in_the_workspace_only(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.md").write_text("inside\n")
    (workspace / "secret.env").write_text("TOKEN=1\n")
    (tmp_path / "outside.txt").write_text("FAR-AWAY\n")
    tools = ReadOnlyTools.of(workspace, read_denied=lambda p: p.name.endswith(".env"))
    assert sorted(s["name"] for s in tools.schemas()) == ["Glob", "Grep", "Read"]
    text, error = await tools.run("Read", {"file_path": "notes.md"})
    assert "inside" in text
    assert not error
    for path in (str(tmp_path / "outside.txt"), "../outside.txt", "secret.env"):
        text, error = await tools.run("Read", {"file_path": path})
        assert error
        assert "FAR-AWAY" not in text
        assert "TOKEN" not in text
    text, error = await tools.run("Grep", {"pattern": "FAR", "path": str(tmp_path)})
    assert error
    text, error = await tools.run("Bash", {"command": "ls"})
    assert error
    assert "No such tool" in text
