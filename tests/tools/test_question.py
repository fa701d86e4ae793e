"""AskUserQuestion and the plan tools: their schemas, how the policy decides them,
the answers read from a typed line, and the results the model reads (issue 27)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.tools import PermissionPolicy, TeamContext, ToolContext
from coterie.tools.catalogue import builtin_tools
from coterie.tools.permissions import MODES, Mode
from coterie.tools.permissions.interaction import PERSON_RULE, asks_person
from coterie.tools.plan import EnterPlanModeTool, ExitPlanModeTool
from coterie.tools.question import AskUserQuestionTool, format_answers
from coterie.ui.question import option_lines, parse_options
from tests.tools.questions import QUESTION

if TYPE_CHECKING:
    from pathlib import Path


#: Claude Code 2.1.332's schemas of these tools, as it sends them (facts: names,
#: JSON types, required), captured with an SDK host (``--permission-prompt-tool
#: stdio``), which is when it offers AskUserQuestion.
CAPTURED: dict[str, dict[str, Any]] = {
    "AskUserQuestion": {
        "properties": {
            "questions": "array",
            "answers": "object",
            "annotations": "object",
            "metadata": "object",
        },
        "required": ["questions"],
        "question": ["header", "multiSelect", "options", "question"],
        "option": ["description", "label", "preview"],
        "deferred": False,
    },
    "EnterPlanMode": {"properties": {}, "required": [], "deferred": True},
    "ExitPlanMode": {"properties": {"allowedPrompts": "array"}, "required": [], "deferred": True},
}


def tool_named(name: str) -> Any:
    return next(t for t in builtin_tools() if t.name == name)


@pytest.mark.parametrize("name", sorted(CAPTURED))
def test_the_schema_is_claude_codes(name: str) -> None:
    tool, theirs = tool_named(name), CAPTURED[name]
    properties = tool.input_schema["properties"]
    assert {k: v.get("type") for k, v in properties.items()} == theirs["properties"]
    assert sorted(tool.input_schema.get("required", [])) == theirs["required"]
    assert tool.capabilities.deferred is theirs["deferred"]
    if name == "AskUserQuestion":
        item = properties["questions"]["items"]
        assert sorted(item["properties"]) == theirs["question"]
        assert sorted(item["required"]) == theirs["question"]
        assert sorted(item["properties"]["options"]["items"]["properties"]) == theirs["option"]


def test_every_built_in_tool_that_asks_a_person_is_one_of_these() -> None:
    assert {t.name for t in builtin_tools(asks_person)} == set(CAPTURED)


@pytest.mark.parametrize("mode", [m for m in MODES if m != "dontAsk"])
def test_a_question_asks_a_person_in_every_mode(mode: Mode, workspace: Path) -> None:
    """Even bypassPermissions and allow rules: the answer is the call's content."""
    policy = PermissionPolicy.from_rules(allow=["AskUserQuestion"], mode=mode)
    decision = policy.check(AskUserQuestionTool(), {"questions": [QUESTION]},
                            ToolContext(workspace=workspace))  # fmt: skip
    assert (decision.behavior, decision.rule, decision.person_only) == ("ask", PERSON_RULE, True)


def test_dont_ask_denies_a_question_and_a_deny_rule_comes_first(workspace: Path) -> None:
    ctx = ToolContext(workspace=workspace)
    quiet = PermissionPolicy.from_rules(mode="dontAsk").check(
        AskUserQuestionTool(), {"questions": [QUESTION]}, ctx
    )
    assert quiet.behavior == "deny"
    assert "decide yourself" in quiet.reason
    denied = PermissionPolicy.from_rules(deny=["AskUserQuestion"]).check(
        AskUserQuestionTool(), {"questions": [QUESTION]}, ctx
    )
    assert (denied.behavior, denied.rule) == ("deny", "AskUserQuestion")


def test_exit_plan_mode_outside_plan_mode_is_refused_without_asking(workspace: Path) -> None:
    ctx = ToolContext(workspace=workspace)
    outside = PermissionPolicy.from_rules(mode="default").check(ExitPlanModeTool(), {}, ctx)
    assert outside.behavior == "deny"
    assert "plan" in outside.reason
    inside = PermissionPolicy.from_rules(mode="plan").check(ExitPlanModeTool(), {}, ctx)
    assert inside.behavior == "ask"
    entering = PermissionPolicy.from_rules(mode="default").check(EnterPlanModeTool(), {}, ctx)
    assert entering.behavior == "ask"


async def _send(recipient: str, text: str) -> None:
    raise AssertionError("not sent")


