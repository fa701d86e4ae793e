"""``coterie trust [DIR]``, ``--revoke [DIR]``, ``--list``: the workspace trust store.

A trusted folder's ``.claude/settings.json`` and ``settings.local.json``
apply in full (see :mod:`coterie.trust`); the answer covers its subfolders,
unless one of them has an answer of its own. Trusting records what is
trusted (the settings files, skills, agents, commands and ``.mcp.json``
servers a run there loads); trusting again records what is there now.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

    from rich.console import Console

__all__: list[str] = []


def add_trust_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``coterie trust`` to the CLI's subcommands."""
    trust = sub.add_parser(
        "trust",
        help="trust a folder as it is now: its configuration may then widen what coterie may do",
        description=(
            "Mark DIR (default: the current directory) trusted, so that its "
            ".claude/settings.json and .claude/settings.local.json apply in full: allow "
            "rules, defaultMode, additionalDirectories, the sandbox's settings. Until "
            "then coterie ignores those (deny and ask rules always apply) and takes no "
            "git snapshot there. Trust records what it trusts: the digest of each settings "
            "file, skill, agent and command, and each .mcp.json server; one that is new "
            "or changed later is asked about at a terminal and ignored with -p, until "
            "you run coterie trust DIR again. Trust covers the folder's subfolders, "
            "unless one has an answer of its own. The home directory and the folders "
            "above it cannot be trusted. Answers are kept in $COTERIE_HOME/trust.json."
        ),
    )
    trust.add_argument("dir", nargs="?", type=Path, metavar="DIR", help="the folder")
    action = trust.add_mutually_exclusive_group()
    action.add_argument(
        "--revoke",
        action="store_true",
        help="stop trusting DIR (also when a parent folder is trusted)",
    )
    action.add_argument("--list", action="store_true", help="list the recorded answers")
    trust.add_argument("--json", action="store_true", help="with --list: one JSON object a line")


def trust_command(args: argparse.Namespace, console: Console, err: Console) -> int:
    """Run ``coterie trust``; the exit code (2 for a folder that cannot be trusted)."""
    # The implementation's imports: the parser (every command's) must not pay for them.
    from rich.markup import escape

    from coterie.trust import TrustRefused, TrustStoreError, set_trust

    try:
        if args.list:
            if args.dir is not None:
                err.print("[red]error:[/] --list takes no DIR")
                return 2
            return _list(args, console)
        folder: Path = args.dir if args.dir is not None else Path.cwd()
        if not folder.is_dir():
            err.print(f"[red]error:[/] {escape(str(folder))}: not a directory")
            return 2
        if args.revoke:
            entry = set_trust(folder, trusted=False)
            console.print(
                f"{escape(str(entry.folder))} is not trusted: its .claude settings widen"
                " nothing from the next run on (deny and ask rules still apply)",
                soft_wrap=True,
            )
            return 0
        from coterie.projectconfig import project_items  # the loaders: only to trust

        entry = set_trust(folder, trusted=True, items=project_items(folder))
    except TrustRefused as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}; trust a project folder instead")
        return 2
    except TrustStoreError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        return 2
    count = entry.recorded or 0
    console.print(
        f"Trusted {escape(str(entry.folder))} and its subfolders: their .claude settings"
        f" apply in full from the next run. Recorded {_items(count)} (settings, skills,"
        " agents, commands, .mcp.json servers): one added or changed later is not used"
        " until you approve it",
        soft_wrap=True,
    )
    return 0


def _items(count: int) -> str:
    return f"{count} item" if count == 1 else f"{count} items"


def _list(args: argparse.Namespace, console: Console) -> int:
    from rich.markup import escape

    from coterie.trust import trust_entries, trust_file

    entries = trust_entries()
    if args.json:
        for entry in entries:
            console.file.write(json.dumps(entry.to_json()) + "\n")
        return 0
    if not entries:
        console.print(f"No answers recorded in {escape(str(trust_file()))}")
        return 0
    for entry in entries:
        state = "trusted    " if entry.trusted else "not trusted"
        recorded = ""
        if entry.trusted:
            count = entry.recorded
            recorded = (
                "  (nothing recorded: trust it again)" if count is None else f"  ({_items(count)})"
            )
        console.print(
            f"{state}  {escape(str(entry.folder))}  [dim]{entry.at}{recorded}[/]", soft_wrap=True
        )
    return 0
