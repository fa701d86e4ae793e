"""The rules of the board (docs/teams.md), one behaviour per test, through the sync API."""

from __future__ import annotations

import pytest

from coterie.board import (
    Board,
    InvalidTaskField,
    InvalidTaskId,
    InvalidTransition,
    Lease,
    NotTaskOwner,
    TaskCycle,
    TaskStatus,
    UnknownTask,
)
from coterie.errors import CoterieError, InvalidActorName

P, R, C, F = TaskStatus.PENDING, TaskStatus.IN_PROGRESS, TaskStatus.COMPLETED, TaskStatus.FAILED


def claimed(board: Board, worker: str, now: float = 0.0, lease: float = 30.0) -> str:
    task = board.claim(worker, lease_seconds=lease, now=now)
    assert task is not None
    return task.id


# -- creation and ids ---------------------------------------------------------


def test_ids_are_sequential_in_creation_order(board: Board) -> None:
    ids = [board.create(f"s{n}", "d").id for n in range(12)]
    assert ids == [f"task_{n}" for n in range(1, 13)]
    assert [t.id for t in board.list()] == ids


def test_a_new_task_is_pending_unowned_and_unleased(board: Board) -> None:
    task = board.create("subject", "description")
    assert (task.status, task.owner, task.lease, task.result, task.assigned) == (
        P,
        None,
        None,
        None,
        False,
    )
    assert board.get("task_1") == task


def test_creating_with_an_owner_assigns_it(board: Board) -> None:
    task = board.create("s", "d", owner="alice")
    assert task.owner == "alice"
    assert task.assigned


@pytest.mark.parametrize(
    "bad", ["task_0", "task_01", "task_1234567890", "Task_1", "task-1", "task_", "1", "", " task_1"]
)
def test_malformed_ids_are_refused(board: Board, bad: str) -> None:
    board.create("s", "d")
    with pytest.raises(InvalidTaskId, match="task_1, task_2"):
        board.get(bad)


def test_a_non_string_id_is_refused(board: Board) -> None:
    with pytest.raises(InvalidTaskId):
        board.get(1)  # type: ignore[arg-type]


def test_a_trailing_newline_does_not_sneak_past_the_id_check(board: Board) -> None:
    with pytest.raises(InvalidTaskId):
        board.get("task_1\n")


def test_the_largest_well_formed_id_is_unknown_not_invalid(board: Board) -> None:
    with pytest.raises(UnknownTask, match="board is empty"):
        board.get("task_999999999")


def test_an_unknown_task_says_what_the_board_holds(board: Board) -> None:
    board.create("s", "d")
    with pytest.raises(UnknownTask, match=r"task_1\.\.task_1"):
        board.get("task_2")


def test_unknown_blockers_are_refused_and_nothing_is_written(board: Board) -> None:
    board.create("s", "d")
    with pytest.raises(UnknownTask, match="task_2"):
        board.create("s", "d", blocked_by=["task_1", "task_2"])
    assert len(board.list()) == 1
    assert board.create("s", "d").id == "task_2"


def test_a_malformed_blocker_is_refused(board: Board) -> None:
    with pytest.raises(InvalidTaskId):
        board.create("s", "d", blocked_by=["nope"])


def test_blocked_by_as_one_string_is_refused(board: Board) -> None:
    board.create("s", "d")
    with pytest.raises(InvalidTaskField, match="list of task ids"):
        board.create("s", "d", blocked_by="task_1")


def test_duplicate_blockers_are_kept_once(board: Board) -> None:
    board.create("s", "d")
    assert board.create("s", "d", blocked_by=["task_1", "task_1"]).blocked_by == ("task_1",)


@pytest.mark.parametrize(
    ("subject", "description"), [("", "d"), ("   ", "d"), (3, "d"), ("s", None)]
)
def test_bad_subject_or_description_is_refused(
    board: Board, subject: object, description: object
) -> None:
    with pytest.raises(InvalidTaskField):
        board.create(subject, description)  # type: ignore[arg-type]


