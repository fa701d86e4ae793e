"""Reading a hook's answer (exit code, stdout, stderr) and combining several."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.hooks import EVENTS, Outcome, combine, read_result
from coterie.hooks.catalogue import BLOCKING
from coterie.hooks.outcome import failed
from tests.strategies import hook_outputs


def test_exit_2_blocks_a_pre_tool_use_with_stderr_as_the_reason() -> None:
    outcome = read_result("PreToolUse", 2, "ignored", "no rm here\n")
    assert (outcome.blocked, outcome.reason, outcome.permission) == (True, "no rm here", "deny")


@pytest.mark.parametrize("event", sorted(set(EVENTS) - BLOCKING))
def test_exit_2_of_a_non_blocking_event_is_only_shown(event: Any) -> None:
    outcome = read_result(event, 2, "", "oops")
    assert not outcome.blocked
    assert outcome.notice == "oops"


def test_another_exit_code_is_a_non_blocking_error() -> None:
    outcome = read_result("PreToolUse", 1, "", "crashed")
    assert not outcome.blocked
    assert outcome.notice == "PreToolUse hook exited 1: crashed"


def test_plain_stdout_is_context_only_where_the_event_allows() -> None:
    assert read_result("UserPromptSubmit", 0, "today is Monday\n", "").context == "today is Monday"
    assert read_result("PreToolUse", 0, "chatter", "").context is None


def test_json_permission_decision_and_updated_input() -> None:
    out = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": "safe",
            "updatedInput": {"command": "ls -la"},
        }
    }
    outcome = read_result("PreToolUse", 0, json.dumps(out), "")
    assert outcome == Outcome(
        permission="allow", reason="safe", updated_input={"command": "ls -la"}
    )


def test_decision_block_of_a_stop_hook_blocks_with_its_reason() -> None:
    outcome = read_result("Stop", 0, '{"decision": "block", "reason": "run the tests"}', "")
    assert (outcome.blocked, outcome.reason) == (True, "run the tests")


def test_continue_false_stops_with_the_stop_reason() -> None:
    outcome = read_result("PostToolUse", 0, '{"continue": false, "stopReason": "enough"}', "")
    assert (outcome.stop, outcome.stop_reason) == (True, "enough")


def test_a_permission_request_hook_can_allow() -> None:
    out = {"hookSpecificOutput": {"decision": {"behavior": "allow"}}}
    assert read_result("PermissionRequest", 0, json.dumps(out), "").permission == "allow"


def test_a_guard_that_could_not_run_does_not_say_yes() -> None:
    assert failed("PreToolUse", "timed out after 1s").blocked
    assert failed("PermissionRequest", "could not start").permission == "deny"
    assert not failed("PostToolUse", "timed out after 1s").blocked


def test_deny_wins_over_ask_over_allow() -> None:
    allow, ask, deny = (Outcome(permission=p, reason=p) for p in ("allow", "ask", "deny"))
    assert combine([allow, ask]).permission == "ask"
    verdict = combine([allow, deny, ask])
    assert (verdict.permission, verdict.blocked, verdict.reason) == ("deny", True, "deny")
    assert combine([]).permission is None


def test_the_reasons_and_contexts_of_several_hooks_are_joined() -> None:
    verdict = combine(
        [Outcome(blocked=True, reason="a"), Outcome(context="x"), Outcome(blocked=True, reason="b")]
    )
    assert (verdict.blocked, verdict.reason, verdict.context) == (True, "a\nb", "x")


@given(st.sampled_from(EVENTS), hook_outputs, st.integers(min_value=0, max_value=3))
def test_any_json_answer_reads_without_error(event: Any, data: dict[str, Any], code: int) -> None:
    outcome = read_result(event, code, json.dumps(data), "err")
    if outcome.blocked:
        assert outcome.reason
    if event not in BLOCKING and event != "PreToolUse":
        assert not outcome.blocked


@given(
    st.lists(
        st.builds(
            Outcome,
            blocked=st.booleans(),
            permission=st.sampled_from([None, "allow", "ask", "deny"]),
        ),
        max_size=5,
    )
)
def test_one_block_or_deny_blocks_the_whole_event(outcomes: list[Outcome]) -> None:
    verdict = combine(outcomes)
    expected = any(o.blocked or o.permission == "deny" for o in outcomes)
    assert verdict.blocked == expected
