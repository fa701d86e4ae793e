"""Durations as people write them in a loop spec: ``5m``, ``30 sec``, ``2 hours``.

A duration is a whole number followed by a unit; units are case-insensitive
and only ASCII (Unicode case folding would let a long s, U+017F, pass for ``s``).
"""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Final

from coterie.errors import CoterieError

__all__ = [
    "MAX_DURATION_DIGITS",
    "UNIT_PATTERN",
    "UNIT_SECONDS",
    "DurationError",
    "format_duration",
    "parse_duration",
]

#: Seconds per unit word, every spelling the loop spec accepts (lower case).
UNIT_SECONDS: Final = MappingProxyType(
    {
        **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1),
        **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), 60),
        **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), 3600),
        **dict.fromkeys(("d", "day", "days"), 86400),
    }
)

#: More digits than this is never a real interval; refusing it early also keeps
#: ``int()`` clear of Python's limit on converting huge digit strings.
MAX_DURATION_DIGITS: Final = 15

# Longest spellings first, so that the alternation never stops at "m" in "min".
UNIT_PATTERN: Final = "(?:" + "|".join(sorted(UNIT_SECONDS, key=len, reverse=True)) + ")"
_FLAGS: Final = re.IGNORECASE | re.ASCII
_DURATION: Final = re.compile(rf"\s*([0-9]+)\s*({UNIT_PATTERN})\s*", _FLAGS)


class DurationError(CoterieError, ValueError):
    """A text is not a duration (``5m``, ``30 seconds``); the message says why."""


def parse_duration(text: str) -> int:
    """The number of seconds *text* names, e.g. ``"5m"`` → 300, ``"2 Hours"`` → 7200.

    Surrounding whitespace and a space between number and unit are allowed.
    Zero is a valid duration here; whether it is a valid *interval* is the
    caller's business. Raises :class:`DurationError` for anything else.
    """
    if not isinstance(text, str):
        raise DurationError(f"a duration must be text, not {type(text).__name__}")
    match = _DURATION.fullmatch(text)
    if match is None:
        raise DurationError(
            f"{text!r} is not a duration: write a whole number and a unit,"
            " e.g. 30s, 5m, 2h, 1d or '10 minutes'"
        )
    digits, unit = match.groups()
    if len(digits.lstrip("0")) > MAX_DURATION_DIGITS:
        raise DurationError(f"{text!r} is too long a duration")
    return int(digits) * UNIT_SECONDS[unit.lower()]


def format_duration(seconds: int) -> str:
    """*seconds* written back compactly: 300 → ``5m``, 5400 → ``1h30m``, 0 → ``0s``."""
    if seconds < 0:
        raise ValueError(f"a duration cannot be negative: {seconds}")
    parts = []
    rest = seconds
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        count, rest = divmod(rest, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or "0s"
