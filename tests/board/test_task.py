"""Task records and ids: the id pattern, and the JSON form the log stores."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from coterie.board import InvalidTaskId, Lease, Task, TaskStatus, check_task_id
from tests.strategies import actor_names

ID_PATTERN = re.compile(r"\Atask_[1-9][0-9]{0,8}\Z")

ids = st.integers(1, 999_999_999).map(lambda n: f"task_{n}")
texts = st.text(max_size=30)  # any text, lone surrogates included

tasks = st.builds(
    Task,
    id=ids,
    subject=texts,
    description=texts,
    status=st.sampled_from(TaskStatus),
    owner=st.none() | actor_names,
    blocked_by=st.lists(ids, max_size=3, unique=True).map(tuple),
    result=st.none() | texts,
    lease=st.none()
    | st.builds(Lease, actor_names, st.floats(allow_nan=False, allow_infinity=False)),
    assigned=st.booleans(),
)


@given(st.text(max_size=20) | ids)
def test_check_task_id_accepts_exactly_the_documented_pattern(value: str) -> None:
    try:
        assert check_task_id(value) == value
        accepted = True
    except InvalidTaskId:
        accepted = False
    assert accepted == bool(ID_PATTERN.match(value))


@given(tasks)
def test_a_task_survives_its_json_form(task: Task) -> None:
    assert Task.from_json(task.to_json()) == task


def test_finished_statuses() -> None:
    assert [s for s in TaskStatus if s.finished] == [TaskStatus.COMPLETED, TaskStatus.FAILED]
