"""The pure decisions: which teammates a worker claims; when a run is told."""

from __future__ import annotations

import random  # noqa: TC003 (hypothesis resolves the annotation)

from hypothesis import given
from hypothesis import strategies as st

from coterie.workers import (
    HostingWatch,
    StartBackoff,
    Unhosted,
    Wanted,
    WorkerInfo,
    choose_claims,
)

names = st.lists(st.sampled_from(["alice", "bob", "carol", "dave", "erin"]), unique=True)
runs = st.lists(
    st.builds(Wanted, st.sampled_from(["r1", "r2", "r3"]), names.map(tuple), st.floats(0, 10)),
    unique_by=lambda w: w.run_id,
    max_size=3,
)


@given(
    capacity=st.integers(0, 6),
    hosted=st.lists(st.text("ab", min_size=1, max_size=3), max_size=4, unique=True),
    wanted=runs,
    held=st.dictionaries(st.sampled_from(["r1/alice", "r2/bob", "r1/carol"]), st.just("w9")),
    only=st.none() | st.sampled_from(["r1", "r2"]),
)
def test_a_worker_claims_within_its_room_only_what_nobody_holds(
    capacity: int,
    hosted: list[str],
    wanted: list[Wanted],
    held: dict[str, str],
    only: str | None,
) -> None:
    me = WorkerInfo("w1", capacity, tuple(hosted), run=only)
    claims = choose_claims(me, wanted, held)
    assert len(claims) <= me.room()
    assert len(set(claims)) == len(claims)
    asked = {(w.run_id, t) for w in wanted for t in w.teammates}
    for run_id, teammate in claims:
        assert (run_id, teammate) in asked
        assert f"{run_id}/{teammate}" not in held
        assert only is None or run_id == only
    free = [p for p in asked if f"{p[0]}/{p[1]}" not in held and (only is None or p[0] == only)]
    assert len(claims) == min(me.room(), len(free))  # room is never left idle


