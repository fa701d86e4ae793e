"""The restart state machine on its own: events in, decisions out, no Trio."""

from __future__ import annotations

import pytest

from coterie.supervisors import (
    AutoShutdown,
    Backoff,
    ChildState,
    Decision,
    GiveUp,
    RemoveChild,
    Restart,
    RestartChild,
    ShutDown,
    StartChild,
    StopChildren,
    Strategy,
    SupervisionProtocolError,
    SupervisorMachine,
)
from tests.supervisors.helpers import settle, spec


def started(
    names: str = "a b c", strategy: Strategy = Strategy.ONE_FOR_ONE, **kwargs: object
) -> SupervisorMachine:
    """A machine whose children (permanent unless named ``name:type``) are all running."""
    specs = []
    for word in names.split():
        name, _, restart = word.partition(":")
        specs.append(spec(name, Restart(restart or "permanent")))
    machine = SupervisorMachine(strategy=strategy, **kwargs)  # type: ignore[arg-type]
    settle(machine, machine.start(specs, 0.0), 0.0)
    return machine


def states(machine: SupervisorMachine) -> dict[str, str]:
    return {c.name: str(c.state) for c in machine.children()}


def restarted(*names: str, attempt: int = 1, delay: float = 0.0) -> list[Decision]:
    """RestartChild for each name, then StartChild for each (the zero-delay shape)."""
    return [
        *(RestartChild(n, attempt, delay) for n in names),
        *(StartChild(n, attempt) for n in names),
    ]


# -- starting -----------------------------------------------------------------------


def test_initial_children_start_in_order_one_at_a_time() -> None:
    """A start can fail, so the next one is decided only once the previous has settled."""
    machine = SupervisorMachine()
    assert machine.start([spec("a"), spec("b")], 0.0) == [StartChild("a", 0)]
    assert states(machine) == {"a": "starting", "b": "starting"}
    assert machine.child_started("a", 0.0) == [StartChild("b", 0)]
    assert machine.child_started("b", 0.0) == []
    assert states(machine) == {"a": "running", "b": "running"}


def test_duplicate_names_are_refused() -> None:
    machine = SupervisorMachine()
    with pytest.raises(ValueError, match="duplicate"):
        machine.start([spec("a"), spec("a")], 0.0)


def test_add_child_refuses_a_name_in_use() -> None:
    machine = started("a")
    with pytest.raises(ValueError, match="duplicate"):
        machine.add_child(spec("a"), 1.0)


def test_significant_child_needs_auto_shutdown() -> None:
    machine = SupervisorMachine()
    with pytest.raises(ValueError, match="auto_shutdown"):
        machine.start([spec("a", Restart.TRANSIENT, significant=True)], 0.0)


# -- restart types ------------------------------------------------------------------


def test_permanent_child_is_restarted_after_a_normal_exit() -> None:
    machine = started("a")
    assert settle(machine, machine.child_exited("a", 1.0), 1.0) == restarted("a")


def test_transient_child_keeps_its_spec_after_a_normal_exit() -> None:
    machine = started("a:transient b")
    assert machine.child_exited("a", 1.0) == []
    assert states(machine) == {"a": "stopped", "b": "running"}


def test_transient_child_is_restarted_after_a_crash() -> None:
    machine = started("a:transient")
    assert settle(machine, machine.child_crashed("a", "E", 1.0), 1.0) == restarted("a")


@pytest.mark.parametrize("crashed", [False, True])
def test_temporary_child_isnever_restarted(crashed: bool) -> None:
    machine = started("a:temporary")
    ended = machine.child_crashed("a", "E", 1.0) if crashed else machine.child_exited("a", 1.0)
    assert ended == [RemoveChild("a")]


def test_a_crash_is_remembered_as_the_last_reason() -> None:
    machine = started("a")
    settle(machine, machine.child_crashed("a", "ValueError: boom", 1.0), 1.0)
    (info,) = machine.children()
    assert (info.state, info.restarts, info.last_reason) == (
        ChildState.RUNNING,
        1,
        "ValueError: boom",
    )


# -- strategies ---------------------------------------------------------------------


def test_one_for_all_stops_the_others_in_reverse_then_restarts_all_in_order() -> None:
    machine = started("a b c", Strategy.ONE_FOR_ALL)
    assert machine.child_crashed("b", "E", 1.0) == [StopChildren(("c", "a"))]
    assert states(machine) == {"a": "stopping", "b": "crashed", "c": "stopping"}
    assert machine.child_stopped("c", 1.0) == []
    assert settle(machine, machine.child_stopped("a", 1.0), 1.0) == restarted("a", "b", "c")


def test_rest_for_one_restarts_the_failed_child_and_those_started_after_it() -> None:
    machine = started("a b c", Strategy.REST_FOR_ONE)
    assert machine.child_crashed("b", "E", 1.0) == [StopChildren(("c",))]
    assert settle(machine, machine.child_stopped("c", 1.0), 1.0) == restarted("b", "c")
    assert states(machine) == dict.fromkeys("abc", "running")


