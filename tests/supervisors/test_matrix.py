"""Every strategy x restart type x way of ending, run for real under Trio.

Children ``a`` and ``c`` are permanent; ``b`` has the restart type under
test and either returns or crashes. The expected outcome is written out as
the event trail after the initial starts, and as what the children saw.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import trio
import trio.testing

from coterie.supervisors import Restart, Strategy, Supervisor

if TYPE_CHECKING:
    from conftest import Puppets, Trail

    from coterie.events import EventLog

P, T, TMP = Restart.PERMANENT, Restart.TRANSIENT, Restart.TEMPORARY
ONE, ALL, REST = Strategy.ONE_FOR_ONE, Strategy.ONE_FOR_ALL, Strategy.REST_FOR_ONE

# Shapes of outcome; "{end}" is actor.exited or actor.crashed.
REMOVED = ["{end} b"]  # temporary: forgotten
KEPT = ["{end} b"]  # transient after a normal exit: its spec stays, not running
RESTART_B = ["{end} b", "actor.restarted b", "actor.started b"]
RESTART_ALL = [
    "{end} b",
    "actor.stopped c",
    "actor.stopped a",
    "actor.restarted a",
    "actor.restarted b",
    "actor.restarted c",
    "actor.started a",
    "actor.started b",
    "actor.started c",
]
RESTART_REST = [
    "{end} b",
    "actor.stopped c",
    "actor.restarted b",
    "actor.restarted c",
    "actor.started b",
    "actor.started c",
]

MATRIX = [
    (ONE, P, "exit", RESTART_B),
    (ONE, P, "crash", RESTART_B),
    (ONE, T, "exit", KEPT),
    (ONE, T, "crash", RESTART_B),
    (ONE, TMP, "exit", REMOVED),
    (ONE, TMP, "crash", REMOVED),
    (ALL, P, "exit", RESTART_ALL),
    (ALL, P, "crash", RESTART_ALL),
    (ALL, T, "exit", KEPT),
    (ALL, T, "crash", RESTART_ALL),
    (ALL, TMP, "exit", REMOVED),
    (ALL, TMP, "crash", REMOVED),
    (REST, P, "exit", RESTART_REST),
    (REST, P, "crash", RESTART_REST),
    (REST, T, "exit", KEPT),
    (REST, T, "crash", RESTART_REST),
    (REST, TMP, "exit", REMOVED),
    (REST, TMP, "crash", REMOVED),
]


def _children_saw(expected: list[str]) -> list[tuple[str, str]]:
    """What the puppets log for an expected trail: their stops and (re)starts."""
    seen = []
    for line in expected:
        kind, name = line.split()
        if kind == "actor.stopped":
            seen.append(("stop", name))
        elif kind == "actor.started":
            seen.append(("start", name))
    return seen


@pytest.mark.parametrize(("strategy", "restart", "how", "expected"), MATRIX)
async def test_outcome(
    strategy: Strategy,
    restart: Restart,
    how: str,
    expected: list[str],
    puppets: Puppets,
    events: EventLog,
    trail: Trail,
) -> None:
    """b ends; the right children are stopped, restarted or removed, in the right order."""
    specs = [puppets.spec("a"), puppets.spec("b", restart), puppets.spec("c")]
    sup = Supervisor("sup", specs, strategy=strategy, events=events)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        puppets.clear()
        initial = len(events.history)
        puppets.exit("b") if how == "exit" else puppets.crash("b")
        await trio.testing.wait_all_tasks_blocked()

        end = "actor.exited" if how == "exit" else "actor.crashed"
        assert trail(initial) == [line.format(end=end) for line in expected]
        assert puppets.log == _children_saw(expected)
        states = {info.name: str(info.state) for info in sup.which_children()}
        if expected is REMOVED:
            assert states == {"a": "running", "c": "running"}
        elif expected is KEPT:
            assert states == {"a": "running", "b": "stopped", "c": "running"}
        else:
            assert states == {"a": "running", "b": "running", "c": "running"}
        await sup.stop()


@pytest.mark.parametrize("strategy", [ALL, REST])
async def test_temporary_sibling_stopped_by_a_group_restart_is_removed(
    strategy: Strategy, puppets: Puppets, events: EventLog, trail: Trail
) -> None:
    """A temporary child is not restarted even when a sibling's failure stopped it."""
    specs = [puppets.spec("a"), puppets.spec("b"), puppets.spec("c", Restart.TEMPORARY)]
    sup = Supervisor("sup", specs, strategy=strategy, events=events)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        puppets.clear()
        puppets.crash("b")
        await trio.testing.wait_all_tasks_blocked()
        assert ("stop", "c") in puppets.log
        assert ("start", "c") not in puppets.log
        assert [info.name for info in sup.which_children()] == ["a", "b"]
        await sup.stop()
