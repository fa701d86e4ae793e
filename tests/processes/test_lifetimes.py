"""The one owner of process lifetimes: every kind of child (a hook's command, an MCP
stdio server and its helpers, a shell command) is recorded before it runs and
its whole group ended when its user is done."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import pytest
import trio

from coterie.hooks.config import Handler
from coterie.hooks.runner import run_handler
from coterie.mcpclient.config import StdioServer
from coterie.mcpclient.stdio import stdio_client
from coterie.processes import group_alive, open_group
from coterie.procgroups import reap_run, records_dir

if TYPE_CHECKING:
    from pathlib import Path

#: A stdio MCP server (the ``mcp`` package's server API) that starts a helper in its
#: own process group, writes the helper's pid, and exits at the end of its input.
SERVER = """
import subprocess
from pathlib import Path
from mcp.server.mcpserver import MCPServer

app = MCPServer("helper")


@app.tool()
def ping() -> str:
    return "pong"


helper = subprocess.Popen(["sleep", "300"])
Path("helper.pid").write_text(str(helper.pid))
app.run()
"""


@pytest.fixture
def records(tmp_path: Path) -> Path:
    """A run's ``procgroups/`` for the test's processes."""
    return records_dir(tmp_path / "run")


def _listed(records: Path) -> list[str]:
    return sorted(p.name for p in records.iterdir()) if records.exists() else []


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return False
    return raw[raw.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


async def test_a_hooks_group_is_recorded_before_it_runs_and_forgotten_after(
    tmp_path: Path, records: Path
) -> None:
    # The hook lists the records: its own group must be there already.
    handler = Handler("command", f"ls {records} > seen; echo $$", timeout=30)
    ran = await run_handler(handler, b"{}", cwd=tmp_path, env=dict(os.environ), records=records)
    assert ran.exit_code == 0, ran
    seen = (tmp_path / "seen").read_text().split()
    assert [name.partition("-")[0] for name in seen] == [ran.stdout.strip()]
    assert _listed(records) == []


async def test_a_hook_whose_group_cannot_be_recorded_runs_nothing(tmp_path: Path) -> None:
    blocker = tmp_path / "run"
    blocker.write_text("a file where the run's directory should be")
    handler = Handler("command", "touch ran", timeout=30)
    ran = await run_handler(
        handler, b"{}", cwd=tmp_path, env=dict(os.environ), records=records_dir(blocker)
    )
    assert ran.exit_code is None
    assert (ran.error or "").startswith("could not start")
    assert not (tmp_path / "ran").exists()


async def test_what_a_hook_leaves_in_the_background_lives_on_recorded_until_the_run_ends(
    tmp_path: Path, records: Path
) -> None:
    """As in Claude Code, a hook's ``server &`` outlives the hook; unlike it, not the
    run: its group stays recorded, and the run's end (:func:`reap_run`) ends it."""
    handler = Handler("command", "sleep 300 >/dev/null 2>&1 & echo $!", timeout=30)
    ran = await run_handler(handler, b"{}", cwd=tmp_path, env=dict(os.environ), records=records)
    assert ran.exit_code == 0, ran
    child = int(ran.stdout)
    assert _alive(child)
    assert len(_listed(records)) == 1
    assert reap_run(tmp_path / "run") == 1
    assert not _alive(child)
    assert _listed(records) == []


async def test_a_hook_past_its_timeout_is_ended_with_what_it_started(
    tmp_path: Path, records: Path
) -> None:
    script = "sleep 300 >/dev/null 2>&1 & echo $! > child; sleep 300"
    handler = Handler("command", script, timeout=3)
    ran = await run_handler(handler, b"{}", cwd=tmp_path, env=dict(os.environ), records=records)
    assert (ran.error or "").startswith("timed out"), ran
    assert not _alive(int((tmp_path / "child").read_text()))
    assert _listed(records) == []


async def test_the_group_is_ended_when_the_block_ends_though_the_leader_lives_on(
    tmp_path: Path, records: Path
) -> None:
    async with open_group(
        ["bash", "-c", "sleep 300 & sleep 300"], cwd=tmp_path, records=records
    ) as proc:
        assert [n.partition("-")[0] for n in _listed(records)] == [str(proc.pid)]
    assert not group_alive(proc.pid)
    assert proc.returncode is not None
    assert _listed(records) == []


async def test_an_mcp_servers_helper_ends_with_the_connection(
    tmp_path: Path, records: Path
) -> None:
    from mcp.client.session import ClientSession

    script = tmp_path / "server.py"
    script.write_text(SERVER)
    config = StdioServer("helper", sys.executable, (str(script),), (("HOME", str(tmp_path)),))
    with (tmp_path / "server.log").open("a") as errlog:
        async with (
            stdio_client(config, cwd=tmp_path, errlog=errlog, records=records) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
            result = await session.call_tool("ping", {})
            assert result.content[0].text == "pong"  # type: ignore[union-attr]
            helper = int((tmp_path / "helper.pid").read_text())
            assert len(_listed(records)) == 1
    assert not _alive(helper)
    assert _listed(records) == []


async def test_a_missing_mcp_server_program_is_said_so(tmp_path: Path, records: Path) -> None:
    config = StdioServer("gone", "no-such-program-here")
    with (tmp_path / "server.log").open("a") as errlog, pytest.raises(FileNotFoundError):
        async with stdio_client(config, cwd=tmp_path, errlog=errlog, records=records):
            pass
    assert _listed(records) == []


async def test_a_cancelled_mcp_connection_ends_the_server(tmp_path: Path, records: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    config = StdioServer("helper", sys.executable, (str(script),), (("HOME", str(tmp_path)),))
    with trio.CancelScope() as scope, (tmp_path / "server.log").open("a") as errlog:
        async with stdio_client(config, cwd=tmp_path, errlog=errlog, records=records):
            with trio.fail_after(30):
                while not (tmp_path / "helper.pid").exists():
                    await trio.sleep(0.02)
            (pgid,) = (int(n.partition("-")[0]) for n in _listed(records))
            scope.cancel()  # as Ctrl-C or the run's stop cancels the server's actor
            await trio.sleep_forever()
    assert scope.cancelled_caught
    assert not group_alive(pgid)
    assert _listed(records) == []


async def test_a_group_that_ignores_sigterm_is_killed_after_the_grace(
    tmp_path: Path, records: Path
) -> None:
    script = "trap '' TERM; echo ready; while :; do sleep 0.05; done"
    with trio.fail_after(30):
        async with open_group(
            ["bash", "-c", script], cwd=tmp_path, records=records, grace=0.3
        ) as proc:
            assert proc.stdout is not None
            assert await proc.stdout.receive_some(6) == b"ready\n"  # the trap is set
    assert not group_alive(proc.pid)
    assert proc.returncode == -9
    assert _listed(records) == []
