"""The goal pursuit's pure decisions (coterie.autonomy.pursuit)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.autonomy import End, GoalMachine, Judge, PursuitProtocolError, Work, feedback


def test_a_fresh_pursuit_judges_the_first_work() -> None:
    assert GoalMachine().begin(0, is_error=False) == Judge()


def test_failed_first_work_stops_the_pursuit_without_judging() -> None:
    assert GoalMachine().begin(0, is_error=True, reason="boom") == End("stopped", "boom", 0)


def test_a_resumed_pursuit_goes_on_with_its_last_instruction() -> None:
    machine = GoalMachine()
    assert machine.begin(3, is_error=False) == Work(3, "")
    assert machine.worked(False) == Judge()


def test_not_met_feeds_the_reason_back_then_met_ends_it() -> None:
    machine = GoalMachine()
    machine.begin(0, is_error=False)
    assert machine.judged("not_met", "no tests") == Work(1, feedback("no tests"))
    assert machine.worked(False) == Judge()
    assert machine.judged("met", "tests pass") == End("met", "tests pass", 2)
    assert machine.finished


def test_impossible_ends_it() -> None:
    machine = GoalMachine()
    machine.begin(0, is_error=False)
    assert machine.judged("impossible", "no such API") == End("impossible", "no such API", 1)


def test_the_cap_ends_a_pursuit_that_does_not_converge() -> None:
    machine = GoalMachine(max_iterations=2)
    machine.begin(0, is_error=False)
    assert isinstance(machine.judged("not_met", "a"), Work)
    machine.worked(False)
    end = machine.judged("not_met", "b")
    assert end == End("cap", "not met after 2 checks; the last: b", 2)


def test_events_out_of_turn_are_driver_bugs() -> None:
    machine = GoalMachine()
    with pytest.raises(PursuitProtocolError):
        machine.judged("met", "x")
    machine.begin(0, is_error=True)
    with pytest.raises(PursuitProtocolError):
        machine.worked(False)


@given(
    st.integers(1, 10),
    st.lists(st.sampled_from(["met", "not_met", "impossible", "error"]), max_size=30),
)
def test_every_pursuit_ends_within_its_cap(cap: int, outcomes: list[str]) -> None:
    """Whatever the evaluator and the work do, the pursuit ends after at most
    *cap* checks, and ends met only on a met verdict."""
    machine = GoalMachine(max_iterations=cap)
    decision = machine.begin(0, is_error=False)
    checks = 0
    feed = iter(outcomes)
    last = None
    while not isinstance(decision, End):
        outcome = next(feed, "not_met")
        if isinstance(decision, Judge):
            if outcome == "error":
                outcome = "not_met"
            checks += 1
            last = outcome
            decision = machine.judged(outcome, "why")  # type: ignore[arg-type]
        else:
            decision = machine.worked(outcome == "error", "failed")
            last = "error" if outcome == "error" else last
    assert checks <= cap
    assert (decision.how == "met") == (last == "met")


def test_the_machine_imports_no_trio() -> None:
    import ast
    import inspect

    import coterie.autonomy.pursuit as module

    tree = ast.parse(inspect.getsource(module))
    names = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    } | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not any(str(n).startswith("trio") for n in names)
