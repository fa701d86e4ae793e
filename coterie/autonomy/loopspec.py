"""``--loop SPEC``: an optional interval and the prompt to run (docs/autonomy.md).

Theory of operation. A SPEC has a *fixed* interval when it starts with a
duration token matching ``^[0-9]+[smhd]$`` (``5m check the build``) or ends
with ``every N unit`` (``check the build every 5 minutes``); the leading form
wins when both are present, and the other stays part of the prompt. Anything
else is *dynamic*: the agent schedules its own next tick with
``ScheduleWakeup`` (see :func:`clamp_delay`). "check every PR" has no number
and no unit, so it is a dynamic prompt, not an interval. An empty prompt and
a zero interval are usage errors (:class:`LoopSpecError`, exit code 2). Long
intervals and calendar wording only earn a hint: an external scheduler
suits them better, but the loop still runs.
"""

from __future__ import annotations

import math
import re
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from typing import Final

import attrs

from coterie.autonomy.durations import UNIT_PATTERN, UNIT_SECONDS, format_duration
from coterie.errors import CoterieError

__all__ = [
    "HINT_INTERVAL",
    "MAX_DELAY",
    "MAX_INTERVAL",
    "MIN_DELAY",
    "LoopSpec",
    "LoopSpecError",
    "clamp_delay",
    "parse_loop_spec",
    "schedule_hint",
]

#: Fixed intervals this long or longer earn the external-scheduler hint.
HINT_INTERVAL: Final = 3600
#: Longer than a year is refused: nobody keeps a process waiting that long, and
#: timers built on floats would lose the precision to honour it anyway.
MAX_INTERVAL: Final = 365 * 86400
#: ScheduleWakeup's delay bounds, in seconds.
MIN_DELAY: Final = 60
MAX_DELAY: Final = 3600

_FLAGS: Final = re.IGNORECASE | re.ASCII
_LEADING: Final = re.compile(r"([0-9]+)([smhd])", _FLAGS)
_TRAILING: Final = re.compile(rf"(?:\A|\s)every\s+([0-9]+)\s*({UNIT_PATTERN})\s*\Z", _FLAGS)
_NUMERIC: Final = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
_MAX_EXPONENT_DIGITS: Final = 15

_DAYS = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_PERIODS = (
    r"day|days|morning|mornings|afternoon|evening|night|nights|week|weeks|weekday|weekdays"
    rf"|weekend|month|year|{_DAYS}"
)
# Calendar wording asks for a schedule measured in days, which a process waiting
# in a terminal serves badly. A false alarm costs one line of output, no more.
_CALENDAR: Final = re.compile(
    r"\b(?:daily|nightly|weekly|fortnightly|monthly|yearly|annually|everyday"
    rf"|(?:every|each)\s+(?:other\s+|single\s+)?(?:{_PERIODS})"
    r"|(?:once|twice|[0-9]+\s+times)\s+(?:a|per|every)\s+(?:day|night|week|month|year)"
    rf"|per\s+day|at\s+(?:midnight|noon|dawn)|on\s+(?:(?:{_DAYS})s|weekdays|weekends))\b",
    _FLAGS,
)


class LoopSpecError(CoterieError, ValueError):
    """A ``--loop`` SPEC cannot run: an empty prompt or a zero (or absurd) interval.

    The CLI reports the message and exits with code 2 (a usage error).
    """


@attrs.frozen
class LoopSpec:
    """A parsed ``--loop`` SPEC.

    ``interval`` is the fixed interval in seconds, or ``None`` for a dynamic
    loop; ``prompt`` is what runs on each tick; ``hint`` is a sentence to show
    the user when an external scheduler would suit better (the run carries on).
    """

    interval: int | None
    prompt: str
    hint: str | None = None

    @property
    def dynamic(self) -> bool:
        """Whether the agent picks each next tick itself (with ``ScheduleWakeup``)."""
        return self.interval is None