def test_temporary_sibling_stopped_by_a_group_restart_is_removed() -> None:
    machine = started("a b c:temporary", Strategy.ONE_FOR_ALL)
    machine.child_crashed("a", "E", 1.0)
    machine.child_stopped("c", 1.0)
    decisions = settle(machine, machine.child_stopped("b", 1.0), 1.0)
    assert decisions == [
        RestartChild("a", 1, 0.0),
        RestartChild("b", 1, 0.0),
        RemoveChild("c"),
        StartChild("a", 1),
        StartChild("b", 1),
    ]


def test_abandoned_child_counts_as_stopped() -> None:
    machine = started("a b", Strategy.ONE_FOR_ALL)
    machine.child_crashed("a", "E", 1.0)
    assert settle(machine, machine.child_abandoned("b", 6.0), 6.0) == restarted("a", "b")


def test_exit_of_a_child_being_stopped_confirms_the_stop() -> None:
    machine = started("a b", Strategy.ONE_FOR_ALL)
    machine.child_crashed("a", "E", 1.0)
    assert settle(machine, machine.child_crashed("b", "late", 1.0), 1.0) == restarted("a", "b")


def test_other_events_during_a_plan_are_a_driver_bug() -> None:
    machine = started("a b c", Strategy.REST_FOR_ONE)
    machine.child_crashed("b", "E", 1.0)
    with pytest.raises(SupervisionProtocolError, match="one plan at a time"):
        machine.child_crashed("a", "E", 1.0)


def test_stopped_report_for_a_child_not_being_stopped_is_a_driver_bug() -> None:
    machine = started("a")
    with pytest.raises(SupervisionProtocolError):
        machine.child_stopped("a", 1.0)


# -- intensity ----------------------------------------------------------------------


def test_more_than_max_restarts_in_the_period_gives_up_after_stopping_all() -> None:
    machine = started("a b c", max_restarts=2, period=10.0)
    for t in (1.0, 2.0):
        settle(machine, machine.child_crashed("b", "E", t), t)
    assert machine.child_crashed("b", "E", 3.0) == [StopChildren(("c", "a"))]
    machine.child_stopped("c", 3.0)
    (give_up,) = machine.child_stopped("a", 3.0)
    assert isinstance(give_up, GiveUp)
    assert give_up.child == "b"
    assert "more than 2 restarts within 10.0 s" in give_up.reason
    assert machine.finished
    assert states(machine) == {"a": "stopped", "b": "crashed", "c": "stopped"}


def test_restarts_older_than_the_period_do_not_count() -> None:
    machine = started("a", max_restarts=1, period=10.0)
    settle(machine, machine.child_crashed("a", "E", 0.0), 0.0)
    assert settle(machine, machine.child_crashed("a", "E", 10.5), 10.5) == restarted("a")


def test_a_restart_exactly_one_period_ago_still_counts() -> None:
    machine = started("a", max_restarts=1, period=10.0)
    settle(machine, machine.child_crashed("a", "E", 0.0), 0.0)
    (give_up,) = machine.child_crashed("a", "E", 10.0)
    assert isinstance(give_up, GiveUp)


def test_zero_max_restarts_gives_up_on_the_first_restart() -> None:
    machine = started("a", max_restarts=0)
    assert [type(d) for d in machine.child_exited("a", 1.0)] == [GiveUp]


def test_exits_that_restart_nothing_do_not_count() -> None:
    machine = started("a:temporary b:transient c", max_restarts=0)
    machine.child_crashed("a", "E", 1.0)
    machine.child_exited("b", 1.0)
    assert not machine.finished


def test_a_group_restart_counts_once() -> None:
    machine = started("a b c", Strategy.ONE_FOR_ALL, max_restarts=1)
    assert settle(machine, machine.child_crashed("a", "E", 1.0), 1.0)[-1] == StartChild("c", 1)
    assert not machine.finished


# -- backoff ------------------------------------------------------------------------


def test_backoff_delays_the_restart_until_a_tick_at_the_due_time() -> None:
    machine = started("a", backoff=Backoff(initial=1.0, factor=2.0, max=60.0), max_restarts=9)
    assert machine.child_crashed("a", "E", 10.0) == [RestartChild("a", 1, 1.0)]
    assert states(machine) == {"a": "restarting"}
    assert machine.next_deadline() == 11.0
    assert machine.tick(10.5) == []
    assert machine.tick(11.0) == [StartChild("a", 1)]
    assert machine.next_deadline() is None


def test_backoff_grows_with_consecutive_restarts_and_resets_after_the_period() -> None:
    backoff = Backoff(initial=1.0, factor=2.0, max=60.0)
    machine = started("a", backoff=backoff, max_restarts=99, period=100.0)
    delays = []
    now = 0.0
    for _ in range(4):
        (decision,) = machine.child_crashed("a", "E", now)
        assert isinstance(decision, RestartChild)
        delays.append(decision.delay)
        now += decision.delay
        settle(machine, machine.tick(now), now)
    assert delays == [1.0, 2.0, 4.0, 8.0]
    assert machine.child_crashed("a", "E", now + 1000.0) == [RestartChild("a", 1, 1.0)]


