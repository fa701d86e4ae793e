"""The script engine: what a script may call, what it gets back, and its limits."""

from __future__ import annotations

from typing import Any

import pytest

from coterie.workflows.machine import Done, Failed, Note, Request, ScriptMachine, check_syntax
from coterie.workflows.meta import ScriptError

META = "export const meta = {name: 't', description: 'a test'}\n"


def started(body: str, args: Any = None, **kw: Any) -> ScriptMachine:
    machine = ScriptMachine(META + body, args, **kw)
    machine.start()
    return machine


def requests(machine: ScriptMachine) -> list[Request]:
    return [r for r in machine.take() if isinstance(r, Request)]


def test_agent_calls_wait_for_their_answers_in_any_order() -> None:
    machine = started(
        "const [a, b] = await Promise.all([agent('one'), agent('two', {label: 'l'})])\nreturn a + b"
    )
    one, two = requests(machine)
    assert (one.prompt, two.prompt, two.options) == ("one", "two", {"label": "l"})
    machine.settle(two.id, ok=True, value="2")
    assert machine.outcome is None
    machine.settle(one.id, ok=True, value="1")
    assert machine.outcome == Done("12")


def test_parallel_gives_null_for_a_failed_item_and_never_rejects() -> None:
    thunks = "() => agent('a'), () => agent('b'), () => { throw new Error('x') }"
    machine = started(f"return await parallel([{thunks}])")
    a, b = requests(machine)
    machine.settle(a.id, ok=False, value="agent(): bad options")
    machine.settle(b.id, ok=True, value={"n": 1})
    assert machine.outcome == Done([None, {"n": 1}, None])


def test_pipeline_stages_get_the_previous_value_the_item_and_its_index() -> None:
    machine = started(
        "return await pipeline(['x', 'y'], (v) => agent(v), (r, item, i) => `${r}:${item}:${i}`,"
        " (s) => { if (s.startsWith('Y')) throw new Error('drop'); return s })"
    )
    x, y = requests(machine)
    machine.settle(y.id, ok=True, value="Y")  # y's item fails its last stage: null
    machine.settle(x.id, ok=True, value="X")
    assert machine.outcome == Done(["X:x:0", None])
    assert any(isinstance(n, Note) and "stage 3 failed: drop" in n.text for n in machine.take())


def test_log_phase_args_and_budget() -> None:
    machine = started(
        "phase('Scan'); log({n: args.n}); const r = await agent('a');"
        " return [budget.total, budget.spent(), r]",
        {"n": 2},
        budget_total=100,
    )
    notes = machine.take()
    assert notes[:2] == [Note("phase", "Scan"), Note("log", '{"n":2}')]
    assert isinstance(notes[2], Request)
    machine.settle(notes[2].id, ok=True, value="r", spent=40)
    assert machine.outcome == Done([100, 40, "r"])


@pytest.mark.parametrize("call", ["Date.now()", "Math.random()", "new Date()", "Date()"])
def test_what_would_break_a_resume_throws(call: str) -> None:
    machine = started(f"return {call}")
    assert isinstance(machine.outcome, Failed)
    assert "is not available in a workflow script" in machine.outcome.message


def test_a_dated_date_still_works() -> None:
    assert started("return new Date(0).toISOString()").outcome == Done("1970-01-01T00:00:00.000Z")


def test_the_script_has_no_host_but_what_is_given() -> None:
    names = ["require", "process", "fetch", "std", "os", "Deno", "XMLHttpRequest"]
    body = f"return [{', '.join(f'typeof {n}' for n in names)}]"
    assert started(body).outcome == Done(["undefined"] * len(names))


def test_a_script_that_never_waits_is_stopped_at_the_step_limit() -> None:
    machine = started("for (;;) {}", step_seconds=1)
    assert machine.outcome == Failed(
        "the script ran for over 1 s without waiting for an agent (a loop that never ends?)"
    )


def test_a_throw_is_the_failure_with_its_message() -> None:
    machine = started("throw new TypeError('no good')")
    assert isinstance(machine.outcome, Failed)
    assert machine.outcome.message.startswith("TypeError: no good")


def test_bad_agent_arguments_reject_the_call() -> None:
    machine = started("try { await agent('') } catch (e) { return e.message }")
    assert machine.outcome == Done("agent(prompt, opts): prompt must be a non-empty string")


def test_too_many_items_is_an_error_not_a_truncation() -> None:
    machine = started("return await parallel(Array.from({length: 1001}, () => () => 1))")
    assert isinstance(machine.outcome, Failed)
    assert "at most 1000 items" in machine.outcome.message


def test_a_script_writing_over_the_engines_variables_fails_cleanly() -> None:
    machine = started("__coterie_outbox.push(['agent', 'x', 'not json']); await agent('a')")
    assert machine.outcome == Failed("the script overwrote the workflow engine's own variables")


def test_an_answer_after_the_end_is_ignored() -> None:
    machine = started("agent('a'); return 'early'")
    (a,) = requests(machine)
    assert machine.outcome == Done("early")
    machine.settle(a.id, ok=True, value="late")
    assert machine.outcome == Done("early")


def test_a_syntax_error_is_found_before_the_run() -> None:
    with pytest.raises(ScriptError, match="does not parse"):
        check_syntax(META + "const x = ;")
    check_syntax(META + "const x = await agent('a'); return x")
