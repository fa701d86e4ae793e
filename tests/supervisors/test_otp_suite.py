"""Erlang/OTP's ``lib/stdlib/test/supervisor_SUITE.erl``, ported to coterie's API.

Each test is named after the OTP case it ports; an OTP child spec
``{id, start, restart, shutdown, type}`` is a :class:`ChildSpec`, a pid is a
running child (``which_children()[i].running``), ``{error, Reason}`` is a
:class:`SupervisionError` subclass, and OTP's ``[specs, active, supervisors,
workers]`` is :meth:`Supervisor.count_children`. ``simple_one_for_one`` is
:class:`DynamicSupervisor`.

Cases that do not apply to this API:

* ``sup_start_ignore_init``, ``sup_start_error_return``: a coterie supervisor
  has no ``init`` callback that could return ``ignore`` or a bad value; its
  flags and children are data, checked when it is built (see
  ``test_sup_flags``).
* ``extra_return``, ``simple_one_for_one_extra``: the value a child passes
  to ``task_status.started()`` is not returned by ``start_child`` (children
  are addressed by name, not by what their start returned).
* ``child_unlink``: there are no links to remove; a child's task cannot
  escape its scope.
* ``do_not_save_start_parameters_for_temporary_children``,
  ``simple_one_for_one_scale_many_temporary_children``: about the
  supervisor process's memory and list scaling; covered by forgetting
  temporary specs (``test_do_not_save_child_specs_for_temporary_children``)
  and by the speed budget in ``test_purity_and_speed.py``.
* ``simple_global_supervisor``: no global name registry.
* ``code_change*``: no hot code upgrade.
* ``faulty_application_shutdown``: no OTP applications; its point, that
  ``failed_to_start_child`` reaches the caller, is ``test_sup_start_fail``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pytest
import trio
import trio.testing

from coterie.supervisors import (
    AlreadyPresent,
    AlreadyStarted,
    ChildCounts,
    ChildIsRunning,
    ChildSpec,
    DynamicSupervisor,
    FailedToStartChild,
    InvalidChildSpec,
    NoSuchChild,
    Restart,
    Strategy,
    SupervisionError,
    Supervisor,
    SupervisorGaveUp,
)

if TYPE_CHECKING:
    from conftest import Puppets

    from coterie.events import EventLog

P, T, TMP = Restart.PERMANENT, Restart.TRANSIENT, Restart.TEMPORARY


def counts(sup: Supervisor) -> list[int]:
    """OTP's ``get_child_counts``: ``[specs, active, supervisors, workers]``."""
    c = sup.count_children()
    return [c.specs, c.active, c.supervisors, c.workers]


def children(sup: Supervisor) -> list[tuple[str, bool]]:
    return [(c.name, c.running) for c in sup.which_children()]


async def settled() -> None:
    await trio.testing.wait_all_tasks_blocked()


# -- sup_start ------------------------------------------------------------------------


async def test_sup_start_normal() -> None:
    sup = Supervisor("sup_test", [], max_restarts=2, period=3600)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        assert counts(sup) == [0, 0, 0, 0]
        await sup.stop()


async def test_sup_start_ignore_child(puppets: Puppets) -> None:
    sup = Supervisor("sup_test", [])
    puppets.start_modes["child1"] = "ignore"
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await sup.start_child(puppets.starting("child1"))
        await sup.start_child(puppets.starting("child2"))
        assert children(sup) == [("child1", False), ("child2", True)]
        assert counts(sup) == [2, 1, 0, 2]
        await sup.stop()


async def test_sup_start_ignore_temporary_child(puppets: Puppets) -> None:
    puppets.start_modes["child1"] = "ignore"
    specs = [puppets.starting("child1", TMP), puppets.starting("child2", TMP)]
    sup = Supervisor("sup_test", specs)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        assert children(sup) == [("child2", True)]
        assert counts(sup) == [1, 1, 0, 1]
        await sup.stop()


async def test_sup_start_ignore_temporary_child_start_child(puppets: Puppets) -> None:
    puppets.start_modes["child1"] = "ignore"
    sup = Supervisor("sup_test", [])
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await sup.start_child(puppets.starting("child1", TMP))
        await sup.start_child(puppets.starting("child2", TMP))
        assert children(sup) == [("child2", True)]
        assert counts(sup) == [1, 1, 0, 1]
        await sup.stop()


