"""``coterie auth status [--json]``: how coterie would reach the Messages API.

Claude Code's ``claude auth status --json`` is how programs built on the Agent
SDK (Zed's ACP adapter among them) check that the CLI they drive can call a
model before they open a session; coterie answers in the same fields. coterie
has no account of its own to sign in to: it uses ``ANTHROPIC_API_KEY`` (sent
as ``x-api-key``), ``ANTHROPIC_AUTH_TOKEN`` (sent as a bearer token) or a
local server at ``ANTHROPIC_BASE_URL``, so ``auth login`` and ``auth logout``
only say so. Exit codes as Claude Code's: 0 when a model can be called, 1
when none is configured.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping

    from rich.console import Console

__all__: list[str] = []

#: Where the credentials come from, in the order the client uses them.
_SOURCES = (("ANTHROPIC_API_KEY", "api_key"), ("ANTHROPIC_AUTH_TOKEN", "auth_token"))


def add_auth_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``coterie auth`` (``status``, ``login``, ``logout``) to the CLI's subcommands."""
    auth = sub.add_parser(
        "auth",
        help="show how coterie reaches the Messages API (Claude Code's `claude auth`)",
        description=(
            "coterie calls the Messages API with ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN or a"
            " server at ANTHROPIC_BASE_URL; there is no account to sign in to. `auth status`"
            " says which is set (exit 1: none), as `claude auth status` does."
        ),
    )
    actions = auth.add_subparsers(dest="auth_action", metavar="ACTION", required=True)
    status = actions.add_parser("status", help="which credentials a run would use")
    status.add_argument("--json", action="store_true", help="one JSON object, Claude Code's fields")
    for name in ("login", "logout"):
        actions.add_parser(
            name, help="not needed: coterie reads its credentials from the environment"
        )


def auth_status(environ: Mapping[str, str]) -> dict[str, Any]:
    """Claude Code's ``auth status`` fields for *environ* (never the secret itself)."""
    from coterie.home import claude_dir, coterie_home

    source = next(((var, kind) for var, kind in _SOURCES if environ.get(var)), None)
    base_url = environ.get("ANTHROPIC_BASE_URL") or None
    status: dict[str, Any] = {
        # A local server at ANTHROPIC_BASE_URL needs no key: coterie can call it.
        "loggedIn": source is not None or base_url is not None,
        "authMethod": source[1] if source is not None else "none",
        "apiProvider": "firstParty",
        "configDirectory": str(claude_dir()),
        "projectsDirectory": str(coterie_home()),
    }
    if source is not None:
        status["apiKeySource"] = source[0]
    if base_url is not None:
        status["baseUrl"] = base_url
    return status


def account(environ: Mapping[str, str]) -> dict[str, Any]:
    """Where a run's credentials come from, in the ``account`` fields of Claude Code's
    answer to a host's ``initialize`` (the variable's name, never the secret)."""
    status = auth_status(environ)
    return {
        "tokenSource": "ANTHROPIC_AUTH_TOKEN" if status["authMethod"] == "auth_token" else "none",
        "apiKeySource": status.get("apiKeySource", "none"),
        "apiProvider": status["apiProvider"],
    }


def auth_command(args: argparse.Namespace, console: Console, err: Console) -> int:
    """Run ``coterie auth ACTION``; the exit code."""
    if args.auth_action != "status":
        err.print(
            f"coterie auth {args.auth_action}: coterie has no account to sign in to; set"
            " ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN, or ANTHROPIC_BASE_URL for a local"
            " server) in the environment",
            markup=False,
            highlight=False,
        )
        return 2
    status = auth_status(os.environ)
    if args.json:
        print(json.dumps(status, indent=2))
    elif status["loggedIn"]:
        how = status.get("apiKeySource") or f"the server at {status['baseUrl']} (no key)"
        console.print(f"coterie calls the Messages API with {how}", markup=False, highlight=False)
    else:
        console.print(
            "no credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN, or"
            " ANTHROPIC_BASE_URL for a local server)",
            markup=False,
            highlight=False,
        )
    return 0 if status["loggedIn"] else 1
