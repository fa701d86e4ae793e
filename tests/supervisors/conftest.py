"""Fixtures for supervisor tests: puppet children and an event log."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest
import trio

from coterie.errors import ShutdownExit
from coterie.events import EventLog
from coterie.supervisors import ChildSpec, Restart, Strategy


class Puppets:
    """Children that do exactly what the test says, logging their starts and stops.

    ``log`` holds ``("start", name)`` when an incarnation begins and
    ``("stop", name)`` when it is cancelled; ``exit(name)`` makes the current
    incarnation return, ``crash(name)`` raise, ``shutdown(name)`` end with
    reason shutdown. Children made by ``starting`` have a start phase that
    does what ``start_modes[name]`` says: ``"ok"`` (the default), ``"fail"``
    (raise before started, logged ``("failed", name)``), ``"fail_once"``
    (the same, then ``"ok"``) or ``"ignore"``
    (return before started).
    """

    def __init__(self) -> None:
        self.log: list[tuple[str, str]] = []
        self.start_modes: dict[str, str] = {}
        self._commands: dict[str, trio.MemorySendChannel[str]] = {}

    def spec(self, name: str, restart: Restart = Restart.PERMANENT, **kwargs: Any) -> ChildSpec:
        return ChildSpec(name, functools.partial(self._body, name), restart=restart, **kwargs)

    def starting(self, name: str, restart: Restart = Restart.PERMANENT, **kwargs: Any) -> ChildSpec:
        start = functools.partial(self._starting, name)
        return ChildSpec(name, start, restart=restart, reports_started=True, **kwargs)

    def shutdown(self, name: str) -> None:
        self._commands[name].send_nowait("shutdown")

    async def _starting(self, name: str, *, task_status: trio.TaskStatus[None]) -> None:
        mode = self.start_modes.get(name, "ok")
        if mode == "fail_once":
            self.start_modes[name] = "ok"
        if mode in ("fail", "fail_once"):
            self.log.append(("failed", name))
            raise RuntimeError(f"{name} failed to start")
        if mode == "ignore":
            return
        task_status.started()
        await self._body(name)

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
        if command == "shutdown":
            raise ShutdownExit(f"{name} was told to shut down")


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
