"""The chaos harness's own pure parts: when a fault fires (bench/chaos_schedule.py),
whether it landed, the invariants read from a run's records, and the mutants
(each applies to the current tree)."""

from __future__ import annotations

import random
import shutil
import signal
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.chaos_checks import claimed_twice, jobs_done, said_not_run
from bench.chaos_faults import landing
from bench.chaos_mutants import MUTANTS, build, parse
from bench.chaos_plan import step_command
from bench.chaos_round import Round, ignores, restore_sigint
from bench.chaos_schedule import MODES, Schedule, Trigger, draw, landed_inside
from coterie.context.history import INTERRUPTED, NOT_RUN

REPO = Path(__file__).parents[1]


def call(call_id: str, token: str) -> dict[str, Any]:
    command = step_command(token)
    return {"type": "agent.tool_call", "id": call_id, "name": "Bash", "input": {"command": command}}


def result(call_id: str) -> dict[str, Any]:
    return {"type": "agent.tool_result", "id": call_id, "name": "Bash"}


def create_call(call_id: str) -> dict[str, Any]:
    return {"type": "agent.tool_call", "id": call_id, "name": "TaskCreate", "input": {}}


# -- the schedule ----------------------------------------------------------------


def test_in_tool_fires_inside_the_kth_bash_call_once_its_effect_is_seen() -> None:
    s = Schedule(Trigger("in_tool", k=2))
    for event in (create_call("c1"), call("b1", "alice-0-0")):
        s.feed(event)
    assert not s.due(0.0, {"alice-0-0"})  # the first Bash call: not the one
    s.feed(result("b1"))
    s.feed(call("b2", "alice-0-1"))
    assert not s.due(0.0, {"alice-0-0"})  # begun, its effect not seen yet
    assert s.due(0.0, {"alice-0-0", "alice-0-1"})
    assert not s.missed()


def test_in_tool_is_missed_when_its_call_ends_before_its_effect_is_seen() -> None:
    s = Schedule(Trigger("in_tool", k=1))
    s.feed(call("b1", "bob-1-0"))
    s.feed(result("b1"))
    assert not s.due(0.0, {"bob-1-0"})
    assert s.missed()


def test_a_bash_call_that_is_no_step_does_not_count() -> None:
    s = Schedule(Trigger("in_tool", k=1))
    wait = {"type": "agent.tool_call", "id": "w", "name": "Bash", "input": {"command": "sleep 1"}}
    s.feed(wait)
    assert (s.bash_calls, s.target) == (0, "")
    s.feed(call("b1", "bob-1-0"))
    assert s.due(0.0, {"bob-1-0"})


def test_tool_fires_after_the_kth_tool_call_of_any_agent() -> None:
    s = Schedule(Trigger("tool", k=3))
    s.feed(create_call("c1"))
    s.feed(call("b1", "alice-0-0"))
    assert not s.due(0.0, set())
    s.feed({"type": "agent.tool_call", "id": "w1", "name": "Write", "input": {}})
    assert s.due(0.0, set())


def test_restart_fires_at_an_actor_crash_and_delay_on_the_clock() -> None:
    s = Schedule(Trigger("restart"))
    s.feed({"type": "actor.started", "actor": "alice"})
    assert not s.due(10.0, set())
    s.feed({"type": "actor.crashed", "actor": "alice"})
    assert s.due(10.0, set())
    d = Schedule(Trigger("delay", delay=0.5), began=100.0)
    assert not d.due(100.4, set())
    assert d.due(100.5, set())


@given(st.integers(0, 2**32 - 1), st.sets(st.sampled_from(MODES), min_size=1))
def test_a_drawn_trigger_is_of_a_mode_asked_for_and_reachable(seed: int, modes: set[str]) -> None:
    t = draw(random.Random(seed), sorted(modes), 8, (0.2, 1.4))
    assert t.mode in modes
    assert 1 <= t.k <= 10
    assert t.mode != "in_tool" or t.k <= 8
    assert t.mode != "delay" or 0.2 <= t.delay <= 1.4
    assert t.describe()


def test_landed_inside_means_begun_and_never_finished() -> None:
    events = [call("b1", "x"), result("b1"), call("b2", "y")]
    assert landed_inside(events, "b2")
    assert not landed_inside(events, "b1")
    assert not landed_inside(events, "b3")


# -- landing ---------------------------------------------------------------------


def a_round(fault: str, tmp_path: Path) -> Round:
    return Round(
        0, fault, "scripted", REPO, tmp_path, tmp_path / "ws", tmp_path / "h", tmp_path / "c", 9
    )


@pytest.mark.parametrize(
    ("fault", "code", "live", "landed", "missed"),
    [
        ("sigint", 130, True, True, ""),
        ("sigint", 0, True, False, "ignored"),  # the run went on: the signal was not acted on
        ("sigterm", 143, False, False, "before the run existed"),
        ("kill9", -signal.SIGKILL, True, True, ""),
        ("kill9", -signal.SIGKILL, False, False, "before the run existed"),
        ("enospc", 0, True, False, "the run did not notice"),
        ("enospc", 1, True, True, ""),
    ],
)
def test_a_fault_lands_only_inside_a_live_run_that_acted_on_it(
    tmp_path: Path, fault: str, code: int, live: bool, landed: bool, missed: str
) -> None:
    rnd = a_round(fault, tmp_path)
    rnd.live_at_fire = live
    landing(rnd, Schedule(Trigger("delay")), code)
    assert (rnd.landed, rnd.missed) == (landed, missed)


