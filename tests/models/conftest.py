"""Fixtures for the model tests: hermetic environment, scenarios, a mock server."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from coterie.models import MockServer, Scenario, parse_scenario, serve_scenario

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    import trio

SCENARIOS = Path(__file__).parent / "scenarios"


@pytest.fixture(autouse=True)
def _no_anthropic_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may pick up a real key or endpoint from the developer's shell."""
    for var in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_MODEL",
        "ANTHROPIC_CUSTOM_HEADERS",
        "ANTHROPIC_PROFILE",
    ):
        monkeypatch.delenv(var, raising=False)
    for var in [v for v in os.environ if v.lower().endswith("_proxy")]:
        monkeypatch.delenv(var)  # the tests' servers are on 127.0.0.1: no proxy reaches them


def scenario(tracks: dict[str, list[dict[str, Any]]], **top: Any) -> Scenario:
    """A scenario from its tracks, named ``test.json`` in errors."""
    return parse_scenario({"tracks": tracks, **top}, source="test.json")


@pytest.fixture
def serve(nursery: trio.Nursery) -> Callable[[Scenario], Awaitable[MockServer]]:
    """Start an in-process mock server for a scenario; stopped with the test."""

    async def start(scen: Scenario) -> MockServer:
        server: MockServer = await nursery.start(serve_scenario, scen)
        return server

    return start