def test_an_invalid_owner_name_is_refused(board: Board) -> None:
    with pytest.raises(InvalidActorName):
        board.create("s", "d", owner="Not A Name")


def test_errors_are_coterie_errors_and_builtins(board: Board) -> None:
    with pytest.raises(CoterieError):
        board.get("bad")
    with pytest.raises(ValueError, match="invalid task id"):
        board.get("bad")
    with pytest.raises(LookupError):
        board.get("task_5")


# -- claiming -------------------------------------------------------------------


def test_claim_takes_the_lowest_ready_task_and_leases_it(board: Board) -> None:
    board.create("a", "d")
    board.create("b", "d")
    task = board.claim("alice", lease_seconds=30, now=100.0)
    assert task is not None
    assert (task.id, task.status, task.owner) == ("task_1", R, "alice")
    assert task.lease == Lease("alice", 130.0)
    assert not task.assigned


def test_claim_returns_none_when_nothing_is_ready(board: Board) -> None:
    assert board.claim("alice", lease_seconds=30) is None
    board.create("a", "d")
    claimed(board, "alice", now=0.0)
    assert board.claim("bob", lease_seconds=30, now=1.0) is None


def test_a_task_is_not_ready_until_every_blocker_is_completed(board: Board) -> None:
    board.create("a", "d")
    board.create("b", "d")
    board.create("c", "d", blocked_by=["task_1", "task_2"])
    assert claimed(board, "w1") == "task_1"
    assert claimed(board, "w2") == "task_2"
    board.complete("task_1", "w1", "ok")
    assert board.claim("w3", lease_seconds=30, now=1.0) is None
    board.complete("task_2", "w2", "ok")
    assert claimed(board, "w3") == "task_3"


def test_a_failed_blocker_keeps_its_dependents_waiting(board: Board) -> None:
    board.create("a", "d")
    board.create("b", "d", blocked_by=["task_1"])
    board.fail(claimed(board, "w1"), "w1", "broken")
    assert board.claim("w1", lease_seconds=30, now=1.0) is None


def test_a_worker_gets_its_assigned_tasks_before_unassigned_ones(board: Board) -> None:
    board.create("free", "d")
    board.create("mine", "d", owner="alice")
    assert claimed(board, "alice") == "task_2"
    assert claimed(board, "alice") == "task_1"


def test_a_task_assigned_to_someone_else_is_never_claimed(board: Board) -> None:
    board.create("bob's", "d", owner="bob")
    assert board.claim("alice", lease_seconds=30) is None
    task = board.claim("bob", lease_seconds=30)
    assert task is not None
    assert task.assigned


def test_a_blocked_assigned_task_does_not_hide_ready_free_ones(board: Board) -> None:
    board.create("a", "d")
    board.create("b", "d", blocked_by=["task_1"], owner="alice")
    board.create("c", "d")
    assert claimed(board, "alice") == "task_1"
    assert claimed(board, "alice") == "task_3"


@pytest.mark.parametrize("lease", [0, -1, float("inf"), float("nan"), True, "5"])
def test_a_lease_must_be_a_positive_finite_number(board: Board, lease: object) -> None:
    with pytest.raises(InvalidTaskField):
        board.claim("alice", lease_seconds=lease)  # type: ignore[arg-type]


def test_a_claiming_worker_must_have_a_valid_name(board: Board) -> None:
    with pytest.raises(InvalidActorName):
        board.claim("", lease_seconds=5)


# -- the worker's side: complete, fail, release, renew ------------------------------


def test_complete_records_the_result_and_drops_the_lease(board: Board) -> None:
    board.create("a", "d")
    task = board.complete(claimed(board, "alice"), "alice", "all done")
    assert (task.status, task.result, task.owner, task.lease) == (C, "all done", "alice", None)