@pytest.mark.parametrize("restart", [TMP, P])
async def test_sup_start_ignore_temporary_child_start_child_simple(
    puppets: Puppets, restart: Restart
) -> None:
    """Also ``sup_start_ignore_permanent_child_start_child_simple`` (``restart=P``)."""
    puppets.start_modes["c1"] = "ignore"
    sup = DynamicSupervisor("sup_test")
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await sup.start_child(puppets.starting("c1", restart))
        await sup.start_child(puppets.starting("c2", restart))
        assert children(sup) == [("c2", True)]
        assert counts(sup) == [1, 1, 0, 1]
        await sup.stop()  # and stops cleanly
    assert puppets.log[-1] == ("stop", "c2")


async def test_sup_start_fail(puppets: Puppets, events: EventLog) -> None:
    """An initial child failing its start phase fails the supervisor's start
    (OTP ``{shutdown, {failed_to_start_child, Id, Reason}}``); started ones are stopped."""
    puppets.start_modes["b"] = "fail"
    specs = [puppets.starting("a"), puppets.starting("b"), puppets.starting("c")]
    sup = Supervisor("sup_test", specs, events=events)
    async with trio.open_nursery() as nursery:
        with pytest.raises(FailedToStartChild) as caught:
            await nursery.start(sup.run)
    assert (caught.value.child, caught.value.reason) == ("b", "RuntimeError: b failed to start")
    assert puppets.log == [("start", "a"), ("failed", "b"), ("stop", "a")]
    assert "failed to start child 'b'" in events.of_type("supervisor.stopped")[0].data["reason"]


async def test_sup_start_child_returns_error(puppets: Puppets) -> None:
    puppets.start_modes["child1"] = "fail"
    sup = Supervisor("sup_test", [])
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        with pytest.raises(FailedToStartChild, match="child1"):
            await sup.start_child(puppets.starting("child1"))
        assert children(sup) == []  # no child kept
        assert counts(sup) == [0, 0, 0, 0]
        await sup.stop()


async def test_sup_start_restart_child_returns_error(puppets: Puppets) -> None:
    sup = Supervisor("sup_test", [puppets.starting("child1")])
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await sup.terminate_child("child1")
        puppets.start_modes["child1"] = "fail"
        with pytest.raises(FailedToStartChild):
            await sup.restart_child("child1")
        assert children(sup) == [("child1", False)]  # the spec is kept
        puppets.start_modes["child1"] = "ok"
        await sup.restart_child("child1")
        assert children(sup) == [("child1", True)]
        await sup.stop()


async def test_sup_start_child_returns_error_simple(puppets: Puppets) -> None:
    puppets.start_modes["child1"] = "fail"
    sup = DynamicSupervisor("sup_test")
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        with pytest.raises(FailedToStartChild):
            await sup.start_child(puppets.starting("child1"))
        assert counts(sup) == [0, 0, 0, 0]
        await sup.stop()


async def test_sup_start_map() -> None:
    """Defaults: permanent, 5 s for a worker, infinity for a supervisor; 0 is brutal_kill."""

    async def idle() -> None:
        await trio.sleep_forever()

    child1 = ChildSpec("child1", idle)
    child2 = ChildSpec("child2", idle, shutdown_timeout=0)
    child3 = ChildSpec("child3", idle, kind="supervisor")
    assert (child1.restart, child1.shutdown_timeout, child1.kind) == (P, 5.0, "worker")
    assert child2.shutdown_timeout == 0
    assert (child3.restart, child3.shutdown_timeout) == (P, math.inf)
    assert Supervisor("nested").as_child().shutdown_timeout == math.inf


async def test_sup_start_map_faulty_specs() -> None:
    async def idle() -> None:
        await trio.sleep_forever()

    with pytest.raises(ValueError, match="name"):
        ChildSpec("", idle)
    with pytest.raises(TypeError, match="callable"):
        ChildSpec("child2", "not a function")  # type: ignore[arg-type]
    with pytest.raises(InvalidChildSpec):
        Supervisor("sup_test", ["child4"])  # type: ignore[list-item]


