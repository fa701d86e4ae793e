"""Every refusal of the board is a BoardRefusal; storage trouble is a BoardError, not one."""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from coterie.backends.redis.boardlog import log_key
from coterie.backends.redis.client import parse_backend
from coterie.board import (
    UNSET,
    Board,
    BoardError,
    BoardRefusal,
    InvalidOwnerName,
    InvalidTaskField,
    InvalidTaskId,
    InvalidTransition,
    NotTaskOwner,
    TaskCycle,
    UnknownTask,
)
from coterie.errors import CoterieError, InvalidActorName
from tests.board.portal import Portal

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from contextlib import AbstractAsyncContextManager

    from coterie.backends.redis import RedisBoard
    from coterie.board import AsyncBoard
    from tests.redis_server import RedisServer

    Opener = Callable[[], AbstractAsyncContextManager[AsyncBoard | RedisBoard]]

REFUSALS: dict[type[BoardRefusal], type[Exception]] = {
    InvalidTaskId: ValueError,
    UnknownTask: LookupError,
    InvalidTaskField: ValueError,
    InvalidOwnerName: ValueError,
    TaskCycle: ValueError,
    InvalidTransition: ValueError,
    NotTaskOwner: PermissionError,
}


@pytest.mark.parametrize(("refusal", "builtin"), REFUSALS.items())
def test_each_refusal_is_a_board_refusal_and_keeps_its_builtin_base(
    refusal: type[BoardRefusal], builtin: type[Exception]
) -> None:
    assert issubclass(refusal, BoardRefusal)
    assert issubclass(refusal, CoterieError)
    assert issubclass(refusal, builtin)


def test_a_storage_error_is_not_a_refusal() -> None:
    assert not issubclass(BoardError, BoardRefusal)
    assert issubclass(BoardError, OSError)
    assert issubclass(BoardError, CoterieError)


def test_a_bad_owner_name_is_still_an_invalid_actor_name(board: Board) -> None:
    """Handlers written for ``InvalidActorName`` keep catching it, with the same message."""
    with pytest.raises(InvalidActorName, match="invalid actor name 'Bad Name'") as caught:
        board.create("s", "d", owner="Bad Name")
    assert isinstance(caught.value, BoardRefusal)


def test_finishing_a_task_handed_back_is_refused_not_an_error(board: Board) -> None:
    """The teammate's case: it released (or failed) its task, then its turn ended."""
    board.create("s", "d")
    task = board.claim("alice", lease_seconds=30)
    assert task is not None
    board.release(task.id, "alice")
    with pytest.raises(BoardRefusal):
        board.complete(task.id, "alice", "done")
    board.claim("alice", lease_seconds=30)
    board.fail(task.id, "alice", "cannot")
    with pytest.raises(BoardRefusal):
        board.fail(task.id, "alice", "failed")


async def test_the_async_board_raises_the_same_refusals(open_async_board: Opener) -> None:
    async with open_async_board() as board:
        task = await board.create("s", "d")
        with pytest.raises(BoardRefusal):
            await board.renew(task.id, "alice", lease_seconds=5)
        with pytest.raises(BoardRefusal):
            await board.update(task.id, status="completed")


def test_a_closed_board_raises_a_board_error(board_dir: Path) -> None:
    board = Board(board_dir, fsync=False)
    board.close()
    with pytest.raises(BoardError) as caught:
        board.get("task_1")
    assert not isinstance(caught.value, BoardRefusal)


# -- every operation, with arguments good and bad ---------------------------------


