"""How ``coterie tasks`` and ``coterie inbox`` print what they found, wherever it was
read from (a run directory, or a Redis server: :mod:`coterie.commands.onserver`)."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from coterie.messages import Message

TEXT_WIDTH = 240  # characters of a message shown per line (--json has them whole)


class InspectError(Exception):
    """What to tell the user instead of an answer, with the exit code to use."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


def fail(error: InspectError) -> int:
    Console(stderr=True, highlight=False).print(f"[red]error:[/] {escape(str(error))}")
    return error.code


def show_tasks(
    console: Console, as_json: bool, run_id: str, state: str, tasks: list[dict[str, Any]]
) -> None:
    """Print run *run_id*'s tasks (where the run stands: *state*)."""
    if as_json:
        print_json(console, {"run_id": run_id, "tasks": tasks})
        return
    header = f"run {run_id} ({state}) · {count(len(tasks), 'task')}"
    console.print(escape(header), style="bold")
    if tasks:
        console.print(task_table(tasks))


def task_table(tasks: list[dict[str, Any]]) -> Table:
    from coterie.ui.live import STATUS_STYLES

    table = Table(box=None, pad_edge=False)  # as `coterie runs` lists runs
    for column in ("TASK", "STATUS", "OWNER", "BLOCKED BY"):
        table.add_column(column, no_wrap=True)
    table.add_column("SUBJECT", ratio=2)
    table.add_column("RESULT", ratio=3, overflow="ellipsis")
    for task in tasks:
        status = str(task["status"])
        table.add_row(
            task["id"],
            Text(status, style=STATUS_STYLES.get(status, "")),
            task["owner"] or "—",
            " ".join(task["blocked_by"]),
            task["subject"],
            flat(task["result"] or ""),
        )
    return table


def show_inbox(
    console: Console,
    as_json: bool,
    run_id: str,
    state: str,
    actor: str,
    pending: list[Message],
    history: list[dict[str, Any]],
    extra: list[dict[str, Any]] | None = None,
) -> None:
    """Print *actor*'s pending messages and history in run *run_id* (*extra*: more
    of each pending message for ``--json``, as the server knows it)."""
    if as_json:
        import attrs

        more = extra if extra is not None else [{} for _ in pending]
        print_json(
            console,
            {
                "run_id": run_id,
                "actor": actor,
                "pending": [{**attrs.asdict(m), **x} for m, x in zip(pending, more, strict=True)],
                "history": history,
            },
        )
        return
    console.print(escape(f"inbox of {actor} · run {run_id} ({state})"), style="bold")
    console.print(f"pending, not acknowledged yet: {len(pending)}", style="bold")
    for message in pending:
        line = f"{message.sender} → {message.recipient} [{message.kind}]: {body(message.body)}"
        entry(console, message.sent_at, line)
    console.print(f"history: {count(len(history), 'message')}", style="bold")
    for item in history:
        if item["direction"] == "sent":
            line = f"→ {item['recipient']} [{item['kind']}]: {flat(item['text'])}"
        else:
            line = f"← {item['sender']} [{item['kind']}]: {flat(item['text'])}"
        entry(console, item["ts"], line)


# -- output --------------------------------------------------------------------------


def print_json(console: Console, obj: dict[str, Any]) -> None:
    console.file.write(json.dumps(obj, ensure_ascii=False) + "\n")
    console.file.flush()


def entry(console: Console, ts: float, line: str) -> None:
    stamp = time.strftime("%H:%M:%S", time.localtime(ts))
    console.print(f"  [dim]{stamp}[/]  {escape(line)}", soft_wrap=True)


def count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def flat(text: str) -> str:
    """*text* on one line (whitespace runs collapsed), clipped."""
    flat = " ".join(text.split())
    return flat if len(flat) <= TEXT_WIDTH else flat[: TEXT_WIDTH - 1] + "…"


def body(body: object) -> str:
    """The readable part of a message body: its text if it has one, else its JSON."""
    if isinstance(body, str):
        return flat(body)
    if isinstance(body, dict):
        for key in ("text", "message", "content", "result", "prompt", "reason"):
            if isinstance(body.get(key), str):
                return flat(body[key])
    return flat(json.dumps(body, ensure_ascii=False))
