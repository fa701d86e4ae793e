"""The live view of a team run: supervision tree, task board, what each actor said last.

:class:`TeamView` folds the run's events into a :class:`TeamState` (pure, in
``_team_state.py``) and shows it. On a terminal it is a rich ``Live``
display, redrawn at most ~4 times a second; anywhere else (a log file, CI, a
pipe) nothing animates: one plain line per significant event (crashes,
restarts, gave-ups, task changes, messages between agents).

The board is read through a callable given to the view (sync or async,
returning ``Task`` objects or their ``to_json()`` dicts) after
``board.changed``, at most ~4 times a second: from ``event`` itself when the
callable is sync and nobody runs :meth:`TeamView.run`, else by ``run`` (start
it in the run's nursery to keep the display fresh between events; an async
reader is read only there).
"""

from __future__ import annotations

import contextlib
import inspect
import math
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import trio

from coterie.ui._team_render import (
    STATE_STYLES,
    STATUS_STYLES,
    render_board,
    render_summary,
    render_team,
    render_tree,
)
from coterie.ui._team_state import (
    ActorRow,
    TeamState,
    describe,
    lasting,
    one_line,
    task_line,
)
from coterie.ui.region import LiveRegion

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

    from coterie.events import Event

__all__ = [
    "STATE_STYLES",
    "STATUS_STYLES",
    "ActorRow",
    "BoardReader",
    "TeamState",
    "TeamView",
    "describe",
    "render_board",
    "render_summary",
    "render_team",
    "render_tree",
    "task_line",
]

BoardReader = Callable[[], Iterable[Any] | Awaitable[Iterable[Any]]]
"""Returns the board's tasks (``Task`` objects or dicts), or an awaitable of them."""

REFRESH_INTERVAL = 0.25  # seconds: at most ~4 redraws and board reads a second
#: Lines left below the board kept in sight for a permission question and its answer.
QUESTION_ROWS = 16


