"""A scenario turn's ``content``: server-tool blocks a scripted reply serves as they are.

Anthropic's server-side tools (web search) run inside the API: the reply
itself holds the call (``server_tool_use``), its result
(``web_search_tool_result``) and the text citing it (``text`` with
``citations``). A scenario serves such a reply with a turn's ``content``, a
list of those blocks in the API's own shapes, checked here once when the
scenario is parsed (docs/scenarios.md)::

    {"content": [
      {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
       "input": {"query": "trio nurseries"}},
      {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
       "content": [{"type": "web_search_result", "url": "https://trio.readthedocs.io/",
                    "title": "Trio", "encrypted_content": "x", "page_age": null}]},
      {"type": "text", "text": "Nurseries scope tasks.",
       "citations": [{"type": "web_search_result_location",
                      "url": "https://trio.readthedocs.io/", "title": "Trio",
                      "encrypted_index": "x", "cited_text": "A nursery..."}]}
    ]}

A failed search's result is ``{"type": "web_search_tool_result_error",
"error_code": "max_uses_exceeded"}`` in place of the list. Each result must
answer a ``server_tool_use`` of the same turn, before it. The blocks come
first in the reply, before the turn's ``text`` and ``tool_uses``. When the
turn gives no ``usage``, each ``web_search`` call counts one search
(:func:`searches_in`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

__all__ = ["BLOCK_TYPES", "parse_content", "searches_in"]

#: The block types a turn's ``content`` may hold.
BLOCK_TYPES = frozenset({"text", "server_tool_use", "web_search_tool_result"})
#: The server tool whose calls are counted as searches.
WEB_SEARCH = "web_search"
_RESULT_TYPES = frozenset({"web_search_result"})
_ERROR_TYPE = "web_search_tool_result_error"


def parse_content(
    value: object, where: str, fail: Callable[[str, str], Exception]
) -> tuple[dict[str, Any], ...]:
    """The blocks of a turn's ``content`` (*where* names it); ``fail(place, why)``
    makes the error raised for a block that is not one the API would send."""
    if not isinstance(value, list) or not value:
        raise fail(where, "'content' must be a non-empty list of blocks")
    calls: set[str] = set()
    blocks = []
    for i, block in enumerate(value):
        here = f"{where}.content[{i}]"
        if not isinstance(block, dict) or block.get("type") not in BLOCK_TYPES:
            raise fail(here, f"a block's 'type' must be one of {', '.join(sorted(BLOCK_TYPES))}")
        kind = block["type"]
        if kind == "text":
            _text(block, here, fail)
        elif kind == "server_tool_use":
            for key in ("id", "name"):
                if not isinstance(block.get(key), str) or not block[key]:
                    raise fail(here, f"{key!r} must be a non-empty string")
            if not isinstance(block.get("input"), dict):
                raise fail(here, "'input' must be an object")
            calls.add(block["id"])
        else:
            if block.get("tool_use_id") not in calls:
                raise fail(here, "'tool_use_id' must name a server_tool_use before it")
            _results(block.get("content"), here, fail)
        blocks.append(block)
    return tuple(blocks)


def searches_in(content: Iterable[dict[str, Any]]) -> int:
    """How many web searches the blocks of a reply made (its ``web_search`` calls)."""
    return sum(
        1 for b in content if b.get("type") == "server_tool_use" and b.get("name") == WEB_SEARCH
    )


def _text(block: dict[str, Any], here: str, fail: Callable[[str, str], Exception]) -> None:
    if not isinstance(block.get("text"), str) or not block["text"]:
        raise fail(here, "a text block's 'text' must be a non-empty string")
    citations = block.get("citations", [])
    if not isinstance(citations, list) or not all(isinstance(c, dict) for c in citations):
        raise fail(here, "'citations' must be a list of objects")


def _results(value: object, here: str, fail: Callable[[str, str], Exception]) -> None:
    if isinstance(value, dict):
        if value.get("type") != _ERROR_TYPE or not isinstance(value.get("error_code"), str):
            raise fail(here, f"an error result must be a {_ERROR_TYPE} with an 'error_code'")
        return
    if not isinstance(value, list):
        raise fail(here, "'content' must be a list of web_search_result or an error")
    for j, result in enumerate(value):
        if (
            not isinstance(result, dict)
            or result.get("type") not in _RESULT_TYPES
            or not isinstance(result.get("url"), str)
            or not isinstance(result.get("title"), str)
        ):
            raise fail(f"{here}.content[{j}]", "a web_search_result needs a 'url' and a 'title'")
