"""The host's can_use_tool answers, read into the gate's answers (fail-closed)."""

from __future__ import annotations

import pytest

from coterie.commands.hostasker import answer_of, can_use_tool_request, granted_rule
from coterie.hostlink import error_response, success_response
from coterie.tools.permissions import Suggestion


def test_the_request_has_claude_codes_fields() -> None:
    rule = Suggestion("Bash(npm test:*)", "npm test commands", persist=True)
    body = can_use_tool_request("Bash", {"command": "npm test"}, "asks", agent="bob",
                                suggestion=rule)  # fmt: skip
    assert body["tool_name"] == "Bash"
    assert body["input"] == {"command": "npm test"}
    assert body["agent_id"] == "bob"
    assert body["permission_suggestions"][0]["rules"] == [
        {"toolName": "Bash", "ruleContent": "npm test:*"}
    ]
    assert "agent_id" not in can_use_tool_request("Bash", {}, "asks", agent="lead")


def test_an_allow_may_carry_a_new_input() -> None:
    answer = answer_of(success_response("r", {"behavior": "allow", "updatedInput": {"a": 1}}),
                       tool_name="Bash")  # fmt: skip
    assert answer.approved
    assert answer.updated_input == {"a": 1}
    assert answer_of(success_response("r", {"behavior": "allow"}), tool_name="X").approved


def test_a_deny_carries_the_hosts_message() -> None:
    answer = answer_of(success_response("r", {"behavior": "deny", "message": "no"}),
                       tool_name="Bash")  # fmt: skip
    assert not answer.approved
    assert answer.reason is not None
    assert answer.reason.endswith("no")


@pytest.mark.parametrize(
    "response",
    [None, error_response("r", "boom"), success_response("r", {"behavior": "maybe"}),
     success_response("r", {})],
)  # fmt: skip
def test_anything_else_is_a_denial(response: object) -> None:
    answer = answer_of(response, tool_name="Bash")  # type: ignore[arg-type]
    assert not answer.approved
    assert answer.reason


def test_the_request_names_the_tool_use() -> None:
    body = can_use_tool_request("Bash", {}, "asks", tool_use_id="toolu_1")
    assert body["tool_use_id"] == "toolu_1"


def test_an_allow_may_grant_a_rule_for_the_run() -> None:
    update = {"type": "addRules", "behavior": "allow", "destination": "session",
              "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"}]}  # fmt: skip
    body = {"behavior": "allow", "updatedInput": {}, "updatedPermissions": [update]}
    assert answer_of(success_response("r", body), tool_name="Bash").grant == "Bash(npm test:*)"
    assert granted_rule([{**update, "rules": [{"toolName": "Read"}]}]) == "Read"


@pytest.mark.parametrize(
    "updates",
    [None, [], "Bash", [{"type": "addRules", "behavior": "deny", "rules": [{"toolName": "Bash"}]}],
     [{"type": "setMode", "mode": "bypassPermissions", "destination": "session"}],
     [{"type": "addRules", "behavior": "allow", "rules": [{"ruleContent": "x"}]}]],
)  # fmt: skip
def test_nothing_else_in_an_answer_grants_anything(updates: object) -> None:
    assert granted_rule(updates) is None