class TeamView:
    """The terminal view of a team run, fed the run's events in order.

    ``TeamView(console, read_board)``; then ``start(info)``, ``event(e)`` for
    every event (an ``EventLog.listen`` callback), optionally ``run()`` in the
    run's nursery, and ``finish(summary)`` (or ``stop()`` if the run failed
    with no summary: a live display must give the terminal back). *live*
    defaults to whether the console is a terminal; ``False`` prints one line
    per significant event instead.

    *region* is the bottom of the terminal the display holds, shared with a
    permission asker so that a question pauses it (see
    :class:`~coterie.ui.region.LiveRegion`); the console's own by default. On a
    terminal, what must stay visible (crashes, restarts, give-ups, with their
    reasons) is also printed as lines above the display.

    ``info`` (all optional): ``run_id``, ``goal``, ``model``, ``teammates``
    (names), ``title`` (what the header calls the run; ``coterie team`` by
    default). ``summary``, produced by the team runtime when the run ends::

        {
          "run_id": str,
          "result": str,            # the lead's final text (shown in red if is_error)
          "is_error": bool,
          "num_turns": int,         # optional: summed over actors if absent
          "usage": {"input_tokens": int, "output_tokens": int, ...},  # optional, idem
          "total_cost_usd": float,  # optional, idem
          "duration_ms": int,       # optional
          "tasks": [Task.to_json() dicts or Task objects, in id order],
          "actors": {name: {"turns": int, "input_tokens": int, "output_tokens": int,
                            "cost_usd": float, "restarts": int, "tasks_completed": int}},
        }

    ``run_id``, ``result``, ``is_error``, ``num_turns``, ``usage``,
    ``total_cost_usd`` and ``duration_ms`` mean what they mean in the
    single-agent ``-p --output-format json`` result, so a headless team run
    can print the summary as its result object.
    """

    def __init__(
        self,
        console: Console,
        read_board: BoardReader | None = None,
        *,
        live: bool | None = None,
        max_rows: int = 15,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        region: LiveRegion | None = None,
    ) -> None:
        self.console = console
        self.state = TeamState()
        self.live = console.is_terminal if live is None else live
        self.max_rows = max_rows
        self._read_board = read_board
        self._async_reader = read_board is not None and inspect.iscoroutinefunction(read_board)
        self._clock = clock
        self._wall = wall  # event times are wall-clock: how long a model call waits
        self.region = region if region is not None else LiveRegion.of(console)
        self._last_draw = self._last_read = -math.inf
        self._dirty = False
        self._looping = False
        self._wakeup: trio.Event | None = None

    def render(self) -> RenderableType:
        """What the live display shows now."""
        height = self.console.size.height if self.live else None
        return render_team(self.state, self.max_rows, now=self._wall(), height=height)

    def board_in_sight(self) -> RenderableType | None:
        """What stays above a permission question while it is asked: the task board
        (in the rows the question leaves), or nothing while the board is empty."""
        if not self.state.tasks:
            return None
        rows = max(1, min(self.max_rows, self.console.size.height - QUESTION_ROWS))
        return render_board(self.state.tasks, rows)

    def start(self, info: Mapping[str, Any]) -> None:
        """Print the run's header and start the live display (on a terminal)."""
        bits = [f"{info.get('title', 'coterie team')} · run {info.get('run_id', '?')}"]
        if info.get("model"):
            bits.append(f"model {info['model']}")
        if info.get("teammates"):
            bits.append("teammates " + ", ".join(map(str, info["teammates"])))
        self._say(" · ".join(bits), style="dim")
        if info.get("goal"):
            self._say(f"goal: {one_line(info['goal'])}", style="bold")
        if self.live:
            self.region.show(self.render, still=self.board_in_sight)
            self._last_draw = self._clock()

    def event(self, event: Event | Mapping[str, Any]) -> None:
        """Take one event (quick; never raises for what the event holds)."""
        self.state.apply(event)
        line = describe(event)
        if line is not None and (not self.live or lasting(event)):
            self._say(line)  # on a terminal, above the live display
        self._dirty = True
        if self._looping:
            if self._wakeup is not None:
                self._wakeup.set()
            return
        now = self._clock()
        if self.state.board_changed and now - self._last_read >= REFRESH_INTERVAL:
            self._read_now()
        if now - self._last_draw >= REFRESH_INTERVAL:
            self._draw()

    def refresh(self) -> None:
        """Show a change made to :attr:`state` directly (not through :meth:`event`):
        at the next redraw of :meth:`run`, or now when nobody runs it."""
        self._dirty = True
        if self._looping:
            if self._wakeup is not None:
                self._wakeup.set()
            return
        self._draw()

    def catch_up(self, events: Iterable[Event | Mapping[str, Any]]) -> None:
        """Take the events of the run from before the view listened (the supervision
        tree starts first), without printing their lines."""
        for event in events:
            self.state.apply(event)
        self._dirty = True

    async def run(self) -> None:
        """Keep the board and the display fresh until cancelled, each at most ~4 times
        a second; the only way an async board reader is read before ``finish``."""
        self._looping = True
        try:
            while True:
                self._wakeup = trio.Event()
                if not (self._dirty or self.state.board_changed):
                    # A model call outstanding: redraw each second so its wait counts up.
                    with trio.move_on_after(1.0 if self.state.waiting() else math.inf):
                        await self._wakeup.wait()
                    self._dirty = True
                if self.state.board_changed:
                    await self._read_async()
                self._draw()
                await trio.sleep(REFRESH_INTERVAL)
        finally:
            self._looping = False
            self._wakeup = None

    def finish(self, summary: Mapping[str, Any]) -> None:
        """Stop the live display and print the closing report of *summary*."""
        if "tasks" in summary:
            self._take_tasks(summary["tasks"])
        elif self.state.board_changed:
            self._read_now()
        self.stop()
        self.console.print(render_summary(summary))

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Erase the live display while a person answers a question (the board stays in
        sight above it, :meth:`board_in_sight`), then redraw it below the answer."""
        with self.region.paused():
            yield

    def stop(self) -> None:
        """End the live display, leaving its last frame on screen (idempotent)."""
        self.region.hide(keep_last=True)

    # -- the machinery ---------------------------------------------------------------

    def _say(self, line: str, style: str = "") -> None:
        self.region.say(line, style=style, markup=False, highlight=False, soft_wrap=True)

    def _read_now(self) -> None:
        """Read a sync board reader now (an async one is left to ``run``)."""
        if self._read_board is None or self._async_reader:
            return
        self._last_read = self._clock()
        try:
            tasks = self._read_board()
        except Exception:  # a display must not end the run: keep the last board
            self.state.board_changed = False
            return
        if inspect.isawaitable(tasks):  # async after all: leave it to run()
            self._async_reader = True
            if inspect.iscoroutine(tasks):
                tasks.close()
            return
        self._take_tasks(tasks)

    async def _read_async(self) -> None:
        self.state.board_changed = False
        if self._read_board is None:
            return
        try:
            tasks = self._read_board()
            if inspect.isawaitable(tasks):
                tasks = await tasks
        except Exception:  # a display must not end the run: keep the last board
            return
        self._take_tasks(tasks)

    def _take_tasks(self, tasks: Iterable[Any]) -> None:
        changed = self.state.set_tasks(tasks)
        if not self.live:
            for task in changed:
                self._say(task_line(task))
        self._dirty = True

    def _draw(self) -> None:
        if self.region.showing and self._dirty:
            self.region.refresh()
            self._last_draw = self._clock()
        self._dirty = False


def show_end(view: TeamView, console: Console, run_id: str, state: str, result: str | None) -> None:
    """The final tree (and board), then one line of how the run ended."""
    if view.live:
        view.refresh()
        view.stop()
    else:
        shown = render_team(view.state) if view.state.tasks else render_tree(view.state)
        console.print(shown, soft_wrap=True)
    console.print(
        f"run {run_id} {state}" + (f": {result}" if result else ""),
        style="bold",
        markup=False,
        highlight=False,
    )
