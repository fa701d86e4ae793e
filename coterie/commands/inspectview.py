"""How ``coterie tasks`` and ``coterie inbox`` print what they found, whichever
backend it was read from (:class:`coterie.backends.RunReader`)."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from coterie.backends import Pending, ReadError
    from coterie.events import Event

TEXT_WIDTH = 240  # characters of a message shown per line (--json has them whole)


def fail(error: ReadError) -> int:
    Console(stderr=True, highlight=False).print(f"[red]error:[/] {escape(str(error))}")
    return error.code


def history_of(events: list[Event], actor: str) -> list[dict[str, Any]]:
    """*actor*'s ``team.message`` history among *events*: ``{"ts", "direction": "sent"
    | "received", "sender", "recipient", "kind", "text"}``, in the events' order."""
    history: list[dict[str, Any]] = []
    for event in events:
        d = event.data
        if event.type != "team.message" or actor not in (d.get("sender"), d.get("recipient")):
            continue
        history.append(
            {
                "ts": event.ts,
                "direction": "sent" if d.get("sender") == actor else "received",
                "sender": d.get("sender"),
                "recipient": d.get("recipient"),
                "kind": d.get("kind"),
                "text": str(d.get("text", "")),
            }
        )
    return history


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
    pending: list[Pending],
    history: list[dict[str, Any]],
) -> None:
    """Print *actor*'s pending messages and history in run *run_id* (``--json``: with
    whether each is in flight and how often it was delivered, where the backend
    knows)."""
    if as_json:
        import attrs

        def to_json(p: Pending) -> dict[str, Any]:
            more = {"in_flight": p.in_flight, "deliveries": p.deliveries}
            return {**attrs.asdict(p.message), **{k: v for k, v in more.items() if v is not None}}

        print_json(
            console,
            {
                "run_id": run_id,
                "actor": actor,
                "pending": [to_json(p) for p in pending],
                "history": history,
            },
        )
        return
    console.print(escape(f"inbox of {actor} · run {run_id} ({state})"), style="bold")
    console.print(f"pending, not acknowledged yet: {len(pending)}", style="bold")
    for message in (p.message for p in pending):
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
