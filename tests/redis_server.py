"""A real Redis server for the tests: started on 127.0.0.1 in a temporary
directory, stopped at the end (nothing needs an already running service).

``redis-server`` comes from Debian's package, which ``.ci/setup`` installs;
``valkey-server`` is used when it is the one on PATH. Under ``CI=true`` a
missing server fails the test; elsewhere the test is skipped.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
from typing import TYPE_CHECKING

import attrs
import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


#: coredis 6.9 leaves a connection's memory streams unclosed when connecting
#: fails (a server down or restarting): garbage collection then warns
#: "Unclosed <MemoryObjectSendStream>". Harmless; tests that restart a server
#: while clients are connected wear this mark (and collect garbage before they end).
CONNECT_FAILURE_LEAK = pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <function MemoryObject:pytest.PytestUnraisableExceptionWarning"
)


def server_binary() -> str:
    """The path of redis-server (or valkey-server); fails or skips without one."""
    found = shutil.which("redis-server") or shutil.which("valkey-server")
    if found is None:
        reason = "redis-server is not installed (bash .ci/setup installs it)"
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
    """One redis-server process; :meth:`restart` keeps its data directory (and AOF)."""

    directory: Path
    host: str = "127.0.0.1"
    port: int = 0
    appendonly: bool = False
    appendfsync: str = "always"
    process: subprocess.Popen[bytes] | None = None
    #: A command prefix to start it with (``ip netns exec NS``), for network tests.
    wrapper: tuple[str, ...] = ()

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/0"

    def start(self) -> RedisServer:
        if not self.port:
            self.port = free_port(self.host)
        argv = [
            *self.wrapper,
            server_binary(),
            "--bind", self.host,
            "--port", str(self.port),
            "--dir", str(self.directory),
            "--save", "",
            "--appendonly", "yes" if self.appendonly else "no",
            "--appendfsync", self.appendfsync,
            "--protected-mode", "no",
            "--daemonize", "no",
            "--logfile", str(self.directory / "redis.log"),
        ]  # fmt: skip
        self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL)
        self._wait_ready()
        return self

    def _wait_ready(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                log = (self.directory / "redis.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"redis-server exited with {self.process.returncode}: {log}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection((self.host, self.port), timeout=0.2) as conn,
            ):
                conn.sendall(b"PING\r\n")
                if conn.recv(16).startswith(b"+PONG"):
                    return
            time.sleep(0.02)
        raise RuntimeError(f"redis-server on port {self.port} did not answer in {timeout} s")

    def command(self, *words: str) -> bytes:
        """One command in RESP, the raw reply (for flushing between tests)."""
        out = f"*{len(words)}\r\n".encode()
        for word in words:
            out += f"${len(word.encode())}\r\n{word}\r\n".encode()
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
