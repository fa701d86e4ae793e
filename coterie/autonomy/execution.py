"""Entering Auto Mode drops allow rules that would let anything run unclassified.

An allow rule is decided before the classifier is asked, so ``Bash(*)`` or
``Bash(python:*)`` would let the agent run any code without review: the
interpreter's argument is a program. Such rules are set aside for the
session (docs/autonomy.md); narrow rules (``Bash(npm test)``, ``Bash(python -m
pytest *)``) stay.

A Bash rule grants arbitrary execution when its specifier, in Claude Code's
syntax (see :mod:`coterie.tools.permissions.rules`), can match an entry
point of :data:`ARBITRARY_EXECUTION_COMMANDS` followed by code:

- ``Bash``, ``Bash(*)`` and every wildcard-only form (``Bash(* *)``, ``Bash(:*)``);
- the entry point alone, or followed by a wildcard: ``Bash(python)``,
  ``Bash(python:*)``, ``Bash(python *)``, ``Bash(python*)``;
- the entry point, options only, then a wildcard: ``Bash(python -c *)``,
  ``Bash(bash -lc:*)``;
- a wildcard inside the command word that could complete to an entry point
  (``Bash(py*)``, ``Bash(*)``), or one that could cover the rest of a
  two-word entry point (``Bash(npm *)`` covers ``npm run ...``).

Command words are compared without their directory and case, and versioned
interpreters count as their family (``/usr/bin/python3.12`` is ``python``).
Leading ``NAME=value`` assignments are skipped. Strings that do not parse as
rules are kept, for the settings loader to report.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "ARBITRARY_EXECUTION_COMMANDS",
    "drop_arbitrary_execution",
    "grants_arbitrary_execution",
]

#: Commands whose arguments are code (or another command) to run.
ARBITRARY_EXECUTION_COMMANDS: Final = frozenset(
    {
        # interpreters
        "python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "deno", "bun",
        "tsx", "ts-node", "ruby", "perl", "php", "lua", "luajit", "rscript", "julia",
        "osascript", "pwsh", "powershell",
        # shells
        "sh", "bash", "zsh", "fish", "dash", "ksh", "mksh", "csh", "tcsh", "ash", "busybox",
        # commands that run their arguments as a command
        "eval", "exec", "env", "xargs", "command", "builtin", "source", ".", "sudo", "doas",
        "su", "nohup", "nice", "timeout", "time", "watch", "setsid", "stdbuf", "chroot",
        "ssh", "parallel",
        # package runners: the script or package they run is arbitrary code
        "npx", "bunx", "pnpx", "uvx", "pipx run", "npm exec", "npm run", "npm x",
        "yarn run", "yarn exec", "yarn dlx", "pnpm run", "pnpm exec", "pnpm dlx",
        "bun run", "bun x", "uv run", "poetry run", "pdm run", "hatch run",
        "cargo run", "go run", "deno run", "deno eval",
    }
)  # fmt: skip

_ASSIGNMENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=\S*\Z")
_WILDCARD: Final = re.compile(r"(?<!\\)\*")
# python3.12 → python, pypy3.10 → pypy: a version suffix keeps the family.
_VERSION: Final = re.compile(r"(?<=[a-z])[0-9][0-9.]*\Z")


def drop_arbitrary_execution(allow_rules: Iterable[str]) -> tuple[list[str], list[str]]:
    """Split permission allow rules into (kept, dropped) for Auto Mode, order kept."""
    kept: list[str] = []
    dropped: list[str] = []
    for rule in allow_rules:
        (dropped if grants_arbitrary_execution(rule) else kept).append(rule)
    return kept, dropped


def grants_arbitrary_execution(rule: str) -> bool:
    """Whether the allow rule *rule* (``Tool`` or ``Tool(specifier)``) lets any code run."""
    if not isinstance(rule, str):
        return False
    text = rule.strip()
    tool, paren, rest = text.partition("(")
    if tool.strip() != "Bash":
        return False
    if not paren:
        return True  # "Bash": every command
    if not rest.endswith(")"):
        return False  # malformed: not a rule the policy would ever apply
    specifier = " ".join(rest[:-1].split()).lower()
    if not specifier:
        return False  # "Bash()" is malformed: the policy never applies it
    if specifier.endswith(":*"):
        specifier = (specifier[:-2].rstrip() + " *").lstrip()  # the legacy prefix form
    words = specifier.split(" ")
    while words and _ASSIGNMENT.match(words[0]):
        words.pop(0)  # FOO=1 python *: the assignment changes nothing
    if not words:
        return False  # only assignments: no command runs
    words[0] = _command_word(words[0])
    normalized = " ".join(words)
    if not _WILDCARD.search(normalized):
        return normalized in ARBITRARY_EXECUTION_COMMANDS
    literal = _WILDCARD.split(normalized, maxsplit=1)[0]
    return any(_covers(literal, entry) for entry in ARBITRARY_EXECUTION_COMMANDS)


def _command_word(word: str) -> str:
    """The command word without its directory, a version suffix folded away."""
    base = word.rsplit("/", 1)[-1] if "/" in word.rstrip("/") else word
    family = _VERSION.sub("", base)
    return family if family in ARBITRARY_EXECUTION_COMMANDS else base


def _covers(literal: str, entry: str) -> bool:
    """Whether a rule whose text before its first wildcard is *literal* can run *entry* code."""
    if (entry + " ").startswith(literal):
        return True  # the wildcard completes the entry point (py*, npm *, python *)
    if not literal.startswith(entry + " "):
        return False
    # python -c *, bash -lc *: only options between the entry point and the wildcard.
    between = literal[len(entry) :].split()
    return all(word.startswith("-") for word in between)