def test_fail_keeps_the_reason_as_result(board: Board) -> None:
    board.create("a", "d")
    task = board.fail(claimed(board, "alice"), "alice", "cannot")
    assert (task.status, task.result, task.lease) == (F, "cannot", None)


def test_release_hands_the_task_back_to_everyone(board: Board) -> None:
    board.create("a", "d", owner="alice")
    task = board.release(claimed(board, "alice"), "alice")
    assert (task.status, task.owner, task.assigned, task.lease) == (P, None, False, None)
    assert claimed(board, "bob") == "task_1"


def test_renew_extends_the_lease(board: Board) -> None:
    board.create("a", "d")
    task_id = claimed(board, "alice", now=0.0, lease=10)
    task = board.renew(task_id, "alice", lease_seconds=50, now=8.0)
    assert task.lease == Lease("alice", 58.0)
    assert board.expire_leases(now=20.0) == []


@pytest.mark.parametrize("op", ["complete", "fail", "release", "renew"])
def test_only_the_holder_may_act_on_a_task(board: Board, op: str) -> None:
    board.create("a", "d")
    task_id = claimed(board, "alice")
    with pytest.raises(
        NotTaskOwner, match="bob does not hold task_1: it is in progress under alice"
    ):
        call(board, op, task_id, "bob")
    assert board.get(task_id).owner == "alice"


@pytest.mark.parametrize("op", ["complete", "fail", "release", "renew"])
def test_a_pending_task_cannot_be_acted_on_as_if_held(board: Board, op: str) -> None:
    board.create("a", "d")
    with pytest.raises(NotTaskOwner, match="it is pending"):
        call(board, op, "task_1", "alice")


@pytest.mark.parametrize("op", ["complete", "fail", "release", "renew"])
def test_a_finished_task_cannot_be_acted_on(board: Board, op: str) -> None:
    board.create("a", "d")
    board.complete(claimed(board, "alice"), "alice", "ok")
    with pytest.raises(InvalidTransition, match="already completed"):
        call(board, op, "task_1", "alice")


def call(board: Board, op: str, task_id: str, worker: str) -> object:
    if op == "complete":
        return board.complete(task_id, worker, "r")
    if op == "fail":
        return board.fail(task_id, worker, "r")
    if op == "release":
        return board.release(task_id, worker)
    return board.renew(task_id, worker, lease_seconds=5, now=0.0)


# -- leases ----------------------------------------------------------------------


def test_an_expired_lease_returns_a_claimed_task_to_everyone(board: Board) -> None:
    board.create("a", "d")
    claimed(board, "alice", now=0.0, lease=10)
    assert board.expire_leases(now=9.99) == []
    [task] = board.expire_leases(now=10.0)
    assert (task.id, task.status, task.owner, task.lease) == ("task_1", P, None, None)
    assert claimed(board, "bob", now=10.0) == "task_1"


def test_an_expired_lease_keeps_an_explicit_assignment(board: Board) -> None:
    board.create("a", "d", owner="alice")
    claimed(board, "alice", now=0.0, lease=10)
    [task] = board.expire_leases(now=11.0)
    assert (task.status, task.owner, task.assigned) == (P, "alice", True)
    assert board.claim("bob", lease_seconds=5, now=11.0) is None
    assert claimed(board, "alice", now=11.0) == "task_1"


def test_claim_expires_leases_itself(board: Board) -> None:
    board.create("a", "d")
    claimed(board, "alice", now=0.0, lease=10)
    assert board.claim("bob", lease_seconds=10, now=5.0) is None
    assert claimed(board, "bob", now=10.5) == "task_1"


def test_the_worker_that_lost_its_lease_can_no_longer_complete(board: Board) -> None:
    board.create("a", "d")
    claimed(board, "alice", now=0.0, lease=10)
    claimed(board, "bob", now=11.0)
    with pytest.raises(NotTaskOwner, match="did its lease expire"):
        board.complete("task_1", "alice", "late")
    assert board.complete("task_1", "bob", "ok").owner == "bob"


