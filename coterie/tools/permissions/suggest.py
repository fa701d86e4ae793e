"""The rule a permission prompt offers for "Yes, and don't ask again".

Claude Code's second answer names what it would stop asking about: a Bash
command's prefix (``npm test`` -> ``Bash(npm test:*)``, written to the
project's ``.claude/settings.local.json``), all file edits for the rest of the
session (never written: Claude Code's "allow all edits during this session"),
or another tool by name. :func:`suggest_rule` is that choice, a pure function
of the call. It offers nothing it cannot state safely:

- a Bash command line of more than one simple command, or one with
  substitutions or nested shells, gets no rule (each part would need its own,
  and a prefix of the first would say nothing about the rest);
- a prefix is made of plain words only (no quotes, globs, ``=`` or shell
  syntax), so the rule means what the prompt says;
- a prefix that would grant arbitrary execution (``python``, ``bash -c``,
  ``npx``: :func:`coterie.autonomy.grants_arbitrary_execution`) is narrowed to
  the exact command, and a command too odd to write as an exact rule gets none;
- every rule offered covers the command it was offered for (a property test
  checks this).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

import attrs

from coterie.autonomy import grants_arbitrary_execution
from coterie.tools.permissions.rules import RuleError, parse_rule
from coterie.tools.permissions.shell import analyze, tokens

__all__ = ["Suggestion", "suggest_rule"]

#: Commands whose first argument is a subcommand worth keeping in the prefix
#: (``git commit``, ``npm test``); ``npm run test`` keeps the script's name too.
SUBCOMMANDS = frozenset(
    {
        "apt", "brew", "bun", "bundle", "cargo", "composer", "conda", "deno", "docker",
        "dotnet", "gh", "git", "go", "gradle", "helm", "kubectl", "make", "mvn", "npm",
        "pip", "pip3", "pnpm", "poetry", "rake", "rustup", "swift", "terraform", "uv",
        "yarn",
    }
)  # fmt: skip
#: Subcommands that run a named script: the script's name belongs to the prefix.
SCRIPT_RUNNERS = frozenset({"run", "exec", "x"})
_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/+@-]*$")
#: A program named by its relative path (a workspace script: ``./mk.sh``,
#: ``scripts/test.sh``): plain segments, never ``..``.
_SCRIPT = re.compile(r"^(\./)?([A-Za-z0-9_][A-Za-z0-9._+@-]*/)*[A-Za-z0-9_][A-Za-z0-9._+@-]*$")


@attrs.frozen
class Suggestion:
    """What "don't ask again" would allow: ``rule`` in coterie's (Claude Code's)
    syntax, ``label`` for the prompt, and whether it is written to the project's
    local settings (``persist``) or kept for this run only."""

    rule: str
    label: str
    persist: bool

    def for_hooks(self) -> dict[str, Any]:
        """This suggestion as a PermissionRequest hook reads it, in Claude Code's
        shape: all edits as ``setMode`` ``acceptEdits`` for the session, a rule as
        ``addRules`` to the project's local settings (``localSettings``)."""
        if not self.persist and self.rule == "Edit":
            return {"type": "setMode", "mode": "acceptEdits", "destination": "session"}
        name, _, content = self.rule.partition("(")
        rule = {"toolName": name} | ({"ruleContent": content[:-1]} if content else {})
        return {
            "type": "addRules",
            "rules": [rule],
            "behavior": "allow",
            "destination": "localSettings" if self.persist else "session",
        }


def suggest_rule(
    tool: str, input: dict[str, Any], *, edits_files: bool = False
) -> Suggestion | None:
    """The rule to offer for the call of *tool* with *input*, or None to offer none.

    *edits_files* is the tool's own declaration (its capabilities) that it
    edits the file its input names.
    """
    if tool == "Bash":
        command = input.get("command")
        return _bash(command) if isinstance(command, str) else None
    if edits_files:
        return Suggestion("Edit", "all edits during this session", persist=False)
    if tool == "WebFetch":
        host = _host(input.get("url"))
        if host is None:
            return None
        return Suggestion(f"WebFetch(domain:{host})", f"fetches from {host}", persist=True)
    try:
        rule = parse_rule(tool)
    except RuleError:
        return None
    return Suggestion(rule.text, tool, persist=True)


def _host(url: object) -> str | None:
    """The host of a WebFetch call's *url*, as a rule would name it (None: no plain host)."""
    try:
        host = urlsplit(url).hostname if isinstance(url, str) else None
    except ValueError:
        return None
    if not host or not re.fullmatch(r"[a-z0-9.-]+|[0-9a-f:]+", host):
        return None
    return host


def _bash(command: str) -> Suggestion | None:
    analysis = analyze(command)
    if len(analysis.commands) != 1 or analysis.nested or analysis.risks or analysis.inner:
        return None
    text = analysis.commands[0][0]
    words = tokens(text)
    if not words or " ".join(words) != " ".join(text.split()):
        return None  # quotes or escapes: the words are not what the rule would match
    prefix = _prefix(words)
    if prefix is not None:
        rule = f"Bash({' '.join(prefix)}:*)"
        if not grants_arbitrary_execution(rule):
            return Suggestion(rule, f"`{' '.join(prefix)}` commands", persist=True)
    exact = " ".join(words)
    if any(not _PLAIN.match(word) for word in words):
        return None
    rule = f"Bash({exact})"
    if grants_arbitrary_execution(rule):
        return None
    return Suggestion(rule, f"`{exact}`", persist=True)


def _prefix(words: list[str]) -> list[str] | None:
    """The plain leading words that name what the command is: its program, and
    for a program with subcommands the subcommand (and a script runner's script)."""
    if "/" in words[0]:  # a workspace script is its own program: `./mk.sh` commands
        script = _SCRIPT.match(words[0]) and ".." not in words[0].split("/")
        return [words[0]] if script else None
    if not _PLAIN.match(words[0]):
        return None
    prefix = [words[0]]
    if words[0] in SUBCOMMANDS and len(words) > 1 and _PLAIN.match(words[1]):
        prefix.append(words[1])
        if words[1] in SCRIPT_RUNNERS and len(words) > 2 and _PLAIN.match(words[2]):
            prefix.append(words[2])
    return prefix
