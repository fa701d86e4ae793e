"""Deferred tools and ToolSearch, as Claude Code 2.1.332 defers them.

A deferred tool is one whose schema the model does not get up front: the
request's ``tools`` leaves it out, a user message names it, and the model
loads it with ``ToolSearch`` when it needs it. Which tools may be deferred is
a fact of each tool (:attr:`Capabilities.deferred`) plus one rule: every MCP
tool (``mcp__<server>__<tool>``) may be. Whether they are is the run's
:class:`ToolSearchMode`, read from ``ENABLE_TOOL_SEARCH`` as Claude Code reads it:

- unset or ``true``: always deferred;
- ``false``: never (every tool sent whole, no ToolSearch);
- ``auto`` (``auto:10``) or ``auto:N``: deferred when their definitions
  would take more than N % of the context window (estimated at 4 characters
  a token; Claude Code asks the API to count them).

What the request carries (observed from Claude Code against ``coterie
mock-server``): the other tools whole; ToolSearch; each deferred tool the
model has loaded, with ``defer_loading: true``; and
:data:`PLACEHOLDER`, a ``defer_loading`` tool never called, so that the set
of deferred tools is never empty and the API's tool search stays on; the
``advanced-tool-use`` beta. ToolSearch answers with ``tool_reference`` blocks,
which the API expands into the tools' definitions at that point of the
conversation: the bytes before the conversation (system prompt, the tools it
renders) never change when a tool is loaded, so the prompt cache holds.

The loaded tools and the names announced are read back from the history
(:func:`loaded_tools`, :func:`announced_tools`), so a resumed agent has what
its durable transcript says it had.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Literal

import attrs

from coterie.tools._base import ToolResult
from coterie.tools.capabilities import Capabilities, Effect

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from coterie.tools._base import Tool, ToolContext

__all__ = [
    "ANNOUNCEMENT",
    "DEFAULT_WINDOW",
    "PLACEHOLDER",
    "TOOL_SEARCH",
    "ToolSearchMode",
    "ToolSearchTool",
    "announced_tools",
    "announcement",
    "is_announcement",
    "loaded_tools",
    "search_tools",
]

TOOL_SEARCH = "ToolSearch"
#: The context window the ``auto`` rule measures against (the models' usual one).
DEFAULT_WINDOW = 200_000
#: How an MCP tool's name begins (``mcp__<server>__<tool>``).
MCP_PREFIX = "mcp__"
DEFAULT_RESULTS = 5

#: A ``defer_loading`` tool that is never called, always in the request while tools
#: are deferred (Claude Code's name and shape).
PLACEHOLDER: dict[str, Any] = {
    "name": "DeferredToolPlaceholder",
    "description": "Placeholder keeping deferred tool loading on; it does nothing, never call it.",
    "input_schema": {"type": "object", "properties": {}},
    "defer_loading": True,
}

#: The first line of the text naming the deferred tools, one a line after it.
ANNOUNCEMENT = (
    "These tools are deferred: only their names are known until you load them."
    ' Call ToolSearch with "select:Name1,Name2" (or keywords) to load a tool before calling it:'
)


@attrs.frozen
class ToolSearchMode:
    """Whether an agent's deferrable tools are deferred (``ENABLE_TOOL_SEARCH``)."""

    when: Literal["always", "never", "auto"] = "always"
    #: With ``auto``: defer when the deferrable tools would take more than this
    #: percentage of the context window.
    percent: int = 10
    #: Whether the agent is a member of a team (its tools declared
    #: ``deferred_in_team`` are deferrable too).
    team: bool = False

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ToolSearchMode:
        """The mode ``ENABLE_TOOL_SEARCH`` in *env* asks for; unset or unreadable: always."""
        value = env.get("ENABLE_TOOL_SEARCH", "").strip().lower()
        if value in ("false", "0", "no", "off"):
            return cls("never")
        if value == "auto":
            return cls("auto")
        if (match := re.fullmatch(r"auto:(\d{1,3})", value)) and int(match[1]) <= 100:
            return cls("auto", int(match[1]))
        return cls("always")

    def deferred(self, tools: Iterable[Tool], window: int = DEFAULT_WINDOW) -> list[Tool]:
        """Those of *tools* deferred under this mode (none, or every deferrable one)."""
        if self.when == "never":
            return []
        candidates = [t for t in tools if deferrable(t, team=self.team)]
        if self.when == "auto":
            tokens = sum(_estimated_tokens(t) for t in candidates)
            if tokens * 100 <= window * self.percent:
                return []
        return candidates


def deferrable(tool: Tool, *, team: bool = False) -> bool:
    """Whether *tool* may be deferred: it says so (for a member of a team, *team*, or
    for every agent), or it is an MCP server's."""
    caps = tool.capabilities
    says = caps.deferred or (team and caps.deferred_in_team)
    return caps.offered and (says or tool.name.startswith(MCP_PREFIX))


def _estimated_tokens(tool: Tool) -> int:
    text = tool.name + tool.description + json.dumps(tool.input_schema, separators=(",", ":"))
    return (len(text) + 3) // 4


