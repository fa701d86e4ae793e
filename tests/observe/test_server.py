"""The observer's HTTP layer, in process: token, Host, assets, runs, events, faults."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
import trio

from coterie.errors import CoterieError
from coterie.observe import Observer, serve_observer
from tests.observe.helpers import fake_run, frames, http
from tests.redis_server import LOSES_SERVER, collect_failed_connections

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

START = [
    {"seq": 1, "ts": 1.0, "type": "actor.started", "supervisor": "team", "actor": "alice"},
]


class FakeInjector:
    """Records what the buttons asked; refuses an actor named ``ghost`` as inject does."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    async def __call__(
        self, run: Any, fault: Any, actor: str | None = None, *, reason: str | None, by: str
    ) -> dict[str, Any]:
        if actor == "ghost":
            raise CoterieError("no actor ghost in run; known: alice")
        self.calls.append((run.run_dir, fault, actor, reason, by))  # the run's address
        return {"fault": fault, "actor": actor, "recorded": True}


@pytest.fixture
def injector() -> FakeInjector:
    return FakeInjector()


@pytest.fixture
async def observer(tmp_path: Path, injector: FakeInjector) -> AsyncIterator[Observer]:
    async with trio.open_nursery() as nursery:
        started: Observer = await nursery.start(
            lambda task_status: serve_observer(
                tmp_path, injector=injector, interval=0.01, task_status=task_status
            )
        )
        yield started
        nursery.cancel_scope.cancel()


def base(observer: Observer) -> str:
    return f"/{observer.guard.token}"


async def test_the_url_is_loopback_with_a_long_random_token(observer: Observer) -> None:
    assert observer.url.startswith(f"http://127.0.0.1:{observer.guard.port}/")
    assert len(observer.guard.token) >= 32


async def test_without_the_token_everything_is_404(observer: Observer) -> None:
    for target in ("/", "/assets/observe.js", "/api/runs", "/x/api/runs"):
        status, _, _ = await http(observer.guard.port, "GET", target)
        assert status == 404


async def test_a_foreign_host_header_is_refused(observer: Observer) -> None:
    port = observer.guard.port
    status, _, _ = await http(port, "GET", base(observer) + "/", headers={"host": f"evil:{port}"})
    assert status == 403


async def test_the_page_and_its_assets_come_from_the_package(observer: Observer) -> None:
    port = observer.guard.port
    status, headers, body = await http(port, "GET", base(observer) + "/")
    assert status == 200
    assert b"assets/observe.js" in body
    assert headers["content-type"].startswith("text/html")
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["referrer-policy"] == "no-referrer"
    status, headers, body = await http(port, "GET", base(observer) + "/assets/observe.js")
    assert (status, headers["content-type"]) == (200, "text/javascript; charset=utf-8")
    assert b"EventSource" in body
    status, headers, _ = await http(port, "GET", base(observer))
    assert (status, headers["location"]) == (308, base(observer) + "/")


async def test_the_runs_of_the_workspace_are_listed(observer: Observer, tmp_path: Path) -> None:
    run_dir = fake_run(tmp_path, START)
    status, _, body = await http(observer.guard.port, "GET", base(observer) + "/api/runs")
    assert status == 200
    data = json.loads(body)
    assert [r["run_id"] for r in data["runs"]] == [run_dir.name]
    assert "path" not in data["runs"][0]


async def test_the_event_stream_starts_with_a_snapshot(observer: Observer, tmp_path: Path) -> None:
    run_dir = fake_run(tmp_path, START)
    target = f"{base(observer)}/api/runs/{run_dir.name}/events"
    with trio.fail_after(10):
        ((kind, snap),) = await frames(observer.guard.port, target, 1)
    assert kind == "snapshot"
    assert "alice" in {a["name"] for a in snap["actors"]}
    status, _, _ = await http(observer.guard.port, "GET", f"{base(observer)}/api/runs/nope/events")
    assert status == 404


async def test_every_page_of_a_run_shares_one_feed(observer: Observer, tmp_path: Path) -> None:
    run_dir = fake_run(tmp_path, START)
    target = f"{base(observer)}/api/runs/{run_dir.name}/events"
    with trio.fail_after(10):
        await frames(observer.guard.port, target, 1)
        await frames(observer.guard.port, target, 1)
    assert list(observer.feeds) == [run_dir.name]


def fault_headers(observer: Observer, **extra: str) -> dict[str, str]:
    return {"content-type": "application/json", **extra}


