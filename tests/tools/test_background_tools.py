"""TaskStop, KillShell, BashOutput and Monitor as the model calls them, against a
stand-in for the run's owner of background commands (the real one is
tests/runtime/test_background.py's), and Bash's ``run_in_background`` handing its
command over."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import pytest

from coterie.tools import ToolContext
from coterie.tools.background import (
    MONITOR_MAX_MS,
    MONITOR_MIN_MS,
    BashOutputTool,
    MonitorTool,
    Started,
    Stopped,
    TaskStopTool,
    background_notices,
)
from coterie.tools.bash import BashTool

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence


@attrs.define
class Host:
    """Records what the tools ask of the run."""

    started: list[dict[str, Any]] = attrs.field(factory=list)
    stopped: list[str] = attrs.field(factory=list)
    outputs: dict[str, str] = attrs.field(factory=dict)
    notices: dict[str, list[str]] = attrs.field(factory=dict)

    async def start(
        self,
        *,
        agent: str,
        command: str,
        argv: Sequence[str],
        cwd: Path,
        env: Mapping[str, str],
        description: str,
        monitor_ms: int | None = None,
    ) -> Started:
        self.started.append(
            {"agent": agent, "command": command, "argv": list(argv), "cwd": cwd,
             "description": description, "monitor_ms": monitor_ms}
        )  # fmt: skip
        return Started("bfake0001", Path("/runs/r/background/bfake0001.output"))

    async def stop(self, task_id: str) -> Stopped | None:
        if task_id != "bfake0001":
            return None
        self.stopped.append(task_id)
        return Stopped(task_id, "sleep 30", "bash")

    def read_new(self, task_id: str) -> str | None:
        return self.outputs.pop(task_id, "") if task_id == "bfake0001" else None

    def take_notices(self, agent: str) -> list[str]:
        return self.notices.pop(agent, [])


class HostedContext(ToolContext):
    """A tool context with a ``background`` attribute, whichever fields ToolContext has."""


@pytest.fixture
def host() -> Host:
    return Host()


@pytest.fixture
def hosted(workspace: Path, host: Host) -> ToolContext:
    ctx = HostedContext(workspace=workspace)
    object.__setattr__(ctx, "background", host)
    return ctx


async def test_run_in_background_hands_the_command_to_the_run(
    hosted: ToolContext, host: Host, workspace: Path
) -> None:
    call = {"command": "sleep 30", "run_in_background": True, "description": "wait"}
    result = await BashTool().run(call, hosted)
    assert not result.is_error
    assert "ID: bfake0001" in result.content
    assert "/runs/r/background/bfake0001.output" in result.content
    [started] = host.started
    assert started["argv"] == ["bash", "-c", "sleep 30"]
    assert started["cwd"] == workspace
    assert started["description"] == "wait"
    assert started["monitor_ms"] is None


async def test_a_hard_denied_background_command_is_refused(hosted: ToolContext, host: Host) -> None:
    result = await BashTool().run({"command": "sudo true", "run_in_background": True}, hosted)
    assert result.is_error
    assert "hard deny list" in result.content
    assert host.started == []


async def test_task_stop_and_kill_shell_stop_by_id(hosted: ToolContext, host: Host) -> None:
    stopped = await TaskStopTool().run({"task_id": "bfake0001"}, hosted)
    assert json.loads(stopped.content)["task_id"] == "bfake0001"
    assert json.loads(stopped.content)["task_type"] == "local_bash"
    assert not (await TaskStopTool().run({"shell_id": "bfake0001"}, hosted)).is_error
    assert not (await TaskStopTool().run({"shell_id": "bfake0001"}, hosted)).is_error
    assert host.stopped == ["bfake0001"] * 3
    unknown = await TaskStopTool().run({"task_id": "bnothere1"}, hosted)
    assert unknown.is_error
    assert (await TaskStopTool().run({}, hosted)).is_error


async def test_bash_output_gives_the_new_lines_filtered(hosted: ToolContext, host: Host) -> None:
    host.outputs["bfake0001"] = "ok 1\nerror 2\nok 3\n"
    result = await BashOutputTool().run({"bash_id": "bfake0001", "filter": "^ok"}, hosted)
    assert result.content == "ok 1\nok 3\n"
    again = await BashOutputTool().run({"bash_id": "bfake0001"}, hosted)
    assert again.content == "(no new output)"
    assert (await BashOutputTool().run({"bash_id": "bx"}, hosted)).is_error
    bad = await BashOutputTool().run({"bash_id": "bfake0001", "filter": "("}, hosted)
    assert bad.is_error


@pytest.mark.parametrize(
    ("asked", "given"),
    [(10, MONITOR_MIN_MS), (60_000, 60_000), (10**9, MONITOR_MAX_MS)],
)
async def test_monitor_starts_a_watch_within_its_bounds(
    hosted: ToolContext, host: Host, asked: int, given: int
) -> None:
    call = {"command": "tail -f log", "description": "log", "timeout_ms": asked}
    result = await MonitorTool().run(call, hosted)
    assert not result.is_error
    assert "bfake0001" in result.content
    assert host.started[0]["monitor_ms"] == given


async def test_monitor_refuses_what_it_cannot_run(hosted: ToolContext, host: Host) -> None:
    ws = await MonitorTool().run({"description": "d", "timeout_ms": 1000, "ws": {"u": 1}}, hosted)
    assert ws.is_error
    bare = await MonitorTool().run({"description": "d", "timeout_ms": 1000}, hosted)
    assert bare.is_error
    assert host.started == []


async def test_without_a_run_every_tool_says_so(ctx: ToolContext) -> None:
    calls: list[tuple[Any, dict[str, Any]]] = [
        (TaskStopTool(), {"task_id": "b1"}),
        (TaskStopTool(), {"shell_id": "b1"}),
        (BashOutputTool(), {"bash_id": "b1"}),
        (MonitorTool(), {"command": "true", "description": "d", "timeout_ms": 1000}),
        (BashTool(), {"command": "true", "run_in_background": True}),
    ]
    for tool, call in calls:
        result = await tool.run(call, ctx)
        assert result.is_error, tool.name
    assert background_notices(ctx) == []


def test_notices_become_text_blocks(hosted: ToolContext, host: Host) -> None:
    host.notices["lead"] = ["one", "two"]
    assert background_notices(hosted) == [
        {"type": "text", "text": "one"},
        {"type": "text", "text": "two"},
    ]
    assert background_notices(hosted) == []