def test_a_teammates_plan_goes_to_the_lead_and_no_person_is_asked(workspace: Path) -> None:
    board: Any = object()
    team = TeamContext(board=board, me="alice", members=("lead", "alice"), send=_send)
    ctx = ToolContext(workspace=workspace, team=team)
    decision = PermissionPolicy.from_rules(mode="plan").check(ExitPlanModeTool(), {}, ctx)
    assert decision.behavior == "allow"
    asked = PermissionPolicy.from_rules(mode="plan").check(
        AskUserQuestionTool(), {"questions": [QUESTION]}, ctx
    )
    assert asked.behavior == "ask"  # a teammate's question still goes to the person


async def test_the_answers_are_the_result(workspace: Path) -> None:
    answers = {QUESTION["question"]: "SQLite"}
    result = await AskUserQuestionTool().run(
        {"questions": [QUESTION], "answers": answers}, ToolContext(workspace=workspace)
    )
    assert not result.is_error
    assert '"Which database should we use?"="SQLite"' in result.content


async def test_no_answers_is_an_error_the_model_reads(workspace: Path) -> None:
    result = await AskUserQuestionTool().run(
        {"questions": [QUESTION]}, ToolContext(workspace=workspace)
    )
    assert result.is_error
    assert "not answered" in result.content


async def test_an_approved_plan_is_repeated_to_the_model(workspace: Path) -> None:
    result = await ExitPlanModeTool().run({"plan": "1. add x"}, ToolContext(workspace=workspace))
    assert "approved" in result.content
    assert "1. add x" in result.content


def test_option_lines_number_the_options_then_other() -> None:
    assert option_lines(QUESTION) == [
        "  1. Postgres - relational",
        "  2. SQLite - one file",
        "  3. Other (type your own answer)",
    ]


def test_parse_options() -> None:
    multi = {**QUESTION, "multiSelect": True}
    assert parse_options("2\n", QUESTION).text == "SQLite"  # type: ignore[union-attr]
    assert parse_options("1,2", QUESTION) is None  # one choice only
    assert parse_options("2, 1", multi).text == "SQLite, Postgres"  # type: ignore[union-attr]
    assert parse_options("9", QUESTION) is None
    assert parse_options("", QUESTION) is None
    assert parse_options("3", QUESTION).other == ""  # type: ignore[union-attr]
    assert parse_options("MySQL please", QUESTION).text == "MySQL please"  # type: ignore[union-attr]
    assert parse_options("\x1b", QUESTION).escaped  # type: ignore[union-attr]
    assert parse_options(" , ,", {**QUESTION, "multiSelect": True}) is None  # found by Hypothesis


@given(st.text())
def test_parse_options_never_answers_what_was_not_offered_or_typed(line: str) -> None:
    picked = parse_options(line, {**QUESTION, "multiSelect": True})
    if picked is None or picked.escaped:
        return
    if picked.other is not None:
        assert picked.other == "" or picked.other in line
    else:
        assert picked.labels
        assert set(picked.labels) <= {"Postgres", "SQLite"}


def test_format_answers_names_each_question() -> None:
    assert format_answers({"a?": "x", "b?": "y, z"}) == '"a?"="x", "b?"="y, z"'


def test_the_host_is_told_a_question_needs_the_user() -> None:
    from coterie.commands.hostasker import can_use_tool_request

    body = can_use_tool_request("AskUserQuestion", {"questions": [QUESTION]}, "why")
    assert body["requires_user_interaction"] is True
    assert "requires_user_interaction" not in can_use_tool_request("Bash", {}, "why")


@pytest.mark.parametrize(
    ("tool", "updates", "mode"),
    [
        ("ExitPlanMode", None, "default"),
        ("ExitPlanMode", [{"type": "setMode", "mode": "acceptEdits"}], "acceptEdits"),
        ("ExitPlanMode", [{"type": "setMode", "mode": "bypassPermissions"}], "default"),
        ("EnterPlanMode", None, "plan"),
        ("AskUserQuestion", None, None),
    ],
)
def test_the_mode_a_hosts_yes_sets(tool: str, updates: Any, mode: str | None) -> None:
    from coterie.tools.permissions.answering import mode_after

    assert mode_after(tool, updates) == mode


@pytest.mark.parametrize("kind", ["general-purpose", "Explore"])
def test_a_subagent_has_none_of_them_as_in_claude_code(kind: str) -> None:
    """Claude Code 2.1.332 sends its subagents neither AskUserQuestion nor the plan
    tools: a subagent reports to its parent, which asks."""
    from coterie.tools import ToolRegistry
    from coterie.tools.task import custom_registry, subagent_registry

    parent = ToolRegistry.of(builtin_tools())
    for registry in (subagent_registry(parent, kind), custom_registry(parent, None)):
        assert not set(registry.names()) & set(CAPTURED)
