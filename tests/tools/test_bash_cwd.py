"""Bash keeps its working directory between calls (issue 14), inside the sandbox.

Models rely on it (``cd sub`` then ``make``). The directory persists only
while it is inside the workspace or an additional directory; leaving, or its
removal, resets it to the workspace with Claude Code's note. Variables do not
persist. The permission checks take relative paths against the same directory.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pytest

from coterie.tools import BashTool, ToolContext
from coterie.tools.ossandbox import Bubblewrap, SandboxSettings, probe
from coterie.tools.permissions.bashcheck import check_bash
from tests.agent.conftest import coterie
from tests.agent.conftest import home as cli_home
from tests.agent.test_resume_cli import only_run, write_scenario

if TYPE_CHECKING:
    from pathlib import Path

bash = BashTool(kill_grace=0.5, pipe_grace=0.2)


async def run(ctx: ToolContext, command: str) -> str:
    return (await bash.run({"command": command}, ctx)).content


async def test_a_cd_stays_for_the_next_call_and_variables_do_not(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "sub" / "deeper").mkdir(parents=True)
    assert await run(ctx, "cd sub && X=1") == "(no output)\n\nExit code: 0"
    assert ctx.shell_cwd == workspace / "sub"
    assert await run(ctx, 'pwd; echo "x=$X"') == f"{workspace / 'sub'}\nx=\n\nExit code: 0"
    assert await run(ctx, "cd deeper; pwd") == f"{workspace / 'sub/deeper'}\n\nExit code: 0"
    assert await run(ctx, "cd ..; pwd") == f"{workspace / 'sub'}\n\nExit code: 0"


async def test_the_exit_status_is_the_command_s(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    result = await bash.run({"command": "cd sub; exit 3"}, ctx)
    assert result.content == "(no output)\n\nExit code: 3"
    assert ctx.shell_cwd == workspace / "sub"
    result = await bash.run({"command": "cd sub; (exit 4)"}, ctx)  # no such sub/sub
    assert "Exit code: 4" in result.content


async def test_leaving_the_workspace_resets_the_directory(
    ctx: ToolContext, workspace: Path, outside: Path
) -> None:
    out = await run(ctx, f"cd {outside}; pwd")
    assert out == f"{outside}\nShell cwd was reset to {workspace}\n\nExit code: 0"
    assert ctx.shell_cwd is None
    assert await run(ctx, "pwd") == f"{workspace}\n\nExit code: 0"


async def test_a_symlink_out_of_the_workspace_is_leaving_it(
    ctx: ToolContext, workspace: Path, outside: Path
) -> None:
    (workspace / "link").symlink_to(outside)
    out = await run(ctx, "cd link")
    assert out == f"Shell cwd was reset to {workspace}\n\nExit code: 0"
    assert await run(ctx, "pwd -P") == f"{workspace}\n\nExit code: 0"


async def test_a_removed_directory_is_reset_at_the_next_call(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "gone").mkdir()
    await run(ctx, "cd gone")
    os.rmdir(workspace / "gone")
    out = await run(ctx, "pwd")
    assert out == f"{workspace}\nShell cwd was reset to {workspace}\n\nExit code: 0"


async def test_an_additional_directory_is_a_place_to_stay(workspace: Path, outside: Path) -> None:
    ctx = ToolContext(workspace=workspace, extra_dirs=[outside])
    await run(ctx, f"cd {outside}")
    assert ctx.shell_cwd == outside
    assert await run(ctx, "pwd") == f"{outside}\n\nExit code: 0"


async def test_a_command_that_does_not_report_leaves_the_directory(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "sub").mkdir()
    await run(ctx, "cd sub")
    await run(ctx, "cd ..; trap - EXIT")  # the report is switched off
    assert ctx.shell_cwd == workspace / "sub"
    await run(ctx, "cd ..; exec true")  # the shell is replaced: no report either
    assert ctx.shell_cwd == workspace / "sub"
    result = await BashTool(default_timeout_ms=300, kill_grace=0.2).run(
        {"command": "cd ..; sleep 5"}, ctx
    )
    assert "timed out" in result.content
    assert ctx.shell_cwd == workspace  # stopped there, and it said so on its way out


async def test_output_is_the_command_s_alone(ctx: ToolContext, workspace: Path) -> None:
    """The directory travels on a pipe of its own, never in the output."""
    out = await run(ctx, "printf 'no newline'")
    assert out == "no newline\n\nExit code: 0"
    assert str(workspace) not in out


def test_relative_paths_are_judged_where_the_shell_is(workspace: Path) -> None:
    (workspace / "sub").mkdir()
    (workspace / "a.txt").write_text("a\n")
    ctx = ToolContext(workspace=workspace, shell_cwd=workspace / "sub")
    assert check_bash("cat ../a.txt", ctx, deny=(), ask=()).read_only
    assert not check_bash("cat ../../a.txt", ctx, deny=(), ask=()).read_only
    at_root = ToolContext(workspace=workspace)
    assert not check_bash("cat ../a.txt", at_root, deny=(), ask=()).read_only


@pytest.mark.skipif(probe() is not None and os.environ.get("CI") != "true", reason="no bwrap")
async def test_the_directory_persists_inside_the_sandbox(workspace: Path, tmp_path: Path) -> None:
    (workspace / "sub").mkdir()
    settings = SandboxSettings.from_json({"enabled": True})
    sandbox = Bubblewrap.from_settings(settings, workspace, home=tmp_path)
    ctx = ToolContext(workspace=workspace, sandbox=sandbox)
    await run(ctx, "cd sub")
    assert ctx.shell_cwd == workspace / "sub"
    assert await run(ctx, "pwd; touch made-here") == f"{workspace / 'sub'}\n\nExit code: 0"
    assert (workspace / "sub" / "made-here").exists()


def bash_call(command: str) -> dict[str, Any]:
    return {"tool_uses": [{"name": "Bash", "input": {"command": command}}]}


def test_the_directory_survives_a_resume_through_the_cli(
    workspace: Path, cli_home: Path, tmp_path: Path
) -> None:
    """The transcript keeps where the agent's shell is: a resumed run goes on there."""
    scenario = write_scenario(tmp_path / "s.json", {"lead": [
        bash_call("mkdir -p sub/deeper && cd sub"),
        {"text": "moved"},
        bash_call("cd deeper && pwd > where.txt"),
        {"expect": "Exit code: 0", "text": "done"},
    ]})  # fmt: skip
    first = coterie("run", "-p", "--permission-mode", "bypassPermissions", "--scenario",
                    str(scenario), "go", cwd=workspace, home=cli_home)  # fmt: skip
    assert first.returncode == 0, first.stderr
    again = coterie("resume", only_run(workspace), "on", "-p", cwd=workspace, home=cli_home)
    assert again.returncode == 0, again.stderr
    assert (workspace / "sub" / "deeper" / "where.txt").read_text().strip() == str(
        workspace.resolve() / "sub" / "deeper"
    )


__all__ = ["cli_home"]  # a fixture, used above