async def test_a_fault_button_calls_the_injector_as_observe(
    observer: Observer, tmp_path: Path, injector: FakeInjector
) -> None:
    run_dir = fake_run(tmp_path, START)
    body = json.dumps({"fault": "crash", "actor": "alice", "reason": "poke"}).encode()
    origin = f"http://127.0.0.1:{observer.guard.port}"
    status, _, answer = await http(
        observer.guard.port, "POST", f"{base(observer)}/api/runs/{run_dir.name}/fault",
        headers=fault_headers(observer, origin=origin), body=body,
    )  # fmt: skip
    assert status == 200
    assert json.loads(answer)["reply"]["recorded"] is True
    assert injector.calls == [(run_dir, "crash", "alice", "poke", "observe")]


async def test_a_refused_fault_says_why(observer: Observer, tmp_path: Path) -> None:
    run_dir = fake_run(tmp_path, START)
    body = json.dumps({"fault": "stop", "actor": "ghost"}).encode()
    target = f"{base(observer)}/api/runs/{run_dir.name}/fault"
    status, _, answer = await http(
        observer.guard.port, "POST", target, headers=fault_headers(observer), body=body
    )
    assert status == 409
    assert "known: alice" in json.loads(answer)["error"]


async def test_a_fault_from_another_origin_never_reaches_the_injector(
    observer: Observer, tmp_path: Path, injector: FakeInjector
) -> None:
    run_dir = fake_run(tmp_path, START)
    body = json.dumps({"fault": "cancel"}).encode()
    target = f"{base(observer)}/api/runs/{run_dir.name}/fault"
    for headers, expected in [
        (fault_headers(observer, origin="http://evil.example"), 403),
        ({"content-type": "text/plain"}, 415),
        (fault_headers(observer), 200),
    ]:
        status, _, _ = await http(observer.guard.port, "POST", target, headers=headers, body=body)
        assert status == expected
    assert [call[1:3] for call in injector.calls] == [("cancel", None)]


async def test_a_fault_for_an_unknown_run_is_404(
    observer: Observer, injector: FakeInjector
) -> None:
    body = json.dumps({"fault": "cancel"}).encode()
    status, _, _ = await http(
        observer.guard.port, "POST", f"{base(observer)}/api/runs/nope/fault",
        headers=fault_headers(observer), body=body,
    )  # fmt: skip
    assert status == 404
    assert injector.calls == []


async def test_bad_bytes_cost_one_connection_only(observer: Observer) -> None:
    stream = await trio.open_tcp_stream("127.0.0.1", observer.guard.port)
    async with stream:
        await stream.send_all(b"NOT HTTP AT ALL\r\n\r\n")
        with trio.fail_after(10):
            reply = await stream.receive_some(1000)
    assert reply.startswith(b"HTTP/1.1 400")
    status, _, _ = await http(observer.guard.port, "GET", base(observer) + "/api/runs")
    assert status == 200


@LOSES_SERVER
@pytest.mark.parametrize("answers", [False, True], ids=["refused", "silent"])
async def test_a_run_on_a_server_that_cannot_be_read_is_503_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answers: bool
) -> None:
    """Not "no such run": the page is told the backend is away, and why. A server
    that refuses the connection, and one that takes it and never answers."""
    from coterie.backends import Backend
    from coterie.backends.redis import client as redis_client

    monkeypatch.setattr(redis_client, "FIRST_ANSWER", 0.5)
    listener = trio.socket.socket()
    await listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    if answers:
        listener.listen(8)  # takes connections, says nothing
    else:
        listener.close()  # nothing listens there: refused
    backend = Backend.parse(f"redis://127.0.0.1:{port}/0")
    try:
        async with trio.open_nursery() as nursery:
            observer: Observer = await nursery.start(
                lambda task_status: serve_observer(
                    tmp_path, backend=backend, interval=0.01, task_status=task_status
                )
            )
            run = f"{base(observer)}/api/runs/20261205-000000-abcdef/events"
            with trio.fail_after(10):
                status, _, body = await http(observer.guard.port, "GET", run)
            assert status == 503
            assert json.loads(body)["error"].startswith(f"cannot read redis://127.0.0.1:{port}")
            with trio.fail_after(10):
                status, _, body = await http(
                    observer.guard.port, "GET", f"{base(observer)}/api/runs"
                )
            assert status == 503
            assert json.loads(body)["error"].startswith(f"cannot read redis://127.0.0.1:{port}")
            nursery.cancel_scope.cancel()
    finally:
        listener.close()
    collect_failed_connections()
