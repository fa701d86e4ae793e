"""Views: one object per output format, fed the run's events in order.

``--output-format`` ``text`` prints the final result only, ``json`` one
object at the end, ``stream-json`` one object per line as things happen (the
last of type ``result``), all as Claude Code does. Without ``-p`` the
:class:`ConsoleView` shows streamed text, tool calls and their outcomes, a live
line while a model call or a tool lasts, and after each request a closing line
with that request's turns, tokens and cost. In a conversation the lead also
runs the turns of the cron jobs that fire: :class:`TurnOrder` shows each after
the person's turn it waited for, under a line naming its job.
"""

from __future__ import annotations

import json
import sys
import time
from typing import IO, TYPE_CHECKING, Any, Protocol

import trio
from rich.markup import escape
from rich.text import Text

from coterie.ui.labels import tool_label
from coterie.ui.region import LiveRegion
from coterie.ui.spend import Spend, SpendCounter
from coterie.ui.spinner import Activity
from coterie.ui.streamlines import StreamLines
from coterie.ui.turnorder import TurnOrder

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import Console

    from coterie.events import Event

PREVIEW_LINES = 4
#: How a workflow's progress is shown, by step (agents started are not: too many).
_WORKFLOW_MARKS = {
    "phase": "[bold magenta]◆[/]",
    "log": "[dim]  ·[/]",
    "agent.finished": "[green]  ✓[/]",
    "agent.failed": "[red]  ✗[/]",
    "agent.reused": "[dim]  ↺ reused:[/]",
}
#: The results whose text is an error, not the agent's answer.
NO_ANSWER = frozenset({"error_model", "error_during_execution"})


def result_text(content: object) -> str:
    """A tool result as the live view shows it: its text, a picture as ``[image]``."""
    if not isinstance(content, list):
        return str(content)
    return "\n".join(
        str(b.get("text", ""))
        if b.get("type") == "text"
        else f"[loaded {b.get('tool_name')}]"
        if b.get("type") == "tool_reference"
        else f"[{b.get('type')}]"
        for b in content
        if isinstance(b, dict)
    )


class View(Protocol):
    """Something that renders events."""

    def start(self, info: dict[str, Any]) -> None: ...
    def event(self, event: Event) -> None: ...
    def finish(self, result: dict[str, Any]) -> None: ...


_summary = tool_label  # the name the team view imports it by


def retry_line(data: dict[str, Any]) -> str:
    """A ``model.retrying`` event in words."""
    if data.get("fallback_model"):
        reason = str(data.get("reason", "")).splitlines()
        return (
            f"the model is overloaded ({reason[0][:160] if reason else ''});"
            f" going on with the fallback model {data['fallback_model']}"
        )
    delay = data.get("delay_s")
    wait = f"; trying again in {delay:.1f}s" if isinstance(delay, int | float) else ""
    reason = str(data.get("reason", "")).splitlines()
    return (
        f"model call attempt {data.get('attempt')} of {data.get('attempts')} failed"
        f" ({reason[0][:160] if reason else ''}){wait}"
    )


