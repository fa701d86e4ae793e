"""A conversation's ``/goal`` and ``/loop`` through the embedding API: ``query(goal=)``,
``loop``, and ``interrupt`` of a loop."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
import trio

from coterie.errors import CoterieError
from coterie.session import open_agent

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.events import Event


def scenario(path: Path, **tracks: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"name": "goal-loop", "tracks": tracks}))
    return path


def verdict(ok: bool, reason: str) -> dict[str, Any]:
    return {"text": json.dumps({"ok": ok, "reason": reason})}


async def test_a_query_with_a_goal_is_pursued_and_the_next_one_is_not(tmp_path: Path) -> None:
    scen = scenario(
        tmp_path / "s.json",
        lead=[
            {"text": "Half done."},
            {"text": "All done.", "expect": "The goal is not met yet: half"},
            {"text": "Plain.", "expect": "plain"},
        ],
        evaluator=[verdict(False, "half"), verdict(True, "all done")],
    )
    async with open_agent(tmp_path, scenario=str(scen), conversation=True) as session:
        with trio.fail_after(60):
            pursued = await session.query("finish it", goal="it is finished")
            plain = await session.query("plain")
    assert pursued.goal is not None
    assert (pursued.goal["status"], pursued.goal["iterations"]) == ("met", 2)
    assert pursued.result.endswith("Goal met: all done")
    assert (plain.result, plain.goal) == ("Plain.", None)


async def test_a_goal_in_a_run_without_an_evaluator_is_refused(tmp_path: Path) -> None:
    scen = scenario(tmp_path / "s.json", lead=[])
    async with open_agent(tmp_path, scenario=str(scen)) as session:
        assert not session.options.has_evaluator
        with pytest.raises(CoterieError, match="goal evaluator"):
            await session.query("x", goal="y")


async def test_an_interrupt_during_a_loops_wait_ends_it_with_no_further_tick(
    tmp_path: Path,
) -> None:
    scen = scenario(tmp_path / "s.json", lead=[{"text": "Checked."}])
    waiting = trio.Event()

    def seen(event: Event) -> None:
        if event.type == "loop.waiting":
            waiting.set()

    async with open_agent(tmp_path, scenario=str(scen), conversation=True) as session:
        results = []
        with session.events.listen(seen), trio.fail_after(60):
            async with trio.open_nursery() as nursery:

                async def loop() -> None:
                    results.append(await session.loop("1h check the build"))

                nursery.start_soon(loop)
                await waiting.wait()  # an hour before tick 2
                assert await session.interrupt()
        assert not await session.interrupt()  # nothing in flight any more
    (result,) = results
    assert (result.subtype, result.is_error) == ("error_interrupted", True)
    assert result.result.endswith("Loop ended after 1 tick(s): interrupted by the user.")
