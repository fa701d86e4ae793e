"""The lead's decisions that need no runtime: when the team is stuck, and its final answer."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from coterie.agent import RunResult
from coterie.board import Board, Task, TaskStatus
from coterie.models import Usage
from coterie.team import final_result, stuck
from tests.strategies import team_boards, teammate_subsets

P, R, C, F = (
    TaskStatus.PENDING,
    TaskStatus.IN_PROGRESS,
    TaskStatus.COMPLETED,
    TaskStatus.FAILED,
)


def task(
    number: int, status: TaskStatus = P, owner: str | None = None, blocked_by: tuple[int, ...] = ()
) -> Task:
    return Task(
        id=f"task_{number}",
        subject=f"subject {number}",
        description="",
        status=status,
        owner=owner,
        blocked_by=tuple(f"task_{b}" for b in blocked_by),
        assigned=owner is not None,
    )


# -- stuck ----------------------------------------------------------------------------


@given(team_boards(), teammate_subsets)
def test_a_board_with_a_task_in_progress_is_never_stuck(
    tasks: list[Task], alive: tuple[str, ...]
) -> None:
    tasks = [*tasks, task(len(tasks) + 1, R, "alice")]
    assert not stuck(tasks, alive)


@given(team_boards(), teammate_subsets)
def test_a_board_with_every_task_finished_is_stuck(
    tasks: list[Task], alive: tuple[str, ...]
) -> None:
    """Nothing can move any more (the lead checks 'all finished' first anyway)."""
    finished = [t for t in tasks if t.status.finished]
    assert stuck(finished, alive)


@given(team_boards())
def test_without_live_teammates_only_a_task_in_progress_keeps_the_team_going(
    tasks: list[Task],
) -> None:
    assert stuck(tasks, ()) == (not any(t.status is R for t in tasks))


@given(team_boards(), teammate_subsets)
def test_a_ready_unassigned_task_unsticks_a_team_with_someone_alive(
    tasks: list[Task], alive: tuple[str, ...]
) -> None:
    busy = any(t.status is R for t in tasks)
    tasks = [*tasks, task(len(tasks) + 1)]
    assert stuck(tasks, alive) == (not alive and not busy)


@given(team_boards(), teammate_subsets, teammate_subsets)
def test_fewer_live_teammates_never_unstick_a_team(
    tasks: list[Task], alive: tuple[str, ...], gone: tuple[str, ...]
) -> None:
    fewer = tuple(t for t in alive if t not in gone)
    if stuck(tasks, alive):
        assert stuck(tasks, fewer)


def test_a_task_blocked_by_a_failed_one_is_stuck() -> None:
    tasks = [task(1, F, "alice"), task(2, P, None, blocked_by=(1,))]
    assert stuck(tasks, ("alice", "bob"))


def test_a_task_blocked_by_a_pending_task_someone_can_take_is_not_stuck() -> None:
    tasks = [task(1), task(2, blocked_by=(1,))]
    assert not stuck(tasks, ("alice",))


def test_a_task_assigned_to_a_stopped_teammate_is_stuck() -> None:
    assert stuck([task(1, P, "bob")], ("alice",))


def test_a_task_assigned_to_a_live_teammate_is_not_stuck() -> None:
    assert not stuck([task(1, P, "bob")], ("alice", "bob"))


def test_an_empty_board_is_stuck() -> None:
    assert stuck([], ("alice",))


def build(directory: Path, tasks: list[Task]) -> Board:
    """A real board holding *tasks* (statuses reached through the board's own rules)."""
    board = Board(directory, fsync=False)
    for t in tasks:
        owner = t.owner if t.status in (P, F) else None  # the others get theirs on starting
        board.create(t.subject, t.description, blocked_by=t.blocked_by, owner=owner)
    for t in tasks:
        if t.status in (R, C):
            board.update(t.id, status=R, owner=t.owner)
        if t.status in (C, F):
            board.update(t.id, status=t.status)
    return board


@given(team_boards().filter(lambda ts: not any(t.status is R for t in ts)), teammate_subsets)
def test_stuck_agrees_with_the_board_on_whether_a_live_teammate_can_claim_a_task(
    tasks: list[Task], alive: tuple[str, ...]
) -> None:
    """With nothing in progress the lead ends the run exactly when no live teammate's
    claim would give it a task: it neither stops early nor waits for nothing."""
    with tempfile.TemporaryDirectory() as directory, build(Path(directory), tasks) as board:
        real = list(board.list())
        assert [(t.id, t.status, t.owner) for t in real] == [
            (t.id, t.status, t.owner) for t in tasks
        ]
        claimable = any(board.claim(name, lease_seconds=60) is not None for name in alive)
        assert stuck(real, alive) == (not claimable)


# -- the lead's final answer ---------------------------------------------------------


def answer(text: str = "all done", *, is_error: bool = False) -> RunResult:
    return RunResult(
        result=text,
        is_error=is_error,
        subtype="error_max_turns" if is_error else "success",
        num_turns=3,
        usage=Usage(),
        total_cost_usd=0.0,
        duration_ms=1,
    )


def outcome(result: RunResult, tasks: list[Task]) -> RunResult:
    """The team's result: the lead's last answer, judged against the board."""
    return final_result(result, tasks)


def test_the_answer_of_a_team_that_finished_every_task_is_the_leads() -> None:
    result = answer()
    assert outcome(result, [task(1, C, "alice"), task(2, C, "bob")]) is result


def test_a_failed_task_makes_the_answer_an_error_naming_it() -> None:
    got = outcome(answer(), [task(1, C, "alice"), task(2, F, "bob")])
    assert (got.is_error, got.subtype) == (True, "error_tasks")
    assert got.result == "all done\n\nThe team did not finish every task (failed: task_2)."


def test_tasks_left_open_make_the_answer_an_error_naming_them() -> None:
    got = outcome(answer(), [task(1, P, "bob"), task(2, P, None, blocked_by=(1,))])
    assert got.is_error
    assert got.result.endswith("(not done (no teammate could take them): task_1, task_2).")


def test_an_answer_that_is_an_error_already_is_kept_as_it_is() -> None:
    result = answer("ran out of turns", is_error=True)
    assert outcome(result, [task(1, F, "alice")]) is result


def test_the_note_stands_alone_when_the_lead_said_nothing() -> None:
    got = outcome(answer(""), [task(1, F, "alice")])
    assert got.result == "The team did not finish every task (failed: task_1)."


@given(team_boards(), st.booleans())
def test_the_answer_is_an_error_exactly_when_a_task_is_not_completed(
    tasks: list[Task], was_error: bool
) -> None:
    got = outcome(answer("the lead's words", is_error=was_error), tasks)
    assert got.is_error == (was_error or any(t.status is not C for t in tasks))
    assert got.result.startswith("the lead's words")
    note = got.result.removeprefix("the lead's words")
    named = set(re.findall(r"task_[0-9]+", note))
    assert named == (set() if was_error else {t.id for t in tasks if t.status is not C})


@given(team_boards())
def test_the_note_changes_only_the_text_and_the_error_flag(tasks: list[Task]) -> None:
    before = answer()
    after = outcome(before, tasks)
    same = ("num_turns", "usage", "total_cost_usd", "duration_ms", "goal")
    assert [getattr(after, f) for f in same] == [getattr(before, f) for f in same]
