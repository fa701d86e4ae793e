"""The conversation loop: read a line, run it as a turn or a slash command, repeat.

A turn is one :meth:`AgentSession.query`. While it runs, Ctrl-C (SIGINT:
the terminal is in cooked mode then) asks the lead to stop that turn
(:meth:`AgentSession.interrupt`): the query returns an interrupted result,
the history records the interruption, and the next line goes on with the
same conversation; a second Ctrl-C in the same turn ends the session as
Ctrl-C ends any run (it stays resumable). Between turns the line editor
owns the terminal: Ctrl-C there clears the line, twice at an empty line
leaves, as do Ctrl-D and ``/exit``.

``/goal COND`` is one turn whose work goes on until the goal evaluator
judges COND met (or impossible, or the iteration cap is reached), as
``coterie run --goal COND`` does; ``/loop SPEC`` runs the loop as
``coterie run --loop SPEC`` does and comes back to the prompt when it ends.
Ctrl-C stops either as it stops a turn (a loop's running tick is
interrupted and no tick follows).

The lead also runs the turns of the cron jobs that fire (CronCreate): one that
fires while the person is at the prompt is shown as it runs; one that fires
during the person's turn waits for it, and is shown after that turn's closing
line (:class:`~coterie.ui.turnorder.TurnOrder`), under a line naming its job.

``/clear`` and ``/resume ID`` leave this run for another: the conversation
records which in :attr:`Conversation.switch`, and the caller opens it.

A custom command is ``/name`` (a command file's, or a skill's the user may
invoke: :func:`~coterie.extensions.commands.invocable`). With a ``statusLine``
setting, its command runs before each prompt and what it prints is shown
under the prompt (:mod:`coterie.ui.statusline`).

``/output-style NAME`` switches the output style for the rest of the
conversation over this run, from the next turn: that turn's prompt carries
the style's instructions (:func:`~coterie.agent.outputstyles.switch_reminder`),
the system prompt staying the run's. The settings are not changed: a new
conversation (``/clear``) answers in the style they name.
"""

from __future__ import annotations

import functools
import signal
import time
from typing import TYPE_CHECKING, Any

import attrs
import trio
from rich.markup import escape

from coterie.agent.outputstyles import (
    BUILTIN_STYLES,
    DEFAULT_STYLE,
    find_style,
    switch_reminder,
)
from coterie.autonomy import LoopSpecError, parse_loop_spec
from coterie.checkpoints import list_checkpoints
from coterie.context.transcript import read_history
from coterie.errors import CoterieError
from coterie.events import read_events
from coterie.extensions.commandrun import complete
from coterie.extensions.commands import invocable
from coterie.home import coterie_home, workspace_key
from coterie.hooks.transcriptview import view_path
from coterie.interactive.editor import Key
from coterie.interactive.recap import recap
from coterie.interactive.slash import BY_NAME, COMMANDS, closest, parse_slash
from coterie.models import Usage
from coterie.models.aliases import resolve_model
from coterie.procgroups import records_dir
from coterie.runs import find_run, list_runs, read_state, transcript_path
from coterie.tools import SUBAGENT_TYPES
from coterie.ui import ConsoleView
from coterie.ui.region import LiveRegion
from coterie.ui.spend import SpendCounter, spend_by_actor, spend_lines
from coterie.ui.statusline import run_status_line, status_payload
from coterie.ui.turnorder import TurnOrder
from coterie.version import __version__

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    from rich.console import Console

    from coterie.agent import RunResult
    from coterie.agent.outputstyles import OutputStyle
    from coterie.events import Event
    from coterie.extensions import CommandDefinition, Extensions
    from coterie.interactive.editor import LineEditor
    from coterie.session import AgentSession
    from coterie.ui.statusline import StatusLineConfig

__all__ = ["NEW_RUN", "Conversation", "history_path"]

#: ``/goal`` arguments that clear Claude Code's active goal; here none outlives its turn.
GOAL_CLEARS = frozenset({"clear", "stop", "off", "reset", "none", "cancel"})

#: :attr:`Conversation.switch` after ``/clear``: open a new run.
NEW_RUN = ""


def history_path(workdir: Path) -> Path:
    """Where a workspace's input history is kept: beside its runs, in the coterie home."""
    return coterie_home() / "projects" / workspace_key(workdir) / "history"


