"""Asking, once at the start of an interactive run, about configuration that is new.

A trusted folder's record (:mod:`coterie.trust`) says what the user trusted:
its settings files, skills, agents, commands and ``.mcp.json`` servers as
they were. One that is new or changed since would be ignored headless; at a
terminal the user is asked about each, once, before the run is prepared, so
that a yes applies to this run: the answer is added to the record. A no is
recorded too: the item stays out and is not asked about again while it
stays as it is (``coterie trust DIR`` approves it). Only the typed line
decides.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from rich.markup import escape

from coterie.projectconfig import project_items
from coterie.trust import TrustStoreError, approval, approve
from coterie.ui.lineinput import read_line

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import Console

__all__ = ["ask_about_new_items", "describe_item"]

#: How much of a server's configuration the question shows.
_SHOWN = 300


def describe_item(workdir: Path, item: str) -> str:
    """What *item* of the record is, in words (a server with its configuration)."""
    file, _, server = item.partition("#")
    if server:
        try:
            entry = json.loads((workdir / file).read_text(encoding="utf-8"))["mcpServers"][server]
            shown = json.dumps(entry, sort_keys=True, ensure_ascii=False)
        except (OSError, ValueError, KeyError, TypeError):
            shown = "?"
        if len(shown) > _SHOWN:
            shown = shown[:_SHOWN] + "..."
        return f"the MCP server {server!r} of {file}: {shown}"
    kind = next((k for k in ("settings", "skills", "agents", "commands") if f"/{k}" in item), "")
    what = {"skills": "skill", "agents": "agent", "commands": "command"}.get(kind, "settings file")
    return f"the {what} {item}"


async def ask_about_new_items(workdir: Path, console: Console, err: Console) -> None:
    """Ask about each item of *workdir*'s configuration the record does not approve
    as it is now (nothing when the folder is not trusted); record each yes."""
    approved = approval(workdir)
    if not approved.trusted:
        return
    items = project_items(approved.workspace)
    for item, digest in sorted(items.items()):
        if approved.approves(item, digest) or approved.declines(item, digest):
            continue
        console.print(
            f"[bold yellow]?[/] New or changed since you trusted this folder:"
            f" {escape(describe_item(approved.workspace, item))}",
            soft_wrap=True,
        )
        console.print(escape("  use it? (no: left out, not asked again) [y/N] "), end="")
        answer = await read_line(sys.stdin.fileno())
        if answer is None:
            return  # end of input is no answer: the rest stays out, asked again next time
        yes = answer.strip().lower() in ("y", "yes")
        try:
            approve(approved.workspace, {item: digest}, declined=not yes)
        except TrustStoreError as exc:
            err.print(f"[red]error:[/] {escape(str(exc))}; it stays out of this run")