async def test_child_specs(puppets: Puppets) -> None:
    """Bad specs are refused with an error to the caller; the supervisor lives on."""
    sup = Supervisor("sup_test", [])
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        with pytest.raises(InvalidChildSpec):
            await sup.start_child("hej")  # type: ignore[arg-type]
        bads: list[dict[str, Any]] = [
            {"restart": "prmanent"},
            {"shutdown_timeout": -10},
            {"kind": "wrker"},
        ]
        for bad in bads:
            with pytest.raises(ValueError):  # noqa: PT011 - each has its own message
                puppets.spec("child", **bad)
        await sup.start_child(puppets.spec("child"))
        assert children(sup) == [("child", True)]
        await sup.stop()
    with pytest.raises(ValueError, match="duplicate"):
        Supervisor("sup_test", [puppets.spec("child"), puppets.spec("child")])


async def test_sup_flags() -> None:
    with pytest.raises(ValueError):  # noqa: PT011
        Supervisor("sup_test", strategy="none_for_one")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_restarts"):
        Supervisor("sup_test", max_restarts=math.inf)  # type: ignore[arg-type]
    for period in (0, math.inf):
        with pytest.raises(ValueError, match="period"):
            Supervisor("sup_test", period=period)


# -- sup_stop -------------------------------------------------------------------------


async def test_sup_stop_infinity(puppets: Puppets) -> None:
    sup = Supervisor("sup_test", [])
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await sup.start_child(puppets.spec("child1", shutdown_timeout=math.inf, kind="supervisor"))
        await sup.start_child(puppets.spec("child2", shutdown_timeout=math.inf))
        await sup.stop()
    assert puppets.log[-2:] == [("stop", "child2"), ("stop", "child1")]


async def _sleeps_when_stopped(seconds: float, ended: list[str]) -> None:
    try:
        await trio.sleep_forever()
    finally:
        with trio.CancelScope(shield=True):
            await trio.sleep(seconds)
        ended.append("clean-up done")


async def test_sup_stop_timeout(
    autojump_clock: trio.testing.MockClock, puppets: Puppets, events: EventLog
) -> None:
    """A child sleeping 200 s in its clean-up is abandoned at its 1 s timeout, and
    stop() returns then: the abandoned task finishes in the background."""
    ended: list[str] = []
    slow = ChildSpec("child2", lambda: _sleeps_when_stopped(200, ended), shutdown_timeout=1)
    sup = Supervisor("sup_test", [puppets.spec("child1", shutdown_timeout=1), slow], events=events)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        began = trio.current_time()
        await sup.stop()
        assert trio.current_time() - began == pytest.approx(1.0)
        assert [e.data["actor"] for e in events.of_type("actor.abandoned")] == ["child2"]
        assert ended == []
    assert puppets.log[-1] == ("stop", "child1")


async def test_sup_stop_brutal_kill(puppets: Puppets, events: EventLog) -> None:
    """``shutdown_timeout=0``: a child that ends as soon as it is cancelled is stopped, not
    abandoned."""
    specs = [puppets.spec("child1", shutdown_timeout=1), puppets.spec("child2", shutdown_timeout=0)]
    sup = Supervisor("sup_test", specs, events=events)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await sup.stop()
    assert events.of_type("actor.abandoned") == []
    assert [e.data["actor"] for e in events.of_type("actor.stopped")] == ["child2", "child1"]


# -- child administration -------------------------------------------------------------


