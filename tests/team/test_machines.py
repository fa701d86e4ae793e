"""The lead's and the teammate's pure decisions (team/_lead_rules.py, _teammate_rules.py)."""

from __future__ import annotations

import ast
import inspect

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.team import _protocol as proto
from coterie.team._lead_rules import (
    Finish,
    LeadMachine,
    LeadTurns,
    RejectPlan,
    Wait,
    answered_plan,
)
from coterie.team._teammate_rules import (
    MAX_PLAN_ROUNDS,
    AnswerShutdown,
    Converse,
    CycleProtocolError,
    DoTask,
    Ignore,
    Phase,
    ProposePlan,
    Revise,
    Settle,
    TeammateMachine,
)

# -- the lead --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(proto.LEAD_TURNS))
def test_with_each_every_report_that_needs_the_lead_costs_a_turn(kind: str) -> None:
    machine = LeadMachine("each")
    assert machine.arrived("m1", kind, "alice", "task_1") is None
    turn = machine.free()
    assert turn is not None
    assert [k.id for k in turn.items] == ["m1"]


@pytest.mark.parametrize("lead_turns", ["batched", "each"])
def test_an_idle_notice_costs_no_turn(lead_turns: LeadTurns) -> None:
    machine = LeadMachine(lead_turns)
    machine.arrived("i1", proto.IDLE, "alice")
    assert machine.free() is None


def test_a_plan_left_unanswered_by_the_leads_turn_is_rejected() -> None:
    for answered, rejections in [
        (set(), (RejectPlan("alice", "task_1", "p1"),)),
        ({("alice", "task_1")}, ()),
    ]:
        machine = LeadMachine()
        machine.arrived("p1", proto.PLAN_REQUEST, "alice", "task_1")
        machine.arrived("r1", proto.RESULT, "bob", "task_2")
        turn = machine.free()
        assert turn is not None
        assert machine.turned(turn, answered).rejections == rejections


def test_the_lead_never_finishes_over_mail_it_has_not_read() -> None:
    assert LeadMachine().board([], ("alice",), mail_waiting=True) == Wait()
    assert LeadMachine().board([], ("alice",), mail_waiting=False) == Finish()


def approve(call_id: str, teammate: str, task_id: str) -> dict[str, object]:
    return {
        "role": "assistant",
        "content": [
            {
                "type": "tool_use",
                "id": call_id,
                "name": "ApprovePlan",
                "input": {"teammate": teammate, "task_id": task_id, "approve": True},
            }
        ],
    }


def result(call_id: str, *, error: bool = False) -> dict[str, object]:
    return {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": call_id, "is_error": error}],
    }


PROMPT = {"role": "user", "content": [{"type": "text", "text": "plan for task_1"}]}


def test_an_approval_in_the_latest_turn_answers_the_plan() -> None:
    history = [PROMPT, approve("c1", "alice", "task_1"), result("c1")]
    assert answered_plan(history, "alice", "task_1")
    assert not answered_plan(history, "bob", "task_1")
    assert not answered_plan(history, "alice", "task_2")


def test_a_refused_approval_does_not_answer_the_plan() -> None:
    history = [PROMPT, approve("c1", "alice", "task_1"), result("c1", error=True)]
    assert not answered_plan(history, "alice", "task_1")


def test_an_approval_in_an_earlier_turn_does_not_count() -> None:
    history = [PROMPT, approve("c1", "alice", "task_1"), result("c1"), PROMPT]
    assert not answered_plan(history, "alice", "task_1")


# -- the teammate ----------------------------------------------------------------------


def test_a_shutdown_request_stops_the_teammate() -> None:
    machine = TeammateMachine()
    assert machine.mail(proto.SHUTDOWN_REQUEST) == AnswerShutdown()
    assert machine.phase is Phase.STOPPED
    with pytest.raises(CycleProtocolError):
        machine.mail(proto.MESSAGE)


def test_messages_are_conversed_and_other_kinds_ignored() -> None:
    machine = TeammateMachine()
    assert machine.mail(proto.MESSAGE) == Converse()
    assert machine.mail(proto.RESULT) == Ignore()
    assert machine.phase is Phase.IDLE


def test_without_plan_approval_a_task_is_worked_on_and_settled() -> None:
    machine = TeammateMachine()
    assert machine.took("task_1", approved=False) == DoTask("task_1", planning=False)
    with pytest.raises(CycleProtocolError):
        machine.mail(proto.MESSAGE)  # mail waits while the teammate works
    assert machine.turned(False, "done") == Settle("task_1", "completed", "done")
    assert machine.phase is Phase.IDLE


def test_a_failed_turn_fails_the_task() -> None:
    machine = TeammateMachine()
    machine.took("task_1", approved=False)
    assert machine.turned(True, "model error") == Settle("task_1", "failed", "model error")


def test_a_plan_is_proposed_and_once_approved_carried_out() -> None:
    machine = TeammateMachine(plan_approval=True)
    assert machine.took("task_1", approved=False) == DoTask("task_1", planning=True)
    assert machine.turned(False, "PLAN") == ProposePlan("task_1", "PLAN")
    assert machine.answered(True) == Revise("task_1", planning=False)
    assert machine.turned(False, "did it") == Settle("task_1", "completed", "did it")


def test_a_task_approved_before_a_restart_is_not_planned_again() -> None:
    machine = TeammateMachine(plan_approval=True)
    assert machine.took("task_1", approved=True) == DoTask("task_1", planning=False)


def test_after_the_last_rejection_the_task_fails() -> None:
    machine = TeammateMachine(plan_approval=True)
    machine.took("task_1", approved=False)
    decision = machine.turned(False, "plan 0")
    for round_ in range(MAX_PLAN_ROUNDS):
        assert isinstance(decision, ProposePlan)
        assert machine.answered(False) == Revise("task_1", planning=True)
        decision = machine.turned(False, f"plan {round_ + 1}")
    assert isinstance(decision, Settle)
    assert decision.status == "failed"
    assert str(MAX_PLAN_ROUNDS) in decision.result


@given(st.lists(st.booleans(), max_size=10))
def test_a_planning_task_always_ends_settled_within_the_rounds(answers: list[bool]) -> None:
    """Whatever the lead answers, a task ends settled after at most MAX_PLAN_ROUNDS
    proposals and is completed only if a plan was approved."""
    machine = TeammateMachine(plan_approval=True)
    machine.took("task_1", approved=False)
    decision = machine.turned(False, "plan")
    proposals, approved = 0, False
    feed = iter(answers)
    while isinstance(decision, ProposePlan):
        proposals += 1
        approved = next(feed, False)
        machine.answered(approved)
        decision = machine.turned(False, "text")
    assert proposals <= MAX_PLAN_ROUNDS
    assert (decision.status == "completed") == approved
    assert machine.phase is Phase.IDLE


@pytest.mark.parametrize("module", ["coterie.team._lead_rules", "coterie.team._teammate_rules"])
def test_the_machines_import_no_trio(module: str) -> None:
    source = inspect.getsource(__import__(module, fromlist=["x"]))
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        str(node.module).split(".")[0]
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom)
    }
    assert "trio" not in imported
