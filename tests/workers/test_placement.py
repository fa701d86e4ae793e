"""The pure decisions: which teammates a worker claims; when a run is told."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from coterie.workers import HostingWatch, Unhosted, Wanted, WorkerInfo, choose_claims

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
