"""The lead's batching (team/_lead_rules.py): which messages cost a turn, which wait
for one, and that none is lost or acknowledged early across crashes (Hypothesis)."""

from __future__ import annotations

from typing import Literal

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coterie.board import Task, TaskStatus
from coterie.team import _protocol as proto
from coterie.team._lead_rules import (
    Ack,
    Finish,
    Kept,
    LeadMachine,
    RejectPlan,
    Turn,
    Wait,
    work_id,
)

DONE = [Task(id="task_1", subject="s", description="", status=TaskStatus.COMPLETED, owner="alice")]
BUSY = [
    Task(id="task_1", subject="s", description="", status=TaskStatus.IN_PROGRESS, owner="alice")
]


def test_completed_results_and_idle_notices_wait_for_the_final_turn() -> None:
    machine = LeadMachine()
    assert machine.arrived("r1", proto.RESULT, "alice", "task_1") is None
    assert machine.arrived("i1", proto.IDLE, "alice", "task_1") is None
    assert machine.arrived("r2", proto.RESULT, "bob", "task_2") is None
    assert machine.free() is None
    assert machine.board(BUSY, ("alice",), mail_waiting=False) == Wait()
    assert machine.board(DONE, ("alice",), mail_waiting=True) == Wait()
    turn = machine.board(DONE, ("alice",), mail_waiting=False)
    assert isinstance(turn, Turn)
    assert turn.final
    assert [k.id for k in turn.items] == ["r1", "i1", "r2"]
    assert machine.turned(turn).ack == ("r1", "i1", "r2")
    assert machine.board(DONE, ("alice",), mail_waiting=False) == Finish()


def test_idle_notices_alone_are_acknowledged_when_the_team_finishes() -> None:
    machine = LeadMachine()
    machine.arrived("i1", proto.IDLE, "alice")
    assert machine.board(DONE, ("alice",), mail_waiting=False) == Finish(("i1",))
    assert machine.kept == ()


@pytest.mark.parametrize(
    ("kind", "failed"),
    [
        (proto.RESULT, True),
        (proto.MESSAGE, False),
        (proto.PLAN_REQUEST, False),
        (proto.TEAMMATE_STOPPED, False),
    ],
)
def test_what_needs_the_leads_decision_wakes_it_with_everything_kept(
    kind: str, failed: bool
) -> None:
    machine = LeadMachine()
    machine.arrived("r1", proto.RESULT, "alice", "task_1")
    machine.arrived("w", kind, "bob", "task_2", failed=failed)
    turn = machine.free()
    assert turn == Turn((Kept("r1", proto.RESULT, "alice", "task_1"), machine.kept[1]))
    assert not turn.final


def test_with_each_every_message_but_an_idle_notice_is_a_turn_of_its_own() -> None:
    machine = LeadMachine("each")
    assert machine.arrived("i1", proto.IDLE, "alice") == Ack(("i1",))
    machine.arrived("r1", proto.RESULT, "alice", "task_1")
    machine.arrived("r2", proto.RESULT, "bob", "task_2")
    first = machine.free()
    assert first is not None
    assert [k.id for k in first.items] == ["r1"]
    assert first.work_id == "r1"
    assert machine.turned(first).ack == ("r1",)
    second = machine.free()
    assert second is not None
    assert [k.id for k in second.items] == ["r2"]


def test_a_malformed_message_is_acknowledged_and_never_a_turn() -> None:
    machine = LeadMachine()
    assert machine.arrived("m", "malformed", "alice") == Ack(("m",))
    assert machine.kept == ()


def test_a_message_read_twice_is_kept_once() -> None:
    machine = LeadMachine()
    machine.arrived("r1", proto.RESULT, "alice", "task_1")
    machine.arrived("r1", proto.RESULT, "alice", "task_1")
    assert len(machine.kept) == 1


