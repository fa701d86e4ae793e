"""The board under random operations, checked against a naive model of docs/teams.md.

Two :class:`Board` objects share one directory, standing in for two
processes; each step goes through one of them at random. Time is fake. The
model is the tutorial design in memory (scan every task on every claim), so
any disagreement points at the board's incremental indexes or its catch-up.

Invariants after every step, seen through both boards:

* both boards and the model agree on every task;
* ids are ``task_1..task_n``, in creation order;
* a task is never in progress (or completed) unless every blocker is completed;
* an in-progress task has exactly one owner, who holds its lease; no claim
  ever returns a task some worker still holds;
* reopening a board (also after a torn write) gives back exactly the same state.

The same machine runs against the Redis board (:class:`RedisBoardMachine`,
through a Trio loop in a thread): two boards on one run stand for two hosts,
and a damaged record written into the stream stands for the torn write.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import pytest
from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from coterie.backends.redis.boardlog import log_key
from coterie.backends.redis.client import parse_backend
from coterie.board import (
    Board,
    InvalidTransition,
    Lease,
    NotTaskOwner,
    Task,
    TaskCycle,
    TaskStatus,
    UnknownTask,
)
from coterie.board.log import LOG_NAME
from coterie.journal import encode
from tests.board.portal import Portal

if TYPE_CHECKING:
    from tests.redis_server import RedisServer

P, R, C, F = TaskStatus.PENDING, TaskStatus.IN_PROGRESS, TaskStatus.COMPLETED, TaskStatus.FAILED
WORKERS = ["alice", "bob", "carol"]

workers = st.sampled_from(WORKERS)
which = st.integers(0, 1)
picks = st.integers(0, 10_000)  # an index into the current tasks, modulo their number
leases = st.sampled_from([1.0, 5.0, 20.0])


class Model:
    """The board's rules, naively."""

    def __init__(self) -> None:
        self.tasks: list[Task] = []

    def task(self, task_id: str) -> Task:
        return self.tasks[int(task_id[5:]) - 1]

    def put(self, task: Task) -> None:
        self.tasks[int(task.id[5:]) - 1] = task

    def ready(self, task: Task) -> bool:
        return task.status is P and all(self.task(b).status is C for b in task.blocked_by)

    def reaches(self, start: str, goal: str) -> bool:
        seen, stack = set(), [start]
        while stack:
            current = stack.pop()
            if current == goal:
                return True
            if current not in seen:
                seen.add(current)
                stack.extend(self.task(current).blocked_by)
        return False

    def expire(self, now: float) -> list[Task]:
        due = [t for t in self.tasks if t.status is R and t.lease and t.lease.expires_at <= now]
        due.sort(key=lambda t: (t.lease.expires_at, int(t.id[5:])))  # type: ignore[union-attr]
        out = []
        for t in due:
            new = attrs.evolve(t, status=P, lease=None, owner=t.owner if t.assigned else None)
            self.put(new)
            out.append(new)
        return out

    def claim(self, worker: str, now: float, lease: float) -> Task | None:
        if self.expire(now):
            event("claim: took back an expired lease first")
        for key in (worker, None):
            for t in self.tasks:
                if self.ready(t) and t.owner == key:
                    new = attrs.evolve(t, status=R, owner=worker, lease=Lease(worker, now + lease))
                    self.put(new)
                    return new
        return None

    def holder_error(self, task_id: str, worker: str) -> type[Exception] | None:
        t = self.task(task_id)
        if t.status.finished:
            return InvalidTransition
        if t.status is not R or t.owner != worker:
            return NotTaskOwner
        return None


class BoardMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="coterie-board-"))
        self.dir = self.tmp / "board"
        self.boards = [self.open_board(), self.open_board()]
        self.model = Model()
        self.now = 1000.0

    def open_board(self) -> Any:
        """One more board object on the machine's board."""
        return Board(self.dir, fsync=False)

    def damage(self) -> None:
        """A writer killed mid-append leaves part of a record behind."""
        with (self.dir / LOG_NAME).open("ab") as f:
            f.write(encode(b'{"s":1,"op":"create"}')[:-3])

    def teardown(self) -> None:
        for b in self.boards:
            b.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def pick(self, n: int) -> str:
        return self.model.tasks[n % len(self.model.tasks)].id

    def expect(self, error: type[Exception] | None, call: Any, *args: Any, **kw: Any) -> Any:
        """Run *call*; it must raise *error* (and change nothing), or succeed if None."""
        event(f"{getattr(call, '__name__', call)}: {error.__name__ if error else 'ok'}")
        if error is None:
            return call(*args, **kw)
        before = self.boards[0].list()
        try:
            call(*args, **kw)
        except error:
            assert self.boards[0].list() == before
            return None
        raise AssertionError(f"expected {error.__name__}")

    # -- rules -----------------------------------------------------------------

    @rule(
        b=which,
        blockers=st.lists(picks, max_size=3),
        owner=st.none() | workers,
    )
    def create(self, b: int, blockers: list[int], owner: str | None) -> None:
        ids = list(dict.fromkeys(self.pick(n) for n in blockers)) if self.model.tasks else []
        task = self.boards[b].create(f"s{len(self.model.tasks)}", "d", blocked_by=ids, owner=owner)
        expected = Task(
            id=f"task_{len(self.model.tasks) + 1}",
            subject=f"s{len(self.model.tasks)}",
            description="d",
            owner=owner,
            assigned=owner is not None,
            blocked_by=tuple(ids),
        )
        assert task == expected
        self.model.tasks.append(task)

    @rule(b=which, extra=st.integers(1, 3))
    def create_with_unknown_blocker(self, b: int, extra: int) -> None:
        unknown = f"task_{len(self.model.tasks) + extra}"
        self.expect(UnknownTask, self.boards[b].create, "s", "d", blocked_by=[unknown])

    @precondition(lambda self: self.model.tasks)
    @rule(b=which, n=picks, blockers=st.lists(picks, min_size=1, max_size=2))
    def add_blockers(self, b: int, n: int, blockers: list[int]) -> None:
        task_id = self.pick(n)
        task = self.model.task(task_id)
        ids = list(dict.fromkeys(self.pick(n) for n in blockers))
        fresh = [i for i in ids if i not in task.blocked_by]
        error: type[Exception] | None = None
        if task.status.finished or (fresh and task.status is not P):
            error = InvalidTransition
        elif any(self.model.reaches(i, task_id) for i in fresh):
            error = TaskCycle
        got = self.expect(error, self.boards[b].update, task_id, add_blocked_by=ids)
        if got is not None:
            self.model.put(attrs.evolve(task, blocked_by=task.blocked_by + tuple(fresh)))
            assert got == self.model.task(task_id)

    @precondition(lambda self: self.model.tasks)
    @rule(b=which, n=picks, owner=st.none() | workers)
    def assign(self, b: int, n: int, owner: str | None) -> None:
        task_id = self.pick(n)
        task = self.model.task(task_id)
        changes = owner != task.owner or (owner is not None and not task.assigned)
        error: type[Exception] | None = None
        if task.status.finished or (task.status is R and owner != task.owner):
            error = InvalidTransition
        got = self.expect(error, self.boards[b].update, task_id, owner=owner)
        if got is not None:
            if changes:
                self.model.put(attrs.evolve(task, owner=owner, assigned=owner is not None))
            assert got == self.model.task(task_id)

    @rule(b=which, worker=workers, lease=leases)
    def claim(self, b: int, worker: str, lease: float) -> None:
        held_before = {t.id: t.owner for t in self.model.tasks if t.status is R}
        expected = self.model.claim(worker, self.now, lease)
        got = self.boards[b].claim(worker, lease_seconds=lease, now=self.now)
        assert got == expected
        event("claim: a task" if got else "claim: none ready")
        if got is not None:
            # Never two owners: nobody held it, or its holder's lease had run out.
            previous = held_before.get(got.id)
            assert previous is None or self.model.task(got.id).owner == worker

    @initialize(chains=st.lists(st.integers(1, 4), max_size=4))
    def some_tasks(self, chains: list[int]) -> None:
        """Start with a few chains of dependent tasks, so that claims have work."""
        for length in chains:
            previous: list[str] = []
            for _ in range(length):
                task = self.boards[0].create("chain", "d", blocked_by=previous)
                self.model.tasks.append(task)
                previous = [task.id]

    @precondition(lambda self: any(t.status is R for t in self.model.tasks))
    @rule(b=which, n=picks, op=st.sampled_from(["complete", "complete", "fail", "release"]))
    def finish_as_holder(self, b: int, n: int, op: str) -> None:
        held = [t for t in self.model.tasks if t.status is R]
        task = held[n % len(held)]
        assert task.owner is not None
        self.finish_as(b, task.id, task.owner, op)

    @precondition(lambda self: self.model.tasks)
    @rule(b=which, n=picks, worker=workers, op=st.sampled_from(["complete", "fail", "release"]))
    def finish_any(self, b: int, n: int, worker: str, op: str) -> None:
        self.finish_as(b, self.pick(n), worker, op)

    def finish_as(self, b: int, task_id: str, worker: str, op: str) -> None:
        error = self.model.holder_error(task_id, worker)
        board = self.boards[b]
        if op == "complete":
            got = self.expect(error, board.complete, task_id, worker, "ok")
            fields: dict[str, Any] = {"status": C, "result": "ok", "lease": None}
        elif op == "fail":
            got = self.expect(error, board.fail, task_id, worker, "no")
            fields = {"status": F, "result": "no", "lease": None}
        else:
            got = self.expect(error, board.release, task_id, worker)
            fields = {"status": P, "owner": None, "assigned": False, "lease": None}
        if got is not None:
            self.model.put(attrs.evolve(self.model.task(task_id), **fields))
            assert got == self.model.task(task_id)

    @precondition(lambda self: any(t.status is R for t in self.model.tasks))
    @rule(b=which, lease=leases)
    def renew(self, b: int, lease: float) -> None:
        task = next(t for t in self.model.tasks if t.status is R)
        assert task.owner is not None
        got = self.boards[b].renew(task.id, task.owner, lease_seconds=lease, now=self.now)
        self.model.put(attrs.evolve(task, lease=Lease(task.owner, self.now + lease)))
        assert got == self.model.task(task.id)

    @rule(dt=st.sampled_from([0.5, 3.0, 10.0]))
    def advance_time(self, dt: float) -> None:
        self.now += dt

    @rule(b=which)
    def expire_leases(self, b: int) -> None:
        expired = self.model.expire(self.now)
        event("expire_leases: some expired" if expired else "expire_leases: none")
        assert self.boards[b].expire_leases(now=self.now) == expired

    @rule(b=which, torn=st.booleans())
    def reopen(self, b: int, torn: bool) -> None:
        event("reopen after a torn write" if torn else "reopen")
        before = self.boards[b].list()
        self.boards[b].close()
        if torn:
            self.damage()
        self.boards[b] = self.open_board()
        assert self.boards[b].list() == before

    # -- invariants ------------------------------------------------------------

    @invariant()
    def boards_agree_with_the_model(self) -> None:
        for board in self.boards:
            assert board.list() == self.model.tasks

    @invariant()
    def ids_are_sequential(self) -> None:
        assert [t.id for t in self.model.tasks] == [
            f"task_{n}" for n in range(1, len(self.model.tasks) + 1)
        ]

    @invariant()
    def nothing_starts_before_its_blockers_complete(self) -> None:
        for t in self.model.tasks:
            if t.status in (R, C):
                assert all(self.model.task(b).status is C for b in t.blocked_by), t

    @invariant()
    def an_in_progress_task_has_one_owner_holding_its_lease(self) -> None:
        for t in self.model.tasks:
            if t.status is R:
                assert t.owner is not None
                assert t.lease is None or t.lease.holder == t.owner
            else:
                assert t.lease is None