def test_a_lapsed_but_unexpired_lease_still_lets_its_holder_finish(board: Board) -> None:
    """Nobody else can have the task until someone expires the lease."""
    board.create("a", "d")
    claimed(board, "alice", now=0.0, lease=10)
    assert board.complete("task_1", "alice", "ok").status is C


def test_expire_leases_returns_tasks_in_order_of_expiry(board: Board) -> None:
    for _ in range(3):
        board.create("a", "d")
    claimed(board, "w1", now=0.0, lease=30)
    claimed(board, "w2", now=0.0, lease=10)
    claimed(board, "w3", now=0.0, lease=20)
    assert [t.id for t in board.expire_leases(now=100.0)] == ["task_2", "task_3", "task_1"]


def test_now_must_be_a_finite_number(board: Board) -> None:
    with pytest.raises(InvalidTaskField):
        board.expire_leases(now=float("nan"))


# -- update (the lead's TaskUpdate) --------------------------------------------------


def test_update_assigns_and_unassigns_a_pending_task(board: Board) -> None:
    board.create("a", "d")
    task = board.update("task_1", owner="bob")
    assert (task.owner, task.assigned) == ("bob", True)
    task = board.update("task_1", owner=None)
    assert (task.owner, task.assigned) == (None, False)


def test_update_cannot_reassign_a_task_in_progress(board: Board) -> None:
    board.create("a", "d")
    claimed(board, "alice")
    with pytest.raises(InvalidTransition, match="must be released"):
        board.update("task_1", owner="bob")


def test_update_can_mark_the_owner_of_a_claimed_task_as_assigned(board: Board) -> None:
    board.create("a", "d")
    claimed(board, "alice")
    assert board.update("task_1", owner="alice").assigned


def test_update_adds_blockers_to_a_pending_task(board: Board) -> None:
    board.create("a", "d")
    board.create("b", "d")
    task = board.update("task_1", add_blocked_by=["task_2"])
    assert task.blocked_by == ("task_2",)
    assert claimed(board, "alice") == "task_2"
    assert board.claim("alice", lease_seconds=5, now=1.0) is None


def test_adding_an_existing_blocker_changes_nothing(board: Board) -> None:
    board.create("a", "d")
    board.create("b", "d", blocked_by=["task_1"])
    seq = board.statistics().seq
    assert board.update("task_2", add_blocked_by=["task_1"]).blocked_by == ("task_1",)
    assert board.statistics().seq == seq


def test_a_task_cannot_block_itself(board: Board) -> None:
    board.create("a", "d")
    with pytest.raises(TaskCycle, match="task_1 -> task_1"):
        board.update("task_1", add_blocked_by=["task_1"])


def test_a_cycle_through_other_tasks_is_refused_and_named(board: Board) -> None:
    board.create("a", "d")
    board.create("b", "d", blocked_by=["task_1"])
    board.create("c", "d", blocked_by=["task_2"])
    with pytest.raises(TaskCycle, match="task_1 -> task_3 -> task_2 -> task_1"):
        board.update("task_1", add_blocked_by=["task_3"])
    assert board.get("task_1").blocked_by == ()


def test_unknown_blockers_in_update_are_refused(board: Board) -> None:
    board.create("a", "d")
    with pytest.raises(UnknownTask):
        board.update("task_1", add_blocked_by=["task_9"])


def test_only_a_pending_task_can_gain_blockers(board: Board) -> None:
    board.create("a", "d")
    board.create("b", "d")
    claimed(board, "alice")
    with pytest.raises(InvalidTransition, match="only a pending task"):
        board.update("task_1", add_blocked_by=["task_2"])


