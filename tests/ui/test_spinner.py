"""The live line of the console view: what it says for a given state and time, when
it is drawn and erased, and the closing line of a request (issue 26)."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console

from coterie.events import Event
from coterie.ui import ConsoleView, TerminalAsker
from coterie.ui.spend import Spend, SpendCounter
from coterie.ui.spinner import Activity, elapsed
from coterie.ui.views import request_line


def event(type: str, **data: Any) -> Event:
    return Event(seq=0, type=type, ts=0.0, data=data)


def call(id: str, command: str, actor: str = "lead") -> Event:
    return event("agent.tool_call", actor=actor, id=id, name="Bash", input={"command": command})


def done(id: str, actor: str = "lead") -> Event:
    return event("agent.tool_result", actor=actor, id=id, name="Bash", content="", is_error=False)


def words(line: str | None) -> str | None:
    """The line without its spinner frame."""
    return None if line is None else line[2:]


# -- the pure part: events and the clock in, the line out ----------------------------


def test_a_quick_call_shows_nothing_and_a_long_one_its_seconds() -> None:
    activity = Activity()
    activity.feed(call("t1", "make test"), now=100.0)
    assert activity.line(100.9) is None
    assert words(activity.line(112.5)) == "Bash(make test) · 12s · Ctrl-C to stop"
    activity.feed(done("t1"), now=113.0)
    assert activity.line(114.0) is None
    assert not activity.busy


def test_a_model_call_is_shown_until_its_reply_begins_to_stream() -> None:
    activity = Activity()
    activity.feed(event("model.requested", actor="lead", turn=1), now=0.0)
    assert words(activity.line(3.0)) == "waiting for the model · 3s · Ctrl-C to stop"
    activity.feed(event("model.retrying", actor="lead", attempt=2, attempts=10), now=4.0)
    assert (
        words(activity.line(5.0)) == "waiting for the model · 5s · retry 2 of 10 · Ctrl-C to stop"
    )
    activity.feed(event("agent.text_delta", actor="lead", text="Hel"), now=6.0)
    assert activity.line(9.0) is None  # never over streamed text


def test_a_subagents_work_is_named_and_its_end_uncovers_the_outer_call() -> None:
    activity = Activity()
    outer = event("agent.tool_call", actor="lead", id="a1", name="Agent",
                  input={"description": "look around"})  # fmt: skip
    activity.feed(outer, now=0.0)
    activity.feed(call("t1", "ls", actor="explore-1"), now=2.0)
    assert words(activity.line(4.0)) == "explore-1: Bash(ls) · 2s · Ctrl-C to stop"
    activity.feed(event("agent.result", actor="explore-1"), now=5.0)
    assert words(activity.line(6.0)) == "Agent(look around) · 6s · Ctrl-C to stop"


def test_the_time_a_question_waits_does_not_count() -> None:
    activity = Activity()
    activity.feed(call("t1", "make"), now=0.0)
    activity.pause(0.1)
    assert activity.line(30.0) is None  # nothing drawn while the person answers
    activity.resume(30.1)
    assert words(activity.line(32.1)) == "Bash(make) · 2s · Ctrl-C to stop"


def test_an_interruption_closes_everything_the_agent_had_open() -> None:
    activity = Activity()
    activity.feed(call("t1", "sleep 100"), now=0.0)
    activity.feed(event("agent.interrupted", actor="lead"), now=1.0)
    assert not activity.busy


@pytest.mark.parametrize(
    ("seconds", "shown"), [(0.4, "0s"), (59.9, "59s"), (65, "1m 05s"), (3720, "1h 02m")]
)
def test_elapsed_time_reads_as_seconds_minutes_hours(seconds: float, shown: str) -> None:
    assert elapsed(seconds) == shown


# -- the view: drawn in the console's live region, erased before anything else ------


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def terminal() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, width=100, force_terminal=True, color_system=None), buffer


def test_the_view_draws_the_line_after_a_second_and_erases_it_at_the_result() -> None:
    from tests.ui.terminal import screen

    console, buffer = terminal()
    clock = Clock()
    view = ConsoleView(console, clock=clock)
    view.event(call("t1", "make test"))
    view._tick()
    assert "Ctrl-C to stop" not in buffer.getvalue()
    clock.now = 3.0
    view._tick()
    assert "Bash(make test) · 3s · Ctrl-C to stop" in buffer.getvalue()
    view.event(done("t1"))
    lines = screen(buffer.getvalue())
    assert not [line for line in lines if "Ctrl-C to stop" in line]
    assert lines[:2] == ["⏺ Bash(make test)", "  ⎿"]


def test_off_a_terminal_the_view_draws_no_line() -> None:
    buffer = io.StringIO()
    view = ConsoleView(Console(file=buffer, width=100), clock=lambda: 10.0)
    view.event(call("t1", "make"))
    view._tick()
    assert "Ctrl-C" not in buffer.getvalue()
    assert not view._live


async def test_a_permission_question_pauses_the_line_and_its_wait_is_not_counted() -> None:
    console, buffer = terminal()
    clock = Clock()
    view = ConsoleView(console, clock=clock)
    view.event(call("t1", "make"))
    clock.now = 2.0
    view._tick()
    assert view.region.showing
    seen: list[bool] = []

    async def read() -> str:
        asked = len(buffer.getvalue())  # the question is on screen
        for clock.now in (2.1, 40.0):  # the view's loop ticks while the person thinks
            view._tick()
        seen.append(view.region.showing)
        assert "Ctrl-C to stop" not in buffer.getvalue()[asked:]
        return "1"

    asker = TerminalAsker(console, read=read)  # the console's region: the view's
    assert asker.region is view.region
    before = len(buffer.getvalue())
    await asker.ask("Bash", {"command": "make"}, "why")
    assert seen == [False]
    view._tick()  # at once after the answer (40 s), as the loop's next tick
    clock.now = 41.0  # 2.1 s of work before the question, 1 s after
    view._tick()
    assert "Bash(make) · 3s · Ctrl-C to stop" in buffer.getvalue()[before:]
    view.stop()


# -- the closing line: this request's numbers --------------------------------------


def reply(input_tokens: int, output_tokens: int, actor: str = "lead") -> Event:
    usage = {"input_tokens": input_tokens, "output_tokens": output_tokens}
    return event("agent.message", actor=actor, content=[], usage=usage,
                 model="claude-sonnet-4-5")  # fmt: skip


RESULT = {
    "result": "ok",
    "is_error": False,
    "num_turns": 2,
    "usage": {"input_tokens": 90_000, "output_tokens": 9_000},  # the lead's since the run began
    "total_cost_usd": 1.5,
    "duration_ms": 4200,
}


def test_the_closing_line_counts_this_requests_replies_not_the_runs_totals() -> None:
    console = Console(file=io.StringIO(), width=200)
    view = ConsoleView(console)
    for e in (reply(1000, 50), reply(1200, 30, actor="explore-1"), reply(1300, 20)):
        view.event(e)
    view.finish(RESULT)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert "● this request: 2 turns · 3,500 in / 100 out tokens · $0.0120 · 4.2s" in out
    assert "90,000" not in out
    view.event(reply(10, 1))
    view.finish(RESULT)  # the next request starts from nothing
    assert "· 10 in / 1 out tokens ·" in console.file.getvalue()  # type: ignore[attr-defined]


def test_the_spend_counter_prices_each_reply_as_the_ledger_does() -> None:
    from coterie.models import Usage
    from coterie.models.pricing import cost_usd

    counter = SpendCounter()
    counter.event(reply(1000, 50))
    counter.event(event("agent.tool_call", actor="lead", id="x", name="Bash", input={}))
    spent = counter.take()
    expected = cost_usd("claude-sonnet-4-5", Usage(1000, 50))
    assert spent == Spend(1, Usage(1000, 50), expected)
    assert counter.take() == Spend()
    assert request_line({**RESULT, "num_turns": 0}, Spend()).startswith("this request: 0 turns")
