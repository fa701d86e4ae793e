"""Hosts simulated with network namespaces, for the scale-out tests.

A :class:`Network` is a switch (a bridge in a namespace of its own, so the
machine's own network is never touched) and hosts, each a namespace joined
to the switch by a veth pair, with an address of the network's own
``10.X.Y.0/24`` and nothing else (no route out). Processes start in a host
with :meth:`Host.popen` (``ip netns exec``); :meth:`Host.kill_all` is a host
lost: kill -9 of every process in its namespace. Needs root and iproute2
(``.ci/setup`` installs it); under ``CI=true`` a machine that cannot make
namespaces fails the test, elsewhere it is skipped.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
from typing import TYPE_CHECKING, Any

import attrs
import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


def require_netns() -> None:
    """Fail (CI) or skip unless network namespaces can be made here."""
    probe = f"coterie-probe-{secrets.token_hex(3)}"
    reason = None
    if os.geteuid() != 0:
        reason = "network namespaces need root"
    else:
        try:
            made = _ip("netns", "add", probe, check=False)
        except FileNotFoundError:
            reason = "iproute2's ip is not installed (bash .ci/setup installs it)"
        else:
            if made.returncode != 0:
                reason = f"cannot make a network namespace: {made.stderr.strip()}"
            _ip("netns", "del", probe, check=False)
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)


@attrs.define
class Host:
    """One simulated host: a namespace with one address on the network."""

    name: str
    namespace: str
    address: str

    @property
    def wrapper(self) -> tuple[str, ...]:
        """The command prefix that runs a program on this host."""
        return ("ip", "netns", "exec", self.namespace)

    def popen(self, argv: Sequence[str], **options: Any) -> subprocess.Popen[Any]:
        """Start *argv* on this host."""
        return subprocess.Popen([*self.wrapper, *argv], **options)

    def run(self, argv: Sequence[str], **options: Any) -> subprocess.CompletedProcess[Any]:
        """Run *argv* on this host to its end."""
        return subprocess.run([*self.wrapper, *argv], check=False, **options)

    def pids(self) -> list[int]:
        listed = _ip("netns", "pids", self.namespace, check=False).stdout.split()
        return [int(pid) for pid in listed]

    def kill_all(self) -> int:
        """kill -9 every process on this host (a host lost); how many there were."""
        killed = 0
        for _ in range(5):  # a dying parent may still spawn: go round until none is left
            pids = self.pids()
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                    killed += 1
        return killed


@attrs.define
class Network:
    """A switch and the hosts on it; everything removed by :meth:`close`."""

    prefix: str
    subnet: str
    hosts: dict[str, Host] = attrs.field(factory=dict)

    @property
    def switch(self) -> str:
        return f"{self.prefix}-sw"

    def open(self) -> Network:
        _ip("netns", "add", self.switch)
        self._in(self.switch, "link", "add", "br0", "type", "bridge")
        self._in(self.switch, "link", "set", "br0", "up")
        self._in(self.switch, "link", "set", "lo", "up")
        return self

    def _in(self, namespace: str, *args: str) -> None:
        _ip("-n", namespace, *args)

    def add_host(self, name: str) -> Host:
        """A new host joined to the switch, with the next address of the subnet."""
        index = len(self.hosts) + 1
        namespace = f"{self.prefix}-{name}"
        address = f"{self.subnet}.{index}"
        _ip("netns", "add", namespace)
        outside, inside = f"{self.prefix[:6]}{index}a", f"{self.prefix[:6]}{index}b"
        _ip("link", "add", outside, "netns", self.switch, "type", "veth", "peer", "name", inside,
            "netns", namespace)  # fmt: skip
        self._in(self.switch, "link", "set", outside, "master", "br0", "up")
        self._in(namespace, "addr", "add", f"{address}/24", "dev", inside)
        self._in(namespace, "link", "set", inside, "up")
        self._in(namespace, "link", "set", "lo", "up")
        host = Host(name, namespace, address)
        self.hosts[name] = host
        return host

    def close(self) -> None:
        for host in self.hosts.values():
            host.kill_all()
            _ip("netns", "del", host.namespace, check=False)
        _ip("netns", "del", self.switch, check=False)
        self.hosts.clear()


@contextlib.contextmanager
def network(hosts: Sequence[str] = ()) -> Iterator[Network]:
    """A network of simulated hosts named *hosts* (more with ``add_host``)."""
    require_netns()
    tag = secrets.token_hex(2)
    net = Network(prefix=f"co{tag}", subnet=f"10.{200 + int(tag[0], 16)}.{int(tag[1:], 16) % 250}")
    net.open()
    try:
        for name in hosts:
            net.add_host(name)
        yield net
    finally:
        net.close()
