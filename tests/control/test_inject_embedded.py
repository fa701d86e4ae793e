"""``coterie.control.inject``, the embedding's and the observer's face, on a run in this process."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
import trio

from coterie import open_team
from coterie.control import FaultRefused, NoSuchActor, RunNotRunning, inject
from coterie.runs import UnknownRun
from tests.control.test_faults_cli import bash
from tests.team.test_team_cli import create

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.events import EventLog


def scenario(tmp_path: Path) -> Path:
    tracks = {
        "lead": [
            {"tool_uses": [create("one", "ana"), create("two", "ben")]},
            {"text": "assigned"},
            *({"text": "both done"} for _ in range(3)),
        ],
        "ana": [bash("sleep 2"), {"text": "did one"}],
        "ben": [bash("true"), {"text": "did two"}],
    }
    path = tmp_path / "team.json"
    path.write_text(json.dumps({"name": "pair", "tracks": tracks}))
    return path


async def until_running_a_tool(events: EventLog, actor: str) -> None:
    while not any(
        e.type == "agent.tool_call" and e.data.get("actor") == actor for e in events.history
    ):
        await trio.sleep(0.02)


async def test_inject_a_crash_into_an_embedded_team_then_it_finishes(tmp_path: Path) -> None:
    work = tmp_path / "ws"
    work.mkdir()
    async with (
        open_team(
            work,
            names=["ana", "ben"],
            scenario=scenario(tmp_path),
            permission_mode="bypassPermissions",
        ) as team,
        trio.open_nursery() as nursery,
    ):
        results: list[str] = []

        async def query() -> None:
            results.append((await team.query("do one and two")).result)

        nursery.start_soon(query)
        with trio.fail_after(30):
            await until_running_a_tool(team.events, "ana")
        with pytest.raises(NoSuchActor) as typo:
            await inject(team.run_dir, "crash", "anna", by="observe")
        assert typo.value.closest == "ana"
        assert "ben" in typo.value.known
        with pytest.raises(FaultRefused, match="carries the control channel"):
            await inject(team.run_dir, "stop", "control", by="observe")
        answer = await inject(team.run_dir, "crash", "ana", reason="button", by="observe")
        assert (answer["applied"], answer["supervisor"]) == (True, "ana-sup")
    assert results == ["both done"]
    types = [(e.type, e.data.get("actor")) for e in team.events.history]
    at = types.index(("fault.injected", "ana"))
    assert ("actor.crashed", "ana") in types[at + 1 :]
    (fault,) = team.events.of_type("fault.injected")
    assert (fault.data["by"], fault.data["reason"]) == ("observe", "button")
    with pytest.raises(RunNotRunning, match="nothing to cancel"):
        await inject(team.run_dir, "cancel", by="observe")
    with pytest.raises(UnknownRun):
        await inject(tmp_path / "nowhere", "cancel", by="observe")
