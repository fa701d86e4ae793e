"""The registry, and execute_tool_call turning every failure into a result."""

from __future__ import annotations

import errno
import os
from typing import TYPE_CHECKING, Any

import attrs
import pytest
import trio

from coterie.events import EventLog
from coterie.tools import (
    Capabilities,
    Decision,
    Effect,
    ToolContext,
    ToolRegistry,
    ToolResult,
    UnknownTool,
    default_registry,
    execute_tool_call,
)

if TYPE_CHECKING:
    from coterie.tools import Tool


@attrs.define
class Probe:
    """A tool that records its calls and fails or blocks on request."""

    name: str = "Probe"
    description: str = "test tool"
    input_schema: dict[str, Any] = attrs.field(
        factory=lambda: {
            "type": "object",
            "properties": {"x": {"type": "integer"}},
            "required": ["x"],
            "additionalProperties": False,
        }
    )
    capabilities: Capabilities = attrs.field(factory=lambda: Capabilities(Effect.EXECUTION))
    calls: list[dict[str, Any]] = attrs.field(factory=list)
    fail: BaseException | None = None
    block: bool = False

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.calls.append(input)
        if self.block:
            await trio.sleep_forever()
        if self.fail is not None:
            raise self.fail
        return ToolResult(f"x={input['x']}")


@attrs.define
class FixedGate:
    decision: Decision
    seen: list[str] = attrs.field(factory=list)

    async def authorize(
        self, tool: Tool, input: dict[str, Any], ctx: ToolContext, **_: Any
    ) -> Decision:
        self.seen.append(tool.name)
        return self.decision


ALLOW = FixedGate(Decision("allow", "ok"))


def registry_with(probe: Probe) -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(probe)
    return registry


def test_default_registry_has_the_core_tools() -> None:
    assert default_registry().names() == [
        "Bash",
        "Read",
        "Write",
        "Edit",
        "NotebookEdit",
        "Glob",
        "Grep",
        "TodoWrite",
        "AskUserQuestion",
        "EnterPlanMode",
        "ExitPlanMode",
        "WebFetch",
        "WebSearch",
        "CronCreate",
        "CronList",
        "CronDelete",
        "EnterWorktree",
        "ExitWorktree",
        "TaskStop",
        "Monitor",
        "BashOutput",
        "ListAgents",
    ]


def test_read_only_flags_follow_claude_code() -> None:
    flags = {t.name: t.capabilities.read_only for t in default_registry()}
    assert flags == {
        "Bash": False,
        "Read": True,
        "Write": False,
        "Edit": False,
        "NotebookEdit": False,
        "Glob": True,
        "Grep": True,
        "TodoWrite": True,
        "AskUserQuestion": False,
        "EnterPlanMode": False,
        "ExitPlanMode": False,
        "WebFetch": False,
        "WebSearch": False,
        "CronCreate": False,
        "CronList": True,
        "CronDelete": False,
        "EnterWorktree": False,
        "ExitWorktree": False,
        "TaskStop": False,
        "Monitor": False,
        "BashOutput": True,
        "ListAgents": True,
    }


def test_schemas_are_messages_api_tool_definitions() -> None:
    schemas = default_registry().schemas()
    assert [s["name"] for s in schemas][:2] == ["Bash", "Read"]
    for schema in schemas:
        # A deferred tool (once loaded) and the placeholder carry defer_loading too.
        assert set(schema) - {"defer_loading"} == {"name", "description", "input_schema"}
        assert schema["input_schema"]["type"] == "object"
        assert schema["description"]


def test_schemas_are_copies() -> None:
    registry = default_registry()
    registry.schemas()[0]["input_schema"]["properties"].clear()
    assert registry.schemas()[0]["input_schema"]["properties"]


def test_registering_a_name_twice_is_refused() -> None:
    registry = registry_with(Probe())
    with pytest.raises(ValueError, match="already registered"):
        registry.register(Probe())


def test_get_unknown_raises_unknown_tool() -> None:
    with pytest.raises(UnknownTool):
        ToolRegistry().get("Nope")


async def test_a_valid_allowed_call_runs(ctx: ToolContext) -> None:
    probe = Probe()
    result = await execute_tool_call(registry_with(probe), ALLOW, "Probe", {"x": 1}, ctx)
    assert result == ToolResult("x=1")


async def test_unknown_tool_names_the_available_ones(ctx: ToolContext) -> None:
    result = await execute_tool_call(default_registry(), ALLOW, "Nope", {}, ctx)
    assert result.is_error
    assert "Nope" in result.content
    assert (
        "Bash, Read, Write, Edit, NotebookEdit, Glob, Grep, TodoWrite, AskUserQuestion,"
        " EnterPlanMode, ExitPlanMode, WebFetch, WebSearch" in result.content
    )