def test_a_signal_the_child_ignores_never_lands(tmp_path: Path) -> None:
    rnd = a_round("sigint", tmp_path)
    rnd.live_at_fire, rnd.missed = True, "the child ignores SIGINT"
    landing(rnd, Schedule(Trigger("delay")), 130)
    assert not rnd.landed


def test_children_never_inherit_sigint_ignored() -> None:
    """Started in the background by a shell, the harness has SIGINT ignored; its
    children must not (an ignored signal stays ignored across exec)."""
    before = signal.getsignal(signal.SIGINT)
    before_term = signal.getsignal(signal.SIGTERM)
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        with subprocess.Popen(["sleep", "5"]) as child:  # as without restore_sigint
            try:
                assert _exec_ignores(child.pid, signal.SIGINT)
            finally:
                child.kill()
        restore_sigint()
        with subprocess.Popen(["sleep", "5"]) as child:
            try:
                assert not _exec_ignores(child.pid, signal.SIGINT)
            finally:
                child.kill()
    finally:
        signal.signal(signal.SIGINT, before)
        signal.signal(signal.SIGTERM, before_term)


def _exec_ignores(pid: int, sig: signal.Signals) -> bool:
    """:func:`ignores`, once *pid* has exec'd (its command line is ``sleep``)."""
    for _ in range(1000):
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if f.read().startswith(b"sleep"):
                return ignores(pid, sig)
        subprocess.run(["true"], check=True)  # a moment, without a sleep
    raise AssertionError("the child never exec'd")


# -- invariants read from a run's records ------------------------------------------


def entry(op: str, task: str, **fields: Any) -> Any:
    return SimpleNamespace(op=op, task_id=task, fields=fields)


def test_a_claim_of_a_task_another_holds_is_found() -> None:
    log = [
        entry("create", "task_1", status="pending", owner="alice", subject="job 0"),
        entry("claim", "task_1", status="in_progress", owner="alice"),
    ]
    assert claimed_twice(log) == []
    assert claimed_twice([*log, entry("claim", "task_1", status="in_progress", owner="bob")]) == [
        "task_1"
    ]
    # Handed back, then taken by the other: one holder at a time.
    back = [
        *log,
        entry("release", "task_1", status="pending", owner=None),
        entry("claim", "task_1", status="in_progress", owner="bob"),
    ]
    assert claimed_twice(back) == []


def test_jobs_are_checked_against_who_completed_them() -> None:
    log = [
        entry("create", "task_1", status="pending", owner="bob", subject="job 1"),
        entry("claim", "task_1", status="in_progress", owner="bob"),
        entry("release", "task_1", status="pending", owner=None),
        entry("claim", "task_1", status="in_progress", owner="alice"),
        entry("complete", "task_1", status="completed"),
    ]
    assert jobs_done(log) == {"alice": {1}, "bob": set()}


def test_a_step_said_never_run_but_in_steps_log_is_found() -> None:
    use = {
        "type": "tool_use",
        "id": "t1",
        "name": "Bash",
        "input": {"command": step_command("a-0-0")},
    }

    def history(text: str) -> list[dict[str, Any]]:
        answer = {"type": "tool_result", "tool_use_id": "t1", "content": text, "is_error": True}
        return [{"role": "assistant", "content": [use]}, {"role": "user", "content": [answer]}]

    assert said_not_run(history(NOT_RUN), {"a-0-0"}) == ["a-0-0"]
    assert said_not_run(history(NOT_RUN), set()) == []  # truly not run
    assert said_not_run(history(INTERRUPTED), {"a-0-0"}) == []  # begun: effects unknown


# -- the mutants -------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("git") is None, reason="git apply is the patch tool")
@pytest.mark.parametrize("patch", sorted(MUTANTS.glob("*.diff")), ids=lambda p: p.stem)
def test_each_mutant_applies_to_the_current_tree(patch: Path, tmp_path: Path) -> None:
    mutant = parse(patch)
    assert mutant.about
    assert mutant.faults
    assert mutant.modes
    tree, why = build(mutant, REPO, tmp_path)
    assert tree is not None, why
    touched = [
        line.removeprefix("+++ b/")
        for line in patch.read_text().splitlines()
        if line.startswith("+++ b/")
    ]
    assert touched
    for path in touched:
        mutated = (tree / path).read_text()
        assert mutated != (REPO / path).read_text()
        assert "mutant" in mutated


def test_the_five_mutants_of_the_issue_are_there() -> None:
    names = {p.stem for p in MUTANTS.glob("*.diff")}
    assert names == {
        "reaper-kills-nothing",
        "resume-reruns-tool",
        "mailbox-drops-acked",
        "board-double-claim",
        "transcript-loses-last",
    }


def test_a_rounds_start_time_is_its_process_own_never_one_with_the_same_pid() -> None:
    """Thousands of processes reuse pids: a new run must not take an old one's start
    (it was then found hung at once and killed, a false violation)."""
    import sys

    from bench.chaos_round import started

    first = subprocess.Popen([sys.executable, "-c", "pass"])
    first.wait()
    began = started(first)
    time.sleep(0.05)
    again = subprocess.Popen([sys.executable, "-c", "pass"])
    again.wait()
    again.pid = first.pid  # as the kernel may hand the pid out again
    assert started(again) > began
    assert started(first) == began