def test_every_unanswered_plan_of_a_turn_is_rejected_by_its_request_id() -> None:
    machine = LeadMachine()
    machine.arrived("p1", proto.PLAN_REQUEST, "alice", "task_1")
    machine.arrived("p2", proto.PLAN_REQUEST, "bob", "task_2")
    machine.arrived("r", proto.RESULT, "carol", "task_3")
    turn = machine.free()
    assert turn is not None
    turned = machine.turned(turn, answered={("alice", "task_1")})
    assert turned.rejections == (RejectPlan("bob", "task_2", "p2"),)
    assert turned.ack == ("p1", "p2", "r")


def test_a_turn_begun_before_a_restart_is_continued_with_what_it_carried() -> None:
    machine = LeadMachine()
    for i in range(3):
        machine.arrived(f"r{i}", proto.RESULT, "alice", f"task_{i}")
    begun = {work_id(machine.kept[:2])}
    machine.arrived("m", proto.MESSAGE, "bob")
    assert machine.free(begun) == Turn(machine.kept), "only messages delivered again"
    machine = LeadMachine()
    for i in range(3):
        machine.arrived(f"r{i}", proto.RESULT, "alice", f"task_{i}", redelivered=True)
    machine.arrived("m", proto.MESSAGE, "bob")
    turn = machine.free(begun)
    assert turn is not None
    assert [k.id for k in turn.items] == ["r0", "r1"]


def test_a_work_id_is_fixed_by_the_messages_and_their_order() -> None:
    a, b = Kept("a", proto.RESULT, "x"), Kept("b", proto.RESULT, "y")
    assert work_id((a,)) == "a"
    assert work_id((a, b)) == work_id((a, b))
    assert work_id((a, b)) != work_id((b, a))
    assert work_id((a, b)).startswith("a+1.")


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="lead_turns"):
        LeadMachine("sometimes")  # type: ignore[arg-type]


# -- any interleaving, any crash -----------------------------------------------------

KINDS = st.sampled_from(
    [
        (proto.RESULT, False),
        (proto.RESULT, False),
        (proto.RESULT, True),
        (proto.IDLE, False),
        (proto.MESSAGE, False),
        (proto.PLAN_REQUEST, False),
        (proto.TEAMMATE_STOPPED, False),
    ]
)
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("arrive"), KINDS),
        st.tuples(st.just("free"), st.sampled_from(["whole", "crash_in_turn", "crash_before_ack"])),
        st.tuples(st.just("crash"), st.none()),
    ),
    max_size=40,
)


