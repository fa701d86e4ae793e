"""What a headless run reads from standard input: a prompt (``echo q | coterie
run -p``), text added to one, or with ``--input-format stream-json`` the
turns of a conversation, one JSON line each."""

from __future__ import annotations

import select
import sys
from typing import TYPE_CHECKING

from coterie.errors import CoterieError

if TYPE_CHECKING:
    import argparse


#: Seconds a ``-p`` run with a prompt waits for piped input to begin.
STDIN_WAIT = 3.0


def headless_input(args: argparse.Namespace, prompt: str | None) -> str | None:
    """The prompt of a ``-p`` run, with standard input when it is not a terminal, as
    Claude Code takes it: the input alone (``echo q | coterie run -p``), or appended
    to the prompt (``cat f | coterie run -p "explain"``). Input that is empty or
    only blank adds nothing, and so does input that has not begun within
    :data:`STDIN_WAIT` seconds when there is a prompt (as Claude Code does).
    With ``--input-format stream-json`` the input is the turns themselves, read
    later."""
    if not args.print or args.input_format == "stream-json":
        return prompt
    if sys.stdin.isatty():
        return prompt
    if prompt is not None and not select.select([sys.stdin], [], [], STDIN_WAIT)[0]:
        # A pipe nobody writes to (a CI runner's, a parent process's) must not hold
        # the run forever: with a prompt already, input that does not come is none.
        return prompt
    piped = sys.stdin.read()
    if not piped.strip():
        return prompt
    return piped if prompt is None else f"{prompt}\n\n{piped}"


def check_input_format(args: argparse.Namespace) -> bool:
    """Whether the turns come from standard input (``--input-format stream-json``,
    which, as in Claude Code, is headless (``-p`` is implied: a program drives the
    run) and needs ``--output-format stream-json``)."""
    if args.input_format != "stream-json":
        if getattr(args, "permission_prompt_tool", None) is not None:
            raise CoterieError("--permission-prompt-tool needs --input-format stream-json")
        return False
    tool = getattr(args, "permission_prompt_tool", None)
    if tool not in (None, "stdio"):
        raise CoterieError(
            f"--permission-prompt-tool {tool}: only stdio is supported (the program driving"
            " the run answers); an MCP tool as the prompt is not"
        )
    if args.output_format != "stream-json":
        raise CoterieError("--input-format stream-json needs --output-format stream-json")
    # An empty argument is no prompt (the TypeScript SDK passes one after its flags).
    if (getattr(args, "prompt", None) or "").strip():
        raise CoterieError("--input-format stream-json takes the prompts from standard input only")
    return True
