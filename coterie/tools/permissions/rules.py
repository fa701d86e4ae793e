"""Permission rules in Claude Code's syntax: ``Tool`` or ``Tool(specifier)``.

Bash specifiers match one simple command (compound commands are split by
the policy, and every part is checked):

- ``Bash`` or ``Bash(*)``: every command;
- ``Bash(npm run build)``: exactly that command;
- ``Bash(git diff:*)`` (legacy prefix form): ``git diff`` alone or followed by
  a space and anything;
- ``Bash(npm run test *)``: ``*`` matches any text, spaces included; a single
  trailing `` *`` is optional and keeps a word boundary, so ``Bash(ls *)``
  matches ``ls`` and ``ls -la`` but not ``lsof``; ``\\*`` is a literal star.

Path specifiers (``Read``, ``Edit``, ``Write``) follow gitignore, anchored by
their prefix: ``//abs/path`` from the filesystem root, ``~/path`` from the
home directory, ``/path`` from the directory holding the settings file's
``.claude`` folder (the project root for project settings), and ``path`` or
``./path`` from the workspace. A pattern without a ``/`` matches at any depth;
a pattern naming a directory covers everything below it. ``Edit`` rules apply
to every file-editing tool (Write, Edit), ``Read`` rules to every tool that
reads files (Read, Glob, Grep); a ``Write`` rule applies to Write only, and a
``Write(path)`` allow rule allows nothing (as in Claude Code; ``Edit(path)``
is the rule that allows edits).
Which tools those are is each tool's declaration: an ``Edit`` rule covers
every tool whose capabilities say it writes the path its input names, a
``Read`` rule every tool reading one.

``WebFetch(domain:HOST)`` rules match a ``url`` input's host, as Claude Code
matches them: ``domain:example.com`` the host ``example.com`` (case and a
trailing dot aside), ``domain:*.example.com`` every host below it but not
``example.com`` itself, ``domain:*`` every host, and a ``*`` elsewhere any text
within one label (``domain:docs-*.example.com``). Asked with ``subdomains``
(:meth:`Rule.matches_url`), ``domain:example.com`` covers the hosts below it
too: the reading for deny and ask rules, stricter than Claude Code's.

MCP rules name a server's tools as Claude Code does: ``mcp__github`` and
``mcp__github__*`` cover every tool of the server ``github``,
``mcp__github__create_issue`` that one tool; they take no specifier.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import attrs

from coterie.errors import CoterieError
from coterie.tools._globbing import compile_glob, has_magic
from coterie.tools.permissions.shell import analyze, command_views

if TYPE_CHECKING:
    from collections.abc import Sequence

    from coterie.tools._base import Tool

__all__ = [
    "PATH_RULE_KINDS",
    "Rule",
    "RuleError",
    "excluded_command",
    "host_matches",
    "match_command",
    "parse_rule",
]

#: The rule kinds whose specifier is a path pattern (Claude Code's syntax).
PATH_RULE_KINDS = frozenset({"Read", "Edit", "Write"})
_TOOL_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
#: ``mcp__server`` or ``mcp__server__*``: every tool of one MCP server.
_MCP_SERVER = re.compile(r"^mcp__([A-Za-z0-9](?:[A-Za-z0-9-]|_(?=[A-Za-z0-9-]))*)(?:__\*)?$")


class RuleError(CoterieError, ValueError):
    """A permission rule string is malformed; the message says how and where."""


@attrs.frozen
class Rule:
    """One parsed rule. ``root`` anchors ``/path`` patterns; ``source`` names its file."""

    text: str
    tool: str
    specifier: str | None = None
    root: Path | None = None
    source: str | None = None

    def __str__(self) -> str:
        return self.text

    def describe(self) -> str:
        """The rule as written, with where it came from."""
        return f"{self.text} (from {self.source})" if self.source else self.text

    def applies_to(self, tool: Tool) -> bool:
        """Whether this rule speaks about calls of *tool*: its own name or an alias
        of it (``Task`` for ``Agent``), or for
        ``Edit`` and ``Read`` rules any tool declaring it writes or reads a path."""
        if self.tool == tool.name or self.tool in getattr(tool, "aliases", ()):
            return True
        server = _MCP_SERVER.match(self.tool)
        if server is not None:
            return tool.name.startswith(f"mcp__{server.group(1)}__")
        if self.tool == "Edit":
            return tool.capabilities.edits_files
        if self.tool == "Read":
            return tool.capabilities.reads_files
        return False

    @property
    def takes_path(self) -> bool:
        """Whether the specifier is a path pattern (``Read``, ``Edit`` and ``Write`` rules)."""
        return self.tool in PATH_RULE_KINDS

    @property
    def inert_allow(self) -> bool:
        """A ``Write(path)`` rule allows nothing (Claude Code ignores such allow rules:
        ``Edit(path)`` covers every file edit); as a deny or ask rule it still applies."""
        return self.tool == "Write" and not self.whole_tool

    @property
    def whole_tool(self) -> bool:
        """``Bash`` or ``Bash(*)``: the rule covers every use of the tool."""
        return self.specifier is None or self.specifier == "*"

    def matches_command(self, command: str) -> bool:
        """Whether this Bash rule covers one simple *command* (already split)."""
        if self.whole_tool:
            return True
        assert self.specifier is not None
        return _bash_regex(self.specifier).match(" ".join(command.split())) is not None

    def matches_path(self, path: Path, workspace: Path) -> bool:
        """Whether this path rule covers the absolute *path* (a tool's target)."""
        if self.whole_tool:
            return True
        assert self.specifier is not None
        anchor, pattern = _path_pattern(self.specifier, workspace, self.root)
        if not (path == anchor or path.is_relative_to(anchor)):
            return False
        if pattern is None:
            return True
        return pattern.match(path.relative_to(anchor).as_posix()) is not None

    def anchor(self, workspace: Path) -> Path:
        """The resolved directory this path rule's pattern is taken from (``/`` for a bare rule)."""
        if self.whole_tool:
            return Path("/")
        assert self.specifier is not None
        return _path_pattern(self.specifier, workspace, self.root)[0]

    def matches_url(self, url: str, *, subdomains: bool = True) -> bool:
        """Whether this ``WebFetch(domain:...)`` rule covers *url*'s host; with
        *subdomains* ``domain:H`` covers the hosts below H as well (see the module)."""
        if self.whole_tool:
            return True
        assert self.specifier is not None
        if not self.specifier.startswith("domain:"):
            return False
        try:
            host = urlsplit(url).hostname or ""
        except ValueError:
            return False
        return host_matches(self.specifier.removeprefix("domain:"), host, subdomains=subdomains)


def parse_rule(text: str, *, root: Path | None = None, source: str | None = None) -> Rule:
    """Parse ``Tool`` or ``Tool(specifier)``; raise :class:`RuleError` if malformed."""
    where = f" in {source}" if source else ""
    if not isinstance(text, str):
        raise RuleError(f"permission rule {text!r}{where} is not a string")
    stripped = text.strip()
    if not stripped:
        raise RuleError(f"empty permission rule{where}")
    if "(" not in stripped:
        if ")" in stripped:
            raise RuleError(f"permission rule {text!r}{where} has ')' without '('")
        if not _MCP_SERVER.match(stripped):
            _check_tool(stripped, text, where)
        return Rule(stripped, stripped, None, root, source)
    tool, _, rest = stripped.partition("(")
    tool = tool.strip()
    _check_tool(tool, text, where)
    if tool.startswith("mcp__"):
        raise RuleError(
            f"permission rule {text!r}{where}: MCP rules take no specifier;"
            " write mcp__server or mcp__server__tool"
        )
    if not rest.endswith(")"):
        raise RuleError(f"permission rule {text!r}{where} must end with ')': write Tool(specifier)")
    specifier = rest[:-1].strip()
    if not specifier:
        raise RuleError(
            f"permission rule {text!r}{where} has an empty specifier; write {tool!r} alone"
            " to cover every use of the tool"
        )
    if tool == "Bash" and ":*" in specifier[:-2]:
        raise RuleError(
            f"permission rule {text!r}{where}: the legacy ':*' prefix form is only allowed at"
            " the end (e.g. Bash(git diff:*)); use '*' for a wildcard elsewhere"
        )
    if tool in PATH_RULE_KINDS and specifier != "*" and "\0" in specifier:
        raise RuleError(f"permission rule {text!r}{where} holds a NUL byte")
    if (
        tool == "WebFetch"
        and specifier != "*"
        and (not specifier.startswith("domain:") or not _host(specifier.removeprefix("domain:")))
    ):
        raise RuleError(f"permission rule {text!r}{where}: WebFetch rules take domain:HOST")
    return Rule(stripped, tool, specifier, root, source)


def _check_tool(tool: str, text: str, where: str) -> None:
    if not _TOOL_NAME.match(tool):
        raise RuleError(
            f"permission rule {text!r}{where}: {tool!r} is not a tool name"
            " (expected e.g. Bash, Read, Edit, Write, WebFetch)"
        )


def _host(name: str) -> str:
    """A host name as rules compare them: lowercase, without trailing dots."""
    return name.strip().lower().rstrip(".")


@functools.lru_cache(maxsize=256)
def _label_regex(pattern: str) -> re.Pattern[str]:
    """Labels of *pattern*, a ``*`` matching any text within one label."""
    labels = ("[^.]*".join(re.escape(p) for p in label.split("*")) for label in pattern.split("."))
    return re.compile(r"\.".join(labels))


def host_matches(pattern: str, host: str, *, subdomains: bool = False) -> bool:
    """Whether the host *pattern* of a ``domain:`` rule covers *host* (see the module)."""
    pattern, host = _host(pattern), _host(host)
    if not host:
        return False
    if pattern == "*":
        return True
    below = pattern.startswith("*.")
    if below:
        pattern = pattern[2:]
    elif _label_regex(pattern).fullmatch(host):
        return True
    if not (below or subdomains):
        return False
    # A host below the pattern: one or more whole, non-empty labels in front of it.
    depth = pattern.count(".") + 1
    labels = host.split(".")
    front, tail = labels[:-depth], ".".join(labels[-depth:])
    return bool(front) and all(front) and _label_regex(pattern).fullmatch(tail) is not None


@functools.lru_cache(maxsize=512)
def _bash_regex(specifier: str) -> re.Pattern[str]:
    spec = " ".join(specifier.split())
    if spec.endswith(":*"):
        prefix = re.escape(spec[:-2].rstrip())
        return re.compile(rf"(?s:{prefix}(?:\s.*)?)\Z")
    # Split on unescaped stars; `\*` stays a literal star.
    pieces = re.split(r"(?<!\\)\*", spec)
    literal = [re.escape(p.replace("\\*", "*")) for p in pieces]
    if len(pieces) == 2 and pieces[1] == "" and pieces[0].endswith(" "):
        # `ls *`: the trailing ` *` is optional, and keeps the word boundary.
        return re.compile(rf"(?s:{re.escape(pieces[0].rstrip())}(?: .*)?)\Z")
    return re.compile("(?s:" + ".*".join(literal) + r")\Z")


@functools.lru_cache(maxsize=512)
def _path_pattern(
    specifier: str, workspace: Path, root: Path | None
) -> tuple[Path, re.Pattern[str] | None]:
    """The rule's anchor directory (resolved) and its pattern relative to it."""
    if specifier.startswith("//"):
        anchor, rest = Path("/"), specifier[2:]
    elif specifier == "~" or specifier.startswith("~/"):
        anchor, rest = Path(os.path.expanduser("~")), specifier[2:]
    elif specifier.startswith("/"):
        anchor, rest = (root or workspace), specifier[1:]
    else:
        anchor, rest = workspace, specifier.removeprefix("./")
        if "/" not in rest.rstrip("/"):
            rest = "**/" + rest  # gitignore: a bare name matches at any depth
    rest = rest.rstrip("/")
    # Literal leading directories join the anchor, so that resolving it (a
    # symlinked /tmp, say) keeps matching the resolved paths tools work on.
    segments = rest.split("/") if rest else []
    while segments and segments[0] and not has_magic(segments[0]):
        anchor = anchor / segments.pop(0)
    anchor = Path(os.path.realpath(anchor))
    tail = "/".join(segments)
    if not tail or tail == "**":
        return anchor, None
    return anchor, compile_glob(tail, suffix=r"(?:/.*)?")


def match_command(rules: list[Rule], command: str, *, strict: bool) -> Rule | None:
    """The first of *rules* covering *command*: any part in any spelling (deny, ask),
    or with *strict* (allow) every part as written and without its wrappers, and
    nothing hidden (no substitution, nested shell...)."""
    analysis = analyze(command)
    if not strict:
        for part in analysis.all_commands:
            for view in command_views(part):
                for rule in rules:
                    if rule.matches_command(view):
                        return rule
        return None
    parts = analysis.all_commands
    if analysis.risks or not parts:
        return None
    covering: list[Rule] = []
    for part in parts:
        # As written, and without its wrappers: `Bash(flock:*)` or `Bash(timeout:*)`
        # must not allow the command they run.
        innermost = command_views(part)[-1]
        found = next((r for r in rules if r.matches_command(part)), None)
        if found is None:
            return None
        if not _only_its_path(part, innermost) and not any(
            r.matches_command(innermost) for r in rules
        ):
            return None
        covering.append(found)
    return covering[0]


def _only_its_path(part: str, view: str) -> bool:
    """Whether *view* is *part* with nothing taken away but its program's directory
    (``./mk.sh build`` read as ``mk.sh build``): no wrapper was removed, so the
    rule that covers *part* as written covers what runs."""
    written, seen = part.split(), view.split()
    return (
        len(written) == len(seen)
        and written[1:] == seen[1:]
        and "/" in written[0]
        and written[0].rsplit("/", 1)[-1] == seen[0]
    )


def excluded_command(command: str, excluded: Sequence[str]) -> bool:
    """Whether a part of *command* is one of *excluded* (Claude Code's ``excludedCommands``).

    An entry is a command name (``docker``) or a Bash rule specifier
    (``git:*``, ``npm run *``), matched against every spelling of every part.
    """
    names = [e.strip() for e in excluded if e.strip()]
    if not names:
        return False
    patterns = []
    for name in names:
        try:
            patterns.append(parse_rule(f"Bash({name})"))
        except RuleError:
            continue  # not a specifier: the name alone still counts
    for part in analyze(command).all_commands:
        for view in command_views(part):
            if view.split(" ", 1)[0] in names or any(r.matches_command(view) for r in patterns):
                return True
    return False