async def test_child_adm(puppets: Puppets) -> None:
    child = puppets.spec("child1")
    sup = Supervisor("sup_test", [child], max_restarts=2, period=3600)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        assert children(sup) == [("child1", True)]
        assert counts(sup) == [1, 1, 0, 1]
        with pytest.raises(AlreadyStarted):
            await sup.start_child(child)
        # termination
        with pytest.raises(NoSuchChild):
            await sup.terminate_child("hej")
        await sup.terminate_child("child1")
        assert children(sup) == [("child1", False)]
        assert counts(sup) == [1, 0, 0, 1]
        await sup.terminate_child("child1")  # like deleting what does not exist: fine
        with pytest.raises(AlreadyPresent):
            await sup.start_child(child)
        # restart
        await sup.restart_child("child1")
        assert children(sup) == [("child1", True)]
        assert counts(sup) == [1, 1, 0, 1]
        with pytest.raises(ChildIsRunning, match="running"):
            await sup.restart_child("child1")
        with pytest.raises(NoSuchChild):
            await sup.restart_child("child2")
        # deletion
        with pytest.raises(ChildIsRunning, match="running"):
            await sup.delete_child("child1")
        with pytest.raises(NoSuchChild):
            await sup.delete_child("hej")
        await sup.terminate_child("child1")
        await sup.delete_child("child1")
        with pytest.raises(NoSuchChild):
            await sup.restart_child("child1")
        assert children(sup) == []
        assert counts(sup) == [0, 0, 0, 0]
        # start
        await sup.start_child(child)
        assert children(sup) == [("child1", True)]
        assert counts(sup) == [1, 1, 0, 1]
        await sup.stop()
    with pytest.raises(RuntimeError, match="not running"):
        await sup.start_child(child)  # OTP: noproc


async def test_child_adm_simple(puppets: Puppets) -> None:
    sup = DynamicSupervisor("sup_test", lambda n: puppets.spec(f"c{n}"))
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        assert children(sup) == []
        assert await sup.start_child([1]) == "c1"
        assert await sup.start_child([2]) == "c2"
        assert counts(sup) == [2, 2, 0, 2]
        await sup.terminate_child("c1")
        assert children(sup) == [("c2", True)]  # a dynamic supervisor keeps no spec
        assert counts(sup) == [1, 1, 0, 1]
        with pytest.raises(NoSuchChild):
            await sup.terminate_child("c1")
        with pytest.raises(SupervisionError, match="dynamic"):
            await sup.restart_child("c2")
        with pytest.raises(SupervisionError, match="dynamic"):
            await sup.delete_child("c2")
        await sup.stop()


# -- normal, shutdown and abnormal termination ---------------------------------------


def _end(puppets: Puppets, name: str, how: str) -> None:
    {"normal": puppets.exit, "shutdown": puppets.shutdown, "abnormal": puppets.crash}[how](name)


@pytest.mark.parametrize(
    ("restart", "how", "after"),
    [
        (P, "normal", [("child1", True)]),
        (T, "normal", [("child1", False)]),
        (TMP, "normal", []),
        (P, "shutdown", [("child1", True)]),
        (T, "shutdown", [("child1", False)]),
        (TMP, "shutdown", []),
        (P, "abnormal", [("child1", True)]),
        (T, "abnormal", [("child1", True)]),
        (TMP, "abnormal", []),
    ],
    ids=lambda v: str(v) if not isinstance(v, list) else "",
)
async def test_termination(
    puppets: Puppets, restart: Restart, how: str, after: list[tuple[str, bool]]
) -> None:
    """``permanent_normal`` ... ``temporary_abnormal``: the nine OTP cases, one per row."""
    sup = Supervisor("sup_test", [], max_restarts=2, period=3600)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await sup.start_child(puppets.spec("child1", restart))
        _end(puppets, "child1", how)
        await settled()
        assert children(sup) == after
        assert counts(sup) == [len(after), sum(r for _, r in after), 0, len(after)]
        if after == [("child1", False)]:  # transient_shutdown: it can be restarted by hand
            await sup.restart_child("child1")
            assert children(sup) == [("child1", True)]
        await sup.stop()


async def test_temporary_bystander(puppets: Puppets) -> None:
    """A temporary child stopped by a group restart is not restarted (and costs no intensity)."""
    for strategy in (Strategy.ONE_FOR_ALL, Strategy.REST_FOR_ONE):
        sup = Supervisor("sup_test", [], strategy=strategy, max_restarts=2, period=300)
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            await sup.start_child(puppets.spec("child1"))
            await sup.start_child(puppets.spec("child2", TMP))
            puppets.exit("child1")
            await settled()
            assert children(sup) == [("child1", True)]
            await sup.stop()


