"""Running one hook handler: the thin Trio layer under :mod:`coterie.hooks.fire`.

A ``command`` handler runs with ``sh -c`` through
:func:`coterie.processes.open_group`, the hook input JSON on its stdin, in
the workspace, with ``CLAUDE_PROJECT_DIR`` set: in a process group of its
own, recorded in the run's ``procgroups/`` before it runs (so that a start
after a kill -9 of coterie kills a hook that was running). A hook whose
timeout passed, or whose caller was cancelled, has its whole group ended
(SIGTERM, a short grace, SIGKILL) before this returns. A hook that exited by
itself but left something running in the background (``server &``) leaves it
running, as Claude Code does, still recorded: it ends with the run (and a
start after a kill -9 kills it). An
``http`` handler POSTs the same JSON; a 2xx body is read as a command's
stdout, any other status is a non-blocking error. A ``callback`` handler
calls the run's Python callback of that id with the input (a dict) and reads
what it returns as a command's JSON output; past its timeout, or when it
raises, it has failed as a command that could not run has (a PreToolUse
hook's failure then blocks the call: fail-closed). A ``prompt`` or ``agent``
handler asks the run's :class:`~coterie.hooks.judge.Judge` within its timeout;
the model's text is its stdout (read by :mod:`coterie.hooks.judgement`), and a
run without a judge, a failed call or a timeout is no answer.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeAlias

import attrs
import trio

from coterie.errors import CoterieError
from coterie.processes import open_group

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from coterie.hooks.config import Handler
    from coterie.hooks.judge import Judge

__all__ = ["HookCallback", "Ran", "run_handler"]

#: Bytes of stdout / stderr kept of one hook (the rest is dropped).
OUTPUT_LIMIT = 1 << 20
#: After the hook exits, how long a background child may hold its pipes open.
_PIPE_GRACE = 0.2
#: How long the group has, once the hook is done, between SIGTERM and SIGKILL.
_KILL_GRACE = 1.0


@attrs.frozen
class Ran:
    """What one handler did: an exit code and output, or why it could not run."""

    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    #: Set when there is no exit code: "timed out after 60s", a spawn error...
    error: str | None = None


#: A hook handler in Python (an embedder's, or one forwarding to an Agent SDK host):
#: the hook's input in, the hook's JSON output (Claude Code's shape) out.
HookCallback: TypeAlias = Callable[[dict[str, Any]], Awaitable["dict[str, Any] | None"]]


async def run_handler(
    handler: Handler,
    payload: bytes,
    *,
    cwd: Path,
    env: Mapping[str, str],
    callbacks: Mapping[str, HookCallback] | None = None,
    records: Path | None = None,
    judge: Judge | None = None,
    agent: str = "lead",
) -> Ran:
    """Run *handler* on *payload* (the hook input, JSON) and say what it did; a
    command's process group is recorded in *records* (the run's ``procgroups/``)
    before it runs; a ``prompt`` or ``agent`` handler asks *judge* on behalf of
    *agent*."""
    if handler.type in ("prompt", "agent"):
        return await _judged(handler, payload, judge, agent)
    if handler.type == "http":
        return await _post(handler, payload)
    if handler.type == "callback":
        return await _call(handler, payload, callbacks or {})
    return await _command(handler, payload, cwd=cwd, env=env, records=records)


async def _call(handler: Handler, payload: bytes, callbacks: Mapping[str, HookCallback]) -> Ran:
    """A callback answers as a command would on its standard output: its JSON."""
    function = callbacks.get(handler.target)
    if function is None:
        return Ran(None, error=f"no callback {handler.target} in this run")
    with trio.move_on_after(handler.timeout):
        try:
            output = await function(json.loads(payload))
        except Exception as exc:  # the embedder's code: its failure is the hook's
            return Ran(None, error=f"{type(exc).__name__}: {exc}")
        return Ran(0, stdout=json.dumps(output or {}))
    return Ran(None, error=f"timed out after {handler.timeout:g}s")


async def _judged(handler: Handler, payload: bytes, judge: Judge | None, agent: str) -> Ran:
    if judge is None:
        return Ran(None, error="no model to ask in this run")
    with trio.move_on_after(handler.timeout):
        try:
            text = await judge.answer(handler, payload.decode(), agent)
        except CoterieError as exc:  # the model call failed (network, budget...)
            return Ran(None, error=f"the model call failed: {exc}")
        return Ran(0, stdout=text)
    return Ran(None, error=f"timed out after {handler.timeout:g}s")


async def _command(
    handler: Handler, payload: bytes, *, cwd: Path, env: Mapping[str, str], records: Path | None
) -> Ran:
    out, err = bytearray(), bytearray()
    done = [trio.Event(), trio.Event()]
    timed_out = True
    try:
        async with open_group(
            ["sh", "-c", handler.target],
            cwd=cwd,
            records=records,
            env=env,
            stdin=subprocess.PIPE,
            grace=_KILL_GRACE,
            linger=True,  # what it starts in the background lives until the run ends
        ) as proc:
            assert proc.stdin is not None
            assert proc.stdout is not None
            assert proc.stderr is not None
            stdin = proc.stdin

            async def feed() -> None:
                with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                    await stdin.send_all(payload)
                await stdin.aclose()

            with trio.move_on_after(handler.timeout):
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(feed)
                    nursery.start_soon(_drain, proc.stdout, out, done[0])
                    nursery.start_soon(_drain, proc.stderr, err, done[1])
                    await proc.wait()
                    timed_out = False
                    with trio.move_on_after(_PIPE_GRACE):
                        for event in done:
                            await event.wait()
                    nursery.cancel_scope.cancel()
    except OSError as exc:  # it could not start, or its group could not be recorded
        return Ran(None, error=f"could not start: {exc}")
    if timed_out:
        return Ran(None, error=f"timed out after {handler.timeout:g}s")
    return Ran(proc.returncode, _decode(out), _decode(err))


async def _drain(stream: trio.abc.ReceiveStream, into: bytearray, finished: trio.Event) -> None:
    try:
        while chunk := await stream.receive_some(65536):
            into.extend(chunk[: max(0, OUTPUT_LIMIT - len(into))])
    except (trio.ClosedResourceError, trio.BrokenResourceError):
        pass
    finally:
        finished.set()


async def _post(handler: Handler, payload: bytes) -> Ran:
    import httpx2  # the anthropic SDK's HTTP library; imported only when a hook posts

    headers = {"content-type": "application/json", **dict(handler.headers)}
    try:
        with trio.fail_after(handler.timeout):
            async with httpx2.AsyncClient() as client:
                response = await client.post(
                    handler.target, content=payload, headers=headers, timeout=handler.timeout
                )
    except trio.TooSlowError:
        return Ran(None, error=f"timed out after {handler.timeout:g}s")
    except httpx2.HTTPError as exc:
        return Ran(None, error=f"{type(exc).__name__}: {exc}")
    body = response.text[:OUTPUT_LIMIT]
    if 200 <= response.status_code < 300:
        return Ran(0, stdout=body)
    return Ran(1, stderr=f"HTTP {response.status_code}: {body}")


def _decode(data: bytes | bytearray) -> str:
    return bytes(data).decode("utf-8", errors="replace")
