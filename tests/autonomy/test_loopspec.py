"""parse_loop_spec: a leading duration token or a trailing ``every N unit`` (docs/autonomy.md)."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from coterie.autonomy import LoopSpec, LoopSpecError, parse_loop_spec, schedule_hint
from coterie.errors import CoterieError
from tests.strategies import DURATION_UNITS, daily_wordings, loop_prompts, random_case

SINGLE_LETTER = {"s": 1, "m": 60, "h": 3600, "d": 86400}


@pytest.mark.parametrize(
    ("spec", "interval", "prompt"),
    [
        ("5m check the build", 300, "check the build"),
        ("30S poll", 30, "poll"),
        ("check the build every 5 minutes", 300, "check the build"),
        ("check the deploy every 20m", 1200, "check the deploy"),
        ("run tests EVERY 2 Hrs", 7200, "run tests"),
        ("  10m   tidy up  ", 600, "tidy up"),
    ],
)
def test_fixed_intervals(spec: str, interval: int, prompt: str) -> None:
    assert parse_loop_spec(spec) == LoopSpec(interval, prompt, parse_loop_spec(spec).hint)


@pytest.mark.parametrize(
    "spec",
    [
        "check every PR",
        "check every 5 PRs",
        "5min check the build",  # the leading form takes a single-letter unit only
        "check the build",
        "every PR needs a review",
        "check the build every 5 minutes, then report",
        "reviewevery 5m",
    ],
)
def test_everything_else_is_dynamic(spec: str) -> None:
    loop = parse_loop_spec(spec)
    assert loop.dynamic
    assert loop.interval is None
    assert loop.prompt == spec.strip()


def test_the_leading_token_wins_and_the_trailing_clause_stays_in_the_prompt() -> None:
    assert parse_loop_spec("5m ping every 10 minutes") == LoopSpec(300, "ping every 10 minutes")


@pytest.mark.parametrize("spec", ["", "   ", "5m", "every 5 minutes", "  10s  ", " every 1 day"])
def test_an_empty_prompt_is_a_usage_error(spec: str) -> None:
    with pytest.raises(LoopSpecError, match="no prompt"):
        parse_loop_spec(spec)


@pytest.mark.parametrize("spec", ["0m check", "check every 0 seconds", "000s x", "x every 00 h"])
def test_a_zero_interval_is_a_usage_error(spec: str) -> None:
    with pytest.raises(LoopSpecError, match="zero interval"):
        parse_loop_spec(spec)


@pytest.mark.parametrize("spec", ["366d check", "check every 999999999999999999999999 days"])
def test_an_interval_over_a_year_is_a_usage_error(spec: str) -> None:
    with pytest.raises(LoopSpecError, match="over a year"):
        parse_loop_spec(spec)


def test_the_usage_error_is_a_coterie_error_and_a_value_error() -> None:
    assert issubclass(LoopSpecError, CoterieError)
    assert issubclass(LoopSpecError, ValueError)


@pytest.mark.parametrize("spec", ["1h check", "check every 90 minutes", "2d x", "x every 1 day"])
def test_an_interval_of_an_hour_or_more_earns_the_hint(spec: str) -> None:
    hint = parse_loop_spec(spec).hint
    assert hint is not None
    assert "cron" in hint


@pytest.mark.parametrize("spec", ["59m check", "check every 3599 seconds", "5m check the build"])
def test_a_shorter_interval_earns_no_hint(spec: str) -> None:
    assert parse_loop_spec(spec).hint is None


@pytest.mark.parametrize(
    "spec",
    [
        "run the nightly report",
        "daily standup notes",
        "summarise the news every morning",
        "each night, prune the caches",
        "check the backups once a week",
        "5m send the weekly digest",
        "post the summary on Mondays",
        "rotate the logs every other day",
    ],
)
def test_daily_wording_earns_the_hint_and_the_loop_still_runs(spec: str) -> None:
    loop = parse_loop_spec(spec)
    assert loop.hint is not None
    assert "scheduler" in loop.hint
    assert loop.prompt


@pytest.mark.parametrize(
    "spec", ["check every PR", "redaily x", "the day job", "day one", "finish it in a day"]
)
def test_ordinary_wording_earns_no_hint(spec: str) -> None:
    assert parse_loop_spec(spec).hint is None


@given(st.text(max_size=40))
def test_any_spec_parses_or_is_a_usage_error(spec: str) -> None:
    try:
        loop = parse_loop_spec(spec)
    except LoopSpecError:
        return
    assert loop.prompt
    assert loop.prompt == loop.prompt.strip()
    assert loop.dynamic == (loop.interval is None)
    assert loop.interval is None or loop.interval > 0


@given(st.integers(1, 10_000), st.sampled_from(sorted(SINGLE_LETTER)), loop_prompts, st.data())
def test_a_leading_token_sets_the_interval(
    number: int, unit: str, prompt: str, data: st.DataObject
) -> None:
    assume(number * SINGLE_LETTER[unit] <= 365 * 86400)
    token = f"{number}{data.draw(random_case(unit))}"
    loop = parse_loop_spec(f"{token} {prompt}")
    assert loop.interval == number * SINGLE_LETTER[unit]
    assert loop.prompt == prompt.strip()


@given(
    loop_prompts,
    st.integers(1, 10_000),
    st.sampled_from(sorted(DURATION_UNITS)),
    st.sampled_from(["", " "]),
    st.data(),
)
def test_a_trailing_every_clause_sets_the_interval(
    prompt: str, number: int, unit: str, space: str, data: st.DataObject
) -> None:
    assume(number * DURATION_UNITS[unit] <= 365 * 86400)
    every = data.draw(random_case("every"))
    spelled = data.draw(random_case(unit))
    loop = parse_loop_spec(f"{prompt} {every} {number}{space}{spelled}")
    assert loop.interval == number * DURATION_UNITS[unit]
    assert loop.prompt == prompt.strip()


@given(loop_prompts)
def test_a_prompt_without_numbers_is_dynamic_and_kept_whole(prompt: str) -> None:
    loop = parse_loop_spec(prompt)
    assert loop.dynamic
    assert loop.prompt == prompt.strip()


@given(loop_prompts, daily_wordings, loop_prompts)
def test_daily_wording_anywhere_earns_the_hint(before: str, wording: str, after: str) -> None:
    assert parse_loop_spec(f"{before} {wording} {after}").hint is not None


@given(st.integers(3600, 365 * 86400), loop_prompts)
def test_every_interval_of_an_hour_or_more_earns_the_hint(seconds: int, prompt: str) -> None:
    assert parse_loop_spec(f"{prompt} every {seconds} seconds").hint is not None


def test_schedule_hint_is_none_for_a_short_dynamic_loop() -> None:
    assert schedule_hint(None, "check the build") is None
    assert schedule_hint(60, "check the build") is None
