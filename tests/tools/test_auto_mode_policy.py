"""Permission mode ``auto``: the policy, the settings' ``autoMode`` and the gate's answers."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import attrs
import pytest

from coterie.autonomy import AutoModeRule, default_auto_mode_rules
from coterie.tools import (
    Answer,
    PermissionGate,
    PermissionPolicy,
    SettingsError,
    ToolContext,
    default_registry,
    load_settings,
)

if TYPE_CHECKING:
    from pathlib import Path

TOOLS = {t.name: t for t in default_registry()}
ARBITRARY = ["Bash", "Bash(*)", "Bash(python:*)", "Bash(bash -c *)", "Bash(npx *)"]


def bash(command: str) -> tuple[Any, dict[str, Any]]:
    return TOOLS["Bash"], {"command": command}


@pytest.mark.parametrize("rule", ARBITRARY)
def test_allow_rules_granting_arbitrary_execution_are_set_aside(
    rule: str, ctx: ToolContext
) -> None:
    policy = PermissionPolicy.from_rules(allow=[rule, "Bash(npm test)"], mode="auto")
    assert [r.text for r in policy.dropped_allow] == [rule]
    assert [r.text for r in policy.effective_allow] == ["Bash(npm test)"]
    assert policy.check(*bash("python -c 'import os'"), ctx).behavior == "ask"


def test_narrow_allow_rules_still_allow_in_auto(ctx: ToolContext) -> None:
    policy = PermissionPolicy.from_rules(allow=["Bash(*)", "Bash(npm test)"], mode="auto")
    decision = policy.check(*bash("npm test"), ctx)
    assert decision.behavior == "allow"
    assert decision.rule == "Bash(npm test)"


def test_the_dropped_rules_apply_again_in_other_modes(ctx: ToolContext) -> None:
    policy = PermissionPolicy.from_rules(allow=["Bash(python:*)"], mode="auto")
    policy.mode = "default"
    assert policy.dropped_allow == ()
    assert policy.check(*bash("python x.py"), ctx).behavior == "allow"


def test_from_settings_sets_them_aside_in_auto(workspace: Path, ctx: ToolContext) -> None:
    write(workspace / ".claude/settings.json", {"permissions": {"allow": ["Bash(python:*)"]}})
    settings = load_settings(workspace, user_settings=None, trusted=True)
    policy = PermissionPolicy.from_settings(settings, mode="auto")
    assert [r.text for r in policy.dropped_allow] == ["Bash(python:*)"]
    assert policy.check(*bash("python x.py"), ctx).behavior == "ask"
    assert PermissionPolicy.from_settings(settings).dropped_allow == ()


def test_deny_rules_still_win_in_auto(ctx: ToolContext) -> None:
    policy = PermissionPolicy.from_rules(
        allow=["Bash(npm *)", "Bash(git *)"], deny=["Bash(git push *)"], mode="auto"
    )
    assert policy.check(*bash("git push origin main"), ctx).behavior == "deny"


def test_the_hard_deny_list_still_applies_in_auto(ctx: ToolContext) -> None:
    policy = PermissionPolicy.from_rules(allow=["Bash(*)"], mode="auto")
    decision = policy.check(*bash("rm -rf /"), ctx)
    assert decision.behavior == "deny"
    assert decision.rule == "hard-deny"


def test_the_sandbox_still_applies_in_auto(ctx: ToolContext, outside: Path) -> None:
    """Outside the workspace, Auto Mode's classifier is not asked: only a person."""
    policy = PermissionPolicy(mode="auto")
    decision = policy.check(TOOLS["Write"], {"file_path": str(outside / "x"), "content": ""}, ctx)
    assert (decision.behavior, decision.person_only) == ("ask", True)
    assert decision.call_root == outside.resolve()


@pytest.mark.parametrize(
    ("name", "input"),
    [
        ("Read", {"file_path": "README.md"}),
        ("Glob", {"pattern": "**/*.py"}),
        ("Grep", {"pattern": "TODO"}),
        ("TodoWrite", {"todos": []}),
    ],
)
def test_read_only_tools_never_ask_in_auto(
    name: str, input: dict[str, Any], ctx: ToolContext
) -> None:
    assert PermissionPolicy(mode="auto").check(TOOLS[name], input, ctx).behavior == "allow"


@pytest.mark.parametrize(
    ("name", "input"),
    [
        ("Write", {"file_path": "a.txt", "content": "x"}),
        ("Edit", {"file_path": "a.txt", "old_string": "x", "new_string": "y"}),
        ("Bash", {"command": "npm test"}),
    ],
)
def test_everything_else_goes_to_the_classifier(
    name: str, input: dict[str, Any], ctx: ToolContext
) -> None:
    assert PermissionPolicy(mode="auto").check(TOOLS[name], input, ctx).behavior == "ask"


