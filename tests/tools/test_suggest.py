"""The rule "Yes, and don't ask again" offers, and the gate granting it for the run."""

from __future__ import annotations

from typing import Any

import attrs
from hypothesis import given

from coterie.autonomy import grants_arbitrary_execution
from coterie.tools import Answer, PermissionGate, PermissionPolicy, ToolContext, default_registry
from coterie.tools.permissions import Suggestion, analyze, parse_rule, suggest_rule
from tests.strategies import command_lines

TOOLS = {t.name: t for t in default_registry()}


def rule_for(command: str) -> str | None:
    suggestion = suggest_rule("Bash", {"command": command})
    return None if suggestion is None else suggestion.rule


def test_a_command_with_a_subcommand_gets_a_prefix_rule() -> None:
    assert rule_for("npm test") == "Bash(npm test:*)"
    assert rule_for("npm run build -- --watch") == "Bash(npm run build:*)"
    assert rule_for("git commit -m wip") == "Bash(git commit:*)"
    assert rule_for("ls -la src") == "Bash(ls:*)"


def test_an_interpreter_gets_the_exact_command_never_a_prefix() -> None:
    assert rule_for("python build.py") == "Bash(python build.py)"
    assert rule_for("bash -c 'rm -rf x'") is None


def test_compound_or_hidden_commands_get_no_rule() -> None:
    for command in ("make && make install", "echo $(id)", "ls | sh", "a=1 make"):
        assert rule_for(command) is None, command


def test_a_workspace_script_gets_a_rule_for_itself() -> None:
    """As Claude Code offers: `./mk.sh build` -> every `./mk.sh` command."""
    assert rule_for("./mk.sh") == "Bash(./mk.sh:*)"
    assert rule_for("./mk.sh build --fast") == "Bash(./mk.sh:*)"
    assert rule_for("scripts/test.sh -v") == "Bash(scripts/test.sh:*)"
    for command in ("../up.sh", "./a/../b.sh", "/usr/bin/env python", "./run.sh; id"):
        assert rule_for(command) is None, command


def test_edits_are_offered_for_the_session_and_other_tools_by_name() -> None:
    assert suggest_rule("Edit", {"file_path": "a"}, edits_files=True) == Suggestion(
        "Edit", "all edits during this session", persist=False
    )
    assert suggest_rule("mcp__github__create_issue", {}) == Suggestion(
        "mcp__github__create_issue", "mcp__github__create_issue", persist=True
    )


@given(command_lines)
def test_a_rule_offered_covers_its_command_and_grants_no_arbitrary_execution(
    command: str,
) -> None:
    suggestion = suggest_rule("Bash", {"command": command})
    if suggestion is None:
        return
    rule = parse_rule(suggestion.rule)
    assert rule.tool == "Bash"
    assert not rule.whole_tool
    assert not grants_arbitrary_execution(suggestion.rule)
    (only,) = analyze(command).commands
    assert rule.matches_command(only[0])
    assert suggestion.persist


@attrs.define
class Granting:
    """Answers "Yes, and don't ask again" with *grant*, counting the questions."""

    grant: str
    asked: int = 0
    offered: list[Suggestion | None] = attrs.field(factory=list)

    async def ask(
        self, tool_name: str, input: dict[str, Any], reason: str, **context: Any
    ) -> Answer:
        self.asked += 1
        self.offered.append(context.get("suggestion"))
        return Answer(True, grant=self.grant)


async def test_a_granted_rule_is_in_force_at_once_for_every_gate_of_the_policy(
    ctx: ToolContext,
) -> None:
    policy = PermissionPolicy()
    asker = Granting("Bash(npm test:*)")
    lead, bob = PermissionGate(policy, asker), PermissionGate(policy, asker)
    first = await lead.authorize(TOOLS["Bash"], {"command": "npm test"}, ctx)
    again = await bob.authorize(TOOLS["Bash"], {"command": "npm test -- -k x"}, ctx)
    other = await bob.authorize(TOOLS["Bash"], {"command": "npm publish"}, ctx)
    assert [first.behavior, again.behavior] == ["allow", "allow"]
    assert other.behavior == "allow"  # asked again (and answered)
    assert asker.asked == 2
    assert asker.offered[0] == Suggestion("Bash(npm test:*)", "`npm test` commands", True)


async def test_a_denial_carries_the_persons_instruction_to_the_model(ctx: ToolContext) -> None:
    class Declining:
        async def ask(
            self, tool_name: str, input: dict[str, Any], reason: str, **context: Any
        ) -> Answer:
            return Answer(False, instruction="use pytest -x instead")

    gate = PermissionGate(PermissionPolicy(), Declining())
    decision = await gate.authorize(TOOLS["Bash"], {"command": "npm test"}, ctx)
    assert decision.behavior == "deny"
    assert decision.reason.endswith("said what to do instead: use pytest -x instead")


async def test_a_grant_that_does_not_parse_approves_this_call_only(ctx: ToolContext) -> None:
    policy = PermissionPolicy()
    gate = PermissionGate(policy, Granting("Bash("))
    decision = await gate.authorize(TOOLS["Bash"], {"command": "npm test"}, ctx)
    assert decision.behavior == "allow"
    assert policy.allow == ()


@attrs.define
class Once:
    """Approves once, recording what "don't ask again" it was offered."""

    offered: list[Suggestion | None] = attrs.field(factory=list)

    async def ask(self, tool_name: str, input: dict[str, Any], reason: str, **context: Any) -> bool:
        self.offered.append(context.get("suggestion"))
        return True


async def test_nothing_is_offered_that_would_not_stop_the_question(ctx: ToolContext) -> None:
    """An ask rule or a protected path asks whatever is allowed: offering "don't ask
    again" there would be a promise the next call breaks."""
    asker = Once()
    gate = PermissionGate(PermissionPolicy.from_rules(ask=["Bash(git push:*)"]), asker)
    await gate.authorize(TOOLS["Bash"], {"command": "git push origin main"}, ctx)
    settings = {"file_path": str(ctx.workspace / ".claude" / "settings.json"), "content": "{}"}
    await gate.authorize(TOOLS["Write"], settings, ctx)
    await gate.authorize(
        TOOLS["Write"], {"file_path": str(ctx.workspace / "a.txt"), "content": ""}, ctx
    )
    assert asker.offered == [
        None,
        None,
        Suggestion("Edit", "all edits during this session", persist=False),
    ]


async def test_a_script_granted_once_is_not_asked_about_again(ctx: ToolContext) -> None:
    asker = Granting("Bash(./mk.sh:*)")
    gate = PermissionGate(PermissionPolicy.from_rules(), asker)
    for command in ("./mk.sh build", "./mk.sh test"):
        decision = await gate.authorize(TOOLS["Bash"], {"command": command}, ctx)
        assert decision.behavior == "allow", decision
    assert asker.asked == 1
    assert asker.offered == [Suggestion("Bash(./mk.sh:*)", "`./mk.sh` commands", persist=True)]