@attrs.define
class Conversation:
    """One person's conversation at the terminal, over one run or several."""

    editor: LineEditor
    console: Console
    err: Console
    #: The custom commands (``/name args``) of the user and the trusted workspace.
    extensions: Extensions
    #: The ``/model`` choice for the next turns (None: the run's own).
    model: str | None = None
    #: Where to go after :meth:`serve` returns: a run id, :data:`NEW_RUN`, or None (leave).
    switch: str | None = None
    #: The ``/output-style`` choice for this run's conversation (None: the run's own).
    style: OutputStyle | None = None
    #: Whether the next turn's prompt says :attr:`style` (it was just chosen).
    restyled: bool = False
    #: The settings' ``statusLine`` (None: no status line).
    status_line: StatusLineConfig | None = None

    async def serve(self, session: AgentSession, first: str | None = None) -> dict[str, Any]:
        """Converse over *session* (its pending request finished first) until the
        person leaves or switches runs; the last turn's result."""
        self.switch, self.style, self.restyled = None, None, False
        self.console.print(
            "[dim]Enter sends · \\ then Enter for a new line · Ctrl-C stops a turn ·"
            " /help · /exit[/]"
        )
        self._recap(session)
        spend, order = SpendCounter(), TurnOrder.of(self.console)
        order.sent(one_turn=False)  # the run's pending request, if it has one
        with session.events.listen(functools.partial(order.route, show=spend.event)):
            last = await session.resume()
        result = _report(session, last.to_dict()) if last is not None else None
        if result is not None:
            ConsoleView(self.console).finish(result, spend.take())
        order.printed()
        text, armed = first, False
        while True:
            if text is None:
                line = await self.editor.read(await self._status(session))
                if line is Key.END:
                    break
                if line is Key.INTERRUPT:
                    if armed:
                        break
                    armed = True
                    self.console.print("[dim](press Ctrl-C again to exit)[/]")
                    continue
                armed, text = False, line
            now, text = text, None
            if not now.strip():
                continue
            slash = parse_slash(now)
            if slash is not None and slash.name in HANDLERS:
                if not await HANDLERS[slash.name](self, session, slash.args):
                    break
                continue
            if slash is not None:
                expansion = self.extensions.expand(now) if slash.name in self._custom else None
                if expansion is None:
                    names = [*HANDLERS, *self._custom]
                    near = closest(slash.name, names)
                    hint = f"; did you mean /{near}?" if near else "; /help lists them"
                    self.err.print(f"[red]unknown command[/] /{escape(slash.name)}{hint}")
                    continue
                # Its ! lines run and its @ files are read as the lead's own tool calls
                # (the gate asks here for a line its allowed-tools do not cover).
                done = await complete(expansion, session.options.workdir, session.run_tools)
                if done.stopped is not None:
                    self.err.print(f"[red]{escape(done.stopped)}[/]", soft_wrap=True)
                    continue
                assert done.prompt is not None
                now = done.prompt
            result = await self.turn(session, now)
        # Leaving is not a failure, whatever the last turn was (Claude Code exits 0):
        # each turn's outcome was shown, and is recorded in the run.
        return {**(result or _nothing()), "is_error": False, "run_id": session.run_id}

    def _recap(self, session: AgentSession) -> None:
        """A reopened conversation's last exchanges, so the person sees where it
        stands (nothing for a new one)."""
        exchanges = recap(read_history(transcript_path(session.run_dir, "lead")))
        if not exchanges:
            return
        shown = len(exchanges)
        self.console.print(f"[dim]… the last {shown} exchange(s) of run {session.run_id}:[/]")
        for prompt, answer in exchanges:
            self.console.print(f"[bold]>[/] {escape(prompt)}")
            self.console.print(f"  [dim]{escape(answer)}[/]")

    async def turn(
        self, session: AgentSession, text: str, *, goal: str | None = None
    ) -> dict[str, Any]:
        """One turn on *text* (*goal* pursued); Ctrl-C stops it (see the module docstring)."""
        if self.restyled and self.style is not None:
            text, self.restyled = switch_reminder(self.style) + text, False
        return await self._interruptible(
            session, lambda: session.query(text, model=self.model, goal=goal), one_turn=not goal
        )

    async def _interruptible(
        self,
        session: AgentSession,
        request: Callable[[], Awaitable[RunResult]],
        *,
        one_turn: bool = False,
    ) -> dict[str, Any]:
        """The result of *request* (a query or a loop; *one_turn*: a plain query),
        shown; Ctrl-C stops it. A cron job's turn that waited for it is shown after
        its closing line (:class:`~coterie.ui.turnorder.TurnOrder`)."""
        spend = SpendCounter()  # what this request's replies cost, for its closing line
        order = TurnOrder.of(self.console)
        order.sent(one_turn=one_turn)
        try:
            with session.events.listen(functools.partial(order.route, show=spend.event)):
                outcome = await self._stoppable(session, request)
            result = _report(session, outcome.to_dict())
            ConsoleView(self.console).finish(result, spend.take())
        finally:
            order.printed()
        return result

    async def _stoppable(
        self, session: AgentSession, request: Callable[[], Awaitable[RunResult]]
    ) -> RunResult:
        """The outcome of *request*; the first Ctrl-C asks it to stop, the second leaves."""
        interrupted = False
        async with trio.open_nursery() as nursery:
            with trio.open_signal_receiver(signal.SIGINT) as signals:

                async def watch() -> None:
                    nonlocal interrupted
                    async for _ in signals:
                        if interrupted:
                            raise KeyboardInterrupt
                        interrupted = True
                        with LiveRegion.of(self.console).paused():  # the live line erased
                            self.err.print("\n[yellow]interrupting…[/] (Ctrl-C again to leave)")
                        for _ in range(200):  # until the request is sent (at once, mostly)
                            if await session.interrupt():
                                break
                            await trio.sleep(0.05)

                nursery.start_soon(watch)
                outcome = await request()
                nursery.cancel_scope.cancel()
        return outcome

    @property
    def _commands(self) -> dict[str, CommandDefinition]:
        return invocable(self.extensions.commands, self.extensions.skills)

    @property
    def _custom(self) -> list[str]:
        return sorted(self._commands)

    async def _status(self, session: AgentSession) -> tuple[str, ...]:
        """The status line's lines for the next prompt (none without one)."""
        if self.status_line is None:
            return ()
        workdir = session.options.workdir
        usage = session.context_usage(self.model)
        payload = status_payload(
            session_id=session.run_id,
            transcript_path=view_path(transcript_path(session.run_dir, "lead")),
            cwd=workdir,
            project_dir=workdir,
            model_id=str(usage.get("model") or self.model or "default"),
            version=__version__,
            output_style=self.style.name if self.style is not None else DEFAULT_STYLE,
            input_tokens=int(usage.get("totalTokens", 0)),
            context_window=int(usage.get("rawMaxTokens", 0)) or 200_000,
            current_usage={"input_tokens": int(usage.get("totalTokens", 0))},
        )
        return await run_status_line(
            self.status_line, payload, cwd=workdir, records=records_dir(session.run_dir)
        )

    # -- the commands: each returns False to leave the conversation ------------------

    async def _help(self, session: AgentSession, args: str) -> bool:
        for command in COMMANDS:
            self.console.print(f"  [bold]{escape(command.usage):<16}[/] {escape(command.help)}")
        for name in self._custom:
            what = self._commands[name].description or "a custom command"
            self.console.print(f"  [bold]/{escape(name):<15}[/] {escape(what)}")
        return True

    async def _plugin(self, session: AgentSession, args: str) -> bool:
        from coterie.commands.plugin import plugin_listing

        try:
            listing = plugin_listing(session.options.workdir)
        except (CoterieError, ValueError) as exc:
            self.err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
            return True
        self.console.print(escape(listing), soft_wrap=True, highlight=False)
        self.console.print(
            "[dim]`coterie plugin install|uninstall|enable|disable NAME@MARKETPLACE` and"
            " `coterie plugin marketplace add SOURCE` change them, from the next run on[/]"
        )
        return True

    async def _clear(self, session: AgentSession, args: str) -> bool:
        self.switch = NEW_RUN
        self.console.print(f"[dim]run {session.run_id} kept; a new conversation starts[/]")
        return False

    async def _compact(self, session: AgentSession, args: str) -> bool:
        report = await session.compact(args or None)
        shown = ", ".join(f"{k} {v}" for k, v in report.items() if isinstance(v, int | str))
        self.console.print(f"[dim]compacted: {escape(shown)}[/]")
        return True

    async def _cost(self, session: AgentSession, args: str) -> bool:
        result = read_state(session.run_dir).get("result") or _nothing()
        usage = Usage(**result["usage"])
        self.console.print(
            f"Total cost: ${result['total_cost_usd']:.4f}\n"
            f"Usage: {usage.input_tokens:,} input, {usage.output_tokens:,} output,"
            f" {usage.cache_read_input_tokens:,} cache read,"
            f" {usage.cache_creation_input_tokens:,} cache write tokens"
        )
        # Who spent it, when more than one agent did (subagents, teammates).
        spent = spend_by_actor(read_events(session.run_dir / "events.jsonl"), self.model or "")
        if len(spent) > 1:
            self.console.print("By actor:\n" + escape("\n".join(spend_lines(spent))))
        return True

    async def _model(self, session: AgentSession, args: str) -> bool:
        if args:
            self.model = resolve_model(args)
            self.console.print(f"model for the next turns: [bold]{escape(self.model)}[/]")
            return True
        options = session.options
        current = self.model or ("scripted" if options.scenario else options.model)
        self.console.print(f"model: [bold]{escape(str(current))}[/]")
        return True

    async def _output_style(self, session: AgentSession, args: str) -> bool:
        styles = self.extensions.output_styles or {s.name: s for s in BUILTIN_STYLES}
        if args:
            style = find_style(args, styles)
            if style is None:
                known = escape(", ".join(styles))
                self.err.print(f"[red]unknown output style[/] {escape(args)}; known: {known}")
                return True
            self.style, self.restyled = style, True
            self.console.print(
                f"output style [bold]{escape(style.name)}[/] from the next turn, for this"
                " conversation [dim](the settings' outputStyle is unchanged)[/]"
            )
            return True
        current = self.style.name if self.style else session.info.get("output_style")
        current = str(current or DEFAULT_STYLE)
        self.console.print(f"output style: [bold]{escape(current)}[/]")
        for name, style in styles.items():
            mark = " [green](current)[/]" if name == current else ""
            what = f" {escape(style.description)}" if style.description else ""
            self.console.print(f"  [bold]{escape(name)}[/] ({style.source}){mark}{what}")
        self.console.print("[dim]/output-style NAME switches from the next turn[/]")
        return True

    async def _permissions(self, session: AgentSession, args: str) -> bool:
        policy = session.policy
        self.console.print(f"mode: [bold]{policy.mode}[/]")
        for kind, rules in (("allow", policy.allow), ("ask", policy.ask), ("deny", policy.deny)):
            for rule in rules:
                self.console.print(f"  {kind:<5} {escape(rule.describe())}")
        if not (policy.allow or policy.ask or policy.deny):
            self.console.print("  [dim]no rules (settings files and --add-dir give them)[/]")
        return True

    async def _agents(self, session: AgentSession, args: str) -> bool:
        for name, kind in SUBAGENT_TYPES.items():
            self.console.print(f"  [bold]{escape(name)}[/] (built-in) {escape(kind.description)}")
        for name, agent in sorted(self.extensions.agents.items()):
            self.console.print(
                f"  [bold]{escape(name)}[/] ({escape(str(agent.source))})"
                f" {escape(agent.description)}"
            )
        return True

    async def _tasks(self, session: AgentSession, args: str) -> bool:
        if session.board is None:
            self.console.print("[dim]no task board: this run is one agent (see `coterie team`)[/]")
            return True
        for task in await session.board.list():
            self.console.print(f"  {escape(str(task.id))} {escape(str(task))}")
        return True

    async def _goal(self, session: AgentSession, args: str) -> bool:
        if not args or args.lower() in GOAL_CLEARS:
            # A /goal is pursued within its own turn: none is active at the prompt.
            self.console.print(
                "[dim]no goal is active: `/goal COND` works until COND holds; Ctrl-C stops it[/]"
            )
            return True
        if not session.options.has_evaluator:
            self.err.print(_NOT_A_CONVERSATION.format(what="goal evaluator"))
            return True
        result = await self.turn(session, args, goal=args)
        if result.get("goal"):  # not when Ctrl-C stopped it
            self._ending(result)
        return True

    async def _loop(self, session: AgentSession, args: str) -> bool:
        try:
            spec = parse_loop_spec(args)
        except LoopSpecError as exc:
            self.err.print(f"[red]error:[/] {escape(str(exc))}")
            return True
        if not session.options.has_scheduler:
            self.err.print(_NOT_A_CONVERSATION.format(what="scheduler"))
            return True
        if spec.hint:
            self.err.print(f"[yellow]note:[/] {escape(spec.hint)}")
        with session.events.listen(self._loop_progress):
            result = await self._interruptible(session, lambda: session.loop(args))
        self._ending(result)
        return True

    def _loop_progress(self, event: Event) -> None:
        """While a loop waits for its next tick, say when that comes (else the
        conversation looks hung), and which tick starts."""
        if event.type == "loop.waiting":
            seconds = float(event.data.get("seconds") or 0)
            at = time.strftime("%H:%M:%S", time.localtime(time.time() + seconds))
            self.console.print(
                f"[dim]⏲ tick {event.data.get('tick')} at {at} (in {_span(seconds)});"
                " Ctrl-C stops the loop[/]"
            )
        elif event.type == "loop.tick":
            self.console.print(f"[dim]▶ tick {event.data.get('tick')}[/]")

    def _ending(self, result: dict[str, Any]) -> None:
        """How a goal or a loop ended: the last paragraph of its result (the text
        streamed before it is the agent's; an error result was shown whole already)."""
        if result.get("is_error"):
            return
        ending = str(result.get("result", "")).rsplit("\n\n", 1)[-1]
        self.console.print(f"[green]{escape(ending)}[/]")

    async def _resume(self, session: AgentSession, args: str) -> bool:
        if not args:
            for info in list_runs(session.options.workdir):
                self.console.print(f"  {info.run_id} {info.state:<11} {escape(info.request[:60])}")
            return True
        try:
            self.switch = find_run(session.options.workdir, args).name
        except (CoterieError, ValueError) as exc:
            self.err.print(f"[red]error:[/] {escape(str(exc))}")
            return True
        return False

    async def _rewind(self, session: AgentSession, args: str) -> bool:
        words = args.split()
        if not words:
            for row in list_checkpoints(session.options.workdir, session.run_id):
                what = f"rewind to {row.to}" if row.kind == "rewind" else row.text
                first = what.strip().splitlines()[0][:60] if what.strip() else ""
                changed = f"{len(row.changed)} files changed" if row.changed else "no change"
                self.console.print(f"  {row.n:>3}  {escape(first)}  [dim]{changed}[/]")
            self.console.print("[dim]/rewind N puts the files and the conversation back[/]")
            return True
        flags = set(words[1:])
        if not words[0].isdigit() or not flags <= {"code", "conversation", "force"}:
            self.err.print("[red]error:[/] usage: /rewind [N] [code|conversation] [force]")
            return True
        code = "conversation" not in flags or "code" in flags
        conversation = "code" not in flags or "conversation" in flags
        try:
            report = await session.rewind(
                int(words[0]), code=code, conversation=conversation, force="force" in flags
            )
        except CoterieError as exc:
            self.err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
            return True
        dropped = "" if report.dropped is None else f", {report.dropped} messages dropped"
        self.console.print(
            f"[dim]rewound to checkpoint {report.to}: {len(report.restored)} files put back"
            f"{dropped} (/rewind {report.checkpoint} undoes it)[/]"
        )
        return True

    async def _exit(self, session: AgentSession, args: str) -> bool:
        return False