SETTINGS = settings(max_examples=100, stateful_step_count=50, deadline=None)
BoardMachine.TestCase.settings = SETTINGS
TestBoard = BoardMachine.TestCase


# -- the same machine on Redis -------------------------------------------------------


class RedisBoardMachine(BoardMachine):
    def __init__(self, server: RedisServer) -> None:
        self.server = server
        self.run_id = f"stateful-{uuid.uuid4().hex}"
        self.portal = Portal.start()
        self.damaged = 0
        super().__init__()

    def open_board(self) -> Any:
        return self.portal.open(self.server.url, self.run_id)

    def damage(self) -> None:
        """A record that is not one: every board skips it (and reports it)."""
        key = log_key(parse_backend(self.server.url), self.run_id)
        length = int(self.server.command("XLEN", key).split(b"\r\n")[0][1:])
        self.server.command("XADD", key, f"0-{length + 1}", "r", '{"s":1,"op":"create"}')
        self.damaged += 1

    @invariant()
    def every_board_reports_each_damaged_record_once(self) -> None:
        for board in self.boards:
            board.list()  # catch up
            assert len(board.corruptions) == self.damaged

    def teardown(self) -> None:
        super().teardown()
        self.portal.stop()


@pytest.mark.slow
def test_the_redis_board_follows_the_same_model(
    redis_session_server: RedisServer, redis_url: str
) -> None:
    run_state_machine_as_test(lambda: RedisBoardMachine(redis_session_server), settings=SETTINGS)
