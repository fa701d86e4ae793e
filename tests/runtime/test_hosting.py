"""What a worker copies of a run to host one of its teammates."""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from coterie.runs import actor_of_file, teammate_files

names = st.from_regex(r"\A[a-z][a-z0-9_]{0,11}\Z")


@given(me=names, other=names)
def test_a_worker_takes_only_its_teammates_files(me: str, other: str) -> None:
    assume(me != other)
    only = teammate_files(me)
    for rel in (f"transcripts/{me}.log", f"teammates/{me}.json", f"auto-mode/{me}.json",
                f"transcripts/{me}-sub-1a2b.log"):  # fmt: skip
        assert only(rel)
    theirs = (f"transcripts/{other}.log", f"teammates/{other}.json", f"auto-mode/{other}.json")
    for rel in (*theirs, "state.json", "config.json", "schedule.json"):
        assert not only(rel)


@given(me=names, hexa=st.from_regex(r"\A[0-9a-f]{4,12}\Z"))
def test_each_file_of_an_actor_names_it_and_the_runs_own_name_none(me: str, hexa: str) -> None:
    for rel in (f"transcripts/{me}.log", f"teammates/{me}.json", f"auto-mode/{me}.json",
                f"transcripts/{me}-sub-{hexa}.log"):  # fmt: skip
        assert actor_of_file(rel) == me
    for rel in ("state.json", "config.json", "schedule.json", "cron.json", "transcripts/",
                f"transcripts/{me}.json", f"teammates/{me}/x.json"):  # fmt: skip
        assert actor_of_file(rel) is None
