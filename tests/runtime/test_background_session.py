"""Background commands in an embedding program's session: TaskStop (and KillShell,
BashOutput) as the model calls them, the host's ``stop_task``, and the session's end,
each leaving no process of the command. Real processes, bounded waits."""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any

import pytest
import trio

from coterie.processes import group_alive
from coterie.session import open_agent

if TYPE_CHECKING:
    from pathlib import Path


TASK = "bfixed001"
LONG = {
    "tool_uses": [
        {
            "name": "Bash",
            "input": {"command": "sleep 30; echo late", "run_in_background": True},
        }
    ]
}


def call(name: str, **input: Any) -> dict[str, Any]:
    return {"tool_uses": [{"name": name, "input": input}]}


def scenario(tmp_path: Path, lead: list[dict[str, Any]]) -> str:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"name": "background", "tracks": {"lead": lead}}))
    return str(path)


def groups(run_dir: Path) -> list[int]:
    return [int(p.name.partition("-")[0]) for p in (run_dir / "procgroups").glob("*-*")]


@pytest.fixture
def fixed_id(monkeypatch: pytest.MonkeyPatch) -> str:
    """The background task's id, known to the scenario in advance."""
    monkeypatch.setattr("coterie.runtime.background.new_task_id", lambda: TASK)
    return TASK


async def test_task_stop_kills_the_command_and_every_process_of_it(
    tmp_path: Path, fixed_id: str
) -> None:
    lead = [
        LONG,
        call("BashOutput", bash_id=fixed_id),
        {"expect": "(no new output)", **call("TaskStop", task_id=fixed_id)},
        {"expect": "Stopped background task", **call("KillShell", shell_id=fixed_id)},
        {"expect": "No background task is running", "text": "stopped"},
    ]
    workdir = tmp_path / "ws"
    workdir.mkdir()
    async with open_agent(
        workdir, scenario=scenario(tmp_path, lead), permission_mode="bypassPermissions"
    ) as session:
        seen: list[int] = []

        def remember(event: Any) -> None:
            if event.type == "background.started":
                seen.extend(groups(session.run_dir))

        with session.events.listen(remember), trio.fail_after(60):
            result = await session.query("go")
        assert result.result == "stopped"
        assert len(seen) == 1
        assert not group_alive(seen[0])
        assert groups(session.run_dir) == []


async def test_stop_task_from_the_host_stops_a_background_command(tmp_path: Path) -> None:
    workdir = tmp_path / "ws"
    workdir.mkdir()
    lead: list[dict[str, Any]] = [LONG, {"text": "it runs"}]
    async with open_agent(
        workdir, scenario=scenario(tmp_path, lead), permission_mode="bypassPermissions"
    ) as session:
        with trio.fail_after(60):
            await session.query("go")
        [task_id] = list(session.tasks)
        [pgid] = groups(session.run_dir)
        assert await session.stop_task(task_id)
        assert not group_alive(pgid)
        assert list(session.tasks) == []
        assert not await session.stop_task(task_id)


async def test_the_session_s_end_ends_its_background_commands(tmp_path: Path) -> None:
    workdir = tmp_path / "ws"
    workdir.mkdir()
    lead: list[dict[str, Any]] = [LONG, {"text": "it runs"}]
    with trio.fail_after(20):  # the command's own end (30 s) comes too late
        async with open_agent(
            workdir, scenario=scenario(tmp_path, lead), permission_mode="bypassPermissions"
        ) as session:
            await session.query("go")
            [pgid] = groups(session.run_dir)
            assert group_alive(pgid)
    assert not group_alive(pgid)


async def test_a_denied_background_command_never_runs(tmp_path: Path) -> None:
    """Bash's permission checks apply to a background command as to any other."""
    workdir = tmp_path / "ws"
    workdir.mkdir()
    touch = {"command": "touch made.txt", "run_in_background": True}
    lead = [call("Bash", **touch), {"expect": "denied", "text": "refused"}]
    rules = {"permissions": {"deny": ["Bash(touch *)"]}}
    async with open_agent(
        workdir,
        scenario=scenario(tmp_path, lead),
        permission_mode="bypassPermissions",
        settings=json.dumps(rules),
    ) as session:
        with trio.fail_after(60):
            result = await session.query("go")
        assert result.result == "refused"
        assert not (session.run_dir / "background").exists() or not list(
            (session.run_dir / "background").glob("*.json")
        )
    assert not (workdir / "made.txt").exists()


async def test_the_model_reads_the_output_file_with_read(tmp_path: Path, fixed_id: str) -> None:
    """The output file is under the run directory, which Read admits for this."""
    from coterie.runs import runs_root

    workdir = tmp_path / "ws"
    workdir.mkdir()
    run_id = str(uuid.uuid4())
    output = runs_root(workdir) / run_id / "background" / f"{fixed_id}.output"
    greet = {"command": "echo hello-from-bg", "run_in_background": True, "description": "greet"}
    lead = [
        call("Bash", **greet),
        {"expect": str(output), "text": "started"},
        call("Read", file_path=str(output)),
        {"expect": "hello-from-bg", "text": "read it"},
    ]
    async with open_agent(
        workdir,
        scenario=scenario(tmp_path, lead),
        permission_mode="default",
        run_id=run_id,
    ) as session:
        with trio.fail_after(60):
            assert (await session.query("go")).result == "started"
            shells: Any = getattr(session, "background", None)
            while shells is not None and shells.running():
                await trio.sleep(0.05)
            assert (await session.query("read it")).result == "read it"
