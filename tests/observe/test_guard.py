"""The observer's request checks: Host, token, routes, Origin and the fault body."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.observe import Guard, Refusal, Route
from coterie.observe.guard import parse_fault

TOKEN = "s3cr3t-token_value"
GUARD = Guard(TOKEN, 8123)
HOST = {"host": "127.0.0.1:8123"}
JSON = {**HOST, "content-type": "application/json"}


def check(method: str, target: str, headers: dict[str, str] | None = None) -> Route | Refusal:
    return GUARD.check(method, target, HOST if headers is None else headers)


@pytest.mark.parametrize(
    ("target", "route"),
    [
        (f"/{TOKEN}/", Route("page")),
        (f"/{TOKEN}", Route("redirect")),
        (f"/{TOKEN}/assets/observe.js", Route("asset", asset="observe.js")),
        (f"/{TOKEN}/api/runs", Route("runs")),
        (f"/{TOKEN}/api/runs/20261201-1-ab/events?x=1", Route("events", run_id="20261201-1-ab")),
    ],
)
def test_known_routes_with_the_token(target: str, route: Route) -> None:
    assert check("GET", target) == route


@pytest.mark.parametrize(
    "target",
    [
        "/",
        "/api/runs",
        f"/{TOKEN[:-1]}/api/runs",
        f"/{TOKEN}x/api/runs",
        f"/x/{TOKEN}/api/runs",
        f"/{TOKEN}/assets/../../secret",
        f"/{TOKEN}/assets/index.py",
        f"/{TOKEN}/api/runs/../events",
        f"/{TOKEN}/api/runs/.hidden/events",
    ],
)
def test_anything_else_is_not_found(target: str) -> None:
    assert check("GET", target) == Refusal(404, "not found")


@given(st.text(max_size=80))
def test_a_path_without_the_token_is_always_404(path: str) -> None:
    """Whatever the path, without the token as its first segment the answer is 404."""
    target = "/" + path
    if target.split("/")[1] == TOKEN:
        return
    for method in ("GET", "POST", "PUT"):
        result = GUARD.check(method, target, JSON)
        assert result == Refusal(404, "not found")


@pytest.mark.parametrize(
    "host",
    ["evil.example:8123", "127.0.0.1:9999", "127.0.0.1", "localhost", "", "127.0.0.2:8123"],
)
def test_a_foreign_host_is_refused_even_with_the_token(host: str) -> None:
    """DNS rebinding: a page of another site reaching the observer under its own name."""
    result = check("GET", f"/{TOKEN}/api/runs", {"host": host})
    assert isinstance(result, Refusal)
    assert result.status == 403


def test_localhost_is_a_name_of_the_observer() -> None:
    assert check("GET", f"/{TOKEN}/api/runs", {"host": "localhost:8123"}) == Route("runs")


def test_reads_are_get_only() -> None:
    assert check("POST", f"/{TOKEN}/api/runs", JSON) == Refusal(405, "method not allowed")
    assert check("DELETE", f"/{TOKEN}/", JSON) == Refusal(405, "method not allowed")


FAULT = f"/{TOKEN}/api/runs/r1/fault"


def test_a_fault_is_a_json_post() -> None:
    assert check("POST", FAULT, JSON) == Route("fault", run_id="r1")
    assert check("GET", FAULT, JSON) == Refusal(405, "method not allowed")
    refused = check("POST", FAULT, {**HOST, "content-type": "text/plain"})
    assert isinstance(refused, Refusal)
    assert refused.status == 415


@pytest.mark.parametrize("origin", ["http://127.0.0.1:8123", "http://localhost:8123"])
def test_a_fault_from_the_observers_own_page_passes(origin: str) -> None:
    assert check("POST", FAULT, {**JSON, "origin": origin}) == Route("fault", run_id="r1")


@pytest.mark.parametrize(
    "origin", ["http://evil.example", "null", "http://127.0.0.1:9999", "https://127.0.0.1:8123"]
)
def test_a_fault_from_another_origin_is_refused(origin: str) -> None:
    result = check("POST", FAULT, {**JSON, "origin": origin})
    assert result == Refusal(403, "cross-origin request refused")


def test_fault_bodies() -> None:
    assert parse_fault({"fault": "crash", "actor": "alice", "reason": "x"}).actor == "alice"  # type: ignore[union-attr]
    cancel = parse_fault({"fault": "cancel", "actor": "alice"})
    assert not isinstance(cancel, Refusal)
    assert cancel.actor is None
    bad: object
    for bad in (
        [],
        {"fault": "kill"},
        {"fault": "stop"},
        {"fault": "crash", "actor": "a", "reason": 3},
    ):
        assert isinstance(parse_fault(bad), Refusal)