def test_update_starts_a_ready_task_for_its_owner(board: Board) -> None:
    board.create("a", "d", owner="alice")
    task = board.update("task_1", status="in_progress", lease_seconds=10, now=5.0)
    assert (task.status, task.lease) == (R, Lease("alice", 15.0))


def test_update_without_a_lease_starts_a_task_that_never_expires(board: Board) -> None:
    board.create("a", "d")
    board.update("task_1", status=R, owner="alice")
    assert board.expire_leases(now=1e12) == []


def test_update_cannot_start_a_task_without_an_owner(board: Board) -> None:
    board.create("a", "d")
    with pytest.raises(InvalidTransition, match="needs an owner"):
        board.update("task_1", status=R)


def test_update_cannot_start_a_blocked_task(board: Board) -> None:
    board.create("a", "d")
    board.create("b", "d", blocked_by=["task_1"])
    with pytest.raises(InvalidTransition, match=r"blocked by task_1 \(pending\)"):
        board.update("task_2", status=R, owner="bob")


def test_a_task_cannot_be_completed_before_it_starts(board: Board) -> None:
    board.create("a", "d")
    with pytest.raises(InvalidTransition, match="pending to completed; claim it first"):
        board.update("task_1", status="completed")


def test_update_completes_a_task_in_progress_with_a_result(board: Board) -> None:
    board.create("a", "d")
    claimed(board, "alice")
    task = board.update("task_1", status=C, result="done by the lead")
    assert (task.status, task.result, task.lease, task.owner) == (
        C,
        "done by the lead",
        None,
        "alice",
    )


def test_update_can_fail_a_pending_task(board: Board) -> None:
    board.create("a", "d")
    assert board.update("task_1", status=F, result="not needed").status is F


def test_update_back_to_pending_clears_a_claimed_owner_but_keeps_an_assigned_one(
    board: Board,
) -> None:
    board.create("a", "d")
    board.create("b", "d", owner="bob")
    claimed(board, "alice")
    claimed(board, "bob")
    assert board.update("task_1", status=P).owner is None
    assert board.update("task_2", status=P).owner == "bob"


@pytest.mark.parametrize("status", [P, R, F])
def test_a_completed_task_never_changes_status(board: Board, status: TaskStatus) -> None:
    board.create("a", "d")
    board.complete(claimed(board, "alice"), "alice", "ok")
    with pytest.raises(InvalidTransition, match="finished task cannot change"):
        board.update("task_1", status=status, owner="alice")


@pytest.mark.parametrize("change", [{"owner": "bob"}, {"result": "x"}, {"status": P}])
def test_a_failed_task_is_final(board: Board, change: dict[str, object]) -> None:
    board.create("a", "d")
    board.update("task_1", status=F)
    with pytest.raises(InvalidTransition):
        board.update("task_1", **change)  # type: ignore[arg-type]


def test_an_update_that_changes_nothing_writes_nothing(board: Board) -> None:
    board.create("a", "d")
    board.update("task_1", status=F)
    seq = board.statistics().seq
    assert board.update("task_1", status=F).status is F
    assert board.update("task_1").status is F
    assert board.statistics().seq == seq


def test_an_unknown_status_is_refused(board: Board) -> None:
    board.create("a", "d")
    with pytest.raises(InvalidTaskField, match="pending, in_progress, completed, failed"):
        board.update("task_1", status="done")


def test_lease_seconds_only_applies_when_starting(board: Board) -> None:
    board.create("a", "d")
    with pytest.raises(InvalidTaskField, match="lease_seconds"):
        board.update("task_1", owner="bob", lease_seconds=10)


def test_a_refused_update_changes_nothing_at_all(board: Board) -> None:
    """All or nothing: a valid owner change is not applied when the status change is refused."""
    board.create("a", "d")
    board.create("b", "d", blocked_by=["task_1"])
    with pytest.raises(InvalidTransition):
        board.update("task_2", owner="bob", status=R)
    assert board.get("task_2").owner is None
