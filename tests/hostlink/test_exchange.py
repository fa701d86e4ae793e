"""The control channel's bookkeeping: every request answered once, or cancelled."""

from __future__ import annotations

import json
from collections import Counter

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from coterie.hostlink import (
    Answered,
    Cancel,
    CancelHandler,
    Dispatch,
    Exchange,
    Request,
    Response,
    Stray,
    Turn,
    Write,
    encode,
    error_response,
    success_response,
    writes,
)

SERVES = frozenset({"initialize", "interrupt", "set_permission_mode"})


def request_line(request_id: str, subtype: str, **fields: object) -> str:
    return encode(Request(request_id, subtype, {"subtype": subtype, **fields}))


def test_a_host_request_is_dispatched_then_answered_once() -> None:
    ex = Exchange(SERVES)
    [dispatch] = ex.receive(request_line("r1", "set_permission_mode", mode="plan"))
    assert isinstance(dispatch, Dispatch)
    assert dispatch.request.body["mode"] == "plan"
    assert writes(ex.complete("r1", {"mode": "plan"})) == [success_response("r1", {"mode": "plan"})]
    assert ex.complete("r1", {}) == []  # answered already
    assert ex.in_flight == frozenset()


def test_an_unknown_subtype_is_answered_with_an_error_at_once() -> None:
    ex = Exchange(SERVES)
    [reply] = writes(ex.receive(request_line("r1", "teleport")))
    assert isinstance(reply, Response)
    assert reply.outcome == "error"
    assert "unsupported control request subtype 'teleport'" in reply.error
    assert ex.in_flight == frozenset()


def test_an_unreadable_request_with_an_id_is_answered_with_an_error() -> None:
    ex = Exchange(SERVES)
    line = json.dumps({"type": "control_request", "request_id": "r7", "request": []})
    [reply] = writes(ex.receive(line))
    assert reply == error_response("r7", reply.error)  # type: ignore[union-attr]
    [stray] = ex.receive("garbage")
    assert isinstance(stray, Stray)
    assert "line 2: not JSON" in stray.note


def test_a_reused_id_in_flight_gets_no_answer_of_its_own() -> None:
    ex = Exchange(SERVES)
    ex.receive(request_line("r1", "interrupt"))
    [stray] = ex.receive(request_line("r1", "interrupt"))
    assert isinstance(stray, Stray)
    assert writes(ex.complete("r1", {})) == [success_response("r1", {})]


def test_a_cancelled_handler_answers_nothing() -> None:
    ex = Exchange(SERVES)
    ex.receive(request_line("r1", "initialize"))
    assert ex.receive(encode(Cancel("r1"))) == [CancelHandler("r1")]
    assert ex.complete("r1", {}) == []
    assert ex.fail("r1", "late") == []
    [stray] = ex.receive(encode(Cancel("r1")))
    assert isinstance(stray, Stray)


def test_our_request_is_settled_by_the_hosts_answer() -> None:
    ex = Exchange(SERVES)
    request = ex.ask("can_use_tool", {"tool_name": "Bash"}, now=0, timeout=30)
    assert request.body == {"tool_name": "Bash", "subtype": "can_use_tool"}
    answer = success_response(request.request_id, {"behavior": "allow"})
    [settled] = ex.receive(encode(answer))
    assert settled == Answered(request.request_id, "can_use_tool", answer)
    [late] = ex.receive(encode(answer))
    assert isinstance(late, Stray)


def test_our_request_times_out_once_and_the_host_is_told() -> None:
    ex = Exchange(SERVES)
    first = ex.ask("can_use_tool", {}, now=0, timeout=30)
    second = ex.ask("hook_callback", {}, now=10, timeout=30)
    assert first.request_id != second.request_id
    assert ex.next_deadline() == 30
    assert ex.expire(29.9) == []
    decisions = ex.expire(30)
    assert writes(decisions) == [Cancel(first.request_id)]
    [settled] = [d for d in decisions if isinstance(d, Answered)]
    assert settled.timed_out
    assert settled.response is None
    assert ex.expire(31) == []
    assert ex.pending == {second.request_id}


def test_an_abandoned_request_is_cancelled_at_the_host() -> None:
    ex = Exchange(SERVES)
    request = ex.ask("hook_callback", {"callback_id": "hook_0"}, now=0, timeout=60)
    decisions = ex.abandon(request.request_id)
    assert writes(decisions) == [Cancel(request.request_id)]
    assert ex.abandon(request.request_id) == []


