"""Command-line options shared by the commands that run agents.

Imported to build the parser of every command, even ``coterie --help``: it
imports only light leaf modules (each choice is read from the module that
declares it, by its full dotted path, whose package imports nothing else for it).
"""

from __future__ import annotations

import argparse
import math

from coterie.models.aliases import resolve_model
from coterie.models.thinking import EFFORT_LEVELS, THINKING_DISPLAYS, THINKING_TYPES, Thinking
from coterie.tools.permissions.modes import MODES

OUTPUT_FORMATS = ["text", "json", "stream-json"]
INPUT_FORMATS = ["text", "stream-json"]
#: The settings files ``--setting-sources`` can name, lowest precedence first.
SETTING_SOURCES = ("user", "project", "local")


def add_backend_option(parser: argparse.ArgumentParser) -> None:
    """``--backend URL``: where a run's state lives (docs/scale-out.md)."""
    parser.add_argument(
        "--backend",
        metavar="URL",
        default=None,
        help=(
            "where the run's state lives: redis://HOST[:PORT][/DB] (or valkey://…) for a"
            " Redis or Valkey server (default: $COTERIE_BACKEND, else files in the coterie"
            " home). Give a password in $COTERIE_BACKEND, not here, where ps shows it"
            " (docs/scale-out.md)"
        ),
    )