def test_group_restart_waits_for_the_failed_childs_delay() -> None:
    machine = started("a b", Strategy.ONE_FOR_ALL, backoff=Backoff(initial=2.0))
    machine.child_crashed("b", "E", 0.0)
    assert machine.child_stopped("a", 0.5) == [RestartChild("a", 1, 2.0), RestartChild("b", 1, 2.0)]
    assert settle(machine, machine.tick(2.5), 2.5) == [StartChild("a", 1), StartChild("b", 1)]


# -- shutdown, termination, auto_shutdown -------------------------------------------


def test_shutdown_stops_children_in_reverse_start_order() -> None:
    machine = started("a b c")
    assert machine.shutdown(1.0) == [StopChildren(("c", "b", "a"))]
    decisions = settle(machine, [], 1.0)
    for name in "cb":
        decisions += machine.child_stopped(name, 1.0)
    assert machine.child_stopped("a", 1.0) == [ShutDown("stop requested")]
    assert machine.finished


def test_shutdown_drops_pending_restarts() -> None:
    machine = started("a b", backoff=Backoff(initial=5.0))
    machine.child_crashed("a", "E", 0.0)
    assert machine.shutdown(1.0) == [StopChildren(("b",))]
    assert machine.child_stopped("b", 1.0) == [ShutDown("stop requested")]
    assert machine.next_deadline() is None


def test_shutdown_replaces_a_plan_in_flight() -> None:
    machine = started("a b c", Strategy.ONE_FOR_ALL)
    machine.child_crashed("b", "E", 1.0)
    machine.child_stopped("c", 1.0)
    assert machine.shutdown(1.0) == [StopChildren(("a",))]
    assert machine.child_stopped("a", 1.0) == [ShutDown("stop requested")]


def test_events_after_the_end_are_a_driver_bug() -> None:
    machine = SupervisorMachine()
    assert machine.shutdown(0.0) == [ShutDown("stop requested")]
    assert machine.shutdown(1.0) == []
    with pytest.raises(SupervisionProtocolError, match="finished"):
        machine.add_child(spec("a"), 1.0)


def test_terminate_child_stops_it_without_restart_and_keeps_its_spec() -> None:
    machine = started("a b", max_restarts=0)
    assert machine.terminate_child("a", 1.0) == [StopChildren(("a",))]
    assert machine.child_stopped("a", 1.0) == []
    assert states(machine) == {"a": "stopped", "b": "running"}
    assert machine.terminate_child("a", 2.0) == []  # again: fine, nothing to do


def test_terminate_child_of_a_temporary_child_forgets_it() -> None:
    machine = started("a:temporary b")
    machine.terminate_child("a", 1.0)
    assert machine.child_stopped("a", 1.0) == [RemoveChild("a")]
    assert states(machine) == {"b": "running"}


def test_terminate_child_of_a_restarting_child_cancels_its_restart() -> None:
    machine = started("a", backoff=Backoff(initial=5.0))
    machine.child_crashed("a", "E", 0.0)
    assert machine.terminate_child("a", 1.0) == []
    assert states(machine) == {"a": "stopped"}
    assert machine.tick(10.0) == []
    assert machine.next_deadline() is None


def test_terminate_unknown_child_raises_lookup_error() -> None:
    with pytest.raises(LookupError):
        started("a").terminate_child("nope", 1.0)


def test_dynamic_child_starts_last_in_start_order() -> None:
    machine = started("a b", Strategy.REST_FOR_ONE)
    settle(machine, machine.add_child(spec("z"), 1.0), 1.0)
    assert machine.child_crashed("b", "E", 2.0) == [StopChildren(("z",))]


def _significant(machine_mode: AutoShutdown) -> SupervisorMachine:
    machine = SupervisorMachine(auto_shutdown=machine_mode)
    specs = [
        spec("a"),
        spec("s1", Restart.TRANSIENT, significant=True),
        spec("s2", Restart.TEMPORARY, significant=True),
    ]
    settle(machine, machine.start(specs, 0.0), 0.0)
    return machine


def test_any_significant_shuts_down_when_one_significant_child_ends() -> None:
    machine = _significant(AutoShutdown.ANY_SIGNIFICANT)
    assert machine.child_exited("s1", 1.0) == [StopChildren(("s2", "a"))]


def test_all_significant_shuts_down_when_the_last_significant_child_ends() -> None:
    machine = _significant(AutoShutdown.ALL_SIGNIFICANT)
    assert machine.child_exited("s1", 1.0) == []
    assert machine.child_crashed("s2", "E", 2.0) == [RemoveChild("s2"), StopChildren(("a",))]
    (shutdown,) = machine.child_stopped("a", 2.0)
    assert isinstance(shutdown, ShutDown)
    assert "auto_shutdown" in shutdown.reason


def test_a_restarted_significant_child_does_not_shut_down() -> None:
    machine = _significant(AutoShutdown.ANY_SIGNIFICANT)
    assert settle(machine, machine.child_crashed("s1", "E", 1.0), 1.0) == restarted("s1")
