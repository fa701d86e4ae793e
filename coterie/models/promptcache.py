"""The Messages API's prompt cache, as ``coterie mock-server`` answers it.

So that runs against the mock server report cache figures a real server would
(and a bench can price a team against one agent), :class:`PromptCache` keeps
what the server has cached and splits each request's prompt into cache reads,
cache writes and uncached input, by the API's documented rules:

- the prompt is read in cache order: ``tools``, then ``system``, then the
  messages, block by block; a block carrying ``cache_control`` is a
  breakpoint, and the prefix up to and including it is what gets cached;
- a prefix is found again only byte for byte (here: the same blocks, their
  ``cache_control`` aside); at each breakpoint the API also looks back, up to
  :data:`LOOKBACK` blocks, for the longest prefix cached before (which is how
  the last turn's breakpoint serves the next turn's request);
- the longest prefix found is read from the cache; the prompt up to the last
  breakpoint beyond it is written (when that prefix is at least
  :data:`MIN_TOKENS` long: shorter ones are not cached), the rest is input.

Tokens are estimated at four characters each, as the server's other figures
are. Not modelled: the cache's five-minute lifetime (nothing here expires),
the one-hour cache, and per-model minimum lengths (Haiku's 2,048). Pure: no
I/O, no clock.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import attrs

__all__ = ["LOOKBACK", "MIN_TOKENS", "CacheUsage", "PromptCache", "prompt_blocks"]

#: Blocks the API looks back from a breakpoint for a prefix cached before.
LOOKBACK = 20
#: The shortest prefix the API caches, in tokens (Claude Sonnet and Opus).
MIN_TOKENS = 1024
_CHARS_PER_TOKEN = 4


@attrs.frozen
class CacheUsage:
    """One request's prompt, split as the API's ``usage`` reports it."""

    input_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int


def prompt_blocks(body: dict[str, Any]) -> list[tuple[str, bool]]:
    """The request *body*'s prompt in cache order: each block's text (its
    ``cache_control`` left out) and whether it is a breakpoint."""
    blocks: list[tuple[str, bool]] = []

    def add(value: Any, where: str) -> None:
        if isinstance(value, dict):
            mark = "cache_control" in value
            value = {k: v for k, v in value.items() if k != "cache_control"}
        else:
            mark = False
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        blocks.append((f"{where}:{text}", mark))

    for tool in body.get("tools") or []:
        add(tool, "tool")
    system = body.get("system")
    if isinstance(system, str) and system:
        add({"type": "text", "text": system}, "system")
    elif isinstance(system, list):
        for block in system:
            add(block, "system")
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        role = str(message.get("role"))
        content = message.get("content")
        if isinstance(content, str):
            add({"type": "text", "text": content}, role)
        elif isinstance(content, list):
            for block in content:
                add(block, role)
    return blocks


@attrs.define
class PromptCache:
    """What one server has cached, by the hash of each prefix written."""

    min_tokens: int = MIN_TOKENS
    _cached: set[str] = attrs.field(factory=set)

    def usage(self, body: dict[str, Any]) -> CacheUsage:
        """The split of *body*'s prompt; what it writes is cached from now on."""
        blocks = prompt_blocks(body)
        hashes: list[str] = []
        ends: list[int] = []  # characters up to and including each block
        digest = hashlib.sha256()
        chars = 0
        for text, _mark in blocks:
            digest.update(text.encode())
            digest.update(b"\x00")
            hashes.append(digest.copy().hexdigest())
            chars += len(text)
            ends.append(chars)
        marks = [i for i, (_, mark) in enumerate(blocks) if mark]
        read_at = -1  # the last block of the longest prefix found in the cache
        for mark in marks:
            for i in range(mark, max(-1, mark - LOOKBACK - 1), -1):
                if hashes[i] in self._cached:
                    read_at = max(read_at, i)
                    break
        read = _tokens(ends[read_at]) if read_at >= 0 else 0
        written = 0
        for mark in marks:
            if mark > read_at and _tokens(ends[mark]) >= self.min_tokens:
                self._cached.add(hashes[mark])
                written = _tokens(ends[mark]) - read
        total = max(1, _tokens(chars))
        return CacheUsage(
            input_tokens=max(0, total - read - written),
            cache_read_input_tokens=read,
            cache_creation_input_tokens=written,
        )


def _tokens(chars: int) -> int:
    return math.ceil(chars / _CHARS_PER_TOKEN)
