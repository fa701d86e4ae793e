"""The judge of ``prompt`` and ``agent`` hooks, in process, with a model written here."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import attrs
import pytest
import trio

from coterie.hooks import Actor, HookConfig, HookGroup, Hooks
from coterie.hooks.config import Handler
from coterie.hooks.judge import MAX_TURNS, SMALL_MODEL_ENV, Judge
from coterie.models import ModelError, ModelReply, ModelRequest, Usage

if TYPE_CHECKING:
    from pathlib import Path


@attrs.define
class Model:
    """Answers each request with the next of *replies* (content blocks), recording it."""

    replies: list[list[dict[str, Any]]]
    requests: list[ModelRequest] = attrs.field(factory=list)
    hang: bool = False

    @property
    def name(self) -> str:
        return "m"

    async def complete(self, request: ModelRequest, **_: Any) -> ModelReply:
        self.requests.append(request)
        if self.hang:
            await trio.sleep_forever()
        if not self.replies:
            raise ModelError("no more replies")
        content = self.replies.pop(0)
        stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
        return ModelReply(content, stop, Usage(), "m")


def text(value: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": value}]


@attrs.define
class Tools:
    ran: list[tuple[str, Any]] = attrs.field(factory=list)

    def schemas(self) -> list[dict[str, Any]]:
        return [{"name": "Read", "description": "read", "input_schema": {"type": "object"}}]

    async def run(self, name: str, input: Any) -> tuple[str, bool]:
        self.ran.append((name, input))
        return "file says yes", False


def hooks(tmp_path: Path, handler: Handler, judge: Judge | None) -> Hooks:
    config = HookConfig((HookGroup("PreToolUse", "Bash", (handler,)),))
    return Hooks(config, "run-1", tmp_path, "default", judge=judge)


async def bash(hooks: Hooks) -> Any:
    fields = {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "t1"}
    return await hooks.fire("PreToolUse", fields, actor=Actor("lead", "lead"))


async def test_a_prompt_hook_is_one_call_in_its_own_role(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SMALL_MODEL_ENV, raising=False)
    model = Model([text('{"ok": false, "reason": "not ls"}')])
    handler = Handler("prompt", "Is this fine? $ARGUMENTS", 30.0)
    verdict = await bash(hooks(tmp_path, handler, Judge(model)))
    assert (verdict.blocked, verdict.permission, verdict.reason) == (True, "deny", "not ls")
    (request,) = model.requests
    assert (request.role, request.actor, request.tools, request.model) == (
        "hook-prompt",
        "lead-hook-prompt",
        [],
        None,  # the run's own model
    )
    asked = request.messages[0]["content"][0]["text"]
    assert asked.startswith("Is this fine? {")
    assert json.loads(asked.removeprefix("Is this fine? "))["tool_input"] == {"command": "ls"}


@pytest.mark.parametrize(
    ("named", "env", "asked"),
    [("haiku", None, "claude-haiku-5-5"), (None, "small-1", "small-1"), ("x-2", "small-1", "x-2")],
)
async def test_the_model_asked(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    named: str | None,
    env: str | None,
    asked: str,
) -> None:
    if env is None:
        monkeypatch.delenv(SMALL_MODEL_ENV, raising=False)
    else:
        monkeypatch.setenv(SMALL_MODEL_ENV, env)
    model = Model([text('{"ok": true}')])
    handler = Handler("prompt", "p", 30.0, model=named)
    verdict = await bash(hooks(tmp_path, handler, Judge(model)))
    assert not verdict.blocked
    assert verdict.permission is None
    assert model.requests[0].model == asked


async def test_an_agent_hook_uses_its_tools_then_answers(tmp_path: Path) -> None:
    use = {"type": "tool_use", "id": "u1", "name": "Read", "input": {"file_path": "P.md"}}
    model = Model([[use], text('{"ok": true}')])
    tools = Tools()
    verdict = await bash(hooks(tmp_path, Handler("agent", "check", 60.0), Judge(model, tools)))
    assert not verdict.blocked
    assert tools.ran == [("Read", {"file_path": "P.md"})]
    first, second = model.requests
    assert first.role == "hook-agent"
    assert [t["name"] for t in first.tools] == ["Read"]
    (result,) = second.messages[-1]["content"]
    assert (result["tool_use_id"], result["content"]) == ("u1", "file says yes")


async def test_an_agent_that_never_decides_is_cut_off_and_blocks(tmp_path: Path) -> None:
    use = {"type": "tool_use", "id": "u", "name": "Read", "input": {}}
    model = Model([[use] for _ in range(MAX_TURNS + 5)])
    verdict = await bash(hooks(tmp_path, Handler("agent", "check", 60.0), Judge(model, Tools())))
    assert verdict.blocked
    assert len(model.requests) == MAX_TURNS


async def test_a_judge_past_its_timeout_blocks_the_call(
    tmp_path: Path, autojump_clock: trio.abc.Clock
) -> None:
    model = Model([], hang=True)
    start = trio.current_time()
    verdict = await bash(hooks(tmp_path, Handler("prompt", "p", 30.0), Judge(model)))
    assert trio.current_time() - start == pytest.approx(30.0)
    assert verdict.blocked
    assert verdict.permission == "deny"
    assert "timed out after 30s" in (verdict.reason or "")


async def test_without_a_judge_or_with_a_failing_model_the_call_is_blocked(
    tmp_path: Path,
) -> None:
    for judge in (None, Judge(Model([]))):
        verdict = await bash(hooks(tmp_path, Handler("prompt", "p", 30.0), judge))
        assert verdict.blocked
        assert verdict.permission == "deny"