def add_agent_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by the commands that run agents."""
    add_backend_option(parser)
    parser.add_argument("--scenario", type=str, help="replay this scenario file offline")
    # The model a run uses when nothing names one: the "default" alias stands for it.
    default_model = resolve_model("default")
    parser.add_argument("--model", default=None, help=f"model name (default {default_model})")
    parser.add_argument(
        "--permission-mode",
        choices=MODES,
        default=None,
        help="how tool calls are approved (default: settings' defaultMode, else 'default')",
    )
    parser.add_argument(
        "--dangerously-skip-permissions",
        dest="permission_mode",
        action="store_const",
        const="bypassPermissions",
        help=(
            "Claude Code's spelling of --permission-mode bypassPermissions (deny rules,"
            " protected configuration and the sandbox still apply)"
        ),
    )
    parser.add_argument(
        "--allow-dangerously-skip-permissions",
        action="store_true",
        help=(
            "let a program driving the run (--input-format stream-json) switch it to"
            " bypassPermissions later (set_permission_mode); without it, that is refused"
        ),
    )
    parser.add_argument(
        "--auto",
        action="store_true",
        help=(
            "Auto Mode (permission mode 'auto'): a classifier, not a person, approves"
            " actions; deny rules still come first and read-only tools pass"
        ),
    )
    parser.add_argument(
        "--goal",
        metavar="COND",
        help=(
            "keep going until COND holds: after each turn an evaluator judges it from the"
            " transcript and feeds back why not (exit 1 if it judges COND impossible)"
        ),
    )
    parser.add_argument(
        "--max-goal-iterations",
        type=_positive_int,
        default=25,
        metavar="N",
        help="with --goal: give up after N not-met verdicts (default 25)",
    )
    parser.add_argument("--max-turns", type=_positive_int, help="stop after this many model turns")
    parser.add_argument(
        "--max-budget-usd",
        type=_positive_float,
        help="stop once the run has spent this much (all its agents and services together)",
    )
    parser.add_argument(
        "--add-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="another directory the sandbox admits (repeatable)",
    )
    parser.add_argument(
        "--mcp-config",
        action="append",
        default=[],
        metavar="FILE_OR_JSON",
        help=(
            'load MCP servers from this JSON file, or this JSON text ({"mcpServers": ...};'
            " repeatable)"
        ),
    )
    parser.add_argument(
        "--plugin-dir",
        action="append",
        default=[],
        type=_plugin_dir,
        metavar="DIR",
        help=(
            "load the Claude Code plugin in DIR (or each plugin in a folder of them):"
            " its commands, agents, skills, hooks and MCP servers (repeatable; docs/extensions.md)"
        ),
    )
    parser.add_argument(
        "--strict-mcp-config",
        action="store_true",
        help="only the --mcp-config servers: none of ~/.claude.json's or .mcp.json's",
    )
    parser.add_argument(
        "--context-window",
        type=_positive_int,
        metavar="TOKENS",
        help="the model's context window in tokens (default: known per model, else 200000)",
    )
    parser.add_argument(
        "--compact-at",
        type=_fraction,
        default=0.8,
        metavar="FRACTION",
        help="compact the conversation when it passes this share of the window (default 0.8)",
    )
    parser.add_argument(
        "--agents",
        metavar="JSON",
        help=(
            "custom subagents, as Claude Code takes them:"
            ' \'{"name": {"description": ..., "prompt": ..., "tools": [...], "model": ...}}\''
            " (over .claude/agents/ definitions of the same name)"
        ),
    )
    parser.add_argument(
        "--allowedTools",
        "--allowed-tools",
        dest="allowed_tools",
        action="extend",
        nargs="+",
        default=[],
        metavar="RULE",
        help=(
            "permission rules allowed for this run, over the settings' (space- or"
            " comma-separated, e.g. 'Bash(git log *)' Edit mcp__srv__tool)"
        ),
    )
    parser.add_argument(
        "--disallowedTools",
        "--disallowed-tools",
        dest="disallowed_tools",
        action="extend",
        nargs="+",
        default=[],
        metavar="RULE",
        help="permission rules denied for this run (deny wins over every allow)",
    )
    parser.add_argument(
        "--tools",
        metavar="LIST",
        help="the built-in tools the model gets: '' none, 'default' all, or 'Bash,Edit,Read'",
    )
    parser.add_argument(
        "--settings",
        metavar="FILE_OR_JSON",
        help="one more settings layer (a file or a JSON object), over the settings files",
    )
    parser.add_argument(
        "--setting-sources",
        type=setting_sources,
        metavar="LIST",
        help="which settings files are read: a comma-separated subset of user,project,local",
    )
    parser.add_argument(
        "--fallback-model",
        metavar="MODEL",
        help="when the model is overloaded (529 after its retries), go on with MODEL",
    )
    parser.add_argument(
        "--system-prompt",
        metavar="TEXT",
        help="replace coterie's default system prompt with TEXT (CLAUDE.md still applies)",
    )
    parser.add_argument(
        "--system-prompt-file",
        type=_text_file,
        metavar="FILE",
        help="replace coterie's default system prompt with FILE's text",
    )
    parser.add_argument(
        "--append-system-prompt",
        metavar="TEXT",
        help="append TEXT to the system prompt",
    )
    parser.add_argument(
        "-r",
        "--resume",
        metavar="RUN_ID",
        help=(
            "go on in run RUN_ID: at a terminal its conversation reopens; with"
            " --input-format stream-json (the Agent SDK's resume) the host's prompts go on"
            " in it, after it finishes the request it was working on"
        ),
    )
    parser.add_argument(
        "--fork-session",
        action="store_true",
        help="with --resume: go on in a copy of that run under a new id (--session-id's, if given)",
    )
    parser.add_argument(
        "--resume-session-at",
        metavar="UUID",
        help=(
            "with --resume: cut the conversation back to just after this reply of the"
            " lead (the uuid of its stream-json assistant line) before going on; with"
            " --fork-session the copy is cut, the original kept"
        ),
    )
    parser.add_argument(
        "--resume-drops-turn",
        metavar="UUID",
        help=(
            "with --resume-session-at: refuse the cut unless what it drops is exactly"
            " the turn of this prompt (its user line's uuid)"
        ),
    )
    parser.add_argument(
        "--session-id",
        metavar="UUID",
        help="the new run's id (a UUID; the Agent SDK's session_id): resume it by that id",
    )
    parser.add_argument(
        "--include-partial-messages",
        action="store_true",
        help="with stream-json output: also the model's reply as it streams (stream_event lines)",
    )
    parser.add_argument(
        "--include-hook-events",
        action="store_true",
        help="with stream-json output: also a line when each hook starts and answers",
    )
    parser.add_argument(
        "--json-schema",
        metavar="SCHEMA",
        help=(
            "end with an answer in this shape (a JSON Schema, as text or a file): the"
            " result carries it as structured_output"
        ),
    )
    add_thinking_options(parser)
    for flag, (takes_value, _missing) in UNHONOURED.items():
        parser.add_argument(
            flag,
            dest="unhonoured",
            action=_Unhonoured,
            nargs=None if takes_value else 0,
            default=[],
            help=argparse.SUPPRESS,
        )
    add_output_options(parser)


def add_thinking_options(parser: argparse.ArgumentParser) -> None:
    """Claude Code's extended thinking and effort flags (coterie/models/thinking.py)."""
    parser.add_argument(
        "--max-thinking-tokens",
        type=_whole_number,
        metavar="N",
        help=(
            "the agents think first, up to N tokens (0: no thinking; $MAX_THINKING_TOKENS"
            " wins over it, as in Claude Code)"
        ),
    )
    parser.add_argument(
        "--thinking",
        choices=THINKING_TYPES,
        help="extended thinking: enabled, adaptive (the model decides how much) or disabled",
    )
    parser.add_argument(
        "--thinking-display",
        choices=THINKING_DISPLAYS,
        help="with thinking: how its text comes back (default: the API's)",
    )
    parser.add_argument(
        "--effort",
        choices=EFFORT_LEVELS,
        help="the agents' effort level, on the models that take one",
    )
    parser.add_argument(
        "--betas",
        action="append",
        type=_betas,
        metavar="BETA[,BETA]",
        help="API betas every model call asks for (the anthropic-beta header); repeatable",
    )


