"""The ``coterie`` command line: the parser of every command, and the dispatch.

Building the parser must stay cheap (``coterie --help``, a usage error and the
commands that only read pay for it at every start, bench/startup.py): the
command modules' ``add_*_command`` functions need only argparse and light
constants (each read from the leaf module that declares it), and a command's
implementation is imported in the branch of :func:`_main` that runs it.
tests/test_startup_imports.py checks that the runtime, the SDK and coredis
stay out.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO, cast

from coterie.commands.auth import add_auth_command
from coterie.commands.faults import add_fault_commands
from coterie.commands.inspect import add_inspect_commands
from coterie.commands.observe import add_observe_command
from coterie.commands.options import add_agent_options, add_backend_option, add_output_options
from coterie.commands.plugin import add_plugin_command
from coterie.commands.trust import add_trust_command
from coterie.commands.watch import add_watch_command
from coterie.commands.worker import add_worker_command
from coterie.team.turns import LEAD_TURNS_MODES
from coterie.version import claude_version_text, version_text

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import Console

DEMOS = ["team", "runtime", "storm", "strategies", "shielded", "kill9"]


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, naming the command and
    where its options are explained (argparse's own prints the whole usage first),
    and which takes options only as spelled: no abbreviations (Claude Code takes
    none, and a program's ``--json`` must never become ``--json-schema``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def command_parser() -> tuple[argparse.ArgumentParser, frozenset[str]]:
    """The ``coterie`` parser and the names of its COMMANDs."""

    parser = _Parser(
        prog="coterie",
        add_help=False,  # -h shows the default command's options too (below)
        usage="coterie [OPTIONS] [PROMPT]  |  coterie COMMAND ...",
        description=(
            "A multi-agent coding harness: an actor-model runtime on Trio with durable "
            "mailboxes and supervision trees."
        ),
        epilog=(
            "Without a COMMAND, coterie takes the options of `coterie run`: `coterie` at a "
            "terminal opens a conversation (docs/interactive.md), `coterie PROMPT` opens one "
            "whose first message is PROMPT, `coterie -p PROMPT` answers headless and exits, "
            "`coterie -c` reopens the workspace's most recent run. Those options follow."
        ),
    )
    parser.add_argument(
        "--version",
        action="version",
        version=version_text(),
    )
    # Claude Code's `-v`, which the Agent SDKs run to check the CLI they drive: the
    # release whose CLI coterie answers to first, as they parse it, then coterie's own.
    parser.add_argument(
        "-v",
        action="version",
        version=claude_version_text(),
        help="the Claude Code release whose CLI coterie speaks, and coterie's version",
    )
    # Each COMMAND's messages name it as typed: `coterie watch: error: ...`.
    # Of _Parser (the commands' parsers keep the one-line errors), typed as the
    # commands' modules take it.
    sub = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(dest="command", metavar="COMMAND", prog="coterie"),
    )
    run = sub.add_parser(
        "run",
        help="run one agent on a prompt (a team of one)",
        description=(
            "Run one agent on PROMPT in the workspace. Without an API key, use "
            "--scenario FILE to replay a scenario offline, or point ANTHROPIC_BASE_URL "
            "at a compatible server. Exit codes: 0 done, 1 failed, 2 usage error, "
            "130 interrupted."
        ),
    )
    run.add_argument(
        "prompt",
        nargs="?",
        help="what to do (not needed with --loop; without it, at a terminal: a conversation)",
    )
    run.add_argument(
        "--loop",
        metavar="SPEC",
        help=(
            "run again and again, as Claude Code's /loop: '5m check the build' (every 5"
            " minutes), 'check the build every 2 hours', or a prompt alone (the agent"
            " schedules its next run with ScheduleWakeup, and the loop ends when it does not)"
        ),
    )
    run.add_argument(
        "-c",
        "--continue",
        dest="continue_run",
        action="store_true",
        help="continue the workspace's most recent run (with PROMPT, or as a conversation)",
    )
    # Set when `coterie` was given no COMMAND: at a terminal, PROMPT opens a conversation.
    run.add_argument("--conversation", action="store_true", help=argparse.SUPPRESS)
    run.add_argument(
        "--max-ticks",
        type=_count,
        default=100,
        metavar="N",
        help="with --loop: at most N runs (default 100)",
    )
    _add_workdir(run)
    add_agent_options(run)
    team = sub.add_parser(
        "team",
        help="run a team: a lead and teammates working in parallel on a goal",
        description=(
            "Run a team on GOAL: the lead plans it into tasks on a durable task board and "
            "assigns them; teammates work in parallel, each under its own supervisor (a "
            "teammate that crashes is restarted from its transcript; one that keeps crashing "
            "is stopped and its task goes back to the board). When every task is done the "
            "lead shuts the team down and the run ends with a summary. Exit codes: 0 done, "
            "1 a task failed, 2 usage error, 130 interrupted (resumable)."
        ),
    )
    team.add_argument(
        "request",
        metavar="GOAL",
        nargs="?",
        help=(
            "what the team should achieve (with --input-format stream-json, each prompt of"
            " the program driving it is a goal instead)"
        ),
    )
    team.add_argument(
        "--teammates",
        type=_count,
        metavar="N",
        help="how many teammates (default 2), named alice, bob, carol, ...",
    )
    team.add_argument(
        "--teammate",
        action="append",
        default=[],
        metavar="NAME",
        help="a teammate's name (repeatable; replaces the default names)",
    )
    team.add_argument(
        "--plan-approval",
        action="store_true",
        help="teammates plan read-only until the lead approves their plan (ApprovePlan)",
    )
    team.add_argument(
        "--lead-turns",
        choices=LEAD_TURNS_MODES,
        default=LEAD_TURNS_MODES[0],
        help=(
            "batched (default): the lead takes a turn only when something needs its decision"
            " (a plan, a failure, a message, all tasks done), each carrying every teammate"
            " message waiting; each: one lead turn per teammate result"
        ),
    )
    team.add_argument(
        "--isolation",
        choices=("shared", "worktree"),
        default="shared",
        help=(
            "shared (default): everyone works in the workspace; worktree: each teammate in a"
            " git worktree of its own, on a branch per task (docs/isolation.md)"
        ),
    )
    team.add_argument(
        "--repo",
        metavar="URL",
        help="with --isolation worktree: teammates clone URL and push their task branches to it",
    )
    team.add_argument(
        "--remote",
        action="store_true",
        help=(
            "with a Redis --backend: this process runs the lead and the services, and"
            " `coterie worker` processes (on any host) run the teammates (docs/scale-out.md)"
        ),
    )
    team.add_argument(
        "--remote-grace",
        type=_rate,
        default=30.0,
        metavar="S",
        help=(
            "with --remote: a teammate no worker hosts for S seconds (default 30) hands its"
            " tasks back to the board and the lead is told"
        ),
    )
    _add_workdir(team)
    add_agent_options(team)
    resume = sub.add_parser(
        "resume",
        help="continue a run after Ctrl-C, a crash or kill -9",
        description=(
            "Continue run RUN_ID from exactly where it stopped, with the options it was "
            "started with: the interrupted request is finished (a tool that was running "
            "when the run died is reported to the model as interrupted, never run again). "
            "With PROMPT, the conversation then goes on with PROMPT. "
            "See `coterie runs` for run ids; a unique prefix is enough."
        ),
    )
    resume.add_argument("run_id", metavar="RUN_ID", help="the run to continue")
    resume.add_argument("prompt", nargs="?", help="a new request for the same conversation")
    _add_workdir(resume)
    add_backend_option(resume)
    add_output_options(resume)
    runs = sub.add_parser(
        "runs",
        help="list the runs of the workspace and their state",
        description=(
            "List the workspace's runs, oldest first, with their state: running, "
            "completed, failed, or interrupted (resumable with `coterie resume`)."
        ),
    )
    runs.add_argument("--json", action="store_true", help="one JSON object per run")
    _add_workdir(runs)
    add_backend_option(runs)  # with a Redis backend: every run the server knows
    compact = sub.add_parser(
        "compact",
        help="summarise a stopped run's conversation now (Claude Code's /compact)",
        description=(
            "Replace the Lead's history in run RUN_ID by a summary (the user's own "
            "instructions, the plan and the goal are kept verbatim), so that the next "
            "`coterie resume` goes on from it. FOCUS says what the summary should "
            "concentrate on. The run must not be running."
        ),
    )
    compact.add_argument("run_id", metavar="RUN_ID", help="the run to compact")
    compact.add_argument("focus", nargs="?", help="what the summary should focus on")
    _add_workdir(compact)
    points = sub.add_parser(
        "checkpoints",
        help="list a run's checkpoints: each prompt, and the files changed after it",
        description=(
            "List the checkpoints of run RUN_ID, numbered from 1: one per prompt (the "
            "first request, each resume with a prompt, each message of a conversation) "
            "and per rewind, with its time, the prompt's first line and the files the run "
            "changed while working on it, with who changed them."
        ),
    )
    points.add_argument("run_id", metavar="RUN_ID", help="the run")
    points.add_argument("--json", action="store_true", help="one JSON object per checkpoint")
    _add_workdir(points)
    rewind = sub.add_parser(
        "rewind",
        help="put a stopped run's files and conversation back to a checkpoint",
        description=(
            "Rewind run RUN_ID to checkpoint N (see `coterie checkpoints`): every file the "
            "run changed since N (by its tools, its commands, its subagents and teammates) "
            "is put back as it was just before prompt N, and the lead's conversation is cut "
            'back so that `coterie resume RUN_ID "..."` goes on as if prompt N had never '
            "been sent. Files the run never touched are left alone. A file changed outside "
            "the run since refuses the rewind (exit 1) unless --force. The rewind is a "
            "checkpoint too: rewind to it to undo it. The run must not be running."
        ),
    )
    rewind.add_argument("run_id", metavar="RUN_ID", help="the run")
    rewind.add_argument("--to", type=int, required=True, metavar="N", help="the checkpoint")
    what = rewind.add_mutually_exclusive_group()
    what.add_argument("--code", action="store_true", help="put back the files only")
    what.add_argument("--conversation", action="store_true", help="cut back the conversation only")
    rewind.add_argument(
        "--force", action="store_true", help="rewind files changed outside the run too"
    )
    _add_workdir(rewind)
    demo = sub.add_parser(
        "demo",
        help="run a bundled demonstration offline (no API key needed)",
        description=(
            "Run a bundled demonstration offline. 'team' (the default): a lead plans four "
            "tasks and two teammates do them in parallel, one crashing mid-task and being "
            "restarted. 'runtime': supervised actors passing jobs through durable "
            "mailboxes, one crashing and getting its unacknowledged job again. The lab "
            "(docs/lab.md): 'storm' (a crash storm exceeds restart intensity and escalates), "
            "'strategies' (one_for_one against one_for_all), 'shielded' (a shielded "
            "clean-up during cancellation), 'kill9' (kill -9 mid-work, then resume). Each "
            "prints its run id first: follow it with `coterie watch RUN_ID`."
        ),
    )
    demo.add_argument("name", nargs="?", default="team", choices=DEMOS, help="which demo")
    demo.add_argument(
        "--pace",
        type=_pace,
        default=None,
        metavar="SECONDS",
        help=(
            "how long each step takes, to follow it (default: 1 for the lab demos, 0.15 for"
            " 'runtime', 0 for 'team'; 'team' with a pace serves its model over HTTP, each"
            " reply held that long)"
        ),
    )
    demo.add_argument(
        "--workdir",
        type=Path,
        default=None,
        help="where to run it (default: a new temporary directory)",
    )
    mock = sub.add_parser(
        "mock-server",
        help="serve a scenario over the Anthropic Messages API (for testing the real SDK path)",
        description=(
            "Serve a scenario file over a local Messages-API-compatible HTTP server "
            "(POST /v1/messages, JSON and SSE streaming). The first line of standard "
            "output is the base URL; point ANTHROPIC_BASE_URL at it."
        ),
    )
    mock.add_argument("--scenario", type=Path, required=True, help="scenario JSON file")
    mock.add_argument("--port", type=int, default=0, help="port (0: let the system pick)")
    mock.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    mock.add_argument(
        "--context-window",
        type=int,
        metavar="TOKENS",
        help="refuse prompts over this many tokens (about 4 characters each) as the API does",
    )
    mock.add_argument(
        "--latency",
        type=_hold,
        default=(0.0, 0.0),
        metavar="SECONDS|LOW-HIGH",
        help=(
            "hold each reply this long before its first byte, as a real model would:"
            " a fixed time (1.5) or one drawn between LOW and HIGH (0.5-2; see --seed)"
        ),
    )
    mock.add_argument(
        "--tokens-per-second",
        type=_rate,
        metavar="RATE",
        help="stream each reply's output at this many tokens per second (default: at once)",
    )
    mock.add_argument(
        "--seed", type=int, help="seed for --latency LOW-HIGH, so that runs draw the same holds"
    )
    add_inspect_commands(sub)
    add_trust_command(sub)
    add_auth_command(sub)
    add_plugin_command(sub)
    add_fault_commands(sub)
    add_watch_command(sub)
    add_observe_command(sub)
    add_worker_command(sub)
    parser.add_argument(
        "-h", "--help", action=_HelpWithRun, run=run, help="show this help message and exit"
    )
    return parser, frozenset(sub.choices)


class _HelpWithRun(argparse.Action):
    """``coterie --help``: the commands, then the options of the default command
    (``coterie run``'s, which ``coterie`` without a COMMAND takes), as ``claude --help``
    shows its own options."""

    def __init__(self, option_strings: list[str], dest: str, run: argparse.ArgumentParser,
                 **kwargs: Any) -> None:  # fmt: skip
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)
        self.run = run

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        options = self.run.format_help().split("\n\n", 2)[-1]  # after usage and description
        sys.stdout.write(f"{parser.format_help()}\nThe default command's {options}")
        parser.exit()


def _hold(text: str) -> tuple[float, float]:
    from coterie.models.latency import parse_hold

    try:
        return parse_hold(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _rate(text: str) -> float:
    value = float(text)
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError("must be a positive number")
    return value


def _pace(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 60:
        raise argparse.ArgumentTypeError("must be between 0 and 60 seconds")
    return value


def _count(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 1000:
        raise argparse.ArgumentTypeError("must be between 1 and 1000")
    return value


def _add_workdir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workdir",
        type=Path,
        default=Path.cwd(),
        help="the workspace (default: the current directory)",
    )


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``coterie`` console script; returns the exit code.

    SIGTERM and SIGHUP end a command as Ctrl-C does (exits 143 and 129, with
    the clean-up of :mod:`coterie.commands.stopping` while a run is on). Once
    the command has its exit code, a late signal no longer changes it: the
    work is done and recorded, and the process only has to leave.
    """
    from coterie.commands.stopping import Stopped

    for signum in _LATE:
        signal.signal(signum, _stop)
    try:
        try:
            return _main(argv)
        finally:
            # From here on the exit code stands: a late signal is ignored (in
            # every thread, and while the interpreter shuts down).
            for signum in (signal.SIGINT, *_LATE):
                signal.signal(signum, signal.SIG_IGN)
    except (Stopped, KeyboardInterrupt, BaseExceptionGroup) as exc:
        code = stop_exit_code(exc)
        if code is None:
            raise
        return code


def stop_exit_code(exc: BaseException) -> int | None:
    """The exit code of a command ended by a stop signal: *exc* is :class:`Stopped`
    (a signal as the command returned), ``KeyboardInterrupt`` (Ctrl-C, or a stop
    signal Trio delivered as one: see :func:`_stop`), or a group of only those
    (one delivered into a task of a nursery). None for anything else."""
    from coterie.commands.stopping import Stopped

    if isinstance(exc, BaseExceptionGroup):
        stops, rest = exc.split((KeyboardInterrupt, Stopped))
        if rest is not None or stops is None:
            return None
        exc = stops.exceptions[0]
        while isinstance(exc, BaseExceptionGroup):
            exc = exc.exceptions[0]
    if isinstance(exc, Stopped):
        return 128 + exc.signum
    if isinstance(exc, KeyboardInterrupt):
        return 128 + (_DELIVERED[0] if _DELIVERED else signal.SIGINT)
    return None


#: The signals that end a command as Ctrl-C does (SIGINT: Python's KeyboardInterrupt).
_LATE = (signal.SIGTERM, signal.SIGHUP)


#: Stop signals handed to Trio's Ctrl-C handling (the first decides the exit code).
_DELIVERED: list[int] = []


def _stop(signum: int, _frame: object) -> None:
    """SIGTERM or SIGHUP where no run listens for it (start-up, teardown, a command
    of its own): stop the command as Ctrl-C would."""
    import trio

    from coterie.commands.stopping import Stopped

    if trio.lowlevel.in_trio_run():
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            # Trio is finishing (its Ctrl-C handling is gone): the command has its
            # result, and a late signal no longer changes it.
            return
        # Raising here could land inside Trio's own machinery (a TrioInternalError,
        # found by bench/chaos.py): Trio's Ctrl-C handling delivers a
        # KeyboardInterrupt where it is safe, so hand the signal to it.
        _DELIVERED.append(signum)
        signal.raise_signal(signal.SIGINT)
        return
    raise Stopped(signum)


def routed(argv: list[str], commands: frozenset[str]) -> list[str]:
    """*argv* with ``run --conversation`` in front when its first word is no
    COMMAND (as ``claude [options] [prompt]``); ``--help``, ``--version`` and
    the commands stay as they are. ``--team`` among the options (what an Agent
    SDK host passes as ``extra_args={"team": None}``) makes it ``team`` instead,
    with the team's options (``--teammates N``...) among the others."""
    if argv and (argv[0] in commands or argv[0] in ("-h", "--help", "-v", "--version")):
        return argv
    options = argv[: argv.index("--")] if "--" in argv else argv
    if "--team" in options:
        rest = list(argv)
        rest.remove("--team")
        return ["team", *rest]
    return ["run", "--conversation", *argv]


def _main(argv: list[str] | None) -> int:
    parser, commands = command_parser()
    args = parser.parse_args(routed(sys.argv[1:] if argv is None else argv, commands))
    if getattr(args, "input_format", None) == "stream-json":
        args.print = True  # a program drives the run: headless, as in Claude Code
    console = _console(sys.stdout)
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "demo" and args.workdir is not None and not args.workdir.exists():
        args.workdir.mkdir(parents=True, exist_ok=True)  # a demo's place to play: made for it
    if getattr(args, "workdir", None) is not None and not args.workdir.is_dir():
        parser.error(f"--workdir {args.workdir}: not a directory")
    try:
        if args.command == "demo":
            import tempfile

            from coterie.demos import kill9, runtime, shielded, storm, strategies, team

            if args.name == "team":
                return team.run(console, args.workdir, parser.parse_args, args.pace)
            workdir = args.workdir or Path(tempfile.mkdtemp(prefix="coterie-demo-"))
            demos: dict[str, Callable[[Console, Path, float | None], int]] = {
                "runtime": runtime.run,
                "storm": storm.run,
                "strategies": strategies.run,
                "shielded": shielded.run,
                "kill9": kill9.run,
            }
            return demos[args.name](console, workdir.resolve(), args.pace)
        if args.command == "run":
            import trio

            from coterie.commands.run import run_prompt
            from coterie.commands.stopping import stoppable

            return trio.run(stoppable, run_prompt, args, console, _err())
        if args.command == "team":
            import trio

            from coterie.commands.run import run_team
            from coterie.commands.stopping import stoppable

            return trio.run(stoppable, run_team, args, console, _err())
        if args.command == "resume":
            import trio

            from coterie.commands.run import resume_run
            from coterie.commands.stopping import stoppable

            return trio.run(stoppable, resume_run, args, console, _err())
        if args.command == "runs":
            from coterie.commands.runs import list_command

            return list_command(args, console)
        if args.command == "compact":
            import trio

            from coterie.commands.compact import compact_command
            from coterie.commands.stopping import stoppable

            return trio.run(stoppable, compact_command, args, console, _err())
        if args.command == "checkpoints":
            from coterie.commands.rewind import checkpoints_command

            return checkpoints_command(args, console, _err())
        if args.command == "rewind":
            import trio

            from coterie.commands.rewind import rewind_command
            from coterie.commands.stopping import stoppable

            return trio.run(stoppable, rewind_command, args, console, _err())
        if args.command == "mock-server":
            from coterie.models import mock_server
            from coterie.models.latency import Latency

            low, high = args.latency
            latency = Latency(low, high, tokens_per_second=args.tokens_per_second, seed=args.seed)
            return mock_server.main(
                args.scenario,
                host=args.host,
                port=args.port,
                context_window=args.context_window,
                latency=None if latency == Latency() else latency,
            )
        if args.command == "observe":
            from coterie.commands.observe import observe_command

            return observe_command(args)
        if args.command == "trust":
            from coterie.commands.trust import trust_command

            return trust_command(args, console, _err())
        if args.command == "auth":
            from coterie.commands.auth import auth_command

            return auth_command(args, console, _err())
        if args.command in ("plugin", "plugins"):
            from coterie.commands.plugin import plugin_command

            return plugin_command(args, console, _err())
        if args.command in ("crash", "stop", "cancel"):
            import trio

            from coterie.commands.faults import fault_command

            return trio.run(fault_command, args, console, _err())
        if args.command == "watch":
            from coterie.commands.watch import watch_command

            try:
                return watch_command(args, console)
            except BaseException as exc:
                # Ctrl-C (130), SIGTERM (143): the watcher leaves quietly; the run goes on.
                code = stop_exit_code(exc)
                if code is None:
                    raise
                return code
        if args.command == "worker":
            import trio

            from coterie.commands.stopping import stoppable
            from coterie.commands.worker import worker_command

            return trio.run(stoppable, worker_command, args, console, _err())
        if args.command in ("tasks", "inbox"):
            from coterie.commands.inspect import run_inspect

            return run_inspect(args, console)
    except BaseException as exc:
        from rich.markup import escape

        from coterie.commands.stopping import Stopped
        from coterie.errors import BackendLost

        leaves = _leaves(exc)
        stops = [e for e in leaves if isinstance(e, (KeyboardInterrupt, Stopped))]
        if leaves and len(stops) == len(leaves):
            # SIGTERM and SIGHUP end a run as Ctrl-C does: 128 + the signal's number.
            console.print("[yellow]interrupted[/]")
            code = stop_exit_code(stops[0])  # a SIGTERM delivered as Ctrl-C says 143
            assert code is not None
            return code
        lost = [e for e in leaves if isinstance(e, BackendLost)]
        if lost:
            # The server lost the run's data: the root of whatever else failed with it
            # (connections closed under other tasks). One line, its first sighting.
            _err().print(f"error: {escape(str(lost[0]))}")
            return 1
        from coterie.backends.choice import client_failures

        failed = client_failures(leaves)
        if failed:
            # The server could not be reached, or failed a call nothing waits out.
            _err().print(
                f"error: the Redis server failed: {escape(str(failed[0]))} (is it running"
                " and reachable at the --backend address?)"
            )
            return 1
        if leaves and all(isinstance(e, (BrokenPipeError, SystemExit)) for e in leaves):
            # Output closed early (e.g. piped into `head`): stop quietly.
            _silence_stdout()
            return 1
        raise
    parser.error(f"unknown command {args.command!r}")
    return 2  # pragma: no cover - parser.error exits


def _console(stream: TextIO) -> Console:
    """A console on *stream*: at a terminal, laid out to its width; into a pipe or a
    file, lines are never wrapped (run ids, paths and commands to paste stay whole)."""
    from rich.console import Console

    return Console(file=stream, highlight=False, soft_wrap=not stream.isatty())


def _err() -> Console:
    return _console(sys.stderr)


def _leaves(exc: BaseException) -> list[BaseException]:
    """The non-group exceptions inside a (possibly nested) exception group."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def _silence_stdout() -> None:
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


if __name__ == "__main__":
    sys.exit(main())
