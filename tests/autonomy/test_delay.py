"""clamp_delay: ScheduleWakeup's delay within 60..3600 s, rounded half up (docs/autonomy.md)."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.autonomy import MAX_DELAY, MIN_DELAY, clamp_delay
from tests.strategies import delay_numbers, non_numeric_delays


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        (59.5, 60),
        (100.5, 101),
        (100.4, 100),
        (100.49999999999999, 100),
        (120, 120),
        (0, 60),
        (-5, 60),
        (3600.4, 3600),
        (10**30, 3600),
        (math.inf, 3600),
        (-math.inf, 60),
        ("120", 120),
        (" 90.5 ", 91),
        ("1.5e2", 150),
        ("-1e999999999999999999999", 60),
        ("1e999999999999999999999", 3600),
        ("1e-999999999999999999999", 60),
        (Decimal("100.5"), 101),
        (Decimal("Infinity"), 3600),
        (Fraction(201, 2), 101),
    ],
)
def test_numbers_are_clamped_then_rounded_half_up(value: object, seconds: int) -> None:
    assert clamp_delay(value) == seconds


@pytest.mark.parametrize(
    "value",
    [None, True, False, math.nan, Decimal("NaN"), Decimal("sNaN"), "soon", "", "inf", "nan",
     "1_000", "\u0661\u0662\u0660", "0x78", {"seconds": 120}, [120], object()],
)  # fmt: skip
def test_anything_else_waits_the_minimum(value: object) -> None:
    assert clamp_delay(value) == MIN_DELAY


@given(st.one_of(delay_numbers, non_numeric_delays, st.text(max_size=12)))
def test_the_result_is_always_a_whole_number_of_seconds_in_range(value: object) -> None:
    seconds = clamp_delay(value)
    assert type(seconds) is int
    assert MIN_DELAY <= seconds <= MAX_DELAY


@given(non_numeric_delays)
def test_non_numeric_values_give_60(value: object) -> None:
    assert clamp_delay(value) == 60


@given(delay_numbers, delay_numbers)
def test_clamping_is_monotonic(a: float, b: float) -> None:
    low, high = sorted([a, b])
    assert clamp_delay(low) <= clamp_delay(high)


@given(st.floats(min_value=MIN_DELAY, max_value=MAX_DELAY))
def test_in_range_numbers_round_half_up_exactly(value: float) -> None:
    assert clamp_delay(value) == math.floor(Fraction(value) + Fraction(1, 2))


@given(delay_numbers.filter(math.isfinite))
def test_a_number_written_as_text_counts_as_that_number(value: float) -> None:
    """Decimal notation only: "inf" and "nan" are words, not numbers."""
    assert clamp_delay(repr(value)) == clamp_delay(value)


@given(st.integers(MIN_DELAY, MAX_DELAY))
def test_whole_seconds_in_range_are_kept(value: int) -> None:
    assert clamp_delay(value) == value
    assert clamp_delay(str(value)) == value
