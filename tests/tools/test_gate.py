"""The permission gate: asking, headless denial, fail-closed askers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
import pytest
import trio

from coterie.events import EventLog
from coterie.tools import (
    PermissionGate,
    PermissionPolicy,
    ToolContext,
    default_registry,
    execute_tool_call,
)

if TYPE_CHECKING:
    from pathlib import Path

TOOLS = {t.name: t for t in default_registry()}
NPM = {"command": "npm test"}


@attrs.define
class ScriptedAsker:
    """Answers with a fixed verdict (or raises), recording what it was asked."""

    answer: bool | BaseException = True
    asked: list[tuple[str, dict[str, Any], str]] = attrs.field(factory=list)

    async def ask(self, tool_name: str, input: dict[str, Any], reason: str, **context: Any) -> bool:
        self.asked.append((tool_name, input, reason))
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


async def test_allow_needs_no_asker(ctx: ToolContext) -> None:
    asker = ScriptedAsker()
    gate = PermissionGate(PermissionPolicy.from_rules(allow=["Bash(npm test)"]), asker)
    decision = await gate.authorize(TOOLS["Bash"], NPM, ctx)
    assert decision.behavior == "allow"
    assert asker.asked == []


async def test_ask_goes_to_the_asker(ctx: ToolContext) -> None:
    asker = ScriptedAsker(True)
    gate = PermissionGate(PermissionPolicy(), asker)
    decision = await gate.authorize(TOOLS["Bash"], NPM, ctx)
    assert decision.behavior == "allow"
    assert asker.asked[0][:2] == ("Bash", NPM)
    assert "needs approval" in asker.asked[0][2]


async def test_a_declined_ask_is_a_denial(ctx: ToolContext) -> None:
    gate = PermissionGate(PermissionPolicy(), ScriptedAsker(False))
    decision = await gate.authorize(TOOLS["Bash"], NPM, ctx)
    assert decision.behavior == "deny"
    assert "declined" in decision.reason


async def test_headless_ask_is_denied_and_says_why(ctx: ToolContext) -> None:
    ctx.events = EventLog()
    gate = PermissionGate(PermissionPolicy())
    decision = await gate.authorize(TOOLS["Bash"], NPM, ctx)
    assert decision.behavior == "deny"
    assert "non-interactive" in decision.reason
    assert "nobody can approve" in decision.reason
    assert ctx.events.of_type("permission.denied")


async def test_a_failing_asker_fails_closed(ctx: ToolContext) -> None:
    gate = PermissionGate(PermissionPolicy(), ScriptedAsker(RuntimeError("classifier down")))
    decision = await gate.authorize(TOOLS["Bash"], NPM, ctx)
    assert decision.behavior == "deny"
    assert "classifier down" in decision.reason


async def test_cancellation_while_asking_passes_through(
    ctx: ToolContext, autojump_clock: object
) -> None:
    class Slow:
        async def ask(
            self, tool_name: str, input: dict[str, Any], reason: str, **context: Any
        ) -> bool:
            await trio.sleep_forever()
            return True

    gate = PermissionGate(PermissionPolicy(), Slow())
    with trio.move_on_after(1) as scope:
        await gate.authorize(TOOLS["Bash"], NPM, ctx)
    assert scope.cancelled_caught


async def test_denied_calls_are_never_asked(ctx: ToolContext) -> None:
    asker = ScriptedAsker(True)
    gate = PermissionGate(PermissionPolicy(mode="bypassPermissions"), asker)
    decision = await gate.authorize(TOOLS["Bash"], {"command": "sudo rm x"}, ctx)
    assert decision.behavior == "deny"
    assert asker.asked == []


async def test_a_capped_gate_decides_under_the_cap_until_the_block_ends(
    ctx: ToolContext,
) -> None:
    """A teammate planning (and its subagents, sharing the gate) is under plan mode."""
    gate = PermissionGate(PermissionPolicy.from_rules(mode="bypassPermissions"), None)
    write = TOOLS["Write"]
    call = {"file_path": "x.txt", "content": "x"}
    with gate.capped("plan"):
        assert (await gate.authorize(write, call, ctx)).behavior == "deny"
    assert (await gate.authorize(write, call, ctx)).behavior == "allow"


@pytest.mark.parametrize("answer", [True, False])
async def test_end_to_end_through_execute_tool_call(
    ctx: ToolContext, workspace: Path, answer: bool
) -> None:
    gate = PermissionGate(PermissionPolicy(), ScriptedAsker(answer))
    input = {"file_path": "made.txt", "content": "hi"}
    result = await execute_tool_call(default_registry(), gate, "Write", input, ctx)
    assert result.is_error is (not answer)
    assert (workspace / "made.txt").exists() is answer


async def test_headless_grep_skips_denied_files(ctx: ToolContext, workspace: Path) -> None:
    """The agent's context carries the policy's Read filter (the runtime builds it so)."""
    (workspace / ".env").write_text("TOKEN=1\n")
    (workspace / "app.py").write_text("TOKEN = 0\n")
    policy = PermissionPolicy.from_rules(deny=["Read(.env)"])
    gate = PermissionGate(policy)
    ctx = attrs.evolve(ctx, read_denied=policy.read_filter(workspace))
    result = await execute_tool_call(default_registry(), gate, "Grep", {"pattern": "TOKEN"}, ctx)
    assert ".env" not in result.content
    assert "app.py" in result.content


async def test_an_asker_without_the_newer_keywords_still_works(ctx: ToolContext) -> None:
    """``ask(tool_name, input, reason)`` as docs/engine.md first documented it."""

    class Old:
        async def ask(self, tool_name: str, input: dict[str, Any], reason: str) -> bool:
            return True

    @attrs.define
    class Some:
        seen: list[str] = attrs.Factory(list)

        async def ask(
            self, tool_name: str, input: dict[str, Any], reason: str, agent: str = ""
        ) -> bool:
            self.seen.append(agent)
            return True

    assert (
        await PermissionGate(PermissionPolicy(), Old()).authorize(TOOLS["Bash"], NPM, ctx)
    ).behavior == "allow"
    some = Some()
    await PermissionGate(PermissionPolicy(), some).authorize(TOOLS["Bash"], NPM, ctx)
    assert some.seen == ["lead"]


@attrs.define
class RewritingAsker:
    """Approves with another input, as an Agent SDK host's updatedInput does."""

    rewritten: dict[str, Any]

    async def ask(self, tool_name: str, input: dict[str, Any], reason: str, **context: Any) -> Any:
        from coterie.tools.permissions import Answer

        return Answer(True, updated_input=self.rewritten)


