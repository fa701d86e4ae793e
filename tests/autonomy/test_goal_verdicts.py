"""parse_goal_verdict: exactly the verdict JSON of docs/autonomy.md, anything else is not met."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.autonomy import GoalVerdict, parse_goal_verdict
from tests.strategies import goal_verdicts, json_values, verdict_reasons


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ('{"ok": true, "reason": "all tests pass"}', "met"),
        ('{"ok": false, "reason": "two tests fail"}', "not_met"),
        ('{"ok": false, "impossible": true, "reason": "no such API"}', "impossible"),
        ('{"ok": false, "impossible": false, "reason": "later"}', "not_met"),
        ('{"ok": true, "impossible": false, "reason": "done"}', "met"),
    ],
)
def test_the_three_verdicts(text: str, status: str) -> None:
    verdict = parse_goal_verdict(text)
    assert verdict.status == status
    assert verdict.valid
    assert verdict.reason == json.loads(text)["reason"]


def test_met_and_impossible_stop_the_pursuit_not_met_does_not() -> None:
    assert GoalVerdict("met", "x").stops
    assert GoalVerdict("impossible", "x").stops
    assert not GoalVerdict("not_met", "x").stops


@pytest.mark.parametrize(
    "text",
    [
        '  \n{"ok": true, "reason": "done"}\n ',
        '```json\n{"ok": true, "reason": "done"}\n```',
        '```\n{"ok": true, "reason": "done"}\n```',
        '  ```JSON\n{"ok": true, "reason": "done"}```  ',
    ],
)
def test_whitespace_and_one_code_fence_are_tolerated(text: str) -> None:
    assert parse_goal_verdict(text) == GoalVerdict("met", "done")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "empty"),
        ("The goal is met.", "not a single JSON object"),
        ('Verdict: {"ok": true, "reason": "done"}', "not a single JSON object"),
        ('{"ok": true, "reason": "done"} and more', "not a single JSON object"),
        ('{"ok": true, "reason": "a"}{"ok": true, "reason": "b"}', "not a single JSON object"),
        ('```json\n```json\n{"ok": true, "reason": "x"}\n```\n```', "not a single JSON object"),
        ('[{"ok": true, "reason": "done"}]', "not an object"),
        ('"met"', "not an object"),
        ('{"reason": "done"}', '"ok" is missing'),
        ('{"ok": "true", "reason": "done"}', '"ok" must be true or false'),
        ('{"ok": 1, "reason": "done"}', '"ok" must be true or false'),
        ('{"ok": null, "reason": "done"}', '"ok" must be true or false'),
        ('{"ok": true}', '"reason" is missing'),
        ('{"ok": true, "reason": 42}', '"reason" must be a string'),
        ('{"ok": true, "reason": null}', '"reason" must be a string'),
        ('{"ok": true, "reason": "  "}', '"reason" is empty'),
        ('{"ok": true, "impossible": true, "reason": "x"}', "contradicts"),
        ('{"ok": false, "impossible": "yes", "reason": "x"}', '"impossible" must be true or false'),
        ('{"ok": false, "ok": true, "reason": "x"}', "appears twice"),
        ("[" * 100_000, "not a single JSON object"),
    ],
)
def test_anything_else_is_not_met_and_says_why(text: str, problem: str) -> None:
    verdict = parse_goal_verdict(text)
    assert verdict.status == "not_met"
    assert not verdict.valid
    assert problem in verdict.reason


def test_the_reason_of_an_unusable_verdict_tells_how_to_answer() -> None:
    reason = parse_goal_verdict("yes").reason
    assert "counts as not met" in reason
    assert '{"ok": true, "reason": "..."}' in reason


def test_a_malformed_verdict_keeps_its_reason_for_the_agent() -> None:
    verdict = parse_goal_verdict('{"ok": "no", "reason": "the README is missing"}')
    assert not verdict.valid
    assert "the README is missing" in verdict.reason


def test_unknown_keys_are_ignored() -> None:
    assert parse_goal_verdict('{"ok": true, "reason": "x", "confidence": 0.9}').valid


def _well_formed(text: str) -> bool:
    """The spec, independently: one JSON object with boolean ok, non-empty reason..."""
    body = text.strip()
    if body.startswith("```"):
        body = body.removeprefix("```").removesuffix("```").strip()
        body = body.removeprefix("json").removeprefix("JSON").strip()
    try:
        data = json.loads(body)
    except ValueError:
        return False
    return (
        isinstance(data, dict)
        and data.get("ok") is True
        and isinstance(data.get("reason"), str)
        and bool(data["reason"].strip())
        and data.get("impossible", False) is False
    )


@given(goal_verdicts(), st.sampled_from(["{}", "  {}\n", "```json\n{}\n```", "```\n{}```"]))
def test_well_formed_verdicts_parse_to_their_status(
    case: tuple[dict[str, Any], str], frame: str
) -> None:
    obj, status = case
    verdict = parse_goal_verdict(frame.replace("{}", json.dumps(obj)))
    assert verdict == GoalVerdict(status, obj["reason"].strip())  # type: ignore[arg-type]


@given(st.one_of(st.text(max_size=80), json_values.map(json.dumps)))
def test_every_answer_gets_one_of_three_statuses_and_met_needs_a_well_formed_ok(
    text: str,
) -> None:
    verdict = parse_goal_verdict(text)
    assert verdict.status in ("met", "not_met", "impossible")
    assert verdict.reason.strip()
    if not verdict.valid:
        assert verdict.status == "not_met"
    if verdict.status == "met":
        assert _well_formed(text)


@given(
    st.dictionaries(
        st.sampled_from(["ok", "impossible", "reason", "other"]),
        st.one_of(json_values, verdict_reasons),
    )
)
def test_random_objects_are_met_only_when_well_formed(obj: dict[str, Any]) -> None:
    verdict = parse_goal_verdict(json.dumps(obj))
    assert (verdict.status == "met") == _well_formed(json.dumps(obj))
    if obj.get("ok") is not True and obj.get("ok") is not False:
        assert not verdict.valid


@given(goal_verdicts(), st.text(min_size=1, max_size=20).filter(lambda t: t.strip()))
def test_text_around_a_verdict_makes_it_unusable(
    case: tuple[dict[str, Any], str], noise: str
) -> None:
    verdict = parse_goal_verdict(f"{noise} {json.dumps(case[0])}")
    assert verdict.status == "not_met"
