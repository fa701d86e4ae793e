"""What an MCP tool call's answer becomes for the model: pure functions, no I/O.

A ``CallToolResult``'s content blocks are rendered as text (text blocks as
they are, embedded text resources by their text, images and other binary
content by a placeholder naming their type), its ``isError`` kept; the text
is capped as Claude Code caps MCP output (``MAX_MCP_OUTPUT_TOKENS``, 25,000
tokens by default, counted here as four characters each), the head kept and
the cut said. Names are made the way Claude Code makes them:
``mcp__<server>__<tool>``, characters the Messages API does not allow in a
tool name replaced by ``_``.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["DEFAULT_OUTPUT_TOKENS", "cap_output", "output_limit", "render_content", "tool_name"]

DEFAULT_OUTPUT_TOKENS = 25_000
_CHARS_PER_TOKEN = 4
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """The name the model calls *server*'s *tool* by (at most 128 characters)."""
    return f"mcp__{server}__{_NOT_ALLOWED.sub('_', tool)}"[:128]


def output_limit(env: Mapping[str, str]) -> int:
    """The most characters of one MCP result the model gets (``MAX_MCP_OUTPUT_TOKENS``)."""
    try:
        tokens = int(env.get("MAX_MCP_OUTPUT_TOKENS", ""))
    except ValueError:
        tokens = DEFAULT_OUTPUT_TOKENS
    return max(tokens, 1) * _CHARS_PER_TOKEN


def render_content(blocks: list[Any], structured: Any = None) -> str:
    """The text of a result's content *blocks* (``structured`` content when there are none)."""
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(str(block.text))
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            parts.append(text if text is not None else f"[resource {resource.uri}]")
        elif kind == "resource_link":
            parts.append(f"[resource link {block.uri}]")
        else:
            mime = getattr(block, "mime_type", None) or getattr(block, "mimeType", None)
            parts.append(f"[{kind} content{f' ({mime})' if mime else ''} not shown]")
    if not parts and structured is not None:
        return json.dumps(structured, ensure_ascii=False)
    return "\n".join(parts)


def cap_output(text: str, limit: int) -> str:
    """*text* within *limit* characters: its head, and a line saying what was cut."""
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    return f"{text[:limit]}\n[MCP output truncated: {cut} more characters not shown]"
