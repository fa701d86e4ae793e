"""The control channel's pure rules: parsing a request, checking it, wording the answer."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.control import FAULTS, FaultRequest
from coterie.control._rules import check, closest, done_message, parse_request

NAMES = st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)


@given(st.dictionaries(st.sampled_from(["fault", "actor", "by", "reason", "x"]), JSON) | JSON)
def test_any_body_parses_to_a_valid_request_or_a_value_error(body: Any) -> None:
    try:
        request = parse_request(body)
    except ValueError:
        return
    assert request.fault in FAULTS
    assert (request.actor is None) == (request.fault == "cancel")
    assert parse_request(request.to_body()) == request


@given(
    fault=st.sampled_from(["crash", "stop"]), actor=NAMES, by=NAMES, reason=st.text() | st.none()
)
def test_a_request_survives_its_body(fault: Any, actor: str, by: str, reason: str | None) -> None:
    request = FaultRequest(fault, actor, by, reason)
    assert parse_request(request.to_body()) == request


@pytest.mark.parametrize(
    ("fault", "actor", "by", "problem"),
    [
        ("kill", "alice", "me", "unknown fault"),
        ("cancel", "alice", "me", "takes no actor"),
        ("crash", None, "me", "needs the name of an actor"),
        ("stop", "", "me", "needs the name of an actor"),
        ("crash", "alice", " ", "who injects it"),
    ],
)
def test_malformed_requests_are_refused(fault: Any, actor: Any, by: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        FaultRequest(fault, actor, by)


@given(known=st.lists(NAMES, min_size=1, unique=True), actor=NAMES)
def test_check_admits_exactly_the_known_actors_outside_the_channel(
    known: list[str], actor: str
) -> None:
    refusal = check(FaultRequest("crash", actor, "t"), known, {"control"})
    if actor == "control" or actor == "root":
        assert refusal is not None
        assert refusal.code == "refused"
    elif actor in known:
        assert refusal is None
    else:
        assert refusal is not None
        assert refusal.code == "unknown_actor"
        assert refusal.known == tuple(known)
        assert refusal.closest is None or refusal.closest in known


def test_the_closest_name_is_offered_for_a_typo() -> None:
    known = ["lead", "alice-sup", "alice", "bob-sup", "bob", "summarizer"]
    assert closest("alcie", known) == "alice"
    assert closest("zzz", known) is None
    refusal = check(FaultRequest("stop", "alcie", "t"), known)
    assert refusal is not None
    assert "did you mean 'alice'?" in refusal.message
    assert refusal.to_body()["known"] == known


def test_a_cancel_needs_no_check_and_the_answers_say_what_happens_next() -> None:
    assert check(FaultRequest("cancel", None, "t"), []) is None
    crash = FaultRequest("crash", "alice", "cli pid 1 on h")
    assert done_message(crash, "alice-sup", "transient") == (
        "crashed alice (InjectedCrash: injected by cli pid 1 on h); its supervisor alice-sup"
        " restarts it unless its restart intensity is exceeded"
    )
    stop = FaultRequest("stop", "lead", "t")
    assert "permanent: as in OTP, even after a normal exit" in done_message(
        stop, "team", "permanent"
    )
    assert "does not restart it (transient" in done_message(stop, "alice-sup", "transient")
