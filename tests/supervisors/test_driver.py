"""The Trio driver: starting, stopping, giving up, escalating, abandoning, backoff."""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING

import pytest
import trio
import trio.testing

from coterie.errors import BackendLost
from coterie.supervisors import (
    Backoff,
    ChildSpec,
    ChildState,
    Restart,
    Strategy,
    Supervisor,
    SupervisorGaveUp,
)

if TYPE_CHECKING:
    from conftest import Puppets, Trail

    from coterie.events import EventLog


async def always_crash() -> None:
    raise ValueError("boom")


async def stubborn() -> None:
    """Ignores cancellation for 10 s of shielded clean-up, then goes."""
    try:
        await trio.sleep_forever()
    except trio.Cancelled:
        with trio.CancelScope(shield=True):
            await trio.sleep(10)
        raise


def abc(puppets: Puppets) -> list[ChildSpec]:
    return [puppets.spec("a"), puppets.spec("b"), puppets.spec("c")]


# -- starting and stopping ----------------------------------------------------------


async def test_run_reports_started_once_children_run_in_order(
    puppets: Puppets, strategy: Strategy
) -> None:
    sup = Supervisor("sup", abc(puppets), strategy=strategy)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        assert puppets.log == [("start", "a"), ("start", "b"), ("start", "c")]
        assert [str(c.state) for c in sup.which_children()] == ["running"] * 3
        await sup.stop()


async def test_stop_stops_children_in_reverse_start_order_and_run_returns(
    puppets: Puppets, strategy: Strategy, events: EventLog, trail: Trail
) -> None:
    sup = Supervisor("sup", abc(puppets), strategy=strategy, events=events)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        puppets.clear()
        await sup.stop()
    assert puppets.log == [("stop", "c"), ("stop", "b"), ("stop", "a")]
    assert trail(3) == [
        "actor.stopped c",
        "actor.stopped b",
        "actor.stopped a",
        "supervisor.stopped None",
    ]
    assert [str(c.state) for c in sup.which_children()] == ["stopped"] * 3


async def test_outside_cancellation_still_stops_children_in_reverse_order(
    puppets: Puppets, events: EventLog
) -> None:
    sup = Supervisor("sup", abc(puppets), events=events)
    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            puppets.clear()
            scope.cancel()
    assert puppets.log == [("stop", "c"), ("stop", "b"), ("stop", "a")]
    assert events.history[-1].data["reason"] == "cancelled"


async def test_stop_when_not_running_does_nothing(puppets: Puppets) -> None:
    sup = Supervisor("sup", abc(puppets))
    await sup.stop()
    assert sup.which_children() == []


async def test_a_supervisor_runs_once_at_a_time_but_can_run_again(puppets: Puppets) -> None:
    sup = Supervisor("sup", [puppets.spec("a")])
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        with pytest.raises(RuntimeError, match="already running"):
            await sup.run()
        await sup.stop()
        await nursery.start(sup.run)
        await sup.stop()
    assert puppets.log == [("start", "a"), ("stop", "a")] * 2


# -- crashes ------------------------------------------------------------------------


async def test_crash_is_recorded_with_reason_and_traceback(
    puppets: Puppets, events: EventLog
) -> None:
    sup = Supervisor("sup", [puppets.spec("a")], events=events)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        puppets.crash("a")
        await trio.testing.wait_all_tasks_blocked()
        (crash,) = events.of_type("actor.crashed")
        assert crash.data["supervisor"] == "sup"
        assert crash.data["actor"] == "a"
        assert crash.data["reason"] == "RuntimeError: a was told to crash"
        assert "Traceback" in crash.data["traceback"]
        (info,) = sup.which_children()
        assert (info.restarts, info.last_reason) == (1, "RuntimeError: a was told to crash")
        await sup.stop()


async def test_exception_group_raised_by_a_child_is_a_crash(events: EventLog) -> None:
    async def child_with_nursery() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(always_crash)

    sup = Supervisor("sup", [ChildSpec("a", child_with_nursery)], max_restarts=0, events=events)
    with pytest.raises(SupervisorGaveUp):
        await sup.run()
    (crash,) = events.of_type("actor.crashed")
    # A group of one is named by its cause.
    assert crash.data["reason"] == "ValueError: boom"


