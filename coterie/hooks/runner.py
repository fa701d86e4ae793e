"""Running one hook handler: the thin Trio layer under :mod:`coterie.hooks.fire`.

A ``command`` handler runs with ``sh -c`` in a process group of its own,
the hook input JSON on its stdin, in the workspace, with
``CLAUDE_PROJECT_DIR`` set; past its timeout, or when the caller is
cancelled, the whole group is killed (SIGKILL) before this returns. An
``http`` handler POSTs the same JSON; a 2xx body is read as a command's
stdout, any other status is a non-blocking error. A ``callback`` handler
calls the run's Python callback of that id with the input (a dict) and reads
what it returns as a command's JSON output; past its timeout, or when it
raises, it has failed as a command that could not run has (a PreToolUse
hook's failure then blocks the call: fail-closed).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeAlias

import attrs
import trio

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from coterie.hooks.config import Handler

__all__ = ["HookCallback", "Ran", "run_handler"]

#: Bytes of stdout / stderr kept of one hook (the rest is dropped).
OUTPUT_LIMIT = 1 << 20
#: After the hook exits, how long a background child may hold its pipes open.
_PIPE_GRACE = 0.2
#: How long a killed group may take to be gone before the runner stops waiting.
_KILL_WAIT = 5.0


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
) -> Ran:
    """Run *handler* on *payload* (the hook input, JSON) and say what it did."""
    if handler.type == "http":
        return await _post(handler, payload)
    if handler.type == "callback":
        return await _call(handler, payload, callbacks or {})
    return await _command(handler, payload, cwd=cwd, env=env)


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


async def _command(handler: Handler, payload: bytes, *, cwd: Path, env: Mapping[str, str]) -> Ran:
    try:
        proc = await trio.lowlevel.open_process(
            ["sh", "-c", handler.target],
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return Ran(None, error=f"could not start: {exc}")
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert proc.stderr is not None
    out, err = bytearray(), bytearray()
    done = [trio.Event(), trio.Event()]

    async def feed() -> None:
        assert proc.stdin is not None
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await proc.stdin.send_all(payload)
        await proc.stdin.aclose()

    async def drain(stream: trio.abc.ReceiveStream, into: bytearray, finished: trio.Event) -> None:
        try:
            while chunk := await stream.receive_some(65536):
                into.extend(chunk[: max(0, OUTPUT_LIMIT - len(into))])
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            pass
        finally:
            finished.set()

    timed_out = True
    try:
        with trio.move_on_after(handler.timeout):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(feed)
                nursery.start_soon(drain, proc.stdout, out, done[0])
                nursery.start_soon(drain, proc.stderr, err, done[1])
                await proc.wait()
                timed_out = False
                with trio.move_on_after(_PIPE_GRACE):
                    for event in done:
                        await event.wait()
                nursery.cancel_scope.cancel()
    finally:
        if proc.returncode is None:
            # Timed out or cancelled: the hook and everything it started go.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            with trio.CancelScope(shield=True), trio.move_on_after(_KILL_WAIT):
                await proc.wait()
                while _group_exists(proc.pid):  # noqa: ASYNC110  (nothing signals it)
                    await trio.sleep(0.01)
        with trio.CancelScope(shield=True):
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                await stream.aclose()
    if timed_out:
        return Ran(None, error=f"timed out after {handler.timeout:g}s")
    return Ran(proc.returncode, _decode(out), _decode(err))


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


def _group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _decode(data: bytes | bytearray) -> str:
    return bytes(data).decode("utf-8", errors="replace")
