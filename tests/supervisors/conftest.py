"""Fixtures for supervisor tests: puppet children and an event log."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest
import trio

from coterie.events import EventLog
from coterie.supervisors import ChildSpec, Restart, Strategy


class Puppets:
    """Children that do exactly what the test says, logging their starts and stops.

    ``log`` holds ``("start", name)`` when an incarnation begins and
    ``("stop", name)`` when it is cancelled; ``exit(name)`` makes the current
    incarnation return, ``crash(name)`` raise.
    """

    def __init__(self) -> None:
        self.log: list[tuple[str, str]] = []
        self._commands: dict[str, trio.MemorySendChannel[str]] = {}

    def spec(self, name: str, restart: Restart = Restart.PERMANENT, **kwargs: Any) -> ChildSpec:
        return ChildSpec(name, functools.partial(self._body, name), restart=restart, **kwargs)

    def exit(self, name: str) -> None:
        self._commands[name].send_nowait("exit")

    def crash(self, name: str) -> None:
        self._commands[name].send_nowait("crash")

    def clear(self) -> None:
        self.log.clear()

    async def _body(self, name: str) -> None:
        send, receive = trio.open_memory_channel[str](1)
        self._commands[name] = send
        self.log.append(("start", name))
        try:
            command = await receive.receive()
        except trio.Cancelled:
            self.log.append(("stop", name))
            raise
        if command == "crash":
            raise RuntimeError(f"{name} was told to crash")


@pytest.fixture(params=list(Strategy), ids=str)
def strategy(request: pytest.FixtureRequest) -> Strategy:
    """Run the test under every strategy: these behaviours must not depend on it."""
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def puppets() -> Puppets:
    return Puppets()


@pytest.fixture
def events() -> EventLog:
    return EventLog()


Trail = Callable[..., list[str]]


@pytest.fixture
def trail(events: EventLog) -> Trail:
    """``trail(skip=0)``: the event log as ``"type actor"`` strings, e.g. ``"actor.crashed b"``."""

    def render(skip: int = 0) -> list[str]:
        return [f"{e.type} {e.data.get('actor')}" for e in list(events.history)[skip:]]

    return render
