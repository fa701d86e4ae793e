"""A small HTTP client for the observer's tests (h11 over a Trio stream) and a fake run."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import h11
import trio

from coterie.runs import create_run

if TYPE_CHECKING:
    from pathlib import Path


async def http(
    port: int,
    method: str,
    target: str,
    *,
    headers: dict[str, str] | None = None,
    body: bytes = b"",
) -> tuple[int, dict[str, str], bytes]:
    """One request to 127.0.0.1:*port*; (status, headers, body)."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        conn = h11.Connection(h11.CLIENT)
        sent = {"host": f"127.0.0.1:{port}", "content-length": str(len(body)), **(headers or {})}
        await stream.send_all(
            conn.send(h11.Request(method=method, target=target, headers=list(sent.items())))
        )
        await stream.send_all(conn.send(h11.Data(data=body)) + conn.send(h11.EndOfMessage()))
        status, got, data = 0, {}, bytearray()
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(await stream.receive_some(65536))
            elif isinstance(event, h11.Response):
                status = event.status_code
                got = {k.decode(): v.decode() for k, v in event.headers}
            elif isinstance(event, h11.Data):
                data += event.data
            else:
                return status, got, bytes(data)


async def frames(port: int, target: str, count: int) -> list[tuple[str, Any]]:
    """The first *count* server-sent events of *target*, as (event, decoded data)."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        conn = h11.Connection(h11.CLIENT)
        head = [("host", f"127.0.0.1:{port}"), ("accept", "text/event-stream")]
        await stream.send_all(conn.send(h11.Request(method="GET", target=target, headers=head)))
        await stream.send_all(conn.send(h11.EndOfMessage()))
        text = ""
        found: list[tuple[str, Any]] = []
        while len(found) < count:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(await stream.receive_some(65536))
            elif isinstance(event, h11.Response):
                assert event.status_code == 200
                assert dict(event.headers)[b"content-type"] == b"text/event-stream"
            elif isinstance(event, h11.Data):
                text += event.data.decode()
                while "\n\n" in text:
                    block, text = text.split("\n\n", 1)
                    found.extend(parse_block(block))
            else:
                raise AssertionError(f"the stream ended: {event!r}")
        return found[:count]


def parse_block(block: str) -> list[tuple[str, Any]]:
    """One SSE block as [(event, data)] (a comment block gives nothing)."""
    name, data = "message", []
    for line in block.split("\n"):
        if line.startswith(":"):
            continue
        field, _, value = line.partition(": ")
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)
    return [(name, json.loads("\n".join(data)))] if data else []


def fake_run(workdir: Path, events: list[dict[str, Any]]) -> Path:
    """A run directory of *workdir* whose log holds *events*."""
    _, run_dir = create_run(workdir, {"command": "team", "model": "claude-sonnet-4-5", "goal": "g"})
    append(run_dir, events)
    return run_dir


def append(run_dir: Path, events: list[dict[str, Any]], tail: str = "") -> None:
    """Append *events* (and a torn *tail*) to the run's log."""
    with open(run_dir / "events.jsonl", "a") as log:
        log.write("".join(json.dumps(e) + "\n" for e in events) + tail)