async def test_multiple_restarts(autojump_clock: trio.testing.MockClock, puppets: Puppets) -> None:
    sup = Supervisor("sup_test", [], max_restarts=1, period=1)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await sup.start_child(puppets.spec("child1", shutdown_timeout=0))
        puppets.crash("child1")
        for _ in range(3):
            await trio.sleep(2.1)
            puppets.crash("child1")
        await settled()
        await sup.terminate_child("child1")
        await sup.delete_child("child1")
        await sup.stop()


# -- restart strategies ---------------------------------------------------------------


async def test_one_for_one(puppets: Puppets) -> None:
    sup = Supervisor("sup_test", [], max_restarts=2, period=3600)
    with pytest.RaisesGroup(SupervisorGaveUp, flatten_subgroups=True):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            await sup.start_child(puppets.spec("child1"))
            await sup.start_child(puppets.spec("child2"))
            puppets.clear()
            puppets.crash("child1")
            await settled()
            assert puppets.log == [("start", "child1")]  # child2 untouched
            assert counts(sup) == [2, 2, 0, 2]
            puppets.crash("child2")
            await settled()
            puppets.crash("child1")  # the third restart within the period: too many


async def _fails_to_restart(started: list[int], *, task_status: trio.TaskStatus[None]) -> None:
    """OTP's ``supervisor_1:start_child(error)``: starts once, then every restart fails."""
    started.append(1)
    if len(started) > 1:
        raise RuntimeError("start error")
    task_status.started()
    raise RuntimeError("died")


@pytest.mark.parametrize(
    ("strategy", "failing_first"),
    [(Strategy.ONE_FOR_ONE, True), (Strategy.ONE_FOR_ALL, False), (Strategy.REST_FOR_ONE, True)],
)
async def test_one_for_one_escalation(
    puppets: Puppets, strategy: Strategy, failing_first: bool
) -> None:
    """Also ``one_for_all_escalation`` and ``rest_for_one_escalation``: a child whose
    restarts fail is restarted until the intensity is used up; then every child stops."""
    started: list[int] = []
    failing = ChildSpec(
        "child1", lambda **kw: _fails_to_restart(started, **kw), reports_started=True
    )
    other = puppets.spec("child2")
    specs = [failing, other] if failing_first else [other, failing]
    sup = Supervisor("sup_test", specs, strategy=strategy, max_restarts=4, period=3600)
    with pytest.raises(SupervisorGaveUp):
        await sup.run()
    assert len(started) == 5  # the start, then four failed restarts
    assert puppets.log[-1] == ("stop", "child2")


async def test_one_for_all(puppets: Puppets) -> None:
    sup = Supervisor("sup_test", [], strategy=Strategy.ONE_FOR_ALL, max_restarts=2, period=3600)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await sup.start_child(puppets.spec("child1"))
        await sup.start_child(puppets.spec("child2"))
        puppets.clear()
        puppets.crash("child1")
        await settled()
        assert puppets.log == [("stop", "child2"), ("start", "child1"), ("start", "child2")]
        assert counts(sup) == [2, 2, 0, 2]
        await sup.stop()


@pytest.mark.parametrize("strategy", [Strategy.ONE_FOR_ALL, Strategy.REST_FOR_ONE])
async def test_one_for_all_other_child_fails_restart(puppets: Puppets, strategy: Strategy) -> None:
    """Also ``rest_for_one_other_child_fails_restart``: child1 dies, child2 fails its
    restart once; under one_for_all the restarted child1 is terminated and both start
    again, under rest_for_one only child2 (it comes after child1) is tried again."""
    specs = [puppets.starting("child1"), puppets.starting("child2")]
    sup = Supervisor("sup_test", specs, strategy=strategy, max_restarts=3, period=3600)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        puppets.clear()
        puppets.start_modes["child2"] = "fail_once"
        puppets.crash("child1")
        await settled()
        assert children(sup) == [("child1", True), ("child2", True)]
        await sup.stop()
    retried = (
        [("stop", "child1"), ("start", "child1"), ("start", "child2")]
        if strategy is Strategy.ONE_FOR_ALL
        else [("start", "child2")]
    )
    assert puppets.log[:-2] == [
        ("stop", "child2"),
        ("start", "child1"),
        ("failed", "child2"),
        *retried,
    ]


