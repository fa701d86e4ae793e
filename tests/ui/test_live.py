"""TeamView and its renderings: what a person sees of a team run, on a terminal or in a log."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

import trio
from rich.console import Console

from coterie.board import Board
from coterie.events import EventLog
from coterie.ui.live import (
    TeamState,
    TeamView,
    render_board,
    render_summary,
    render_team,
)
from tests.ui.helpers import ev, started, team_tree

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import RenderableType


def text_of(renderable: RenderableType, width: int = 120) -> str:
    console = Console(record=True, width=width, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def task(n: int, status: str = "pending", owner: str | None = None, **more: Any) -> dict[str, Any]:
    return {
        "id": f"task_{n}",
        "subject": f"subject {n}",
        "status": status,
        "owner": owner,
        "blocked_by": [],
        **more,
    }


SUMMARY = {
    "run_id": "r1",
    "result": "All done.",
    "is_error": False,
    "duration_ms": 4200,
    "tasks": [
        task(1, "completed", "alice", result="wrote a.py"),
        task(2, "completed", "bob", result="wrote b.py"),
        task(3, "failed", "bob", result="gave up"),
    ],
    "actors": {
        "lead": {"turns": 4, "input_tokens": 1200, "output_tokens": 300, "cost_usd": 0.012},
        "alice": {"turns": 3, "input_tokens": 800, "output_tokens": 200, "cost_usd": 0.008,
                  "restarts": 0, "tasks_completed": 1},
        "bob": {"turns": 5, "input_tokens": 1000, "cache_creation_input_tokens": 300,
                "cache_read_input_tokens": 4000, "output_tokens": 100, "cost_usd": 0.01,
                "restarts": 1, "tasks_completed": 1},
    },
}  # fmt: skip


def log_console() -> Console:
    """A console writing to a file, as in CI or ``coterie team ... > log``."""
    return Console(file=io.StringIO(), width=100)


def terminal_console() -> Console:
    return Console(file=io.StringIO(), width=100, force_terminal=True, color_system=None)


def output(console: Console) -> str:
    assert isinstance(console.file, io.StringIO)
    return console.file.getvalue()


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


# -- rendering ---------------------------------------------------------------------


def test_the_display_shows_the_tree_states_tasks_and_latest_messages() -> None:
    state = team_tree()
    state.apply(ev("actor.state", actor="alice", state="working", task="task_1"))
    state.apply(ev("actor.crashed", supervisor="team", actor="bob", reason="RuntimeError: boom"))
    state.apply(ev("team.message", sender="lead", recipient="alice", kind="message", text="Go!"))
    state.set_tasks([task(1, "in_progress", "alice"), task(2, blocked_by=["task_1"])])
    text = text_of(render_team(state))
    lines = text.splitlines()
    assert lines[0].startswith("root")
    assert any("services" in line for line in lines)
    alice = next(line for line in lines if "alice  working" in line)
    assert "task_1" in alice
    assert any("bob  crashed" in line and "RuntimeError: boom" in line for line in lines)
    assert any("lead  running" in line and "→ alice: Go!" in line for line in lines)
    row = next(line for line in lines if line.lstrip().startswith("task_2"))
    assert row.split() == ["task_2", "pending", "—", "subject", "2", "task_1"]
    assert "1 pending · 1 in progress" in text


def test_a_big_team_is_summed_up_past_the_limit_with_trouble_shown_first() -> None:
    state = TeamState()
    for n in range(30):
        state.apply(started(f"mate-{n}", "team"))
        state.apply(ev("actor.state", actor=f"mate-{n}", state="idle", task=None))
    state.apply(ev("actor.crashed", actor="mate-29", reason="boom"))
    text = text_of(render_team(state))
    assert "mate-29  crashed" in text
    assert "… 18 more: 18 idle" in text


def test_a_long_board_shows_work_in_progress_first_and_says_how_much_is_hidden() -> None:
    tasks = [task(n, "completed", "alice") for n in range(1, 40)] + [task(40, "in_progress", "bob")]
    text = text_of(render_board(tasks, max_rows=5))
    assert "task_40" in text
    assert "1 in progress · 39 completed (showing 5 of 40)" in text


def test_the_summary_shows_tasks_who_did_what_and_the_totals() -> None:
    text = text_of(render_summary(SUMMARY))
    assert "wrote b.py" in text
    bob = next(line for line in text.splitlines() if line.lstrip().startswith("bob "))
    assert bob.split() == ["bob", "1", "5", "1,000", "300", "4,000", "100", "$0.0100", "1"]
    closing = text.strip().splitlines()[-1]
    assert closing == (
        "● 2/3 tasks completed · 12 turns · 3,000 in / 600 out tokens · $0.0300 · 1 restart · 4.2s"
    )


def test_a_failed_run_says_why_in_its_summary() -> None:
    text = text_of(render_summary({**SUMMARY, "is_error": True, "result": "Lead gave up."}))
    assert "Lead gave up." in text


# -- the view, in a log (not a terminal) ---------------------------------------------------


def test_off_a_terminal_nothing_animates_and_significant_events_are_lines() -> None:
    console = log_console()
    view = TeamView(console)
    assert not view.live
    view.start({"run_id": "r1", "teammates": ["alice", "bob"], "goal": "ship it"})
    for e in [
        started("bob", "team"),
        ev("agent.message", actor="bob", content=[{"type": "text", "text": "thinking"}]),
        ev("actor.crashed", supervisor="team", actor="bob", reason="RuntimeError: boom"),
        ev("actor.restarted", supervisor="team", actor="bob", attempt=2, delay=0),
        ev("team.message", sender="bob", recipient="lead", kind="result", text="done"),
    ]:
        view.event(e)
    out = output(console)
    assert "\x1b" not in out
    assert out.splitlines() == [
        "coterie team · run r1 · teammates alice, bob",
        "goal: ship it",
        "✗ bob crashed: RuntimeError: boom",
        "↻ bob restarting (attempt 2)",
        "✉ bob → lead [result]: done",
    ]


def test_off_a_terminal_task_changes_are_lines_and_the_summary_ends_the_log() -> None:
    console = log_console()
    board = [task(1), task(2)]
    view = TeamView(console, lambda: board)
    view.event(ev("board.changed", task="task_1"))
    view.finish({**SUMMARY, "tasks": [task(1, "completed", "alice"), task(2)]})
    lines = output(console).splitlines()
    assert lines[:3] == [
        "▸ task_1 pending: subject 1",
        "▸ task_2 pending: subject 2",
        "▸ task_1 completed (alice): subject 1",
    ]
    assert lines[-1].startswith("● 1/2 tasks completed")


def test_the_board_is_read_at_most_four_times_a_second() -> None:
    clock = Clock()
    reads: list[float] = []

    def read() -> list[dict[str, Any]]:
        reads.append(clock.now)
        return [task(1)]

    view = TeamView(log_console(), read, clock=clock)
    for step in range(20):  # one change every 50 ms for a second
        clock.now = step * 0.05
        view.event(ev("board.changed", task="task_1"))
    assert reads == [0.0, 0.25, 0.5, 0.75]


def test_a_failing_board_reader_does_not_break_the_run() -> None:
    def read() -> list[dict[str, Any]]:
        raise OSError("board gone")

    view = TeamView(log_console(), read)
    view.event(ev("board.changed", task="task_1"))
    assert view.state.tasks == []


def test_it_follows_a_real_event_log_and_board(tmp_path: Path) -> None:
    console = log_console()
    log = EventLog(tmp_path / "events.jsonl")
    with Board(tmp_path / "board", fsync=False) as board:
        view = TeamView(console, board.list)
        with log.listen(view.event):
            board.create("Write the parser", "details", owner="alice")
            log.emit("board.changed", task="task_1")
            log.emit("actor.crashed", supervisor="team", actor="alice", reason="boom")
    log.close()
    assert output(console).splitlines() == [
        "▸ task_1 pending (alice): Write the parser",
        "✗ alice crashed: boom",
    ]


# -- the view, on a terminal ---------------------------------------------------------------


def test_on_a_terminal_it_is_a_live_display_that_ends_with_the_summary() -> None:
    console = terminal_console()
    view = TeamView(console, lambda: [task(1, "in_progress", "alice")])
    assert view.live
    view.start({"run_id": "r1"})
    view.event(started("alice", "team"))
    view.event(ev("actor.state", actor="alice", state="working", task="task_1"))
    view.event(ev("board.changed", task="task_1"))
    view.finish(SUMMARY)
    out = output(console)
    assert "alice  working task_1" in out
    assert "● 2/3 tasks completed" in out
    assert "✗" not in out  # no log lines on a terminal


async def test_run_keeps_an_async_board_fresh(autojump_clock: trio.abc.Clock) -> None:
    reads = 0

    async def read() -> list[dict[str, Any]]:
        nonlocal reads
        reads += 1
        await trio.sleep(0)
        return [task(1, "in_progress", "bob")]

    view = TeamView(terminal_console(), read)
    view.start({"run_id": "r1"})
    async with trio.open_nursery() as nursery:
        nursery.start_soon(view.run)
        for _ in range(40):  # a change every 25 ms for a second
            view.event(ev("board.changed", task="task_1"))
            await trio.sleep(0.025)
        await trio.sleep(0.5)
        nursery.cancel_scope.cancel()
    assert view.state.tasks == [task(1, "in_progress", "bob")]
    assert 1 <= reads <= 5
    view.finish({"tasks": view.state.tasks, "actors": {}})
    assert "task_1" in output(view.console)


async def test_a_question_holds_the_live_display_still_until_it_is_answered() -> None:
    """A permission prompt is typed below the display, not drawn over by it: the
    display is erased while the person answers, and drawn again afterwards."""
    from coterie.ui import TerminalAsker
    from coterie.ui.region import LiveRegion

    console = Console(record=True, width=100, file=io.StringIO(), force_terminal=True)
    region = LiveRegion(console)
    view = TeamView(console, live=True, region=region)
    view.start({"run_id": "r1"})
    seen: list[bool] = []

    async def read() -> str:
        seen.append(region.showing)
        return "1"

    asker = TerminalAsker(console, region=region, read=read)
    answer = await asker.ask("Bash", {"command": "ls"}, "why")
    assert answer.approved
    assert seen == [False]
    assert region.showing
    view.stop()


def test_on_a_terminal_crashes_restarts_and_give_ups_are_printed_above_the_display() -> None:
    from tests.ui.terminal import screen

    buffer = io.StringIO()
    console = Console(file=buffer, width=100, force_terminal=True)
    view = TeamView(console, live=True, clock=lambda: 0.0)
    view.start({"run_id": "r1"})
    view.catch_up([started("alice", "alice-sup"), started("alice-sup", "team", "supervisor")])
    view.event(ev("actor.crashed", actor="alice", supervisor="alice-sup", reason="Boom: bad"))
    view.event(ev("actor.restarted", actor="alice", supervisor="alice-sup", attempt=1))
    view.event(ev("supervisor.gave_up", supervisor="alice-sup", actor="alice", reason="too many"))
    view.event(ev("actor.state", actor="alice", state="working"))  # not a lasting line
    view.stop()
    lines = screen(buffer.getvalue())
    assert "✗ alice crashed: Boom: bad" in lines
    assert "↻ alice restarting (attempt 1)" in lines
    assert "✗ supervisor alice-sup gave up (alice): too many" in lines
    assert not [line for line in lines if "working" in line and "alice" not in line]
    assert "└── alice-sup  gave up  too many" in lines  # the last frame stays


def test_catching_up_builds_the_tree_that_started_before_the_view() -> None:
    console = Console(file=io.StringIO(), width=100)
    view = TeamView(console, live=False)
    view.catch_up([started("lead", "team"), started("team", "root", "supervisor")])
    assert view.state.row("lead").supervisor == "team"
    assert [r.name for r in view.state.roots()] == ["root"]
    assert console.file.getvalue() == ""  # type: ignore[attr-defined]


async def test_a_crash_during_a_question_is_printed_after_the_answer() -> None:
    """Nothing is written into the middle of a question the person is answering."""
    from coterie.ui import TerminalAsker
    from coterie.ui.region import LiveRegion

    buffer = io.StringIO()
    console = Console(file=buffer, width=100, force_terminal=True)
    region = LiveRegion(console)
    view = TeamView(console, live=True, region=region, clock=lambda: 0.0)
    view.start({"run_id": "r1"})

    async def read() -> str:
        view.event(ev("actor.crashed", actor="alice", supervisor="team", reason="Boom"))
        assert "alice crashed" not in buffer.getvalue()
        return "1"

    asker = TerminalAsker(console, region=region, team=True, read=read)
    await asker.ask("Bash", {"command": "make"}, "why", agent="bob")
    view.stop()
    out = buffer.getvalue()
    assert out.index("choose 1-") < out.index("✗ alice crashed: Boom")
