"""The supervision points of issue 10 that are not OTP suite cases of their own."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import trio
import trio.testing

from coterie.supervisors import (
    Backoff,
    ChildSpec,
    DynamicSupervisor,
    Restart,
    Strategy,
    Supervisor,
    SupervisorGaveUp,
    isolated,
)

if TYPE_CHECKING:
    from conftest import Puppets

    from coterie.events import EventLog


async def _crash() -> None:
    raise RuntimeError("boom")


@pytest.mark.parametrize(
    ("restart", "restarted"), [(Restart.PERMANENT, True), (Restart.TRANSIENT, False)]
)
async def test_a_child_supervisor_that_gives_up_exits_with_shutdown(
    restart: Restart, restarted: bool, events: EventLog
) -> None:
    """The parent sees ``shutdown``: a transient child supervisor is not restarted."""
    inner = Supervisor("inner", [ChildSpec("x", _crash)], max_restarts=0, events=events)
    outer = Supervisor("outer", [inner.as_child(restart)], max_restarts=0, events=events)
    async with trio.open_nursery() as nursery:
        if restarted:  # a permanent one is, and that uses up the parent's intensity
            with pytest.raises(SupervisorGaveUp, match="outer"):
                await outer.run()
        else:
            await nursery.start(outer.run)
            await trio.testing.wait_all_tasks_blocked()
            assert [(c.name, c.running) for c in outer.which_children()] == [("inner", False)]
            await outer.stop()
    ended = [e for e in events.history if e.data.get("actor") == "inner"]
    assert "actor.crashed" not in [e.type for e in ended]
    assert [e.type for e in ended if e.data["supervisor"] == "outer"][1:3] == [
        "actor.exited",
        "supervisor.escalated",
    ]


async def test_isolated_still_calls_on_give_up_and_the_parent_carries_on(
    puppets: Puppets,
) -> None:
    reasons: list[str] = []

    async def gave_up(reason: str) -> None:
        reasons.append(reason)

    spec = isolated(ChildSpec("mate", _crash), max_restarts=1, on_give_up=gave_up)
    sup = Supervisor("team", [puppets.spec("lead"), spec], max_restarts=0)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await trio.testing.wait_all_tasks_blocked()
        assert [c.name for c in sup.which_children()] == ["lead"]
        await sup.stop()
    assert len(reasons) == 1
    assert "mate-sup" in reasons[0]


async def test_terminating_a_child_waiting_to_restart_cancels_the_rest_for_one_restarts(
    autojump_clock: trio.testing.MockClock, puppets: Puppets
) -> None:
    specs = [puppets.spec("a"), puppets.spec("b"), puppets.spec("c")]
    sup = Supervisor("sup", specs, strategy=Strategy.REST_FOR_ONE, backoff=Backoff(initial=5.0))
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        puppets.crash("b")
        await trio.sleep(1.0)
        assert [str(c.state) for c in sup.which_children()] == [
            "running",
            "restarting",
            "restarting",
        ]
        await sup.terminate_child("b")
        puppets.clear()
        await trio.sleep(10.0)
        assert puppets.log == []  # neither b nor c started again
        assert [(c.name, c.running) for c in sup.which_children()] == [
            ("a", True),
            ("b", False),
            ("c", False),
        ]
        await sup.stop()


async def test_a_nested_supervisors_start_returns_once_its_subtree_is_up(
    puppets: Puppets, events: EventLog
) -> None:
    inner = Supervisor("inner", [puppets.starting("x"), puppets.starting("y")], events=events)
    outer = Supervisor("outer", [inner.as_child(), puppets.spec("z")], events=events)
    async with trio.open_nursery() as nursery:
        await nursery.start(outer.run)
        assert [e.data["actor"] for e in events.of_type("actor.started")] == [
            "x",
            "y",
            "inner",
            "z",
        ]
        await outer.stop()


async def test_a_dynamic_supervisor_under_a_supervisor_counts_its_childrens_crashes(
    puppets: Puppets,
) -> None:
    mates = DynamicSupervisor("mates", max_restarts=1, period=60, max_children=2)
    team = Supervisor("team", [puppets.spec("lead"), mates.as_child(Restart.TRANSIENT)])
    async with trio.open_nursery() as nursery:
        await nursery.start(team.run)
        await mates.start_child(puppets.spec("alice", Restart.TRANSIENT))
        await mates.start_child(puppets.spec("bob", Restart.TRANSIENT))
        puppets.crash("alice")
        await trio.testing.wait_all_tasks_blocked()
        puppets.crash("bob")  # the second restart within the period: mates gives up
        await trio.testing.wait_all_tasks_blocked()
        assert [(c.name, c.running) for c in team.which_children()] == [
            ("lead", True),
            ("mates", False),
        ]
        await team.stop()
