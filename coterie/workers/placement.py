"""Which teammates a worker takes, and when a run is told nobody hosts one: pure.

A worker with room (``capacity`` minus what it hosts) takes teammates that
are wanted and not hosted, oldest run first and in each run in roster order,
and never more than its fair share: the teammates it may host divided among
the live workers (rounded up), so that the teammates of one run are spread
over the workers alive even when one of them looks first (a claim is still a
race that the registry settles atomically: losing it is normal; when a worker
dies, the share of those left grows and they take its teammates over). The lead's side watches
every teammate of a remote run: one that stays without a host for longer than
``grace`` seconds (no worker had room, or none is alive) is reported once,
until a worker takes it again. A teammate a worker failed to start is tried
again after a delay that doubles with each failure in a row
(:class:`StartBackoff`), not at every beat.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Mapping

__all__ = [
    "RETIRED",
    "HostingWatch",
    "StartBackoff",
    "Unhosted",
    "Wanted",
    "WorkerInfo",
    "choose_claims",
]

#: What a worker directory's ``hosts`` says of a teammate that ended for good.
RETIRED = "retired"


@attrs.frozen
class WorkerInfo:
    """What a worker says of itself in its heartbeat."""

    id: str
    capacity: int
    hosted: tuple[str, ...] = ()  # "run_id/teammate" of what it hosts now
    host: str = ""
    pid: int = 0
    run: str | None = None  # --run: hosts teammates of that run only

    def room(self) -> int:
        return max(0, self.capacity - len(self.hosted))

    def to_json(self) -> dict[str, object]:
        return attrs.asdict(self, recurse=False) | {"hosted": list(self.hosted)}

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> WorkerInfo:
        hosted = data.get("hosted") or ()
        return cls(
            id=str(data["id"]),
            capacity=int(data.get("capacity", 0)),  # type: ignore[call-overload]
            hosted=tuple(str(h) for h in hosted),  # type: ignore[attr-defined]
            host=str(data.get("host", "")),
            pid=int(data.get("pid", 0)),  # type: ignore[call-overload]
            run=None if data.get("run") is None else str(data["run"]),
        )


@attrs.define
class StartBackoff:
    """When a worker may try again to start a teammate whose start failed: *base*
    seconds after the first failure, twice as long after each failure in a row,
    never more than *cap*; a start that succeeds forgets its failures."""

    base: float
    cap: float = 60.0
    #: ``"run_id/teammate"`` -> (failures in a row, when it may be tried again).
    _failures: dict[str, tuple[int, float]] = attrs.field(factory=dict)

    def allows(self, key: str, now: float) -> bool:
        """Whether *key* may be tried at *now*."""
        failed = self._failures.get(key)
        return failed is None or now >= failed[1]

    def failed(self, key: str, now: float) -> float:
        """*key*'s start failed at *now*: the seconds until it may be tried again."""
        count = self._failures.get(key, (0, now))[0] + 1
        delay: float = min(self.cap, self.base * 2.0 ** min(count - 1, 32))
        self._failures[key] = (count, now + delay)
        return delay

    def started(self, key: str) -> None:
        """*key* started: its next failure waits *base* again."""
        self._failures.pop(key, None)

    def forget_runs_but(self, runs: set[str]) -> None:
        """Drop what is known of runs not in *runs* (they stopped wanting hosts)."""
        for key in [k for k in self._failures if k.split("/", 1)[0] not in runs]:
            del self._failures[key]


@attrs.frozen
class Wanted:
    """A run that wants its teammates hosted by workers, in the order it asked."""

    run_id: str
    teammates: tuple[str, ...]
    since: float = 0.0


def choose_claims(
    me: WorkerInfo,
    wanted: Iterable[Wanted],
    hosted_by: Mapping[str, str],
    peers: int = 1,
) -> list[tuple[str, str]]:
    """The ``(run_id, teammate)`` pairs *me* should try to claim now.

    *hosted_by* maps ``"run_id/teammate"`` to the worker holding its lease;
    *peers* is how many workers are alive (*me* included). Never more than
    *me*'s room, nor (with peers) past its fair share; never a teammate
    someone holds; only the run *me* is restricted to, if any.
    """
    wanted = list(wanted)
    room = me.room()
    if peers > 1:
        mine = [w for w in wanted if me.run is None or w.run_id == me.run]
        total = sum(len(w.teammates) for w in mine)
        share = -(-total // peers)  # rounded up
        room = min(room, share - len(me.hosted))
    claims: list[tuple[str, str]] = []
    for run in sorted(wanted, key=lambda w: (w.since, w.run_id)):
        if me.run is not None and run.run_id != me.run:
            continue
        for name in run.teammates:
            if room <= 0:
                return claims
            if f"{run.run_id}/{name}" in hosted_by:
                continue
            claims.append((run.run_id, name))
            room -= 1
    return claims


@attrs.frozen
class Unhosted:
    """A teammate nobody has hosted for longer than the grace period."""

    teammate: str
    since: float
    last_worker: str | None


@attrs.define
class HostingWatch:
    """The lead's side of a remote run: which teammates lost their host, said once.

    Feed it :meth:`observe` with who hosts each teammate now (None: nobody);
    it returns the teammates to report, each once per time without a host.
    """

    teammates: tuple[str, ...]
    grace: float
    _without: dict[str, float] = attrs.field(factory=dict)
    _last: dict[str, str] = attrs.field(factory=dict)
    _reported: set[str] = attrs.field(factory=set)
    #: Each stopped teammate's lease holder at the first look after its stop.
    _since_stop: dict[str, str | None] = attrs.field(factory=dict)

    def observe(self, now: float, hosts: Mapping[str, str | None]) -> list[Unhosted]:
        out: list[Unhosted] = []
        for name in self.teammates:
            worker = hosts.get(name)
            if worker is not None:
                self._last[name] = worker
                self._without.pop(name, None)
                self._reported.discard(name)
                continue
            since = self._without.setdefault(name, now)
            if now - since >= self.grace and name not in self._reported:
                self._reported.add(name)
                out.append(Unhosted(name, since, self._last.get(name)))
        return out

    def taken_anew(self, hosts: Mapping[str, str | None], stopped: Collection[str]) -> list[str]:
        """Of the *stopped* teammates, those a worker has taken since they stopped:
        hosted anew, they work again. *hosts*: each teammate's lease holder now
        (None: no lease, or one retired).

        A stopped teammate may still hold the lease of the worker it ended on
        (retired only at that worker's next heartbeat), and the first look
        after the stop may be the first to see that lease at all. So the holder
        seen at the first look after the stop does not count; a holder after a
        look without one, or another holder, does.
        """
        out = []
        for name in self.teammates:
            if name not in stopped:
                self._since_stop.pop(name, None)
                continue
            holder = hosts.get(name)
            if name not in self._since_stop:
                self._since_stop[name] = holder  # perhaps where it ended
            elif holder is None:
                self._since_stop[name] = None  # let go since: the next holder is new
            elif holder != self._since_stop[name] or self._since_stop[name] is None:
                del self._since_stop[name]
                out.append(name)
        return out

    def reported(self) -> frozenset[str]:
        """The teammates reported and not hosted again since."""
        return frozenset(self._reported)
