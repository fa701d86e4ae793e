"""How long ``coterie mock-server`` takes to answer, as a real model would (sans-io).

A real model holds each answer for a while before its first byte (a fixed
time, or one drawn from a seeded range so that runs repeat) and then streams
its output at some rate. :class:`Latency` declares that; :class:`Pacer` turns
it into the waits the server sleeps: :meth:`Pacer.first_byte` before a reply's
headers and :meth:`Pacer.chunk` before each chunk of its body, from the output
tokens the chunk carries (about four characters of text or tool input each).
"""

from __future__ import annotations

import json
import math
import random

import attrs

__all__ = ["Latency", "Pacer", "chunk_tokens", "parse_hold"]

#: Characters per output token, as coterie's estimates count them.
CHARS_PER_TOKEN = 4


@attrs.frozen
class Latency:
    """A model's timing: seconds before the first byte (``low`` to ``high``,
    uniform, equal for a fixed time) and output tokens per second (None: all at once)."""

    low: float = 0.0
    high: float = 0.0
    tokens_per_second: float | None = None
    seed: int | None = None

    def __attrs_post_init__(self) -> None:
        if not 0 <= self.low <= self.high or math.isinf(self.high):
            raise ValueError(f"latency must be finite, 0 <= low <= high ({self.low}-{self.high})")
        if self.tokens_per_second is not None and not 0 < self.tokens_per_second < math.inf:
            raise ValueError("tokens per second must be a positive number")


def parse_hold(text: str) -> tuple[float, float]:
    """``"1.5"`` (a fixed hold) or ``"0.5-2"`` (uniform between), in seconds."""
    # The dash between two numbers, not one of an exponent (5e-324).
    cuts = [i for i, c in enumerate(text) if c == "-" and i > 0 and text[i - 1] not in "eE"]
    for low, high in [(text, text)] + [(text[:i], text[i + 1 :]) for i in cuts]:
        try:
            values = (float(low), float(high))
        except ValueError:
            continue
        if all(0 <= v < math.inf for v in values) and values[0] <= values[1]:
            return values
    raise ValueError(f"{text!r}: give SECONDS or LOW-HIGH, e.g. 1.5 or 0.5-2")


@attrs.define
class Pacer:
    """The waits of one server: draws its holds from one seeded generator, in the
    order the replies are served."""

    latency: Latency
    _rng: random.Random = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._rng = random.Random(self.latency.seed)

    def first_byte(self) -> float:
        """Seconds to wait before a reply's first byte."""
        low, high = self.latency.low, self.latency.high
        return low if low == high else self._rng.uniform(low, high)

    def chunk(self, chunk: bytes) -> float:
        """Seconds to wait before sending *chunk* of a reply's body."""
        rate = self.latency.tokens_per_second
        return 0.0 if rate is None else chunk_tokens(chunk) / rate


def chunk_tokens(chunk: bytes) -> int:
    """The output tokens a body chunk carries: a streaming event's text or tool
    input delta, or a whole JSON reply's ``usage.output_tokens``; 0 for the rest."""
    text = chunk.decode("utf-8", errors="replace")
    if text.startswith("event:"):
        # Lines end at "\n" only: the JSON may hold other line separators.
        data = next((line[5:] for line in text.split("\n") if line.startswith("data:")), "")
        try:
            event = json.loads(data)
        except ValueError:
            return 0
        if not isinstance(event, dict) or event.get("type") != "content_block_delta":
            return 0
        delta = event.get("delta")
        if not isinstance(delta, dict):
            return 0
        part = delta.get("text", delta.get("partial_json", ""))
        return math.ceil(len(part) / CHARS_PER_TOKEN) if isinstance(part, str) else 0
    try:
        reply = json.loads(text)
    except ValueError:
        return 0
    usage = reply.get("usage") if isinstance(reply, dict) else None
    tokens = usage.get("output_tokens") if isinstance(usage, dict) else None
    return tokens if isinstance(tokens, int) and tokens > 0 else 0
