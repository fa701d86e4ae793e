"""``AgentSession.interrupt``: the user's Ctrl-C stops the lead's turn, honestly."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import trio

from coterie.runs import read_state
from coterie.session import open_agent

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.agent import RunResult
    from coterie.events import Event
    from coterie.session import AgentSession

SLEEP = {"name": "Bash", "input": {"command": "sleep 300"}, "id": "toolu_sleep"}


def scenario(path: Path, lead: list[dict[str, object]]) -> Path:
    path.write_text(json.dumps({"name": "interrupt", "tracks": {"lead": lead}}))
    return path


async def interrupted_turn(session: AgentSession, prompt: str) -> RunResult:
    """*prompt*'s turn, interrupted as soon as its tool starts."""
    started = trio.Event()

    def seen(event: Event) -> None:
        if event.type == "agent.tool_call":
            started.set()

    result: list[RunResult] = []
    with session.events.listen(seen):
        async with trio.open_nursery() as nursery:

            async def ask() -> None:
                result.append(await session.query(prompt))

            nursery.start_soon(ask)
            await started.wait()
            assert await session.interrupt()
    return result[0]


async def test_an_interrupted_turn_ends_and_the_conversation_goes_on(tmp_path: Path) -> None:
    workdir = tmp_path / "ws"
    workdir.mkdir()
    scen = scenario(
        tmp_path / "s.json",
        [
            {"tool_uses": [SLEEP]},
            {"text": "Going on.", "expect": "[Request interrupted by user for tool use]"},
        ],
    )
    options = {"scenario": str(scen), "permission_mode": "bypassPermissions"}
    async with open_agent(workdir, **options) as session:
        with trio.fail_after(60):
            first = await interrupted_turn(session, "sleep")
        assert first.subtype == "error_interrupted"
        assert first.is_error
        assert first.result == "[Request interrupted by user for tool use]"
        # The request is answered: nothing for a resume to work on again, and the
        # run did not fail (a conversation goes on from an interruption).
        assert read_state(session.run_dir)["state"] == "completed"
        assert await session.resume() is None
        assert not await session.interrupt()  # none in flight
        second = await session.query("and now?")
        assert second.result == "Going on."
        run_dir = session.run_dir
    history = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    types = [event["type"] for event in history]
    assert "agent.interrupted" in types
    # The model was told the tool was interrupted, in the same conversation.
    transcript = (run_dir / "transcripts" / "lead.log").read_bytes()
    assert b"this tool call was interrupted: the user interrupted the turn" in transcript
    async with open_agent(workdir, resume=run_dir.name) as again:
        assert await again.resume() is None


async def test_a_late_interrupt_is_dropped(tmp_path: Path) -> None:
    workdir = tmp_path / "ws"
    workdir.mkdir()
    scen = scenario(tmp_path / "s.json", [{"text": "One."}, {"text": "Two."}])
    async with open_agent(workdir, scenario=str(scen)) as session:
        first = await session.query("one")
        # An interrupt that arrives after its request was answered changes nothing.
        await session._user.send("lead", "interrupt", {"request": "gone"})
        second = await session.query("two")
    assert (first.result, second.result) == ("One.", "Two.")