def test_the_end_of_input_settles_our_requests_and_still_answers_the_hosts() -> None:
    """No answer to ours can come once the host's input ended; the host still reads
    the output, so its requests being handled are answered when done."""
    ex = Exchange(SERVES)
    asked = [ex.ask("can_use_tool", {}, now=0, timeout=60) for _ in range(3)]
    ex.receive(request_line("h1", "interrupt"))
    lost = ex.close()
    assert {a.request_id for a in lost} == {r.request_id for r in asked}  # type: ignore[union-attr]
    assert all(isinstance(a, Answered) and a.reason == "host gone" for a in lost)
    assert ex.pending == frozenset()
    assert ex.in_flight == frozenset({"h1"})
    [write] = ex.complete("h1", {})
    assert isinstance(write, Write)
    assert write.frame.request_id == "h1"


def test_a_user_line_is_a_turn() -> None:
    ex = Exchange(SERVES)
    line = json.dumps({"type": "user", "message": {"role": "user", "content": "go"}})
    [turn] = ex.receive(line)
    assert isinstance(turn, Turn)
    assert turn.raw["message"]["content"] == "go"


class ExchangeMachine(RuleBasedStateMachine):
    """Any interleaving of requests, answers, cancels, timeouts and a lost host keeps
    the promise: each host request answered at most once, never after its cancel;
    each of ours settled exactly once."""

    def __init__(self) -> None:
        super().__init__()
        self.ex = Exchange(SERVES)
        self.now = 0.0
        self.host_ids: list[str] = []
        self.answers: Counter[str] = Counter()
        self.cancelled: set[str] = set()
        self.ours: list[str] = []
        self.settled: Counter[str] = Counter()

    def take(self, decisions: list) -> None:  # type: ignore[type-arg]
        for d in decisions:
            if isinstance(d, Answered):
                self.settled[d.request_id] += 1
        for frame in writes(decisions):
            if isinstance(frame, Response):
                assert frame.request_id not in self.cancelled
                self.answers[frame.request_id] += 1

    @rule(subtype=st.sampled_from([*SERVES, "unknown"]), reuse=st.booleans())
    def host_asks(self, subtype: str, reuse: bool) -> None:
        request_id = self.host_ids[-1] if reuse and self.host_ids else f"h{len(self.host_ids)}"
        if not reuse or not self.host_ids:
            self.host_ids.append(request_id)
        elif request_id not in self.ex.in_flight:  # a new request under a settled id
            self.answers[request_id] = 0
            self.cancelled.discard(request_id)
        self.take(self.ex.receive(request_line(request_id, subtype)))

    @precondition(lambda self: self.host_ids)
    @rule(data=st.data(), ok=st.booleans())
    def handler_ends(self, data: st.DataObject, ok: bool) -> None:
        request_id = data.draw(st.sampled_from(self.host_ids))
        self.take(self.ex.complete(request_id, {}) if ok else self.ex.fail(request_id, "x"))

    @precondition(lambda self: self.host_ids)
    @rule(data=st.data())
    def host_cancels(self, data: st.DataObject) -> None:
        request_id = data.draw(st.sampled_from(self.host_ids))
        decisions = self.ex.receive(encode(Cancel(request_id)))
        if decisions == [CancelHandler(request_id)]:
            self.cancelled.add(request_id)
        self.take(decisions)

    @rule(timeout=st.floats(min_value=0.1, max_value=60))
    def we_ask(self, timeout: float) -> None:
        self.ours.append(self.ex.ask("can_use_tool", {}, now=self.now, timeout=timeout).request_id)

    @precondition(lambda self: self.ours)
    @rule(data=st.data())
    def host_answers(self, data: st.DataObject) -> None:
        request_id = data.draw(st.sampled_from(self.ours))
        self.take(self.ex.receive(encode(success_response(request_id, {}))))

    @rule(step=st.floats(min_value=0, max_value=30))
    def time_passes(self, step: float) -> None:
        self.now += step
        self.take(self.ex.expire(self.now))

    @precondition(lambda self: self.ours)
    @rule(data=st.data())
    def we_abandon(self, data: st.DataObject) -> None:
        self.take(self.ex.abandon(data.draw(st.sampled_from(self.ours))))

    @rule()
    def host_goes(self) -> None:
        self.take(self.ex.close())

    @invariant()
    def each_answered_at_most_once(self) -> None:
        assert all(n <= 1 for n in self.answers.values())
        assert all(n == 1 for n in self.settled.values())
        for request_id in self.ours:
            waiting = request_id in self.ex.pending
            assert waiting != (self.settled[request_id] == 1)


TestExchangeMachine = ExchangeMachine.TestCase