async def test_keyboard_interrupt_propagates_and_is_not_a_crash(puppets: Puppets) -> None:
    async def interrupted() -> None:
        raise KeyboardInterrupt

    sup = Supervisor("sup", [puppets.spec("a"), ChildSpec("b", interrupted)])
    with pytest.RaisesGroup(KeyboardInterrupt, flatten_subgroups=True, allow_unwrapped=True):
        await sup.run()
    assert puppets.log == [("start", "a"), ("stop", "a")]


async def test_a_backend_that_lost_the_run_stops_it_at_once(events: EventLog) -> None:
    starts = 0

    async def lost() -> None:
        nonlocal starts
        starts += 1
        async with trio.open_nursery() as nursery:  # as an actor's reader task raises it

            async def reader() -> None:
                raise BackendLost("the server no longer holds run r's mailbox 'a'")

            nursery.start_soon(reader)

    sup = Supervisor("sup", [ChildSpec("a", lost)], max_restarts=5, events=events)
    with pytest.RaisesGroup(BackendLost, flatten_subgroups=True, allow_unwrapped=True):
        await sup.run()
    assert starts == 1  # never restarted: no restart brings the data back


async def test_error_raised_while_stopping_is_reported_with_the_stop(events: EventLog) -> None:
    async def messy() -> None:
        try:
            await trio.sleep_forever()
        finally:
            raise OSError("clean-up failed")

    sup = Supervisor("sup", [ChildSpec("a", messy)], events=events)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await sup.stop()
    (stopped,) = events.of_type("actor.stopped")
    assert stopped.data["reason"] == "OSError: clean-up failed"


async def test_errors_from_a_childs_own_nursery_while_stopping_do_not_escape(
    events: EventLog,
) -> None:
    """Our scope takes back its Cancelled; the rest of the group is the child's error."""

    async def fails_on_cancel() -> None:
        try:
            await trio.sleep_forever()
        finally:
            raise OSError("clean-up failed")

    async def family() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(fails_on_cancel)
            await trio.sleep_forever()

    sup = Supervisor("sup", [ChildSpec("a", family)], events=events)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await sup.stop()
    (stopped,) = events.of_type("actor.stopped")
    assert stopped.data["reason"] == "OSError: clean-up failed"


# -- giving up and escalating -------------------------------------------------------


async def test_intensity_exceeded_stops_children_then_raises(
    puppets: Puppets, strategy: Strategy, events: EventLog
) -> None:
    specs = [puppets.spec("a"), ChildSpec("b", always_crash), puppets.spec("c")]
    sup = Supervisor("sup", specs, strategy=strategy, max_restarts=2, events=events)
    with pytest.raises(SupervisorGaveUp, match="'sup' gave up: more than 2 restarts"):
        await sup.run()
    assert puppets.log[-2:] == [("stop", "c"), ("stop", "a")]
    assert len(events.of_type("actor.crashed")) == 3
    (gave_up,) = events.of_type("supervisor.gave_up")
    assert gave_up.data["actor"] == "b"
    assert [str(c.state) for c in sup.which_children()] == ["stopped", "crashed", "stopped"]


async def test_child_supervisor_giving_up_escalates_to_its_parent(
    puppets: Puppets, events: EventLog
) -> None:
    """inner gives up, root restarts it once, inner gives up again, so root gives up."""
    inner = Supervisor("inner", [ChildSpec("w", always_crash)], max_restarts=0, events=events)
    root = Supervisor("root", [inner.as_child(), puppets.spec("z")], max_restarts=1, events=events)
    with pytest.raises(SupervisorGaveUp, match="'root' gave up"):
        await root.run()
    assert [
        (e.type, e.data["supervisor"], e.data["actor"])
        for e in events.history
        if e.type.startswith("supervisor.")
    ] == [
        ("supervisor.gave_up", "inner", "w"),
        ("supervisor.escalated", "root", "inner"),
        ("supervisor.gave_up", "inner", "w"),
        ("supervisor.escalated", "root", "inner"),
        ("supervisor.gave_up", "root", "inner"),
    ]
    assert puppets.log == [("start", "z"), ("stop", "z")]


