"""Bash: output, exit codes, timeouts and cancellation that kill the whole group."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest
import trio

from coterie.tools import BashTool, ToolContext, ToolRegistry, execute_tool_call
from coterie.tools._process import OutputBuffer, cap_text

if TYPE_CHECKING:
    from pathlib import Path

bash = BashTool(kill_grace=0.5, pipe_grace=0.2)


def alive(pid: int) -> bool:
    """Whether *pid* runs (a zombie, awaiting a reaper that may never come, is dead)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except FileNotFoundError:
        return False
    return stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] not in (b"Z", b"X")


async def test_output_and_exit_code(ctx: ToolContext) -> None:
    result = await bash.run({"command": "echo hello"}, ctx)
    assert result.content == "hello\n\nExit code: 0"
    assert not result.is_error


async def test_stdout_and_stderr_are_interleaved(ctx: ToolContext) -> None:
    result = await bash.run({"command": "echo one; echo two >&2; echo three"}, ctx)
    assert result.content.startswith("one\ntwo\nthree")


async def test_failure_is_an_error_with_its_exit_code(ctx: ToolContext) -> None:
    result = await bash.run({"command": "echo oops >&2; exit 3"}, ctx)
    assert result.is_error
    assert result.content == "oops\n\nExit code: 3"


async def test_no_output(ctx: ToolContext) -> None:
    result = await bash.run({"command": "true"}, ctx)
    assert result.content == "(no output)\n\nExit code: 0"


async def test_killed_by_a_signal(ctx: ToolContext) -> None:
    result = await bash.run({"command": "kill -TERM $$"}, ctx)
    assert result.is_error
    assert "Killed by signal SIGTERM" in result.content


async def test_runs_in_the_workspace(ctx: ToolContext, workspace: Path) -> None:
    result = await bash.run({"command": "pwd"}, ctx)
    assert result.content.splitlines()[0] == str(workspace)


async def test_stdin_is_closed(ctx: ToolContext) -> None:
    """A command waiting for input gets end-of-file at once instead of hanging."""
    result = await bash.run({"command": "cat; echo done"}, ctx)
    assert result.content.startswith("done")


async def test_hard_denied_commands_are_refused_even_without_a_gate(ctx: ToolContext) -> None:
    result = await bash.run({"command": "sudo true"}, ctx)
    assert result.is_error
    assert "hard deny list" in result.content


async def test_run_in_background_is_refused(ctx: ToolContext) -> None:
    result = await bash.run({"command": "sleep 1", "run_in_background": True}, ctx)
    assert result.is_error
    assert "not supported" in result.content


def test_timeout_defaults_and_bounds() -> None:
    schema = BashTool().input_schema["properties"]["timeout"]
    assert BashTool().default_timeout_ms == 120_000
    assert schema["maximum"] == 600_000


async def test_a_timeout_above_the_maximum_is_rejected(ctx: ToolContext) -> None:
    registry = ToolRegistry()
    registry.register(bash)
    input = {"command": "true", "timeout": 600_001}
    result = await execute_tool_call(registry, None, "Bash", input, ctx)
    assert result.is_error
    assert "at most 600000" in result.content


async def test_a_fractional_timeout_is_taken_as_claude_code_takes_it(ctx: ToolContext) -> None:
    """Claude Code's timeout is a number: 300.4 ms is a timeout of 300 ms."""
    registry = ToolRegistry.of([bash])
    input = {"command": "sleep 30", "timeout": 300.4}
    result = await execute_tool_call(registry, None, "Bash", input, ctx)
    assert "timed out after 300 ms" in result.content


async def test_timeout_kills_the_command_and_a_background_grandchild(ctx: ToolContext) -> None:
    command = "( sleep 30 & echo $! ); sleep 30"  # the subshell's child is a grandchild
    started = time.monotonic()
    result = await bash.run({"command": command, "timeout": 300}, ctx)
    assert time.monotonic() - started < 3
    assert result.is_error
    assert "timed out after 300 ms" in result.content
    grandchild = int(result.content.split()[0])
    assert not alive(grandchild)


async def test_a_background_child_holding_the_pipe_does_not_hang_the_call(
    ctx: ToolContext,
) -> None:
    started = time.monotonic()
    result = await bash.run({"command": "sleep 30 & echo $!"}, ctx)
    assert time.monotonic() - started < 3
    assert not result.is_error
    assert not alive(int(result.content.split()[0]))


async def test_a_detached_background_child_is_killed_too(ctx: ToolContext) -> None:
    result = await bash.run({"command": "sleep 30 >/dev/null 2>&1 & echo $!"}, ctx)
    assert not alive(int(result.content.split()[0]))


async def test_a_child_ignoring_sigterm_is_killed_after_the_grace(ctx: ToolContext) -> None:
    command = "bash -c \"trap '' TERM; sleep 30\" >/dev/null 2>&1 & echo $!"
    started = time.monotonic()
    result = await bash.run({"command": command}, ctx)
    assert time.monotonic() - started < 3
    assert not alive(int(result.content.split()[0]))


async def test_cancellation_kills_the_group(ctx: ToolContext, workspace: Path) -> None:
    pid_file = workspace / "pids"
    command = f"sleep 30 & echo $! > {pid_file}; sleep 30"
    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(bash.run, {"command": command}, ctx)
            while not (pid_file.exists() and pid_file.read_text().strip()):
                await trio.sleep(0.01)
            scope.cancel()
    assert scope.cancelled_caught
    assert not alive(int(pid_file.read_text()))


async def test_output_is_capped_keeping_head_and_tail(ctx: ToolContext) -> None:
    command = "head -c 40000 /dev/zero | tr '\\0' a; head -c 40000 /dev/zero | tr '\\0' b"
    result = await bash.run({"command": command}, ctx)
    body = result.content.removesuffix("\n\nExit code: 0")
    assert len(body) <= 50_000
    assert body.startswith("a" * 20_000)
    assert body.endswith("b" * 20_000)
    assert "30,000 characters truncated" in body


async def test_huge_output_keeps_bounded_memory_and_both_ends(ctx: ToolContext) -> None:
    small = BashTool(output_limit=1000)
    command = "echo START; head -c 200000 /dev/zero | tr '\\0' x; echo; echo END"
    result = await small.run({"command": command}, ctx)
    body = result.content.removesuffix("\n\nExit code: 0")
    assert body.startswith("START")
    assert body.endswith("END")
    assert "about" in body
    assert len(body) <= 1000


def test_cap_text_leaves_short_text_alone() -> None:
    assert cap_text("short", 10) == "short"


@pytest.mark.parametrize("chunks", [[b"abc" * 10], [b"a"] * 30, [b"x" * 5, b"y" * 50]])
def test_output_buffer_renders_everything_that_fits(chunks: list[bytes]) -> None:
    buffer = OutputBuffer(1000)
    for chunk in chunks:
        buffer.feed(chunk)
    assert buffer.render() == b"".join(chunks).decode()
