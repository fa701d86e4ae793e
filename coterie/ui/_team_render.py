"""How a team run looks: the supervision tree, the task board, the closing report.

Functions from a :class:`~coterie.ui._team_state.TeamState` (or a summary
dict) to rich renderables; nothing here prints or keeps state.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Group
from rich.segment import Segment
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from coterie.ui._team_state import as_task_row, clip, one_line

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult

    from coterie.ui._team_state import ActorRow, TaskRow, TeamState

SUMMARY_ROWS = 50  # tasks listed in the closing report
STATE_STYLES = {
    "working": "bold green",
    "idle": "cyan",
    "running": "green",
    "crashed": "bold red",
    "restarting": "yellow",
    "stopped": "dim",
    "exited": "dim",
    "abandoned": "red",
    "gave up": "bold red",
}
STATUS_STYLES = {"pending": "dim", "in_progress": "yellow", "completed": "green", "failed": "red"}
_URGENT = ("crashed", "gave up", "restarting", "abandoned", "working")


#: Seconds a model call may go unanswered before the display says it is waiting.
SLOW_CALL = 5.0


def _label(row: ActorRow, now: float | None = None) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(row.name, style="bold" if row.kind == "supervisor" else "")
    text.append(f"  {row.state}", style=STATE_STYLES.get(row.state, ""))
    if row.task:
        text.append(f" {row.task}", style="magenta")
    if row.restarts:
        text.append(f" ↻{row.restarts}", style="yellow")
    if row.mail:
        text.append(f" ✉{row.mail}", style="cyan")
    waited = row.waiting_for(now) if now is not None else None
    if waited is not None and (waited >= SLOW_CALL or row.retry):
        text.append(f"  ⧗ waiting for the model {waited:.0f}s", style="yellow")
        if row.retry:
            text.append(f" · {row.retry}", style="yellow")
    elif row.reason and row.state in ("crashed", "gave up", "stopped", "abandoned"):
        text.append(f"  {row.reason}", style="red")
    elif row.state == "working" and row.doing:
        text.append(f"  ⏺ {row.doing}", style="cyan")
    elif row.latest:
        text.append(f"  {row.latest}", style="dim")
    return text


def _grow(
    state: TeamState,
    node: Tree,
    row: ActorRow,
    limit: int,
    depth: int = 0,
    now: float | None = None,
) -> None:
    kids, hidden = state.children(row.name), []
    if len(kids) > limit:  # a big team: who needs attention first, then a count
        order = sorted(kids, key=lambda r: _URGENT.index(r.state) if r.state in _URGENT else 9)
        names = {r.name for r in order[:limit]}
        kids, hidden = [k for k in kids if k.name in names], order[limit:]
    for kid in kids:
        branch = node.add(_label(kid, now))
        if depth < 8:
            _grow(state, branch, kid, limit, depth + 1, now)
    if hidden:
        counts = Counter(r.state for r in hidden)
        more = ", ".join(f"{n} {s}" for s, n in counts.items())
        node.add(Text(f"… {len(hidden)} more: {more}", style="dim"))


def render_tree(state: TeamState, limit: int = 12, now: float | None = None) -> RenderableType:
    """The supervision tree, one line per actor (at most *limit* children shown per
    parent); with *now* (seconds since the epoch, as event times), a model call
    unanswered for :data:`SLOW_CALL` seconds or retried is shown waiting."""
    roots = state.roots()
    if not roots:
        return Text("no actors yet", style="dim")
    if len(roots) == 1:
        top = Tree(_label(roots[0], now))
        _grow(state, top, roots[0], limit, now=now)
        return top
    top = Tree(Text("run", style="bold"))
    for root in roots:
        _grow(state, top.add(_label(root, now)), root, limit, now=now)
    return top


def _status_counts(tasks: list[TaskRow]) -> str:
    counts = Counter(str(t.get("status")) for t in tasks)
    return " · ".join(f"{counts[s]} {s.replace('_', ' ')}" for s in STATUS_STYLES if counts[s])


def render_board(tasks: list[TaskRow], max_rows: int = 15) -> RenderableType:
    """The task board: id, status, owner, subject, blockers (busiest tasks first if long)."""
    if not tasks:
        return Text("task board: empty", style="dim")
    shown = tasks
    if len(tasks) > max_rows:
        rank = {"in_progress": 0, "failed": 1, "pending": 2, "completed": 3}
        by_rank = sorted(tasks, key=lambda t: rank.get(str(t.get("status")), 4))
        keep = {id(t) for t in by_rank[:max_rows]}
        shown = [t for t in tasks if id(t) in keep]
    done = {t.get("id") for t in tasks if t.get("status") == "completed"}
    caption = _status_counts(tasks)
    if len(shown) < len(tasks):
        caption += f" (showing {len(shown)} of {len(tasks)})"
    table = Table(box=box.SIMPLE_HEAD, caption=caption, caption_justify="left", show_edge=False)
    table.add_column("task", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("owner", no_wrap=True)
    table.add_column("subject", no_wrap=True, overflow="ellipsis", ratio=1)
    table.add_column("blocked by", no_wrap=True)
    for t in shown:
        blockers = Text()
        for i, b in enumerate(t.get("blocked_by") or ()):
            blockers.append(("" if i == 0 else " ") + str(b), style="dim" if b in done else "")
        status = str(t.get("status"))
        table.add_row(
            str(t.get("id")),
            Text(status, style=STATUS_STYLES.get(status, "")),
            str(t.get("owner") or "—"),
            one_line(t.get("subject", "")),
            blockers,
        )
    return table


def render_team(
    state: TeamState, max_rows: int = 15, now: float | None = None, height: int | None = None
) -> RenderableType:
    """The whole live display: the supervision tree above the task board; with
    *height*, in at most that many lines, the board first (see :class:`TeamFrame`)."""
    if height is None:
        return Group(render_tree(state, now=now), Text(""), render_board(state.tasks, max_rows))
    return TeamFrame(state, height, max_rows, now)


class TeamFrame:
    """The live display in *height* lines (a terminal's rows: a taller frame would be
    cut at the bottom, where the board is). The task board is what a person
    watches, so it is laid out first (fewer rows if even it does not fit), and
    the supervision tree gets the lines left: cut short with a line saying how
    much is hidden, or left out when fewer than two lines remain."""

    def __init__(
        self, state: TeamState, height: int, max_rows: int = 15, now: float | None = None
    ) -> None:
        self.state, self.height, self.max_rows, self.now = state, max(1, height), max_rows, now

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        rows = self.max_rows
        board = console.render_lines(render_board(self.state.tasks, rows), options, pad=False)
        while len(board) > self.height and rows > 1:
            rows = max(1, rows - (len(board) - self.height))
            board = console.render_lines(render_board(self.state.tasks, rows), options, pad=False)
        board = board[: self.height]
        room = self.height - len(board) - 1  # a blank line between tree and board
        tree = console.render_lines(render_tree(self.state, now=self.now), options, pad=False)
        shown: list[list[Segment]] = []
        if room >= len(tree):
            shown = [*tree, []]
        elif room >= 2:
            hidden = len(tree) - (room - 1)
            note = Text(f"… {hidden} more lines of the supervision tree", style="dim")
            shown = [*tree[: room - 1], *console.render_lines(note, options, pad=False), []]
        elif room >= 1:
            note = Text("… the supervision tree is hidden: the terminal is too short", style="dim")
            shown = [*console.render_lines(note, options, pad=False)[:1], []]
        for line in [*shown, *board]:
            yield from line
            yield Segment.line()


def render_summary(summary: Mapping[str, Any]) -> RenderableType:
    """The closing report of a team run (*summary* as described in :class:`TeamView`)."""
    parts: list[RenderableType] = []
    tasks = [as_task_row(t) for t in summary.get("tasks", [])]
    if tasks:
        more = len(tasks) - SUMMARY_ROWS
        caption = f"… and {more} more: coterie tasks RUN_ID lists them all" if more > 0 else None
        board = Table(box=box.SIMPLE_HEAD, title="tasks", title_justify="left", show_edge=False)
        board.caption, board.caption_justify = caption, "left"
        for column in ("task", "status", "owner", "subject", "result"):
            board.add_column(column, no_wrap=column != "result", overflow="ellipsis")
        for t in tasks[:SUMMARY_ROWS]:
            status = str(t.get("status"))
            board.add_row(
                str(t.get("id")),
                Text(status, style=STATUS_STYLES.get(status, "")),
                str(t.get("owner") or "—"),
                clip(one_line(t.get("subject", "")), 60),
                clip(one_line(t.get("result") or ""), 80),
            )
        parts.append(board)
    actors: Mapping[str, Mapping[str, Any]] = summary.get("actors", {})
    if actors:
        who = Table(box=box.SIMPLE_HEAD, title="actors", title_justify="left", show_edge=False)
        columns = ("actor", "tasks done", "turns", "in tokens", "cache write", "cache read")
        for column in (*columns, "out tokens", "cost"):
            who.add_column(column, justify="left" if column == "actor" else "right")
        who.add_column("restarts", justify="right")
        for name, a in actors.items():
            restarts = int(a.get("restarts", 0))
            who.add_row(
                name,
                str(a.get("tasks_completed", 0)),
                str(a.get("turns", 0)),
                f"{int(a.get('input_tokens', 0)):,}",
                f"{int(a.get('cache_creation_input_tokens', 0)):,}",
                f"{int(a.get('cache_read_input_tokens', 0)):,}",
                f"{int(a.get('output_tokens', 0)):,}",
                f"${float(a.get('cost_usd', 0.0)):.4f}",
                Text(str(restarts), style="yellow" if restarts else ""),
            )
        parts.append(who)
    if summary.get("result"):
        style = "red" if summary.get("is_error") else ""
        parts.append(Text.assemble(("lead: ", "bold"), (str(summary["result"]), style)))
    parts.append(_closing_line(summary, tasks, actors))
    return Group(*parts)


def _closing_line(
    summary: Mapping[str, Any], tasks: list[TaskRow], actors: Mapping[str, Mapping[str, Any]]
) -> Text:
    def total(key: str) -> float:
        return sum(float(a.get(key, 0)) for a in actors.values())

    usage = summary.get("usage") or {}
    turns = summary.get("num_turns", int(total("turns")))
    tokens_in = usage.get("input_tokens", int(total("input_tokens")))
    tokens_out = usage.get("output_tokens", int(total("output_tokens")))
    cost = summary.get("total_cost_usd", total("cost_usd"))
    restarts = int(total("restarts"))
    completed = sum(1 for t in tasks if t.get("status") == "completed")
    error = bool(summary.get("is_error"))
    line = Text()
    if error and summary.get("result"):
        line.append(f"{summary['result']}\n", style="red")
    line.append("● ", style="red" if error else "green")
    bits = [
        f"{completed}/{len(tasks)} tasks completed",
        f"{turns} turns",
        f"{tokens_in:,} in / {tokens_out:,} out tokens",
        f"${cost:.4f}",
        f"{restarts} restart{'s' if restarts != 1 else ''}",
    ]
    if "duration_ms" in summary:
        bits.append(f"{summary['duration_ms'] / 1000:.1f}s")
    line.append(" · ".join(bits), style="dim")
    return line