@given(
    teammates=st.integers(1, 12),
    capacities=st.lists(st.integers(1, 6), min_size=1, max_size=5),
    order=st.randoms(use_true_random=False),
)
def test_workers_taking_turns_spread_a_run_by_fair_shares(
    teammates: int, capacities: list[int], order: random.Random
) -> None:
    """Workers looking one after another (in any order) each take at most a fair
    share of the run, and together host as many teammates as they have room for."""
    names = tuple(f"t{i}" for i in range(teammates))
    wanted = [Wanted("r1", names)]
    mine: dict[str, list[str]] = {f"w{i}": [] for i in range(len(capacities))}
    held: dict[str, str] = {}
    share = -(-teammates // len(capacities))
    for _round in range(teammates + 1):
        ids = list(mine)
        order.shuffle(ids)
        for worker in ids:
            me = WorkerInfo(worker, capacities[int(worker[1:])], tuple(mine[worker]))
            for run_id, name in choose_claims(me, wanted, held, peers=len(capacities)):
                held[f"{run_id}/{name}"] = worker
                mine[worker].append(f"{run_id}/{name}")
    for worker, hosted in mine.items():
        assert len(hosted) <= min(share, capacities[int(worker[1:])])
    assert len(held) == min(teammates, sum(min(share, c) for c in capacities))


def test_a_worker_left_alone_takes_a_dead_peers_share() -> None:
    wanted = [Wanted("r1", ("a", "b", "c", "d"))]
    me = WorkerInfo("w1", 4, ("r1/a", "r1/b"))
    held = {"r1/a": "w1", "r1/b": "w1"}
    assert choose_claims(me, wanted, held, peers=2) == []  # its share is two
    assert choose_claims(me, wanted, held, peers=1) == [("r1", "c"), ("r1", "d")]


def test_the_oldest_run_goes_first_in_roster_order() -> None:
    me = WorkerInfo("w1", 3)
    wanted = [Wanted("new", ("x", "y"), since=5.0), Wanted("old", ("b", "a"), since=1.0)]
    assert choose_claims(me, wanted, {}) == [("old", "b"), ("old", "a"), ("new", "x")]


def test_a_teammate_without_a_host_is_reported_once_after_the_grace_period() -> None:
    watch = HostingWatch(("alice", "bob"), grace=10.0)
    assert watch.observe(0.0, {"alice": "w1", "bob": "w2"}) == []
    assert watch.observe(1.0, {"alice": "w1", "bob": None}) == []
    assert watch.observe(10.9, {"alice": "w1", "bob": None}) == []
    assert watch.observe(11.0, {"alice": "w1", "bob": None}) == [Unhosted("bob", 1.0, "w2")]
    assert watch.observe(50.0, {"alice": "w1", "bob": None}) == []  # said once
    assert watch.reported() == {"bob"}
    assert watch.observe(51.0, {"alice": "w1", "bob": "w3"}) == []  # taken over
    assert watch.reported() == frozenset()
    assert watch.observe(52.0, {"alice": "w1"}) == []  # absent counts as nobody
    assert watch.observe(62.0, {"alice": "w1"}) == [Unhosted("bob", 52.0, "w3")]


@given(st.builds(WorkerInfo, st.text(min_size=1), st.integers(0, 9), names.map(tuple)))
def test_worker_info_round_trips_through_json(info: WorkerInfo) -> None:
    assert WorkerInfo.from_json(info.to_json()) == info


@given(
    st.lists(
        st.tuples(st.sampled_from(["r/a", "r/b", "q/a"]), st.booleans(), st.floats(0, 100)),
        max_size=40,
    )
)
def test_a_failed_start_waits_twice_as_long_each_time_in_a_row_up_to_the_cap(
    steps: list[tuple[str, bool, float]],
) -> None:
    backoff = StartBackoff(base=0.5, cap=8.0)
    in_a_row: dict[str, int] = {}
    now = 0.0
    for key, fails, later in steps:
        now += later
        if fails:
            in_a_row[key] = in_a_row.get(key, 0) + 1
            delay = backoff.failed(key, now)
            assert delay == min(8.0, 0.5 * 2 ** (in_a_row[key] - 1))
            assert not backoff.allows(key, now + delay / 2)
            assert backoff.allows(key, now + delay)
        else:
            backoff.started(key)
            in_a_row.pop(key, None)
            assert backoff.allows(key, now)


def test_a_backoff_forgets_the_runs_that_stopped_wanting_hosts() -> None:
    backoff = StartBackoff(base=1.0)
    backoff.failed("r1/alice", 0.0)
    backoff.failed("r2/bob", 0.0)
    backoff.forget_runs_but({"r2"})
    assert backoff.allows("r1/alice", 0.0)
    assert not backoff.allows("r2/bob", 0.0)


def test_a_stopped_teammate_is_hosted_anew_only_by_a_lease_taken_after_its_stop() -> None:
    """bob ended on w1 before the lead ever saw his lease: the first look after the
    stop sees w1's lease, which the worker retires only at its next heartbeat."""
    watch = HostingWatch(("alice", "bob"), grace=10.0)
    assert watch.taken_anew({"alice": "w1", "bob": None}, set()) == []  # nobody stopped
    assert watch.taken_anew({"alice": "w1", "bob": "w1"}, {"bob"}) == []  # where it ended
    assert watch.taken_anew({"alice": "w1", "bob": "w1"}, {"bob"}) == []
    assert watch.taken_anew({"alice": "w1", "bob": None}, {"bob"}) == []  # retired
    assert watch.taken_anew({"alice": "w1", "bob": "w1"}, {"bob"}) == ["bob"]  # taken again
    assert watch.taken_anew({"alice": "w1", "bob": "w1"}, set()) == []


def test_a_stopped_teammate_taken_by_another_worker_is_hosted_anew() -> None:
    watch = HostingWatch(("alice",), grace=10.0)
    assert watch.taken_anew({"alice": "w1"}, {"alice"}) == []
    assert watch.taken_anew({"alice": "w2"}, {"alice"}) == ["alice"]
    # Handed back without a host (the grace): any holder after that is new.
    assert watch.taken_anew({"alice": None}, {"alice"}) == []
    assert watch.taken_anew({"alice": "w2"}, {"alice"}) == ["alice"]
