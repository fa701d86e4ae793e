"""Dynamic children (start_child / terminate_child) and auto_shutdown, under Trio."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import trio
import trio.testing

from coterie.supervisors import AutoShutdown, Restart, Supervisor

if TYPE_CHECKING:
    from conftest import Puppets

    from coterie.events import EventLog
    from coterie.supervisors import Strategy


# -- dynamic children ---------------------------------------------------------------


async def test_start_child_adds_a_running_child_last(
    puppets: Puppets, strategy: Strategy, events: EventLog
) -> None:
    sup = Supervisor("sup", [puppets.spec("a")], strategy=strategy, events=events)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await sup.start_child(puppets.spec("sub", Restart.TEMPORARY))
        assert [(c.name, str(c.state)) for c in sup.which_children()] == [
            ("a", "running"),
            ("sub", "running"),
        ]
        assert events.history[-1].type == "actor.started"
        puppets.clear()
        await sup.stop()
    assert puppets.log == [("stop", "sub"), ("stop", "a")]


async def test_start_child_refuses_a_name_in_use(puppets: Puppets) -> None:
    sup = Supervisor("sup", [puppets.spec("a")])
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        with pytest.raises(ValueError, match="duplicate"):
            await sup.start_child(puppets.spec("a"))
        await sup.stop()


async def test_terminate_child_stops_it_for_good(puppets: Puppets, strategy: Strategy) -> None:
    specs = [puppets.spec("a"), puppets.spec("b"), puppets.spec("c")]
    sup = Supervisor("sup", specs, strategy=strategy, max_restarts=0)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        puppets.clear()
        await sup.terminate_child("b")
        await trio.testing.wait_all_tasks_blocked()
        assert puppets.log == [("stop", "b")]
        assert [(c.name, c.running) for c in sup.which_children()] == [
            ("a", True),
            ("b", False),
            ("c", True),
        ]
        await sup.terminate_child("b")  # again: fine
        with pytest.raises(LookupError):
            await sup.terminate_child("nope")
        await sup.stop()


async def test_dynamic_requests_need_a_running_supervisor(puppets: Puppets) -> None:
    sup = Supervisor("sup", [])
    with pytest.raises(RuntimeError, match="not running"):
        await sup.start_child(puppets.spec("a"))


# -- auto_shutdown ------------------------------------------------------------------


async def test_auto_shutdown_ends_run_when_a_significant_child_ends(
    puppets: Puppets, events: EventLog
) -> None:
    specs = [puppets.spec("a"), puppets.spec("job", Restart.TRANSIENT, significant=True)]
    sup = Supervisor("sup", specs, auto_shutdown=AutoShutdown.ANY_SIGNIFICANT, events=events)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        puppets.exit("job")
    assert puppets.log[-1] == ("stop", "a")
    assert "auto_shutdown" in events.history[-1].data["reason"]
