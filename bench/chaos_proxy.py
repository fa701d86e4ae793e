"""A TCP proxy between a chaos round's run and its Redis server, to cut or slow the link.

  redis-partition
      the link goes dark for a while: nothing passes either way and new
      connections are not taken, as when a network drops every packet; what
      was sent meanwhile arrives once it heals (TCP would have retransmitted
      it), unless a side gave up on its connection first;
  redis-slow
      every chunk waits 20-150 ms before it passes, for a few seconds.

The run talks to the proxy's port (``COTERIE_BACKEND``), never to the server.
Threads, as the rest of the harness: one accepting, two per connection.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time

#: How long a partition lasts, at least and at most (s).
PARTITION_SECONDS = (0.5, 8.0)
#: How long a link stays slow (s), and the delay of each chunk then (s).
SLOW_SECONDS = (1.0, 5.0)
SLOW_DELAY = (0.02, 0.15)


class Proxy:
    """Forwards 127.0.0.1:``port`` to 127.0.0.1:*target*; :meth:`partition`,
    :meth:`slow` and :meth:`heal` change the link, :meth:`stop` ends it all."""

    def __init__(self, target: int) -> None:
        self.target = target
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._open = threading.Event()  # clear: partitioned
        self._open.set()
        self._delay = 0.0
        self._stopped = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> Proxy:
        self._spawn(self._accept)
        return self

    def partition(self) -> None:
        self._open.clear()

    def slow(self, delay: float) -> None:
        self._delay = delay

    def heal(self) -> None:
        self._delay = 0.0
        self._open.set()

    def stop(self) -> None:
        self._stopped = True
        self._open.set()
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
        with contextlib.suppress(OSError):
            self._listener.close()
        with self._lock:
            for sock in self._sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)  # each pump then closes its source
        for thread in self._threads:
            thread.join(timeout=5)

    def _spawn(self, target: object, *args: object) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)  # type: ignore[arg-type]
        self._threads.append(thread)
        thread.start()

    def _accept(self) -> None:
        while not self._stopped:
            self._open.wait()  # a partition takes no new connection either
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(("127.0.0.1", self.target), timeout=5)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets += [client, server]
            self._spawn(self._pump, client, server)
            self._spawn(self._pump, server, client)

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while not self._stopped:
                data = source.recv(65536)
                if not data:
                    break
                self._open.wait()  # held while the link is dark, then passed on
                if self._delay:
                    time.sleep(self._delay)
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):  # wakes the other direction's pump too
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            source.close()  # each socket is the source of one pump: closed once
            with self._lock:
                self._sockets.remove(source)
