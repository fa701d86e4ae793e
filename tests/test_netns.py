"""The simulated hosts: a server on one is reachable from another, and a host
lost takes every process on it."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from tests.netns import network
from tests.redis_server import redis_server

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.slow


def test_a_redis_server_on_one_host_answers_another_and_dies_with_its_host(
    tmp_path: Path,
) -> None:
    with network(["db", "app"]) as net:
        db, app = net.hosts["db"], net.hosts["app"]
        with redis_server(tmp_path, host=db.address, wrapper=db.wrapper) as server:
            probe = (
                "import socket,sys; c=socket.create_connection((sys.argv[1],int(sys.argv[2])),2);"
                "c.sendall(b'PING\\r\\n'); print(c.recv(9).decode().strip())"
            )
            seen = app.run(
                [sys.executable, "-c", probe, db.address, str(server.port)],
                capture_output=True,
                text=True,
            )
            assert seen.stdout.strip() == "+PONG", seen.stderr
            # The machine itself does not reach the server (no route; a connection
            # may still be taken by whatever the machine routes unknown addresses to).
            here = subprocess.run(
                [sys.executable, "-c", probe, db.address, str(server.port)],
                capture_output=True,
                text=True,
                check=False,
            )
            assert here.stdout.strip() != "+PONG"
            assert db.kill_all() >= 1
            assert server.process is not None
            assert server.process.wait(timeout=5) == -9
            assert db.pids() == []
