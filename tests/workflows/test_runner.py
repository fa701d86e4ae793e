"""The driver: agents run concurrently up to the cap, each answer journaled before the
script sees it, and a run cut short resumed without running a finished agent again."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest
import trio

from coterie.workflows.journal import Replay, WorkflowJournal, call_key
from coterie.workflows.machine import Done, Failed, Request, ScriptMachine
from coterie.workflows.runner import AgentOutcome, Progress, Summary, run_workflow

if TYPE_CHECKING:
    from pathlib import Path

META = "export const meta = {name: 't', description: 'a test'}\n"
FAN_OUT = META + "return await parallel(args.map((x) => () => agent('do ' + x, {label: x})))"


class Agents:
    """Fake agents: each answers its prompt upper-cased after ``delay`` seconds."""

    def __init__(self, delay: float = 1.0, fail: frozenset[str] = frozenset()) -> None:
        self.delay = delay
        self.fail = fail
        self.ran: Counter[str] = Counter()
        self.running = 0
        self.most = 0

    async def __call__(self, request: Request) -> AgentOutcome:
        self.ran[request.prompt] += 1
        self.running += 1
        self.most = max(self.most, self.running)
        try:
            await trio.sleep(self.delay)
        finally:
            self.running -= 1
        if request.prompt in self.fail:
            return AgentOutcome(ok=True, value=None, keep=False)
        return AgentOutcome(ok=True, value=request.prompt.upper(), keep=True)


async def drive(
    tmp_path: Path, source: str, args: Any, agents: Agents, replay: Replay | None = None, **kw: Any
) -> tuple[Summary, WorkflowJournal, list[Progress]]:
    journal = WorkflowJournal.create(
        tmp_path, f"wf{len(list(tmp_path.iterdir())):010d}", script=source, args=args, name="t"
    )
    seen: list[Progress] = []
    summary = await run_workflow(
        ScriptMachine(source, args), journal, replay or Replay(), agents, progress=seen.append, **kw
    )
    return summary, journal, seen


async def test_agents_run_at_once_up_to_the_cap(tmp_path: Path, autojump_clock: Any) -> None:
    agents = Agents()
    items = [f"x{i}" for i in range(10)]
    start = trio.current_time()
    summary, journal, _ = await drive(tmp_path, FAN_OUT, items, agents, concurrency=4)
    assert summary.outcome == Done([f"DO X{i}" for i in range(10)])
    assert agents.most == 4
    assert trio.current_time() - start == pytest.approx(3.0)  # ceil(10 / 4) rounds
    assert len(journal.results()) == 10
    assert journal.ended()


async def test_a_resumed_run_takes_every_finished_answer_whatever_the_order(
    tmp_path: Path, autojump_clock: Any
) -> None:
    """Cut short after some agents finished (out of call order), a run given the same
    script runs only the others."""
    source = (
        META + "return await pipeline(args, (x) => agent('find ' + x), (r) => agent('check ' + r))"
    )
    items = ["a", "b", "c"]
    agents = Agents()
    with trio.move_on_after(1.5):  # the three finds answered, no check yet
        await drive(tmp_path, source, items, agents)
    (first,) = [WorkflowJournal(f) for f in tmp_path.iterdir()]
    assert not first.ended()
    assert len(first.results()) == 3
    again = Agents()
    summary, second, seen = await drive(tmp_path, source, items, again, Replay.of(first.results()))
    assert summary.outcome == Done(["CHECK FIND A", "CHECK FIND B", "CHECK FIND C"])
    assert set(again.ran) == {"check FIND A", "check FIND B", "check FIND C"}
    assert (summary.ran, summary.reused) == (3, 3)
    assert sum(p.kind == "agent.reused" for p in seen) == 3
    # The second run's journal holds the reused answers too: a third run needs only it.
    assert len(second.results()) == 6


async def test_identical_calls_take_identical_answers_one_each(
    tmp_path: Path, autojump_clock: Any
) -> None:
    source = META + "return await parallel([1, 2, 3].map(() => () => agent('same')))"
    key = call_key("same", {})
    replay = Replay.of([(key, "first"), (key, "second")])
    agents = Agents()
    summary, _, _ = await drive(tmp_path, source, None, agents, replay)
    assert summary.outcome == Done(["first", "second", "SAME"])
    assert agents.ran == Counter({"same": 1})


async def test_a_failed_agent_is_null_for_the_script_and_runs_again_on_resume(
    tmp_path: Path, autojump_clock: Any
) -> None:
    agents = Agents(fail=frozenset({"do b"}))
    summary, journal, seen = await drive(tmp_path, FAN_OUT, ["a", "b"], agents)
    assert summary.outcome == Done(["DO A", None])
    assert len(journal.results()) == 1
    assert [p.text for p in seen if p.kind == "agent.failed"] == ["b"]


async def test_the_answer_is_journaled_before_the_script_is_told(
    tmp_path: Path, autojump_clock: Any
) -> None:
    source = META + "const a = await agent('a'); const b = await agent('b'); return a + b"
    journal = WorkflowJournal.create(tmp_path, "wf0000000000", script=source, args=None, name="t")
    held_when_told: list[int] = []

    class Watched(ScriptMachine):
        def settle(self, request: int, **kw: Any) -> None:
            held_when_told.append(len(journal.results()))
            super().settle(request, **kw)

    await run_workflow(Watched(source, None), journal, Replay(), Agents(), progress=lambda _: None)
    assert held_when_told == [1, 2]


async def test_agents_left_running_when_the_script_returns_are_cancelled(
    tmp_path: Path, autojump_clock: Any
) -> None:
    agents = Agents(delay=1000)
    source = META + "agent('slow'); await agent('fast', {model: 'x'}).catch(() => 0); return 'done'"

    async def run_agent(request: Request) -> AgentOutcome:
        if request.prompt == "fast":
            return AgentOutcome(ok=True, value="quick", keep=True)
        return await agents(request)

    start = trio.current_time()
    journal = WorkflowJournal.create(tmp_path, "wf0000000000", script=source, args=None, name="t")
    summary = await run_workflow(
        ScriptMachine(source, None), journal, Replay(), run_agent, progress=print
    )
    assert summary.outcome == Done("done")
    assert trio.current_time() - start < 1
    assert agents.running == 0


async def test_a_script_waiting_on_nothing_fails_at_once(tmp_path: Path) -> None:
    summary, journal, _ = await drive(
        tmp_path, META + "await new Promise(() => {})", None, Agents()
    )
    assert isinstance(summary.outcome, Failed)
    assert "waits for something that never comes" in summary.outcome.message
    assert journal.lines()[-1]["status"] == "failed"


async def test_the_agent_limit_stops_a_runaway_loop(tmp_path: Path, autojump_clock: Any) -> None:
    source = META + "let n = 0; for (;;) { if (await agent('again ' + n) === null) return n; n++ }"
    agents = Agents(delay=0)
    summary, _, _ = await drive(tmp_path, source, None, agents, max_agents=5)
    assert isinstance(summary.outcome, Failed)
    assert "limit of 5 agents" in summary.outcome.message
    assert sum(agents.ran.values()) == 5
