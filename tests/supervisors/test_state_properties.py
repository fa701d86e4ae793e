"""Properties of the restart state machine over random event sequences (Hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from coterie.supervisors import (
    Backoff,
    ChildSpec,
    ChildState,
    GiveUp,
    Restart,
    Strategy,
    SupervisorMachine,
)
from tests.supervisors.helpers import never, settle

# -- properties ---------------------------------------------------------------------

_steps = st.lists(
    st.tuples(
        st.integers(0, 5),  # which running child
        st.booleans(),  # crashed?
        st.floats(0.0, 4.0, allow_nan=False),  # time passing before it
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None, database=None)
@given(
    strategy=st.sampled_from(Strategy),
    restarts=st.lists(st.sampled_from(Restart), min_size=1, max_size=5),
    max_restarts=st.integers(0, 4),
    period=st.floats(0.5, 10.0),
    backoff=st.none() | st.builds(Backoff, initial=st.floats(0.0, 2.0)),
    steps=_steps,
)
def test_gives_up_exactly_when_more_than_max_restarts_fall_in_the_period(
    strategy: Strategy,
    restarts: list[Restart],
    max_restarts: int,
    period: float,
    backoff: Backoff | None,
    steps: list[tuple[int, bool, float]],
) -> None:
    """Random exits at random times: the machine gives up iff a reference count says so."""
    machine = SupervisorMachine(
        strategy=strategy, max_restarts=max_restarts, period=period, backoff=backoff
    )
    specs = [ChildSpec(f"c{i}", never, restart=r) for i, r in enumerate(restarts)]
    now = 0.0
    settle(machine, machine.start(specs, now), now)
    restart_times: list[float] = []
    for pick, crashed, dt in steps:
        now += dt
        settle(machine, machine.tick(now), now)
        running = [c for c in machine.children() if c.state is ChildState.RUNNING]
        if not running:
            continue
        child = running[pick % len(running)]
        if child.restart is Restart.PERMANENT or (child.restart is Restart.TRANSIENT and crashed):
            restart_times.append(now)
        in_period = [t for t in restart_times if t >= now - period]
        ended = (
            machine.child_crashed(child.name, "E", now)
            if crashed
            else machine.child_exited(child.name, now)
        )
        decisions = settle(machine, ended, now)
        should_give_up = len(in_period) > max_restarts
        assert any(isinstance(d, GiveUp) for d in decisions) == should_give_up
        if should_give_up:
            assert machine.finished
            assert all(
                c.state in (ChildState.STOPPED, ChildState.CRASHED) for c in machine.children()
            )
            return
        # Nothing is left half-done: every child runs, waits to restart, or (a transient
        # one that returned) is kept, not running.
        assert machine.next_deadline() is not None or all(
            c.state in (ChildState.RUNNING, ChildState.STOPPED) for c in machine.children()
        )