async def test_rest_for_one(puppets: Puppets) -> None:
    sup = Supervisor("sup_test", [], strategy=Strategy.REST_FOR_ONE, max_restarts=2, period=3600)
    with pytest.RaisesGroup(SupervisorGaveUp, flatten_subgroups=True):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            for name in ("child1", "child2", "child3"):
                await sup.start_child(puppets.spec(name))
            assert counts(sup) == [3, 3, 0, 3]
            puppets.clear()
            puppets.crash("child2")
            await settled()
            assert puppets.log == [("stop", "child3"), ("start", "child2"), ("start", "child3")]
            assert counts(sup) == [3, 3, 0, 3]
            puppets.crash("child3")
            await settled()
            puppets.crash("child2")


# -- simple_one_for_one ---------------------------------------------------------------


async def test_simple_one_for_one(puppets: Puppets) -> None:
    sup = DynamicSupervisor("sup_test", lambda n: puppets.spec(n), max_restarts=2, period=3600)
    with pytest.RaisesGroup(SupervisorGaveUp, flatten_subgroups=True):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            await sup.start_child(["c1"])
            await sup.start_child(["c2"])
            puppets.clear()
            puppets.crash("c1")
            await settled()
            assert puppets.log == [("start", "c1")]
            assert counts(sup) == [2, 2, 0, 2]
            puppets.crash("c2")
            await settled()
            puppets.crash("c1")  # every child's restarts count against the one intensity


async def test_simple_one_for_one_shutdown(autojump_clock: trio.testing.MockClock) -> None:
    """Children are stopped side by side: the shutdown lasts as long as the slowest
    (killed at its 2 s timeout), not the sum."""
    ended: list[str] = []
    sup = DynamicSupervisor("sup_test")
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        for i, seconds in enumerate([1.0, 1.0, 5.0]):
            spec = ChildSpec(
                f"c{i}",
                lambda s=seconds: _sleeps_when_stopped(s, ended),
                shutdown_timeout=2.0,
            )
            await sup.start_child(spec)
        began = trio.current_time()
        await sup.stop()
        assert trio.current_time() - began == pytest.approx(2.0)
        assert ended == ["clean-up done", "clean-up done"]


async def test_simple_one_for_one_escalation(puppets: Puppets) -> None:
    started: list[int] = []
    sup = DynamicSupervisor("sup_test", max_restarts=4, period=3600)
    failing = ChildSpec("c1", lambda **kw: _fails_to_restart(started, **kw), reports_started=True)
    with pytest.RaisesGroup(SupervisorGaveUp, flatten_subgroups=True):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            await sup.start_child(puppets.spec("c2"))
            await sup.start_child(failing)
    assert puppets.log[-1] == ("stop", "c2")


# -- misc -----------------------------------------------------------------------------


async def test_tree(puppets: Puppets) -> None:
    """Nested supervisors: only the child that dies is restarted; a nested supervisor
    that gives up is restarted by its one_for_all parent with its whole tree, but not
    with its dynamic children."""
    sup1 = Supervisor("supchild1", [puppets.spec("child1"), puppets.spec("child2")], max_restarts=4)
    sup2 = Supervisor("supchild2", [], max_restarts=4, period=3600)
    top = Supervisor("sup_test", [], strategy=Strategy.ONE_FOR_ALL, max_restarts=4, period=3600)
    async with trio.open_nursery() as nursery:
        await nursery.start(top.run)
        await top.start_child(sup1.as_child())
        await top.start_child(sup2.as_child())
        assert counts(top) == [2, 2, 2, 0]
        assert counts(sup1) == [2, 2, 0, 2]  # up as soon as start_child returned
        assert counts(sup2) == [0, 0, 0, 0]
        started: list[int] = []
        child3 = ChildSpec(
            "child3", lambda **kw: _fails_to_restart(started, **kw), reports_started=True
        )
        await sup2.start_child(puppets.spec("child4"))
        puppets.clear()
        puppets.crash("child4")
        await settled()
        assert puppets.log == [("start", "child4")]
        await sup2.start_child(child3)  # dies at once and never restarts: sup2 gives up
        await settled()
        assert counts(top) == [2, 2, 2, 0]
        assert counts(sup1) == [2, 2, 0, 2]
        assert counts(sup2) == [0, 0, 0, 0]  # restarted without its dynamic children
        await top.stop()