def announcement(names: Sequence[str]) -> str:
    """The reminder naming the deferred tools *names* to the model."""
    lines = "\n".join(names)
    return f"<system-reminder>\n{ANNOUNCEMENT}\n{lines}\n</system-reminder>"


_ANNOUNCEMENT_HEAD = f"<system-reminder>\n{ANNOUNCEMENT}\n"


def is_announcement(text: str) -> bool:
    """Whether *text* is a reminder naming deferred tools (see :func:`announcement`)."""
    return text.startswith(_ANNOUNCEMENT_HEAD)


def _blocks(message: Mapping[str, Any]) -> list[Any]:
    content = message.get("content")
    return content if isinstance(content, list) else []


def announced_tools(messages: Iterable[Mapping[str, Any]]) -> set[str]:
    """The tool names the history's announcements named (the user's own messages
    are text, never such a block: an announcement is a text block of its own)."""
    names: set[str] = set()
    head = _ANNOUNCEMENT_HEAD
    for message in messages:
        if message.get("role") != "user":
            continue
        for block in _blocks(message):
            text = block.get("text") if isinstance(block, dict) else None
            if isinstance(text, str) and text.startswith(head):
                names.update(text[len(head) :].removesuffix("\n</system-reminder>").split("\n"))
    return names


def loaded_tools(messages: Iterable[Mapping[str, Any]]) -> set[str]:
    """The tools the history's ToolSearch results loaded (their ``tool_reference`` blocks)."""
    names: set[str] = set()
    for message in messages:
        if message.get("role") != "user":
            continue
        for block in _blocks(message):
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            inners = block.get("content")
            for inner in inners if isinstance(inners, list) else ():
                if isinstance(inner, dict) and inner.get("type") == "tool_reference":
                    names.add(str(inner.get("tool_name")))
    return names


_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def _words(name: str) -> set[str]:
    """The words of a tool name: ``mcp__slack__send_message`` → mcp, slack, send, message;
    ``NotebookEdit`` → notebook, edit."""
    return {w.lower() for w in _WORD.findall(name)}


def search_tools(query: str, tools: Sequence[Tool], limit: int = DEFAULT_RESULTS) -> list[Tool]:
    """The deferred *tools* *query* asks for, best first.

    ``select:A,B`` names tools exactly (case aside); otherwise each word is
    looked for in the name (worth most) and the description, and a ``+word``
    must be in the name. At most *limit* come back.
    """
    query = query.strip()
    if query.lower().startswith("select:"):
        by_name = {t.name.lower(): t for t in tools}
        wanted = [n.strip().lower() for n in query[len("select:") :].split(",") if n.strip()]
        chosen = [by_name[n] for n in dict.fromkeys(wanted) if n in by_name]
        return chosen
    terms = [t.lower() for t in query.split() if t.strip("+")]
    required = [t[1:] for t in terms if t.startswith("+")]
    plain = [t.lstrip("+") for t in terms]
    scored: list[tuple[int, int, Tool]] = []
    for order, tool in enumerate(tools):
        name, words = tool.name.lower(), _words(tool.name)
        if any(r not in name for r in required):
            continue
        description = tool.description.lower()
        score = 0
        for term in plain:
            if term == name or term in words:
                score += 10
            elif term in name:
                score += 5
            elif term in description:
                score += 2
        if score:
            scored.append((-score, order, tool))
    return [tool for _, _, tool in sorted(scored, key=lambda s: s[:2])[: max(limit, 1)]]


_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": 'Which deferred tools to load: "select:Name1,Name2", or keywords',
        },
        "max_results": {
            "type": "number",
            "description": "How many tools a keyword query may load (default 5)",
            "default": DEFAULT_RESULTS,
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}


class ToolSearchTool:
    """Loads deferred tools by name or keyword: its result refers to them, and the
    API puts their definitions in the conversation there (see the module docstring).

    *catalogue* gives the deferred tools of the agent's registry at call time
    (an MCP server may have connected meanwhile).
    """

    name = TOOL_SEARCH
    description = (
        "Loads the schemas of deferred tools, which a system reminder names, so that they"
        ' can be called. Query "select:Name1,Name2" loads those tools; keywords ("notebook'
        ' edit") load up to max_results best matches; "+word" requires the word in the name.'
    )
    input_schema = _SCHEMA
    # Looking up names changes nothing: never asked about, allowed in plan mode.
    capabilities = Capabilities(Effect.READ_ONLY)

    def __init__(self, catalogue: Callable[[], Sequence[Tool]]) -> None:
        self.catalogue = catalogue

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """The matching tools as ``tool_reference`` blocks, or why there are none."""
        limit = input.get("max_results", DEFAULT_RESULTS)
        limit = int(limit) if isinstance(limit, (int, float)) and limit >= 1 else DEFAULT_RESULTS
        found = search_tools(str(input["query"]), self.catalogue(), limit)
        if not found:
            return ToolResult(
                f"No deferred tool matches {input['query']!r}. The deferred tools are named in"
                " the system reminder; select them by their exact names."
            )
        return ToolResult.of_blocks(
            [{"type": "tool_reference", "tool_name": tool.name} for tool in found]
        )
