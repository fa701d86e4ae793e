"""Redis for chaos rounds: a ``redis-server`` of the round's own on 127.0.0.1, as the
run's backend (``COTERIE_BACKEND``), and the faults done to it.

  redis-restart
      the server is killed (kill -9) and started again on the same port
      without AOF: it comes back empty, the run's keys gone;
  redis-oom
      the server refuses every write (``CONFIG SET maxmemory 1`` under the
      ``noeviction`` policy: "OOM command not allowed") for 0.5-3 s, then
      takes them again (``maxmemory 0``);
  redis-partition, redis-slow
      the link to the server is cut, or slowed, for a while (``chaos_proxy``).

Expected: no traceback, no hang; the run completes, or stops with one line
(exit 1 or 2) and is resumed once the server is back. The start logic is a
small copy of ``tests/redis_server.py`` (the harness does not import tests).
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

REDIS_FAULTS = ("redis-restart", "redis-oom", "redis-partition", "redis-slow")
#: The faults done to the link rather than the server (``chaos_proxy``).
LINK_FAULTS = ("redis-partition", "redis-slow")
#: How long a ``redis-oom`` fault refuses writes, at most and at least (s).
OOM_SECONDS = (0.5, 3.0)


def server_binary() -> str | None:
    return shutil.which("redis-server") or shutil.which("valkey-server")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Redis:
    """One redis-server process without persistence, in *directory*."""

    directory: Path
    port: int = 0
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> Redis:
        binary = server_binary()
        if binary is None:
            raise RuntimeError("redis-server is not installed")
        self.directory.mkdir(parents=True, exist_ok=True)
        self.port = self.port or free_port()
        self.process = subprocess.Popen(
            [binary, "--bind", "127.0.0.1", "--port", str(self.port),
             "--dir", str(self.directory), "--save", "", "--appendonly", "no",
             "--protected-mode", "no", "--daemonize", "no",
             "--logfile", str(self.directory / "redis.log")],
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.process.returncode}")
            with contextlib.suppress(OSError):
                if f"process_id:{self.process.pid}\r\n".encode() in self.command("INFO", "server"):
                    return self
            time.sleep(0.02)
        raise RuntimeError(f"redis-server on port {self.port} did not answer")

    def command(self, *words: str) -> bytes:
        """One command in RESP; the raw reply."""
        out = f"*{len(words)}\r\n".encode()
        for word in words:
            out += f"${len(word.encode())}\r\n{word}\r\n".encode()
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as conn:
            conn.sendall(out)
            return conn.recv(65536)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()

    def restart_empty(self) -> None:
        """kill -9, then the same port again with no data (no AOF, no RDB)."""
        self.kill()
        self.start()

    def refuse_writes(self) -> None:
        self.command("CONFIG", "SET", "maxmemory-policy", "noeviction")
        self.command("CONFIG", "SET", "maxmemory", "1")

    def take_writes(self) -> None:
        self.command("CONFIG", "SET", "maxmemory", "0")
