"""A Messages-API server whose replies can be cut off or go silent (for stream-fault tests).

Each request gets the next *plan* entry: ``full`` (a complete SSE reply),
``cut:N`` (the first N events of it, then the connection is closed),
``silent`` (the response headers, then nothing) or ``mute`` (nothing at
all); past the plan, ``full``. The reply is ``content`` (a list of blocks),
and ``later`` (if given) once the plan is used up.
Runs in-process (:func:`serve`) or as ``python -m tests.models.cutting_server
PORT_FILE PLAN CONTENT_JSON [LATER_JSON]`` for CLI tests (it writes its port to PORT_FILE).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import trio

from coterie.models import Usage
from coterie.models._wire import sse_events

if TYPE_CHECKING:
    from collections.abc import Iterator


@attrs.define
class Plan:
    steps: list[str]
    content: list[dict[str, Any]]
    later: list[dict[str, Any]] | None = None
    served: int = 0

    def next(self) -> str:
        step = self.steps[self.served] if self.served < len(self.steps) else "full"
        self.served += 1
        return step

    def events(self) -> list[bytes]:
        """The complete reply for the request being served."""
        content = self.content
        if self.later is not None and self.served > len(self.steps):
            content = self.later
        stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
        return sse_events(f"msg_{self.served}", "m", content, stop, Usage(10, 5))


async def _read_request(stream: trio.SocketStream) -> bool:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = await stream.receive_some(65536)
        if not chunk:
            return False
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = await stream.receive_some(65536)
        if not chunk:
            return False
        body += chunk
    return True


async def _handle(plan: Plan, stream: trio.SocketStream) -> None:
    try:
        if not await _read_request(stream):
            return
        step = plan.next()
        if step == "mute":
            await trio.sleep_forever()
        await stream.send_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
        )
        if step == "silent":
            await trio.sleep_forever()
        events = plan.events()
        if step.startswith("cut:"):
            events = events[: int(step.split(":", 1)[1])]
        for event in events:
            await stream.send_all(event)
    except trio.BrokenResourceError:
        pass
    finally:
        await stream.aclose()


async def serve(
    plan: Plan, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED
) -> None:
    """Serve *plan* on 127.0.0.1 until cancelled; ``nursery.start`` returns the port."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    async with trio.open_nursery() as nursery:
        await nursery.start(trio.serve_listeners, lambda s: _handle(plan, s), listeners)
        task_status.started(port)


@contextlib.contextmanager
def running(
    port_file: Path, steps: str, content: list[dict[str, Any]], later: Any = None
) -> Iterator[str]:
    """This server in a process of its own (for CLI tests); yields its base URL."""
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.models.cutting_server", str(port_file), steps,
         json.dumps(content), json.dumps(later)],
        cwd=Path(__file__).parents[2],
    )  # fmt: skip
    try:
        for _ in range(200):
            if port_file.exists() and port_file.read_text():
                break
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port_file.read_text()}"
    finally:
        server.terminate()
        server.wait()


async def _main(port_file: str, steps: str, content: str, later: str = "null") -> None:
    plan = Plan(steps.split(",") if steps else [], json.loads(content), json.loads(later))
    async with trio.open_nursery() as nursery:
        port = await nursery.start(serve, plan)
        with open(port_file, "w") as f:
            f.write(str(port))


if __name__ == "__main__":
    trio.run(_main, *sys.argv[1:5])