@attrs.define
class Lead:
    """A driver of the machine over a model of the mailbox (log order, at-least-once)
    and of the lead's transcript (the work ids begun, the turns recorded)."""

    mode: Literal["batched", "each"]
    mailbox: list[tuple[str, str, bool]] = attrs.field(factory=list)  # unacknowledged
    unread: list[tuple[str, str, bool]] = attrs.field(factory=list)
    again: set[str] = attrs.field(factory=set)  # delivered again since the last crash
    begun: set[str] = attrs.field(factory=set)
    recorded: dict[str, tuple[str, ...]] = attrs.field(factory=dict)  # work id -> ids
    final_turns: list[str] = attrs.field(factory=list)
    acked: list[str] = attrs.field(factory=list)
    kinds: dict[str, str] = attrs.field(factory=dict)  # every message's kind, by id
    machine: LeadMachine = attrs.field(
        default=attrs.Factory(lambda self: LeadMachine(self.mode), takes_self=True)
    )

    def arrive(self, kind: str, failed: bool) -> None:
        message = (f"m{len(self.kinds) + 1}", kind, failed)
        self.kinds[message[0]] = kind
        self.mailbox.append(message)
        self.unread.append(message)

    def read(self) -> None:
        for message_id, kind, failed in self.unread:
            decision = self.machine.arrived(
                message_id,
                kind,
                "alice",
                "task",
                failed=failed,
                redelivered=message_id in self.again,
            )
            if decision is not None:
                self.ack(decision.ids, turn=None)
        self.unread = []

    def ack(self, ids: tuple[str, ...], turn: str | None) -> None:
        for message_id in ids:
            kind = next(k for i, k, _ in self.mailbox if i == message_id)
            # Nothing is acknowledged before the turn that carries it is recorded
            # (an idle notice, carried by no turn, only when the team finishes or,
            # with "each", at once).
            assert (turn is not None and turn in self.recorded) or kind == proto.IDLE
            self.mailbox = [m for m in self.mailbox if m[0] != message_id]
            self.acked.append(message_id)

    def crash(self) -> None:
        """A new incarnation: every unacknowledged message is delivered again, in order."""
        self.machine = LeadMachine(self.mode)
        self.unread = list(self.mailbox)
        self.again = {m[0] for m in self.mailbox}

    def take(self, turn: Turn, how: str) -> None:
        wid, ids = turn.work_id, tuple(k.id for k in turn.items)
        assert self.recorded.get(wid, ids) == ids, "a continued turn carries what it carried"
        self.begun.add(wid)
        if how == "crash_in_turn":
            self.crash()
            return
        self.recorded[wid] = ids
        if turn.final:
            self.final_turns.append(wid)
        if how == "crash_before_ack":
            self.crash()
            return
        self.ack(self.machine.turned(turn).ack, turn=wid)

    def free(self, how: str) -> None:
        self.read()
        turn = self.machine.free(self.begun)
        if turn is not None:
            self.take(turn, how)

    def finish(self) -> None:
        """Every task finished: run the lead to its end (no more crashes)."""
        for _ in range(1000):
            self.read()
            turn = self.machine.free(self.begun)
            if turn is not None:
                self.take(turn, "whole")
                continue
            decision = self.machine.board(DONE, ("alice",), mail_waiting=False)
            if isinstance(decision, Finish):
                self.ack(decision.ack, turn=None)
                return
            assert isinstance(decision, Turn)
            self.take(decision, "whole")
        raise AssertionError("the lead never finished")


def run(steps: list[tuple[str, object]], lead: Lead) -> None:
    for step, arg in steps:
        if step == "arrive":
            assert isinstance(arg, tuple)
            lead.arrive(*arg)
        elif step == "free":
            lead.free(str(arg))
        else:
            lead.crash()
    lead.finish()


@settings(max_examples=300)
@given(STEPS, st.sampled_from(["batched", "each"]))
def test_every_message_reaches_exactly_one_recorded_turn_whatever_the_crashes(
    steps: list[tuple[str, object]], mode: Literal["batched", "each"]
) -> None:
    lead = Lead(mode)
    run(steps, lead)
    assert lead.mailbox == []
    kinds = lead.kinds
    every = set(kinds)
    assert sorted(lead.acked) == sorted(every)
    carried = [i for ids in lead.recorded.values() for i in ids]
    assert len(carried) == len(set(carried)), "no message in two turns"
    # Every message but an idle notice reaches a turn (the final one at the latest).
    assert {i for i in every if kinds[i] != proto.IDLE} <= set(carried)
    if mode == "each":
        assert all(len(ids) == 1 for ids in lead.recorded.values())
        assert all(kinds[i] != proto.IDLE for i in carried)


@settings(max_examples=200)
@given(
    st.lists(st.sampled_from([proto.RESULT, proto.IDLE]), min_size=1, max_size=30),
    st.lists(st.booleans(), max_size=30),
)
def test_with_nothing_to_decide_the_only_turn_is_the_final_one_and_it_sees_every_result(
    kinds: list[str], crashes: list[bool]
) -> None:
    lead = Lead("batched")
    for kind, crash in zip(kinds, [*crashes, *[False] * len(kinds)], strict=False):
        lead.arrive(kind, False)
        lead.free("whole")
        if crash:
            lead.crash()
    lead.finish()
    results = {f"m{n}" for n, k in enumerate(kinds, 1) if k == proto.RESULT}
    if results:
        assert len(lead.recorded) == 1
        (only,) = lead.recorded.values()
        assert results <= set(only)
        assert lead.final_turns == list(lead.recorded)
    else:
        assert lead.recorded == {}
