"""The team's live display on a short terminal: the board first, the supervision tree
in the lines left (issue 26)."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console

from coterie.ui.live import TeamState, render_team
from tests.ui.helpers import started, team_tree


def shown(state: TeamState, height: int, max_rows: int = 15) -> list[str]:
    console = Console(file=io.StringIO(), width=100, height=height, record=True)
    console.print(render_team(state, max_rows, height=height))
    return console.export_text().splitlines()


def tasks(count: int) -> list[dict[str, Any]]:
    return [
        {"id": f"task_{n}", "subject": f"subject {n}", "status": "pending", "owner": None,
         "blocked_by": []}
        for n in range(1, count + 1)
    ]  # fmt: skip


def big_team(teammates: int) -> TeamState:
    state = team_tree()
    for n in range(teammates):
        state.apply(started(f"mate-{n}", "team"))
    for name in ("scheduler", "classifier"):
        state.apply(started(name, "services"))
    return state


def test_on_24_rows_the_whole_board_shows_and_the_tree_is_cut_short() -> None:
    state = big_team(10)
    state.set_tasks(tasks(10))
    lines = shown(state, 24)
    assert len(lines) <= 24
    assert [line.split()[0] for line in lines if line.strip().startswith("task_")] == [
        f"task_{n}" for n in range(1, 11)
    ]
    assert lines[0].startswith("root")  # the top of the tree, then a count of the rest
    assert any(line.startswith("… ") and "more lines of the supervision tree" in line
               for line in lines)  # fmt: skip


def test_a_tall_terminal_shows_the_tree_whole_above_the_board() -> None:
    state = big_team(3)
    state.set_tasks(tasks(3))
    lines = shown(state, 60)
    assert "supervision tree" not in "\n".join(lines)
    assert any("mate-2" in line for line in lines)
    assert any(line.strip().startswith("task_3") for line in lines)


def test_when_the_board_fills_the_terminal_the_tree_is_left_out_and_the_board_cut() -> None:
    state = big_team(2)
    state.set_tasks(tasks(30))
    lines = shown(state, 12)
    assert len(lines) <= 12
    assert not any("root" in line for line in lines)
    assert any("showing" in line and "of 30" in line for line in lines)
    assert any(line.strip().startswith("task_9") for line in lines)


async def test_a_question_keeps_the_board_in_sight_and_the_display_comes_back() -> None:
    """While a permission question waits, the board is above it; once answered, the
    live display is drawn again below the answer."""
    from coterie.ui import TerminalAsker
    from coterie.ui.live import TeamView
    from tests.ui.terminal import screen

    buffer = io.StringIO()
    console = Console(file=buffer, width=100, height=24, force_terminal=True)
    view = TeamView(console, live=True, clock=lambda: 0.0)
    view.start({"run_id": "r1"})
    view.catch_up([started("bob", "team"), started("team", "root", kind="supervisor")])
    view.state.set_tasks(tasks(2))
    view.refresh()
    during: list[str] = []

    async def read() -> str:
        during.extend(screen(buffer.getvalue()))
        buffer.write("1\n")  # what the terminal echoes as the person types
        return "1"

    asker = TerminalAsker(console, team=True, read=read)  # the console's region: the view's
    await asker.ask("Bash", {"command": "make"}, "why", agent="bob")
    question = next(i for i, line in enumerate(during) if line.startswith("? bob wants"))
    above = during[:question]
    assert [line.split()[0] for line in above if line.strip().startswith("task_")] == [
        "task_1",
        "task_2",
    ]
    assert not [line for line in above if line.startswith("root")]  # the tree is erased
    assert view.region.showing
    after = screen(buffer.getvalue())
    answer = next(i for i, line in enumerate(after) if "choose 1-" in line)
    assert any(line.startswith("root") for line in after[answer:])  # drawn again below
    view.stop()