async def test_an_approval_with_a_new_input_runs_the_new_input(ctx: ToolContext) -> None:
    gate = PermissionGate(PermissionPolicy(), RewritingAsker({"command": "npm test -- -x"}))
    decision = await gate.authorize(TOOLS["Bash"], NPM, ctx)
    assert decision.behavior == "allow"
    assert decision.updated_input == {"command": "npm test -- -x"}


async def test_a_new_input_that_a_deny_rule_forbids_is_denied(ctx: ToolContext) -> None:
    policy = PermissionPolicy.from_rules(deny=["Bash(rm:*)"])
    asker = RewritingAsker({"command": "rm -rf src"})
    decision = await PermissionGate(policy, asker).authorize(TOOLS["Bash"], NPM, ctx)
    assert decision.behavior == "deny"
    assert decision.updated_input is None


async def test_a_new_input_out_of_the_tools_shape_does_not_run(
    ctx: ToolContext, workspace: Path
) -> None:
    gate = PermissionGate(PermissionPolicy(), RewritingAsker({"file_path": "other.txt"}))
    input = {"file_path": "made.txt", "content": "hi"}
    result = await execute_tool_call(default_registry(), gate, "Write", input, ctx)
    assert result.is_error
    assert "does not fit its schema" in result.content
    assert not (workspace / "made.txt").exists()
    assert not (workspace / "other.txt").exists()