_NOT_A_CONVERSATION = (
    "[yellow]this run was started by `coterie run`, without a {what}:[/]"
    " /clear starts a conversation that has one"
)


#: What each command of :data:`~coterie.interactive.slash.COMMANDS` does.
HANDLERS: dict[str, Callable[[Conversation, AgentSession, str], Awaitable[bool]]] = {
    "help": Conversation._help,
    "clear": Conversation._clear,
    "compact": Conversation._compact,
    "cost": Conversation._cost,
    "model": Conversation._model,
    "output-style": Conversation._output_style,
    "permissions": Conversation._permissions,
    "agents": Conversation._agents,
    "plugin": Conversation._plugin,
    "tasks": Conversation._tasks,
    "goal": Conversation._goal,
    "loop": Conversation._loop,
    "resume": Conversation._resume,
    "rewind": Conversation._rewind,
    "exit": Conversation._exit,
}
assert HANDLERS.keys() == BY_NAME.keys(), "every command in the table has its handler"


def _span(seconds: float) -> str:
    """*seconds* as a person reads a wait: ``45s``, ``5m``, ``1h 30m``."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    minutes = round(whole / 60)
    return f"{minutes}m" if minutes < 60 else f"{minutes // 60}h {minutes % 60}m"


def _report(session: AgentSession, result: dict[str, Any]) -> dict[str, Any]:
    return {**result, "run_id": session.run_id}


def _nothing() -> dict[str, Any]:
    return {
        "result": "",
        "is_error": False,
        "subtype": "success",
        "num_turns": 0,
        "usage": Usage().to_dict(),
        "total_cost_usd": 0.0,
        "duration_ms": 0,
    }
