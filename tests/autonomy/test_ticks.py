"""A loop's ticks as pure decisions (coterie.autonomy.ticks)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.autonomy import (
    Schedule,
    Stop,
    Tick,
    TickMachine,
    TickOutcome,
    TickProtocolError,
    Wait,
)

OK = TickOutcome(failed=False, subtype="success", turns=1, cost=0.01)


def machine(interval: float | None = 60.0, **kw: object) -> TickMachine:
    return TickMachine(Schedule("r", prompt="check", due=100.0), interval, **kw)  # type: ignore[arg-type]


def test_waits_until_the_tick_is_due_then_runs_it() -> None:
    m = machine()
    assert m.next(40.0) == Wait(60.0)
    assert m.next(100.0) == Tick(1, "check")


def test_once_the_driver_has_waited_the_tick_is_due() -> None:
    """The driver's clock may be scaled (demonstrations, tests): its word counts."""
    m = machine()
    assert isinstance(m.next(40.0), Wait)
    m.waited()
    assert m.next(40.0) == Tick(1, "check")


def test_a_fixed_loop_is_due_again_one_interval_after_a_tick() -> None:
    m = machine(interval=60.0)
    m.next(100.0)
    assert m.ticked(130.0, OK) is None
    assert m.next(130.0) == Wait(60.0)
    assert m.schedule.ticks == 1
    assert m.schedule.turns == 1


def test_a_dynamic_tick_without_a_wakeup_has_converged() -> None:
    m = machine(interval=None)
    m.next(100.0)
    assert m.ticked(101.0, OK) == Stop("converged (no wake-up was scheduled)")


def test_a_dynamic_wakeup_sets_the_next_prompt_and_time() -> None:
    m = machine(interval=None)
    m.next(100.0)
    wake = TickOutcome(False, "success", 1, 0.0, wakeup=(300.0, "look again"))
    assert m.ticked(101.0, wake) is None
    assert m.next(101.0) == Wait(300.0)
    assert m.next(401.0) == Tick(2, "look again")


def test_a_failed_tick_ends_the_loop() -> None:
    m = machine()
    m.next(100.0)
    failed = TickOutcome(True, "error_model", 1, 0.0)
    assert m.ticked(101.0, failed) == Stop("tick 1 failed (error_model)")


def test_the_turn_limit_counts_over_every_tick() -> None:
    m = machine(interval=0.0, max_turns=2)
    m.next(100.0)
    assert m.ticked(100.0, OK) is None
    m.next(100.0)
    assert m.ticked(100.0, OK) == Stop("the limit of 2 turns was reached")


def test_the_tick_cap_stops_before_a_tick_would_pass_it() -> None:
    m = machine(interval=0.0, max_ticks=1)
    m.next(100.0)
    m.ticked(100.0, OK)
    assert m.next(100.0) == Stop("the tick cap (1) was reached")


def test_ticks_are_reported_before_the_next_one() -> None:
    m = machine()
    with pytest.raises(TickProtocolError):
        m.ticked(100.0, OK)
    m.next(100.0)
    with pytest.raises(TickProtocolError):
        m.next(100.0)


@given(st.integers(1, 20), st.lists(st.booleans(), max_size=40))
def test_ticks_are_numbered_without_gaps_and_bounded(cap: int, wakes: list[bool]) -> None:
    """Whatever each tick asks for, ticks run 1, 2, 3... and never past the cap."""
    m = TickMachine(Schedule("r", prompt="p"), None, max_ticks=cap)
    seen, now = [], 0.0
    for wake in [*wakes, False]:
        decision = m.next(now)
        while isinstance(decision, Wait):
            m.waited()
            decision = m.next(now)
        if isinstance(decision, Stop):
            break
        seen.append(decision.number)
        outcome = TickOutcome(False, "success", 1, 0.0, wakeup=(60.0, None) if wake else None)
        if m.ticked(now, outcome) is not None:
            break
    assert seen == list(range(1, len(seen) + 1))
    assert len(seen) <= cap