async def test_count_children(puppets: Puppets) -> None:
    sup = DynamicSupervisor("sup_test", lambda n: puppets.spec(f"c{n}", TMP))
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        for n in range(1000):
            await sup.start_child([n])
        assert sup.count_children() == ChildCounts(
            specs=1000, active=1000, supervisors=0, workers=1000
        )
        for n in range(1000):
            puppets.crash(f"c{n}")
        await settled()
        assert counts(sup) == [0, 0, 0, 0]
        await sup.stop()


@pytest.mark.parametrize("strategy", list(Strategy), ids=str)
@pytest.mark.parametrize("how", ["supervisor", "normal", "abnormal"])
async def test_do_not_save_child_specs_for_temporary_children(
    puppets: Puppets, strategy: Strategy, how: str
) -> None:
    sup = Supervisor("sup_test", [], strategy=strategy, max_restarts=2, period=3600)

    async def end(name: str) -> None:
        if how == "supervisor":
            await sup.terminate_child(name)
        else:
            _end(puppets, name, how)
            await settled()

    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        # permanent: restarted, or kept when terminated
        await sup.start_child(puppets.spec("child1"))
        await end("child1")
        kept_error: Any = AlreadyPresent if how == "supervisor" else AlreadyStarted
        with pytest.raises(kept_error):
            await sup.start_child(puppets.spec("child1"))
        if how == "supervisor":
            await sup.restart_child("child1")
        # transient: kept after a normal end or a terminate, restarted after a crash
        await sup.start_child(puppets.spec("child2", T))
        await end("child2")
        kept_error = AlreadyStarted if how == "abnormal" else AlreadyPresent
        with pytest.raises(kept_error):
            await sup.start_child(puppets.spec("child2", T))
        if how != "abnormal":
            await sup.restart_child("child2")
        await settled()
        # temporary: never kept, so the same spec starts again
        await sup.start_child(puppets.spec("child3", TMP))
        await end("child3")
        await sup.start_child(puppets.spec("child3", TMP))
        await sup.stop()


def _restarting_spec(puppets: Puppets, name: str) -> ChildSpec:
    spec: ChildSpec = puppets.starting(name, shutdown_timeout=0)
    return spec


@pytest.mark.parametrize("dynamic", [False, True], ids=["", "simple"])
async def test_hanging_restart_loop(
    autojump_clock: trio.testing.MockClock, puppets: Puppets, dynamic: bool
) -> None:
    """Also ``hanging_restart_loop_simple``: a child whose restarts fail waits to restart
    (with backoff here, where OTP retries at once); it can be terminated, and the
    supervisor can be stopped, while it does."""
    from coterie.supervisors import Backoff

    backoff = Backoff(initial=1.0, max=1.0)
    sup: Supervisor = (
        DynamicSupervisor("sup_test", max_restarts=8, period=10, backoff=backoff)
        if dynamic
        else Supervisor("sup_test", [], max_restarts=8, period=10, backoff=backoff)
    )
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await sup.start_child(_restarting_spec(puppets, "child1"))
        puppets.start_modes["child1"] = "fail"
        puppets.crash("child1")
        await trio.sleep(2.5)  # a failed restart or two
        assert [(c.name, str(c.state)) for c in sup.which_children()] == [("child1", "restarting")]
        assert counts(sup) == [1, 0, 0, 1]
        if not dynamic:
            with pytest.raises(AlreadyPresent):
                await sup.start_child(_restarting_spec(puppets, "child1"))
            with pytest.raises(ChildIsRunning, match="restarting"):
                await sup.restart_child("child1")
            with pytest.raises(ChildIsRunning, match="restarting"):
                await sup.delete_child("child1")
        await sup.terminate_child("child1")
        assert children(sup) == ([] if dynamic else [("child1", False)])
        puppets.start_modes["child1"] = "ok"
        if dynamic:
            await sup.start_child(_restarting_spec(puppets, "child1"))
        else:
            await sup.restart_child("child1")
        puppets.start_modes["child1"] = "fail"
        puppets.crash("child1")
        await trio.sleep(1.5)
        await sup.stop()  # does not hang in the restart loop
    assert not any(c.running for c in sup.which_children())
