"""A custom subagent's narrower gate, and the allow rules an active skill grants."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from coterie.tools import (
    BashTool,
    NarrowedGate,
    PermissionGate,
    PermissionPolicy,
    ToolContext,
    WriteTool,
)

if TYPE_CHECKING:
    from pathlib import Path

MODES = ["plan", "dontAsk", "default", "acceptEdits", "auto", "bypassPermissions"]


class Yes:
    async def ask(
        self, tool_name: str, input: dict[str, object], reason: str, **context: Any
    ) -> bool:
        return True


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(MODES), st.sampled_from(MODES), st.booleans())
async def test_a_narrowed_gate_never_allows_what_its_outer_gate_denies(
    outer_mode: str, own_mode: str, asker: bool
) -> None:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        ctx = ToolContext(workspace=Path(tmp))
        if outer_mode == "auto" or own_mode == "auto":
            return  # the classifier asker is the runtime's; covered by the CLI tests
        outer = PermissionGate(PermissionPolicy(mode=outer_mode), Yes() if asker else None)  # type: ignore[arg-type]
        policy = attrs.evolve(outer.policy, mode=own_mode)  # type: ignore[arg-type]
        narrowed = NarrowedGate(policy, outer.asker, outer=outer)
        for tool, data in (
            (WriteTool(), {"file_path": "a.txt", "content": "x"}),
            (BashTool(), {"command": "touch b"}),
        ):
            theirs = await outer.authorize(tool, data, ctx)
            mine = await narrowed.authorize(tool, data, ctx)
            if theirs.behavior == "deny":
                assert mine.behavior == "deny"


async def test_skill_grants_are_allow_rules_of_that_agent(tmp_path: Path) -> None:
    write = WriteTool()
    data = {"file_path": "out/a.txt", "content": "x"}
    ctx = ToolContext(workspace=tmp_path)
    policy = PermissionPolicy(mode="default")
    assert policy.check(write, data, ctx).behavior == "ask"
    ctx.granted.append(("Write(out/*)", "scribe"))
    decision = policy.check(write, data, ctx)
    assert decision.behavior == "allow"
    assert decision.rule == "Write(out/*)"
    assert policy.check(write, data, ToolContext(workspace=tmp_path)).behavior == "ask"


async def test_skill_grants_of_execution_are_set_aside_in_auto_mode(tmp_path: Path) -> None:
    bash = BashTool()
    data = {"command": "python -c 1"}
    ctx = ToolContext(workspace=tmp_path, granted=[("Bash(python:*)", "s"), ("Bash(((", "s")])
    assert PermissionPolicy(mode="default").check(bash, data, ctx).behavior == "allow"
    assert PermissionPolicy(mode="auto").check(bash, data, ctx).behavior == "ask"


async def test_deny_rules_beat_skill_grants(tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path, granted=[("Write", "s")])
    policy = PermissionPolicy.from_rules(deny=["Write(secret.txt)"])
    data = {"file_path": "secret.txt", "content": "x"}
    assert policy.check(WriteTool(), data, ctx).behavior == "deny"
