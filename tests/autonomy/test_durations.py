"""parse_duration and format_duration: the duration words of a loop spec."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.autonomy import DurationError, format_duration, parse_duration
from coterie.errors import CoterieError
from tests.strategies import DURATION_UNITS, duration_texts


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("5m", 300),
        ("30s", 30),
        ("2h", 7200),
        ("1d", 86400),
        ("10 minutes", 600),
        ("1 second", 1),
        ("3 HRS", 10800),
        ("2Days", 172800),
        ("  45 sec ", 45),
        ("0s", 0),
    ],
)
def test_examples(text: str, seconds: int) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    "text",
    ["", "m", "5", "5 weeks", "-5m", "5.5m", "5 m s", "five minutes", "5ms", "5\u017f", "\u0665m"],
)
def test_what_is_not_a_duration_is_refused(text: str) -> None:
    with pytest.raises(DurationError, match="not a duration"):
        parse_duration(text)


def test_the_error_is_a_coterie_error_and_a_value_error() -> None:
    assert issubclass(DurationError, CoterieError)
    assert issubclass(DurationError, ValueError)


def test_an_absurdly_long_number_is_refused_before_converting_it() -> None:
    with pytest.raises(DurationError, match="too long"):
        parse_duration("9" * 5000 + "s")


@given(duration_texts())
def test_every_unit_word_in_any_case_parses(case: tuple[str, int]) -> None:
    text, seconds = case
    assert parse_duration(text) == seconds


@given(st.text(max_size=20))
def test_any_text_parses_or_raises_duration_error(text: str) -> None:
    try:
        seconds = parse_duration(text)
    except DurationError:
        return
    assert isinstance(seconds, int)
    assert seconds >= 0


def test_the_unit_table_is_the_documented_one() -> None:
    from coterie.autonomy.durations import UNIT_SECONDS

    assert dict(UNIT_SECONDS) == DURATION_UNITS


@pytest.mark.parametrize(
    ("seconds", "text"), [(0, "0s"), (45, "45s"), (300, "5m"), (5400, "1h30m"), (90061, "1d1h1m1s")]
)
def test_format_duration(seconds: int, text: str) -> None:
    assert format_duration(seconds) == text


@given(st.integers(0, 10**9))
def test_format_duration_adds_up(seconds: int) -> None:
    import re

    parts = re.findall(r"[0-9]+[dhms]", format_duration(seconds))
    assert sum(parse_duration(p) for p in parts) == seconds


def test_format_duration_refuses_negative_durations() -> None:
    with pytest.raises(ValueError, match="negative"):
        format_duration(-1)