class ConsoleView:
    """The interactive view (rich): streamed text, tool calls and their outcomes,
    and one closing line per request with what that request spent.

    At a terminal, a live line at the bottom tells what is being waited for
    (a model call, a tool) once it has lasted a second, with its elapsed time
    (:mod:`coterie.ui.spinner`); :meth:`run` keeps it fresh (started in the
    run's nursery, as the team view's) and it is erased before anything else
    is written. It lives in the console's :class:`~coterie.ui.region.LiveRegion`,
    which a permission question pauses.
    """

    def __init__(
        self,
        console: Console,
        *,
        region: LiveRegion | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.console = console
        self.order = TurnOrder.of(console)
        self._mid_text = False
        self.region = region if region is not None else LiveRegion.of(console)
        self.activity = Activity()
        self.spend = SpendCounter()
        self._clock = clock
        self._live = console.is_terminal and not console.is_dumb_terminal
        self._shown = False  # the live line is in the region (drawn, or held by a question)
        self._wakeup: trio.Event | None = None

    def start(self, info: dict[str, Any]) -> None:
        self.console.print(
            f"[dim]coterie · run {info['run_id']} · model {info['model']} · "
            f"mode {info['permission_mode']}[/]"
        )

    def _end_text(self) -> None:
        if self._mid_text:
            self.console.file.write("\n")
            self._mid_text = False

    def event(self, event: Event) -> None:
        self.order.route(event, self._show, self._announce)

    def _announce(self, job: str) -> None:
        self._unshow()
        self._end_text()
        self.console.print(f"[dim]⏲ cron job {escape(job)} fired[/]")

    def _show(self, event: Event) -> None:
        self.spend.event(event)
        self.activity.feed(event, self._clock())
        if self._wakeup is not None:
            self._wakeup.set()
        d = event.data
        match event.type:
            case "agent.text_delta":
                self._unshow()  # the text is written where the live line was
                self.console.file.write(d["text"])
                self.console.file.flush()
                self._mid_text = True
            case "agent.message":
                self._end_text()
            case "agent.tool_call":
                self._end_text()
                self.console.print(f"[bold cyan]⏺[/] {escape(_summary(d['name'], d['input']))}")
            case "agent.tool_result":
                self._unshow()  # the call is over: its line goes, never into the scrollback
                lines = result_text(d["content"]).splitlines() or [""]
                style = "red" if d["is_error"] else "dim"
                shown = lines[:PREVIEW_LINES]
                more = len(lines) - len(shown)
                for i, line in enumerate(shown):
                    lead = "  ⎿ " if i == 0 else "    "
                    self.console.print(f"[{style}]{lead}{escape(line[:160])}[/]")
                if more > 0:
                    self.console.print(f"[dim]    … +{more} lines[/]")
            case "workflow.progress" if d.get("step") in _WORKFLOW_MARKS:
                self._end_text()
                mark = _WORKFLOW_MARKS[str(d["step"])]
                self.console.print(f"{mark} {escape(str(d.get('text', ''))[:160])}")
            case "checkpoint.skipped":
                self._end_text()
                reason = escape(str(d.get("reason", "")))
                self.console.print(f"[yellow]checkpoints off for this session:[/] {reason}")
            case "workflow.finished":
                self._end_text()
                ran, reused = d.get("ran", 0), d.get("reused", 0)
                said = f"{ran} agents ran" + (f", {reused} answers reused" if reused else "")
                self.console.print(f"[dim]  workflow {escape(str(d.get('workflow')))}: {said}[/]")
            case "actor.crashed":
                self._end_text()
                self.console.print(
                    f"[bold red]✗ {d.get('actor')} crashed:[/] {escape(d['reason'])}"
                )
            case "actor.restarted":
                self.console.print(f"[yellow]↻ restarting {d.get('actor')}[/]")
            case "model.retrying":
                self._end_text()
                self.console.print(f"[yellow]⧗ {escape(retry_line(d))}[/]", soft_wrap=True)
        if self._shown and not self.activity.busy:
            self._unshow()

    async def run(self) -> None:
        """Keep the live line fresh until cancelled (at a terminal; else return)."""
        if not self._live:
            return
        try:
            while True:
                self._wakeup = trio.Event()
                if not self.activity.busy:
                    await self._wakeup.wait()
                    continue
                self._tick()
                with trio.move_on_after(0.1):
                    await self._wakeup.wait()
        finally:
            self._wakeup = None
            self._unshow()

    def _tick(self) -> None:
        now = self._clock()
        if self.region.is_paused:
            self.activity.pause(now)
            return
        self.activity.resume(now)
        line = self.activity.line(now)
        if line is None or self._mid_text:
            self._unshow()
        elif not self._shown:
            self._shown = True
            self.region.show(self._render)
        else:
            self.region.refresh()

    def _render(self) -> Text:
        line = self.activity.line(self._clock()) or ""
        return Text(line, style="dim", no_wrap=True, overflow="ellipsis")

    def _unshow(self) -> None:
        if self._shown:
            self._shown = False
            self.region.hide()

    def stop(self) -> None:
        """Erase the live line and forget what was open (the run is over)."""
        self.activity.clear()
        self._unshow()

    def finish(self, result: dict[str, Any], spent: Spend | None = None) -> None:
        """The request's closing line: its turns, and the tokens and cost of its
        replies (*spent*: counted elsewhere; by default from the events this view
        was given since the last ``finish``)."""
        self.stop()
        self._end_text()
        spent = spent if spent is not None else self.spend.take()
        colour = "red" if result["is_error"] else "green"
        if result["is_error"]:
            self.console.print(f"[{colour}]{escape(result['result'])}[/]")
        self.console.print(f"[{colour}]●[/] [dim]{request_line(result, spent)}[/]")


def request_line(result: dict[str, Any], spent: Spend) -> str:
    """What one request did: its turns, what its replies cost, how long it took."""
    u = spent.usage
    return (
        f"this request: {result['num_turns']} turns · "
        f"{u.input_tokens:,} in / {u.output_tokens:,} out tokens · "
        f"${spent.cost_usd:.4f} · {result['duration_ms'] / 1000:.1f}s"
    )


class TextView:
    """``-p --output-format text``: the final text only; with ``--verbose`` each
    tool call and the first line of its result on *err* (stderr) as they happen."""

    def __init__(
        self, out: IO[str] | None = None, *, verbose: bool = False, err: IO[str] | None = None
    ) -> None:
        self.out = out or sys.stdout
        self.verbose = verbose
        self.err = err or sys.stderr

    def start(self, info: dict[str, Any]) -> None:
        pass

    def event(self, event: Event) -> None:
        if not self.verbose:
            return
        d = event.data
        if event.type == "agent.tool_call":
            self.err.write(f"⏺ {_summary(d['name'], d['input'])} [{d.get('actor')}]\n")
        elif event.type == "agent.tool_result":
            first = (result_text(d["content"]).splitlines() or [""])[0][:160]
            self.err.write(f"  ⎿ {'error: ' if d['is_error'] else ''}{first}\n")
        else:
            return
        self.err.flush()

    def finish(self, result: dict[str, Any]) -> None:
        # The agent's answer goes to stdout, even when the request ended badly
        # (its limit hit...); a failure that left no answer (the model could not
        # be reached, the run broke) is an error: stderr, so a script's pipe
        # never takes it for one.
        failed = result.get("is_error") and result.get("subtype") in NO_ANSWER
        stream = self.err if failed else self.out
        stream.write(result["result"] + "\n")
        stream.flush()


class JsonView(TextView):
    """``-p --output-format json``: one object when the run ends, with Claude
    Code's result fields (``session_id``, ``permission_denials``,
    ``terminal_reason``, ``modelUsage``...), as :class:`StreamLines` makes it
    (its ``result`` line only)."""

    def __init__(
        self,
        out: IO[str] | None = None,
        *,
        include_partial_messages: bool = False,
        include_hook_events: bool = False,
        subagent_text: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(out, **kwargs)
        self.lines = StreamLines(
            partial=include_partial_messages,
            hook_events=include_hook_events,
            subagent_text=subagent_text,
        )

    def start(self, info: dict[str, Any]) -> None:
        self.lines.start(info)

    def event(self, event: Event) -> None:
        self.lines.event(event)
        super().event(event)

    def finish(self, result: dict[str, Any]) -> None:
        self._write([line for line in self.lines.finish(result) if line["type"] == "result"])

    def _write(self, lines: list[dict[str, Any]]) -> None:
        for line in lines:
            self.out.write(json.dumps(line) + "\n")
        if lines:
            self.out.flush()


class StreamJsonView(JsonView):
    """``-p --output-format stream-json``: one object per line as events happen
    (:class:`~coterie.ui.streamlines.StreamLines` says which), the last of each
    request its ``result``."""

    def start(self, info: dict[str, Any]) -> None:
        self._write(self.lines.start(info))

    def event(self, event: Event) -> None:
        self._write(self.lines.event(event))

    def finish(self, result: dict[str, Any]) -> None:
        self._write(self.lines.finish(result))

    def conversation_reset(self, user_message_uuid: str | None) -> None:
        """The host's ``/clear`` ends this run's conversation (the line that says so)."""
        self._write(self.lines.conversation_reset(user_message_uuid))

    def replayed(self, message: dict[str, Any], uuid: str | None) -> None:
        """A host's user line (its *message* and *uuid*), written back
        (``--replay-user-messages``)."""
        self._write(self.lines.replayed(message, uuid, time.time()))
