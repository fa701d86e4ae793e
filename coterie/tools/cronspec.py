"""Five-field cron expressions (``minute hour day-of-month month day-of-week``), in local time.

Pure: :func:`parse_cron` turns the text into a :class:`CronSpec` or raises
:class:`CronError`; :meth:`CronSpec.next_after` finds the first minute after
an instant whose local wall-clock time the expression matches. Nothing here
reads a clock or a file.

The grammar is the common one Claude Code's cron tools take: each field is
``*``, ``N``, ``N-M``, a step ``*/S``, ``N/S`` or ``N-M/S``, or a comma list
of those; day-of-week runs 0..7 (0 and 7 are Sunday). No names (``MON``,
``JAN``), no ``L``/``W``/``?``/``#``. When both day fields are restricted a
day matches if either does (classic cron's rule); when one is ``*`` only the
other counts.

Local time follows the zone given (default: the system's local time, as cron
does). A wall-clock minute a daylight-saving change skips does not happen
that day; one it repeats happens once (at its first occurrence).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["CronError", "CronSpec", "parse_cron"]

#: How far ahead :meth:`CronSpec.next_after` looks (a date that never comes,
#: ``0 0 31 2 *``, is refused at parse time by looking this far).
HORIZON_DAYS = 366 * 5

_FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day-of-month", 1, 31), ("month", 1, 12))
_WEEKDAY = ("day-of-week", 0, 7)


class CronError(ValueError):
    """The text is not a five-field cron expression this parser takes (the message says why)."""


@attrs.frozen
class CronSpec:
    """A parsed expression: the values each field admits."""

    text: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    #: 0 = Sunday .. 6 = Saturday (a 7 in the text is folded into 0).
    weekdays: frozenset[int]
    #: Whether the day-of-month / day-of-week field was restricted (not ``*``).
    days_restricted: bool
    weekdays_restricted: bool

    def day_matches(self, day: dt.date) -> bool:
        """Whether *day* is one the expression runs on (month and day fields)."""
        if day.month not in self.months:
            return False
        dom = day.day in self.days
        dow = (day.isoweekday() % 7) in self.weekdays
        if self.days_restricted and self.weekdays_restricted:
            return dom or dow
        if self.days_restricted:
            return dom
        if self.weekdays_restricted:
            return dow
        return True

    def matches(self, when: dt.datetime) -> bool:
        """Whether the wall-clock minute of *when* is one the expression names."""
        return (
            when.minute in self.minutes
            and when.hour in self.hours
            and self.day_matches(when.date())
        )

    def next_after(self, instant: float, tz: dt.tzinfo | None = None) -> float | None:
        """The first whole minute (a POSIX time) after *instant* matching the expression
        in *tz* (None: local time); None if none comes within :data:`HORIZON_DAYS`."""
        start = dt.datetime.fromtimestamp(instant, tz).replace(second=0, microsecond=0, fold=0)
        start += dt.timedelta(minutes=1)
        for wall in self._walls_from(start.replace(tzinfo=None)):
            at = _instant(wall, tz)
            if at is not None and at > instant:
                return at
        return None

    def _walls_from(self, start: dt.datetime) -> Iterator[dt.datetime]:
        """Matching wall-clock minutes from *start* on, in order, within the horizon."""
        hours, minutes = sorted(self.hours), sorted(self.minutes)
        day = start.date()
        for _ in range(HORIZON_DAYS):
            if self.day_matches(day):
                for hour in hours:
                    for minute in minutes:
                        wall = dt.datetime.combine(day, dt.time(hour, minute))
                        if wall >= start:
                            yield wall
            day += dt.timedelta(days=1)


def _instant(wall: dt.datetime, tz: dt.tzinfo | None) -> float | None:
    """The POSIX time of local *wall* time in *tz*; None if that wall time does not
    exist there (skipped by a daylight-saving change)."""
    if tz is None:
        at = wall.timestamp()  # a naive datetime is local time
        back = dt.datetime.fromtimestamp(at)
    else:
        at = wall.replace(tzinfo=tz).timestamp()
        back = dt.datetime.fromtimestamp(at, tz).replace(tzinfo=None)
    return at if back == wall else None


def parse_cron(text: str) -> CronSpec:
    """The :class:`CronSpec` of *text*; :class:`CronError` if it is not one, or names
    no time within :data:`HORIZON_DAYS` (``0 0 30 2 *``)."""
    parts = text.split()
    if len(parts) != 5:
        raise CronError(
            f"expected 5 fields (minute hour day-of-month month day-of-week), got {len(parts)}"
        )
    minutes, hours, days, months = (
        _field(part, *spec) for part, spec in zip(parts[:4], _FIELDS, strict=True)
    )
    weekdays = frozenset(d % 7 for d in _field(parts[4], *_WEEKDAY))
    spec = CronSpec(
        text=" ".join(parts),
        minutes=minutes,
        hours=hours,
        days=days,
        months=months,
        weekdays=weekdays,
        days_restricted=parts[2] != "*",
        weekdays_restricted=parts[4] != "*",
    )
    if not any(spec.day_matches(d) for d in _leap_cycle()):
        raise CronError(f"{spec.text!r} names a date that never comes")
    return spec


def _leap_cycle() -> Iterator[dt.date]:
    """Every day of 2024..2031 (leap days and each weekday of each date included)."""
    day, end = dt.date(2024, 1, 1), dt.date(2032, 1, 1)
    while day < end:
        yield day
        day += dt.timedelta(days=1)


def _field(text: str, name: str, low: int, high: int) -> frozenset[int]:
    values: set[int] = set()
    for item in text.split(","):
        values |= _item(item, name, low, high)
    return frozenset(values)


def _item(item: str, name: str, low: int, high: int) -> set[int]:
    base, slash, step_text = item.partition("/")
    step = 1
    if slash:
        step = _number(step_text, name)
        if step < 1:
            raise CronError(f"{name}: a step must be at least 1, got {item!r}")
    if base == "*":
        first, last = low, high
    elif "-" in base:
        lo_text, _, hi_text = base.partition("-")
        first, last = _number(lo_text, name), _number(hi_text, name)
        if first > last:
            raise CronError(f"{name}: range {base!r} runs backwards")
    else:
        first = _number(base, name)
        last = high if slash else first  # "5/15": from 5 to the end, every 15
    for value in (first, last):
        if not low <= value <= high:
            raise CronError(f"{name}: {value} is outside {low}-{high}")
    return set(range(first, last + 1, step))


def _number(text: str, name: str) -> int:
    if not text.isascii() or not text.isdigit():
        raise CronError(f"{name}: {text!r} is not a number (names and L, W, ?, # are not taken)")
    return int(text)