def parse_loop_spec(spec: str) -> LoopSpec:
    """Parse a ``--loop`` SPEC; raise :class:`LoopSpecError` for a usage error."""
    if not isinstance(spec, str):
        raise LoopSpecError(f"--loop takes text, not {type(spec).__name__}")
    text = spec.strip()
    interval: int | None = None
    prompt = text
    words = text.split(maxsplit=1)
    leading = _LEADING.fullmatch(words[0]) if words else None
    if leading is not None:
        interval = _interval(leading.group(1), leading.group(2), spec)
        prompt = words[1] if len(words) > 1 else ""
    elif (trailing := _TRAILING.search(text)) is not None:
        interval = _interval(trailing.group(1), trailing.group(2), spec)
        prompt = text[: trailing.start()]
    prompt = prompt.strip()
    if not prompt:
        raise LoopSpecError(
            f"--loop {spec!r} has no prompt: say what to run, e.g. --loop '5m check the build'"
        )
    return LoopSpec(interval=interval, prompt=prompt, hint=schedule_hint(interval, prompt))


def _interval(digits: str, unit: str, spec: str) -> int:
    if len(digits.lstrip("0")) > len(str(MAX_INTERVAL)):
        seconds = MAX_INTERVAL + 1  # a huge number: never convert it
    else:
        seconds = int(digits) * UNIT_SECONDS[unit.lower()]
    if seconds == 0:
        raise LoopSpecError(
            f"--loop {spec!r} has a zero interval: give a positive one (e.g. 5m), or none"
            " to let the agent choose when to run again"
        )
    if seconds > MAX_INTERVAL:
        raise LoopSpecError(
            f"--loop {spec!r}: an interval over a year is not a loop; use an external"
            " scheduler (cron, a CI schedule)"
        )
    return seconds


def schedule_hint(interval: int | None, prompt: str) -> str | None:
    """A hint that cron or CI suits better, or ``None``.

    Given for fixed intervals of an hour or more and for calendar wording
    ("daily", "every morning", "each night", "once a week", ...) in *prompt*.
    """
    if interval is not None and interval >= HINT_INTERVAL:
        return (
            f"an interval of {format_duration(interval)} keeps this process waiting a long"
            " time between runs; an external scheduler (cron, a CI schedule) suits that"
            " better. Looping anyway."
        )
    match = _CALENDAR.search(prompt)
    if match is not None:
        wording = " ".join(match.group(0).split())
        return (
            f"{wording!r} sounds like a calendar schedule; an external scheduler (cron, a CI"
            " schedule) suits that better than a loop in this process. Looping anyway."
        )
    return None


def clamp_delay(value: object) -> int:
    """ScheduleWakeup's ``delaySeconds`` as whole seconds within 60..3600.

    Numbers (and numeric strings such as ``"120"`` or ``"1.5e2"``) are
    clamped, then rounded half up (59.5 → 60, 100.5 → 101); +inf gives 3600
    and -inf 60. Anything else (other text, ``None``, booleans, NaN,
    containers) gives 60: a model that botches the delay waits the minimum,
    and the loop goes on.
    """
    number = _as_number(value)
    if number is None:
        return MIN_DELAY
    if number <= MIN_DELAY:
        return MIN_DELAY
    if number >= MAX_DELAY:
        return MAX_DELAY
    if isinstance(number, int):
        return number
    if isinstance(number, Fraction):
        return math.floor(number + Fraction(1, 2))
    # Decimal(float) is exact, so 100.49999999999999 does not round up.
    return int(Decimal(number).to_integral_value(rounding=ROUND_HALF_UP))


def _as_number(value: object) -> int | float | Decimal | Fraction | None:
    """*value* as a comparable number (infinities kept), or ``None`` if it is not one."""
    if isinstance(value, bool):
        return None  # a bool is an int to Python, never a delay to a person
    if isinstance(value, int | Fraction):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, Decimal):
        return None if value.is_nan() else value
    if isinstance(value, str):
        return _parse_number(value.strip())
    return None


def _parse_number(text: str) -> Decimal | None:
    if not _NUMERIC.fullmatch(text):
        return None
    mantissa, _, exponent = text.lower().partition("e")
    if len(exponent.lstrip("+-").lstrip("0")) > _MAX_EXPONENT_DIGITS:
        # Beyond what Decimal represents, and far beyond either bound anyway.
        value = Decimal(mantissa)
        if value == 0 or exponent.startswith("-"):
            return Decimal(0)
        return Decimal("Infinity").copy_sign(value)
    return Decimal(text)
