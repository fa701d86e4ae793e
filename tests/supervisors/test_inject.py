"""Faults injected into running children: ``Supervisor.inject``, ``find`` and ``walk``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st

from coterie.errors import InjectedCrash
from coterie.supervisors import (
    ChildNotRunning,
    ChildSpec,
    ChildState,
    Fault,
    NoSuchChild,
    Restart,
    Supervisor,
    SupervisorGaveUp,
    isolated,
)
from coterie.supervisors._faults import Injection, end_of

if TYPE_CHECKING:
    from conftest import Puppets, Trail

    from coterie.events import EventLog


async def test_a_crash_is_a_crash_with_the_reason_then_a_restart(
    puppets: Puppets, events: EventLog, trail: Trail, autojump_clock: trio.testing.MockClock
) -> None:
    sup = Supervisor("sup", [puppets.spec("a"), puppets.spec("b")], events=events)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        skip = len(events.history)
        await sup.inject("a", "crash", "pulled the plug")
        await trio.testing.wait_all_tasks_blocked()
        assert trail(skip) == ["actor.crashed a", "actor.restarted a", "actor.started a"]
        crashed = events.of_type("actor.crashed")[-1]
        assert crashed.data["reason"] == "InjectedCrash: pulled the plug"
        assert puppets.log[-2:] == [("stop", "a"), ("start", "a")]
        assert [c.restarts for c in sup.which_children()] == [1, 0]
        await sup.stop()


@pytest.mark.parametrize(
    ("restart", "restarted"),
    [(Restart.PERMANENT, True), (Restart.TRANSIENT, False), (Restart.TEMPORARY, False)],
)
async def test_a_stop_is_a_normal_exit_restarted_as_its_restart_type_says(
    puppets: Puppets, events: EventLog, trail: Trail, restart: Restart, restarted: bool
) -> None:
    sup = Supervisor("sup", [puppets.spec("a", restart), puppets.spec("b")], events=events)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        skip = len(events.history)
        await sup.inject("a", Fault.STOP)
        await trio.testing.wait_all_tasks_blocked()
        expected = ["actor.exited a"]
        if restarted:
            expected += ["actor.restarted a", "actor.started a"]
        assert trail(skip) == expected
        assert "reason" not in events.of_type("actor.exited")[-1].data
        await sup.stop()


async def test_crashes_count_towards_the_restart_intensity(
    puppets: Puppets, events: EventLog, autojump_clock: trio.testing.MockClock
) -> None:
    sup = Supervisor("sup", [puppets.spec("a")], max_restarts=1, period=60, events=events)
    gave_up = False
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            await sup.inject("a", "crash")
            await trio.testing.wait_all_tasks_blocked()
            await sup.inject("a", "crash")
            await trio.sleep_forever()
    except* SupervisorGaveUp:
        gave_up = True
    assert gave_up
    assert [e.type for e in events.of_type("supervisor.gave_up")] == ["supervisor.gave_up"]


async def test_refusals_name_the_problem(puppets: Puppets, events: EventLog) -> None:
    sup = Supervisor("sup", [puppets.spec("a", Restart.TRANSIENT)], events=events)
    with pytest.raises(ChildNotRunning, match="not running"):
        await sup.inject("a", "crash")
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        with pytest.raises(NoSuchChild):
            await sup.inject("zed", "crash")
        with pytest.raises(ValueError, match="kill"):
            await sup.inject("a", "kill")
        await sup.inject("a", "stop")  # transient: kept, not running
        await trio.testing.wait_all_tasks_blocked()
        with pytest.raises(ChildNotRunning, match="stopped"):
            await sup.inject("a", "stop")
        await sup.stop()


async def test_the_fault_waits_for_a_shielded_clean_up(
    events: EventLog, autojump_clock: trio.testing.MockClock
) -> None:
    cleaned: list[float] = []

    async def careful() -> None:
        try:
            await trio.sleep_forever()
        finally:
            with trio.CancelScope(shield=True):
                await trio.sleep(2)
                cleaned.append(trio.current_time())

    sup = Supervisor("sup", [ChildSpec("a", careful, restart=Restart.TEMPORARY)], events=events)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        start = trio.current_time()
        await sup.inject("a", "crash", "late")
        assert cleaned
        assert cleaned[0] - start == pytest.approx(2)
        await trio.testing.wait_all_tasks_blocked()
        assert events.of_type("actor.crashed")[-1].data["reason"] == "InjectedCrash: late"
        await sup.stop()


async def test_find_reaches_children_of_nested_and_isolated_supervisors(
    puppets: Puppets, events: EventLog, trail: Trail, autojump_clock: trio.testing.MockClock
) -> None:
    inner = Supervisor("inner", [puppets.spec("lead")], events=events)
    alice = isolated(puppets.spec("alice", Restart.TRANSIENT), events=events)
    root = Supervisor("root", [inner.as_child(), alice], events=events)
    async with trio.open_nursery() as nursery:
        await nursery.start(root.run)
        names = [(s.name, c.name) for s, c in root.walk()]
        assert names == [
            ("root", "inner"),
            ("inner", "lead"),
            ("root", "alice-sup"),
            ("alice-sup", "alice"),
        ]
        assert root.find("lead") is inner
        assert root.find("nobody") is None
        owner = root.find("alice")
        assert owner is not None
        assert owner.name == "alice-sup"
        skip = len(events.history)
        await owner.inject("alice", "crash", "bug")
        await trio.testing.wait_all_tasks_blocked()
        assert trail(skip) == [
            "actor.crashed alice",
            "actor.restarted alice",
            "actor.started alice",
        ]
        info = {c.name: c for _s, c in root.walk()}
        assert info["alice"].state is ChildState.RUNNING
        assert info["alice"].restarts == 1
        await root.stop()


async def test_a_crash_of_a_child_supervisor_restarts_its_subtree(
    puppets: Puppets, events: EventLog, trail: Trail, autojump_clock: trio.testing.MockClock
) -> None:
    inner = Supervisor("inner", [puppets.spec("x")], events=events)
    root = Supervisor("root", [inner.as_child()], events=events)
    async with trio.open_nursery() as nursery:
        await nursery.start(root.run)
        skip = len(events.history)
        await root.inject("inner", "crash")
        await trio.testing.wait_all_tasks_blocked()
        assert trail(skip)[-3:] == [
            "actor.restarted inner",
            "actor.started x",
            "actor.started inner",
        ]
        assert "actor.crashed inner" in trail(skip)
        await root.stop()


ERRORS = st.sampled_from(
    [None, RuntimeError("clean-up failed"), KeyboardInterrupt(), ExceptionGroup("g", [OSError()])]
)


@given(fault=st.sampled_from(list(Fault)), raised=ERRORS, reason=st.text(max_size=20))
def test_end_of_a_crash_is_always_the_injected_crash_and_a_stop_normal_unless_it_failed(
    fault: Fault, raised: BaseException | None, reason: str
) -> None:
    end = end_of(Injection(fault, reason), raised)
    if isinstance(raised, KeyboardInterrupt):
        assert end is raised  # never turned into a crash or swallowed
    elif fault is Fault.CRASH:
        assert isinstance(end, InjectedCrash)
        assert str(end) == reason
        assert end.__context__ is raised
    else:
        assert end is raised