async def test_input_not_matching_the_schema_is_explained(ctx: ToolContext) -> None:
    probe = Probe()
    result = await execute_tool_call(registry_with(probe), ALLOW, "Probe", {"x": "one"}, ctx)
    assert result.is_error
    assert "Invalid input for Probe" in result.content
    assert "x must be an integer" in result.content
    assert probe.calls == []


async def test_input_that_is_not_an_object_is_an_error(ctx: ToolContext) -> None:
    result = await execute_tool_call(registry_with(Probe()), ALLOW, "Probe", [1], ctx)
    assert result.is_error
    assert "JSON object" in result.content


async def test_validation_happens_before_the_permission_check(ctx: ToolContext) -> None:
    gate = FixedGate(Decision("allow", "ok"))
    await execute_tool_call(registry_with(Probe()), gate, "Probe", {}, ctx)
    assert gate.seen == []


async def test_a_denial_is_an_error_result_with_the_reason(ctx: ToolContext) -> None:
    probe = Probe()
    gate = FixedGate(Decision("deny", "Because of the rule X.", "X"))
    ctx.events = EventLog()
    result = await execute_tool_call(registry_with(probe), gate, "Probe", {"x": 1}, ctx)
    assert result.is_error
    assert "Because of the rule X." in result.content
    assert probe.calls == []
    assert ctx.events.of_type("tool.denied")[0].data["rule"] == "X"


async def test_an_unresolved_ask_is_never_run(ctx: ToolContext) -> None:
    """A gate must resolve "ask"; if one leaks through it counts as a denial."""
    probe = Probe()
    gate = FixedGate(Decision("ask", "needs approval"))
    result = await execute_tool_call(registry_with(probe), gate, "Probe", {"x": 1}, ctx)
    assert result.is_error
    assert probe.calls == []


async def test_a_tool_exception_becomes_an_error_result(ctx: ToolContext) -> None:
    probe = Probe(fail=RuntimeError("disk on fire"))
    result = await execute_tool_call(registry_with(probe), ALLOW, "Probe", {"x": 1}, ctx)
    assert result.is_error
    assert "RuntimeError: disk on fire" in result.content


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT, errno.EROFS])
async def test_a_full_disk_a_tool_did_not_answer_for_stops_the_agent(
    ctx: ToolContext, code: int
) -> None:
    """Found by bench/chaos.py: the board's ENOSPC inside TaskCreate became an error
    result ("failed unexpectedly"), the scripted lead went on without its tasks and
    the run ended success. The run's own state failing is not the model's to handle:
    it propagates (the actor crashes, the run stops, resumable)."""
    probe = Probe(fail=OSError(code, os.strerror(code), "board.log"))
    with pytest.raises(OSError, match=r"board\.log") as caught:
        await execute_tool_call(registry_with(probe), ALLOW, "Probe", {"x": 1}, ctx)
    assert caught.value.errno == code


async def test_cancellation_is_never_swallowed(ctx: ToolContext, autojump_clock: object) -> None:
    probe = Probe(block=True)
    with trio.move_on_after(0.01) as scope:
        await execute_tool_call(registry_with(probe), ALLOW, "Probe", {"x": 1}, ctx)
        pytest.fail("the call should have been cancelled")
    assert scope.cancelled_caught


async def test_keyboard_interrupt_passes_through(ctx: ToolContext) -> None:
    probe = Probe(fail=KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        await execute_tool_call(registry_with(probe), ALLOW, "Probe", {"x": 1}, ctx)


async def test_no_gate_skips_the_permission_check(ctx: ToolContext) -> None:
    result = await execute_tool_call(registry_with(Probe()), None, "Probe", {"x": 2}, ctx)
    assert result.content == "x=2"


def test_a_tool_only_taken_by_name_is_run_but_never_offered() -> None:
    """BashOutput, which Claude Code no longer has: a model trained on it may call it,
    no request carries it (nor does system/init list it)."""
    registry = default_registry()
    assert "BashOutput" in registry.names()
    assert "BashOutput" not in registry.offered()
    assert "BashOutput" not in [s["name"] for s in registry.schemas()]
    assert registry.get("BashOutput").name == "BashOutput"
    # What a request carries whole, and the deferred tools it names, are the offered ones.
    sent = [s["name"] for s in registry.schemas() if not s.get("defer_loading")]
    deferred = [t.name for t in registry.deferred()]
    assert sorted(registry.offered()) == sorted(sent + deferred)