def thinking_options(args: argparse.Namespace) -> dict[str, object]:
    """The run options the thinking flags give (``thinking``, ``effort``)."""
    thinking = Thinking.from_options(args.max_thinking_tokens, args.thinking, args.thinking_display)
    betas = tuple(dict.fromkeys(b for given in args.betas or () for b in given))
    return {
        "thinking": None if thinking is None else thinking.to_json(),
        "effort": args.effort,
        "betas": betas,
    }


def _betas(value: str) -> tuple[str, ...]:
    """``--betas a,b`` (or ``"a b"``): the names, each a header token."""
    names = tuple(n for n in value.replace(",", " ").split() if n)
    if not names:
        raise argparse.ArgumentTypeError("name at least one beta")
    for name in names:
        if not all(c.isalnum() or c in "-_." for c in name):
            raise argparse.ArgumentTypeError(f"{name!r} is not a beta's name")
    return names


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """``-p`` and ``--output-format``: how a run's progress and result are shown."""
    parser.add_argument(
        "-p",
        "--print",
        action="store_true",
        help="headless: print the result and exit; nothing waits for a person",
    )
    parser.add_argument(
        "--output-format",
        choices=OUTPUT_FORMATS,
        default="text",
        help="with -p: text (the result), json (one object), stream-json (JSON lines)",
    )
    parser.add_argument(
        "--input-format",
        choices=INPUT_FORMATS,
        default="text",
        help=(
            "text (the prompt) or stream-json (standard input is JSON lines of user"
            " messages and Claude Code's control requests, as the Agent SDK writes them;"
            " headless; needs --output-format stream-json)"
        ),
    )
    parser.add_argument(
        "--replay-user-messages",
        action="store_true",
        help=(
            "with --input-format and --output-format stream-json: write each user line"
            " back on the stream (its uuid kept, marked isReplay), as its acknowledgment"
        ),
    )
    parser.add_argument(
        "--permission-prompt-tool",
        metavar="TOOL",
        help=(
            "who answers permission questions: stdio (the program driving the run, over"
            " --input-format stream-json: the Agent SDK's can_use_tool)"
        ),
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="with -p --output-format text: tool calls and their outcomes on stderr",
    )


#: Claude Code flags that the Agent SDKs pass and coterie takes without acting on
#: them yet: whether each takes a value, and what is not done. A host that passes
#: one is not refused (its run goes on); the run says once what it leaves out.
UNHONOURED: dict[str, tuple[bool, str]] = {
    "--task-budget": (True, "the task budget is not applied (--max-budget-usd is)"),
    "--session-mirror": (False, "the transcript is not mirrored to the host"),
}


class _Unhonoured(argparse.Action):
    """Records a flag of :data:`UNHONOURED` (with its value), for the run's notice."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        taken = list(getattr(namespace, self.dest, None) or [])
        namespace.unhonoured = [*taken, option_string]


def unhonoured_notices(args: argparse.Namespace) -> list[str]:
    """One line for each :data:`UNHONOURED` flag the command line gave."""
    return [
        f"{flag} is taken for Claude Code compatibility, but not acted on yet:"
        f" {UNHONOURED[flag][1]}"
        for flag in dict.fromkeys(getattr(args, "unhonoured", None) or [])
    ]


def _plugin_dir(text: str) -> str:
    """``--plugin-dir DIR``: the directory's absolute path (a resume finds it from anywhere)."""
    from coterie.extensions.plugins import PluginError, plugin_dir

    try:
        return plugin_dir(text)
    except PluginError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _text_file(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as file:
            return file.read()
    except (OSError, UnicodeError) as exc:
        raise argparse.ArgumentTypeError(f"{path}: cannot be read ({exc})") from None


def setting_sources(text: str) -> tuple[str, ...]:
    """``--setting-sources LIST``: a comma-separated subset of user,project,local."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in SETTING_SOURCES]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown source {unknown[0]!r}; expected some of {','.join(SETTING_SOURCES)}"
        )
    return tuple(dict.fromkeys(names))


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _whole_number(text: str) -> int:
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError("must be a whole number (0 or more)")
    return int(text)


def _fraction(text: str) -> float:
    value = float(text)
    if not 0.5 < value <= 1:
        raise argparse.ArgumentTypeError("must be a fraction over 0.5 and at most 1")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0 or math.isinf(value):
        raise argparse.ArgumentTypeError("must be a positive number")
    return value