# -- settings: autoMode ------------------------------------------------------------------


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def user_file(tmp_path: Path) -> Path:
    """Where the user settings live in these tests (never the real ~/.claude)."""
    return tmp_path / "home" / ".claude" / "settings.json"


def test_no_auto_mode_settings_means_the_built_in_rules(workspace: Path, user_file: Path) -> None:
    settings = load_settings(workspace, user_settings=user_file)
    assert settings.auto_mode_rules == default_auto_mode_rules()


def test_user_and_local_auto_mode_settings_apply(workspace: Path, user_file: Path) -> None:
    """Per section, the most local file wins; "$defaults" splices in the built-ins."""
    write(
        user_file,
        {
            "autoMode": {
                "environment": ["Staging is at staging.example"],
                "allow": ["Pushing to release/* branches"],
            }
        },
    )
    local = write(
        workspace / ".claude/settings.local.json",
        {"autoMode": {"allow": ["$defaults", "Running make deploy-preview"]}},
    )
    settings = load_settings(workspace, user_settings=user_file, trusted=True)
    rules = settings.auto_mode_rules
    builtin = default_auto_mode_rules()
    assert [r.description for r in rules.environment] == ["Staging is at staging.example"]
    assert rules.allow == (
        *builtin.allow,
        AutoModeRule("Running make deploy-preview", "Running make deploy-preview"),
    )
    assert rules.hard_deny == builtin.hard_deny
    assert settings.auto_mode_files == (user_file, local)


def test_the_projects_checked_in_settings_cannot_change_the_rules(
    workspace: Path, user_file: Path
) -> None:
    """A cloned repository must not loosen the classifier."""
    shared = write(
        workspace / ".claude/settings.json",
        {"autoMode": {"soft_deny": [], "hard_deny": []}, "permissions": {"deny": ["Bash(curl *)"]}},
    )
    settings = load_settings(workspace, user_settings=user_file)
    assert settings.auto_mode_rules == default_auto_mode_rules()
    assert settings.auto_mode_ignored == (shared,)
    assert [r.text for r in settings.deny] == ["Bash(curl *)"]  # its permissions still count


def test_a_home_workspace_reads_auto_mode_from_its_user_file(tmp_path: Path) -> None:
    """The user's own file is trusted, even when it is also the workspace's settings.json."""
    path = write(tmp_path / ".claude/settings.json", {"autoMode": {"hard_deny": ["No pings"]}})
    settings = load_settings(tmp_path, user_settings=path)
    assert [r.description for r in settings.auto_mode_rules.hard_deny] == ["No pings"]


@pytest.mark.parametrize(
    "value",
    [["a list"], {"allow": "not a list"}, {"allow": [""]}, {"allow": ["$defaults", "$defaults"]}],
)
def test_a_malformed_auto_mode_is_a_settings_error_naming_the_file(
    workspace: Path, user_file: Path, value: Any
) -> None:
    write(user_file, {"autoMode": value})
    with pytest.raises(SettingsError, match="autoMode"):
        load_settings(workspace, user_settings=user_file)


# -- the gate: an asker's Answer ---------------------------------------------------------


@attrs.define
class AnsweringAsker:
    answer: bool | Answer | None

    async def ask(self, tool_name: str, input: dict[str, Any], reason: str, **context: Any) -> Any:
        return self.answer


async def test_an_answers_reason_and_rule_become_the_decision(ctx: ToolContext) -> None:
    answer = Answer(False, "Blocked by Auto Mode (stage 2): destructive git.", "auto-mode")
    gate = PermissionGate(PermissionPolicy(mode="auto"), AnsweringAsker(answer))
    decision = await gate.authorize(*bash("git reset --hard"), ctx)
    assert (decision.behavior, decision.reason, decision.rule) == (
        "deny",
        "Blocked by Auto Mode (stage 2): destructive git.",
        "auto-mode",
    )


async def test_an_approving_answer_allows(ctx: ToolContext) -> None:
    gate = PermissionGate(PermissionPolicy(mode="auto"), AnsweringAsker(Answer(True)))
    decision = await gate.authorize(*bash("npm test"), ctx)
    assert (decision.behavior, decision.reason) == ("allow", "Approved when asked.")


async def test_an_answer_that_is_neither_is_a_denial(ctx: ToolContext) -> None:
    gate = PermissionGate(PermissionPolicy(mode="auto"), AnsweringAsker(None))
    assert (await gate.authorize(*bash("npm test"), ctx)).behavior == "deny"
