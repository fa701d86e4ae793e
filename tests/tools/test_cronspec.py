"""The five-field cron parser (coterie.tools.cronspec): what it takes, what it refuses,
and that the next fire time is the first matching minute after an instant."""

from __future__ import annotations

import contextlib
import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coterie.tools.cronspec import CronError, parse_cron

UTC = dt.UTC
BERLIN = ZoneInfo("Europe/Berlin")


def _item(low: int, high: int) -> st.SearchStrategy[str]:
    value = st.integers(low, high).map(str)
    span = st.tuples(st.integers(low, high), st.integers(low, high)).map(
        lambda t: f"{min(t)}-{max(t)}"
    )
    base = st.one_of(st.just("*"), value, span)
    step = st.integers(1, high - low + 1)
    return st.one_of(base, st.tuples(base, step).map(lambda t: f"{t[0]}/{t[1]}"))


def _field(low: int, high: int) -> st.SearchStrategy[str]:
    return st.lists(_item(low, high), min_size=1, max_size=3).map(",".join)


# Frequent expressions (every day, a few hours): the brute-force oracle stays short.
frequent = st.tuples(_field(0, 59), _field(0, 23)).map(lambda t: f"{t[0]} {t[1]} * * *")
any_valid = st.tuples(_field(0, 59), _field(0, 23), _field(1, 28), _field(1, 12), _field(0, 7)).map(
    " ".join
)
instants = st.floats(1.5e9, 2.5e9, allow_nan=False)


def _utc(instant: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(instant, UTC)


@given(any_valid, instants)
@settings(max_examples=150, deadline=None)
def test_the_next_fire_is_later_on_a_whole_minute_and_matches(text: str, instant: float) -> None:
    spec = parse_cron(text)
    at = spec.next_after(instant, UTC)
    assert at is not None
    assert at > instant
    assert at % 60 == 0
    assert spec.matches(_utc(at))


@given(frequent, instants)
@settings(max_examples=150, deadline=None)
def test_no_matching_minute_is_skipped(text: str, instant: float) -> None:
    """Brute force: every minute between the instant and the fire time fails to match."""
    spec = parse_cron(text)
    at = spec.next_after(instant, UTC)
    assert at is not None
    minute = (int(instant) // 60 + 1) * 60
    while minute < at:
        assert not spec.matches(_utc(minute))
        minute += 60


@given(any_valid)
def test_seven_is_sunday_and_whitespace_is_free(text: str) -> None:
    spec = parse_cron(text.replace(" ", "  \t"))
    assert spec.text == text
    assert spec.weekdays <= set(range(7))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "* * * *",
        "* * * * * *",
        "60 * * * *",
        "* 24 * * *",
        "* * 0 * *",
        "* * 32 * *",
        "* * * 13 *",
        "* * * * 8",
        "5-1 * * * *",
        "*/0 * * * *",
        "* * * JAN *",
        "* * * * MON",
        "* * L * *",
        "? * * * *",
        "1,,2 * * * *",
        "-1 * * * *",
        "0 0 30 2 *",
        "0 0 31 4 *",
    ],
)
def test_refused(text: str) -> None:
    with pytest.raises(CronError):
        parse_cron(text)


@given(st.text(max_size=30))
def test_any_text_parses_or_is_refused_with_a_cron_error(text: str) -> None:
    with contextlib.suppress(CronError):
        parse_cron(text)


def test_day_fields_restricted_both_match_either() -> None:
    """Classic cron: the 13th of the month or any Friday."""
    spec = parse_cron("0 12 13 * 5")
    start = dt.datetime(2026, 3, 1, tzinfo=UTC).timestamp()
    fires = []
    at: float | None = start
    for _ in range(4):
        assert at is not None
        at = spec.next_after(at, UTC)
        assert at is not None
        fires.append(_utc(at).date())
    assert fires == [dt.date(2026, 3, d) for d in (6, 13, 20, 27)]


def test_a_leap_day_waits_for_a_leap_year() -> None:
    at = parse_cron("0 0 29 2 *").next_after(dt.datetime(2026, 3, 1, tzinfo=UTC).timestamp(), UTC)
    assert at is not None
    assert _utc(at) == dt.datetime(2028, 2, 29, tzinfo=UTC)


def test_local_time_follows_daylight_saving() -> None:
    """9:00 in Berlin is 8:00 UTC in winter and 7:00 UTC in summer."""
    spec = parse_cron("0 9 * * *")
    winter = spec.next_after(dt.datetime(2026, 1, 10, tzinfo=UTC).timestamp(), BERLIN)
    summer = spec.next_after(dt.datetime(2026, 7, 10, tzinfo=UTC).timestamp(), BERLIN)
    assert winter is not None
    assert summer is not None
    assert _utc(winter).hour == 8
    assert _utc(summer).hour == 7


def test_a_skipped_wall_time_does_not_happen_that_day() -> None:
    """2:30 does not exist in Berlin on 29 March 2026 (clocks go 2:00 -> 3:00)."""
    spec = parse_cron("30 2 * * *")
    at = spec.next_after(dt.datetime(2026, 3, 28, 12, tzinfo=UTC).timestamp(), BERLIN)
    assert at is not None
    assert dt.datetime.fromtimestamp(at, BERLIN).date() == dt.date(2026, 3, 30)


def test_a_start_with_seconds_fires_at_the_next_minute() -> None:
    start = dt.datetime(2026, 5, 5, 10, 0, 30, tzinfo=UTC).timestamp()
    at = parse_cron("* * * * *").next_after(start, UTC)
    assert at == dt.datetime(2026, 5, 5, 10, 1, tzinfo=UTC).timestamp()