async def test_parent_restarts_a_child_supervisor_that_gave_up(puppets: Puppets) -> None:
    crashes = 0

    async def crash_once() -> None:
        nonlocal crashes
        crashes += 1
        if crashes == 1:
            raise ValueError("first run fails")
        await trio.sleep_forever()

    inner = Supervisor("inner", [puppets.spec("x"), ChildSpec("w", crash_once)], max_restarts=0)
    root = Supervisor("root", [inner.as_child()])
    async with trio.open_nursery() as nursery:
        await nursery.start(root.run)
        await trio.testing.wait_all_tasks_blocked()
        assert puppets.log == [("start", "x"), ("stop", "x"), ("start", "x")]
        (info,) = root.which_children()
        assert (info.kind, info.restarts, info.state) == ("supervisor", 1, ChildState.RUNNING)
        await root.stop()


async def test_nested_supervisors_stop_depth_first_in_reverse_order(puppets: Puppets) -> None:
    inner = Supervisor("inner", [puppets.spec("x"), puppets.spec("y")])
    root = Supervisor("root", [inner.as_child(), puppets.spec("z")])
    async with trio.open_nursery() as nursery:
        await nursery.start(root.run)
        await trio.testing.wait_all_tasks_blocked()
        puppets.clear()
        await root.stop()
    assert puppets.log == [("stop", "z"), ("stop", "y"), ("stop", "x")]


# -- shutdown timeouts --------------------------------------------------------------


async def test_child_outliving_its_shutdown_timeout_is_abandoned_and_supervision_goes_on(
    autojump_clock: trio.testing.MockClock, puppets: Puppets, events: EventLog, trail: Trail
) -> None:
    specs = [ChildSpec("slow", stubborn, shutdown_timeout=1.0), puppets.spec("b")]
    sup = Supervisor("sup", specs, strategy=Strategy.ONE_FOR_ALL, events=events)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        puppets.crash("b")
        await trio.sleep(0.9)
        assert trail(2) == ["actor.crashed b"]
        assert [str(c.state) for c in sup.which_children()] == ["stopping", "crashed"]
        await trio.sleep(0.2)
        assert trail(2) == [
            "actor.crashed b",
            "actor.abandoned slow",
            "actor.restarted slow",
            "actor.restarted b",
            "actor.started slow",
            "actor.started b",
        ]
        assert [str(c.state) for c in sup.which_children()] == ["running", "running"]
        stopping = trio.current_time()
        await sup.stop()
        # Trio cannot kill a task, but stop() returns at the timeout: the abandoned
        # task finishes its clean-up in the background.
        assert trio.current_time() - stopping == pytest.approx(1.0)


# -- backoff ------------------------------------------------------------------------


async def test_backoff_delays_grow_exponentially(
    autojump_clock: trio.testing.MockClock, events: EventLog
) -> None:
    starts: list[float] = []

    async def flaky() -> None:
        starts.append(trio.current_time())
        if len(starts) <= 4:
            raise ValueError("not yet")
        await trio.sleep_forever()

    sup = Supervisor(
        "sup",
        [ChildSpec("a", flaky)],
        max_restarts=10,
        period=100.0,
        backoff=Backoff(initial=0.5, factor=2.0, max=3.0),
        events=events,
    )
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await trio.sleep(60)
        gaps = [round(b - a, 6) for a, b in itertools.pairwise(starts)]
        assert gaps == [0.5, 1.0, 2.0, 3.0]
        assert [e.data["delay"] for e in events.of_type("actor.restarted")] == gaps
        assert [e.data["attempt"] for e in events.of_type("actor.restarted")] == [1, 2, 3, 4]
        await sup.stop()


async def test_child_waiting_out_its_backoff_shows_as_restarting(
    autojump_clock: trio.testing.MockClock, puppets: Puppets
) -> None:
    sup = Supervisor("sup", [puppets.spec("a")], backoff=Backoff(initial=5.0))
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        puppets.crash("a")
        await trio.sleep(1)
        assert [str(c.state) for c in sup.which_children()] == ["restarting"]
        await trio.sleep(5)
        assert [str(c.state) for c in sup.which_children()] == ["running"]
        await sup.stop()


# -- construction -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_restarts": -1}, "max_restarts"),
        ({"period": 0}, "period"),
        ({"period": math.inf}, "period"),
    ],
)
def test_bad_intensity_is_refused(kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        Supervisor("sup", [], **kwargs)  # type: ignore[arg-type]


def test_as_child_runs_the_supervisor_with_no_shutdown_timeout() -> None:
    spec = Supervisor("inner", []).as_child(Restart.TRANSIENT)
    assert (spec.name, spec.kind, spec.restart, spec.shutdown_timeout) == (
        "inner",
        "supervisor",
        Restart.TRANSIENT,
        math.inf,
    )