def mostly(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """*good* nine times in ten: requests that pass the argument checks reach the rules."""
    return st.integers(0, 9).flatmap(lambda n: bad if n == 0 else good)


odd = st.sampled_from([None, 3, 1.5, True, ["task_1"], {"a": 1}])
task_ids = mostly(
    st.sampled_from(["task_1", "task_2", "task_3"]),
    st.sampled_from(["task_0", "task_01", "task_9", "bogus", "", "TASK_1"]) | odd,
)
names = mostly(st.sampled_from(["alice", "bob"]), st.sampled_from(["", "Bob", "-x", "a b"]) | odd)
owners = mostly(st.sampled_from(["alice", "bob", None]), st.sampled_from(["", "Bob"]) | odd)
texts = mostly(st.text(min_size=1, max_size=4), st.just("") | odd)
statuses = mostly(
    st.sampled_from(["pending", "in_progress", "completed", "failed", None]),
    st.sampled_from(["done", "PENDING", 3, True]),
)
leases = mostly(
    st.sampled_from([1.0, 30.0]), st.sampled_from([0, -1.0, float("nan"), float("inf"), "5", True])
)
times = mostly(st.sampled_from([0.0, 10.0, 100.0]), st.sampled_from([float("nan"), "now", True]))
blockers = mostly(st.lists(task_ids, max_size=2), st.sampled_from(["task_1", None, [3]]))

Op = tuple[str, "Callable[[Board], Any]"]


def op(name: str, fn: Callable[[Board], Any]) -> Op:
    return name, fn


operations = st.one_of(
    st.builds(
        lambda s, d, b, o: op("create", lambda x: x.create(s, d, b, o)),
        texts,
        texts,
        blockers,
        owners,
    ),
    st.builds(
        lambda i, s, o, b, r, ls, t: op(
            "update",
            lambda x: x.update(
                i, status=s, owner=o, add_blocked_by=b, result=r, lease_seconds=ls, now=t
            ),
        ),
        task_ids,
        st.none() | statuses,
        st.just(UNSET) | owners,
        st.just(()) | blockers,
        st.none() | texts,
        mostly(st.none(), leases),
        st.none() | times,
    ),
    st.builds(
        lambda w, ls, t: op("claim", lambda x: x.claim(w, lease_seconds=ls, now=t)),
        names,
        leases,
        times,
    ),
    st.builds(
        lambda i, w, ls, t: op("renew", lambda x: x.renew(i, w, lease_seconds=ls, now=t)),
        task_ids,
        names,
        leases,
        times,
    ),
    st.builds(
        lambda i, w, r: op("complete", lambda x: x.complete(i, w, r)), task_ids, names, texts
    ),
    st.builds(lambda i, w, r: op("fail", lambda x: x.fail(i, w, r)), task_ids, names, texts),
    st.builds(lambda i, w: op("release", lambda x: x.release(i, w)), task_ids, names),
    st.builds(lambda i: op("get", lambda x: x.get(i)), task_ids),
    st.builds(lambda t: op("expire_leases", lambda x: x.expire_leases(t)), times | st.none()),
)


def check_refusals(board: Any, steps: list[Op], log: Callable[[], object]) -> None:
    """Run *steps* on a board of three tasks; *log* reads its log, to compare."""
    # Three tasks to act on: one ready, one blocked by it, one assigned.
    board.create("a", "d")
    board.create("b", "d", blocked_by=["task_1"])
    board.create("c", "d", owner="bob")
    for name, step in steps:
        before = log()
        try:
            step(board)
        except BoardRefusal as exc:
            event(f"{name}: {type(exc).__name__}")
            assert log() == before, f"{name} was refused but wrote"
        except Exception as exc:
            raise AssertionError(f"{name} raised {exc!r}, not a BoardRefusal") from exc


@settings(max_examples=200, deadline=None)
@given(st.lists(operations, min_size=1, max_size=25))
def test_every_refusal_is_a_board_refusal_and_writes_nothing(steps: list[Op]) -> None:
    """Whatever the board raises for a request is a BoardRefusal, and the log is unchanged."""
    with tempfile.TemporaryDirectory() as tmp, Board(Path(tmp) / "board", fsync=False) as board:
        log = Path(tmp) / "board" / "board.log"
        check_refusals(board, steps, log.read_bytes)


@pytest.fixture(scope="module")
def portal() -> Iterator[Portal]:
    running = Portal.start()
    yield running
    running.stop()


@pytest.mark.slow
def test_every_refusal_on_redis_is_a_board_refusal_and_writes_nothing(
    redis_session_server: RedisServer, redis_url: str, portal: Portal
) -> None:
    """The same, on the Redis board: the stream does not grow on a refusal."""

    @settings(max_examples=100, deadline=None)
    @given(st.lists(operations, min_size=1, max_size=25))
    def check(steps: list[Op]) -> None:
        run_id = f"refusals-{uuid.uuid4().hex}"
        key = log_key(parse_backend(redis_url), run_id)
        board = portal.open(redis_url, run_id)
        try:
            check_refusals(board, steps, lambda: redis_session_server.command("XLEN", key))
        finally:
            board.close()

    check()
