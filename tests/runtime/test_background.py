"""The run's owner of background commands (:mod:`coterie.runtime.background`): each
command recorded before it runs, its output in a file, its whole group ended by
TaskStop or by the run's end, its owner told how it ended (or that a kill -9 lost it).
Real processes: the clock is real, every wait bounded."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

import pytest
import trio

from coterie.errors import CoterieError
from coterie.processes import group_alive
from coterie.runtime.background import BackgroundShells
from coterie.runtime.bgrecords import TaskRecord, load_records

if TYPE_CHECKING:
    from pathlib import Path


def shells(tmp_path: Path) -> BackgroundShells:
    return BackgroundShells(tmp_path / "background", tmp_path / "procgroups")


async def start(owner: BackgroundShells, command: str, tmp_path: Path, **kw: object) -> str:
    started = await owner.start(
        agent="lead",
        command=command,
        argv=["bash", "-c", command],
        cwd=tmp_path,
        env=dict(os.environ),
        description=command,
        **kw,  # type: ignore[arg-type]
    )
    return started.task_id


def pgid_of(tmp_path: Path) -> int:
    [record] = list((tmp_path / "procgroups").iterdir())
    return int(record.name.partition("-")[0])


async def gone(pgid: int) -> bool:
    with trio.move_on_after(10):
        while group_alive(pgid):
            await trio.sleep(0.02)
        return True
    return False


async def test_a_command_runs_recorded_and_its_output_goes_to_its_file(tmp_path: Path) -> None:
    async with shells(tmp_path).open() as owner:
        task = await start(owner, "echo one; sleep 0.2; echo two", tmp_path)
        record = json.loads((tmp_path / "background" / f"{task}.json").read_text())
        assert record["status"] == "running"
        assert list((tmp_path / "procgroups").iterdir())  # its group, recorded
        with trio.fail_after(10):
            notice = await owner.next_wakeup("lead")
    assert notice is not None
    assert f"<task-id>{task}</task-id>" in notice
    assert "<status>completed</status>" in notice
    output = (tmp_path / "background" / f"{task}.output").read_text()
    assert output.startswith("one\ntwo\n")
    assert "[exit code 0]" in output
    assert not list((tmp_path / "procgroups").iterdir())


async def test_a_failing_command_is_told_as_failed_with_its_code(tmp_path: Path) -> None:
    async with shells(tmp_path).open() as owner:
        await start(owner, "exit 3", tmp_path)
        with trio.fail_after(10):
            notice = await owner.next_wakeup("lead")
    assert notice is not None
    assert "<status>failed</status>" in notice
    assert "exit code 3" in notice


async def test_stop_ends_the_whole_group_and_tells_no_one(tmp_path: Path) -> None:
    async with shells(tmp_path).open() as owner:
        task = await start(owner, "sleep 30 & sleep 30; echo done", tmp_path)
        pgid = pgid_of(tmp_path)
        stopped = await owner.stop(task)
        assert stopped is not None
        assert stopped.command.startswith("sleep 30")
        assert await gone(pgid)
        assert await owner.stop(task) is None  # no longer running
        assert owner.take_notices("lead") == []  # the agent stopped it itself
        assert await owner.next_wakeup("lead") is None
    [record] = load_records(tmp_path / "background")
    assert record.status == "stopped"


async def test_the_run_s_end_ends_every_command(tmp_path: Path) -> None:
    with trio.fail_after(15):
        await _three_then_end(tmp_path)
    pgids = [int(p.name.partition("-")[0]) for p in (tmp_path / "procgroups").iterdir()]
    assert pgids == []
    records = load_records(tmp_path / "background")
    assert {r.status for r in records} == {"stopped"}
    assert not any(r.notified for r in records)  # told when the run goes on


async def _three_then_end(tmp_path: Path) -> None:
    async with shells(tmp_path).open() as owner:
        for _ in range(3):
            await start(owner, "sleep 30", tmp_path)
        pgids = [int(p.name.partition("-")[0]) for p in (tmp_path / "procgroups").iterdir()]
        assert len(pgids) == 3
    for pgid in pgids:
        assert not group_alive(pgid)


async def test_a_cancelled_run_ends_its_commands(tmp_path: Path) -> None:
    with trio.fail_after(15), trio.CancelScope() as scope:
        async with shells(tmp_path).open() as owner:
            await start(owner, "sleep 30", tmp_path)
            pgid = pgid_of(tmp_path)
            scope.cancel()
            await trio.sleep_forever()
    assert not group_alive(pgid)


async def test_a_task_a_kill_9_cut_short_is_told_as_lost(tmp_path: Path) -> None:
    directory = tmp_path / "background"
    directory.mkdir()
    lost = TaskRecord("blost0001", "alice", "bash", "make", "build", str(directory / "x.output"))
    lost.save(directory, sync=False)
    async with shells(tmp_path).open() as owner:
        assert owner.take_notices("lead") == []
        [notice] = owner.take_notices("alice")
        assert owner.take_notices("alice") == []  # once
    assert "blost0001" in notice
    assert "lost" in notice
    [record] = load_records(directory)
    assert record.status == "failed"
    assert record.notified


async def test_read_new_gives_only_what_came_since_the_last_read(tmp_path: Path) -> None:
    async with shells(tmp_path).open() as owner:
        task = await start(owner, "echo one; sleep 0.3; echo two", tmp_path)
        with trio.fail_after(10):
            while "one" not in (owner.read_new(task) or ""):
                await trio.sleep(0.02)
            while "two" not in (text := owner.read_new(task) or ""):
                await trio.sleep(0.02)
        assert "one" not in text
        assert owner.read_new("bnothere1") is None


async def test_a_monitor_tells_each_line_then_its_end(tmp_path: Path) -> None:
    async with shells(tmp_path).open() as owner:
        task = await start(owner, "echo first; echo; echo second", tmp_path, monitor_ms=10_000)
        told: list[str] = []
        with trio.fail_after(10):
            while (notice := await owner.next_wakeup("lead")) is not None:
                told.append(notice)
    text = "\n".join(told)
    assert "<event>first</event>" in text
    assert "<event>second</event>" in text
    assert text.count("<event>") == 2  # the empty line is no event
    assert "command exited" in text
    assert "first\n\nsecond\n" in (tmp_path / "background" / f"{task}.output").read_text()


async def test_a_monitor_past_its_time_is_ended_and_told(tmp_path: Path) -> None:
    async with shells(tmp_path).open() as owner:
        await start(owner, "sleep 30", tmp_path, monitor_ms=300)
        pgid = pgid_of(tmp_path)
        with trio.fail_after(10):
            notice = await owner.next_wakeup("lead")
        assert notice is not None
        assert "expired" in notice
        assert not group_alive(pgid)


async def test_nothing_starts_once_the_run_is_ending(tmp_path: Path) -> None:
    owner = shells(tmp_path)
    async with owner.open():
        pass
    with pytest.raises(CoterieError, match="ending"):
        await start(owner, "true", tmp_path)
