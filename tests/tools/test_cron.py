"""The cron jobs: their table (coterie.tools.cronbook), the Cron* tools, and the
scheduler firing due jobs as prompts to the lead."""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING, Any

import pytest
import trio

from coterie.actors import Actor, actor_spec
from coterie.actors.lead import PROMPT, RESULT
from coterie.actors.scheduler import SCHEDULER, Scheduler
from coterie.mailbox import PostOffice
from coterie.tools import PermissionPolicy, ToolContext
from coterie.tools.cron import CronCreateTool, CronDeleteTool, CronListTool
from coterie.tools.cronbook import MAX_JOBS, RECURRING_DAYS, CronBook, load_book, save_book
from coterie.tools.cronspec import CronError
from tests.actors._support import services

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.actors import ActorContext
    from coterie.messages import Message

#: Monday 4 May 2026, 10:00:30 local time.
NOON = dt.datetime(2026, 5, 4, 10, 0, 30).timestamp()
MINUTE = 60.0


def test_a_job_is_due_at_its_next_matching_minute() -> None:
    book, job = CronBook().add("*/5 * * * *", "check", recurring=True, durable=False, now=NOON)
    assert dt.datetime.fromtimestamp(job.next_fire) == dt.datetime(2026, 5, 4, 10, 5)
    assert book.due(NOON) is None
    assert book.due(job.next_fire) == job
    assert len(job.id) == 8
    assert int(job.id, 16) >= 0


def test_a_one_shot_job_is_gone_once_fired() -> None:
    book, job = CronBook().add("7 10 * * *", "once", recurring=False, durable=False, now=NOON)
    assert book.fired(job.id, job.next_fire).jobs == ()


def test_a_recurring_job_is_due_again_and_counts_its_fires() -> None:
    book, job = CronBook().add("* * * * *", "tick", recurring=True, durable=False, now=NOON)
    assert job.next_prompt_id == f"cron.{job.id}.1"
    after = book.fired(job.id, job.next_fire + 1)
    (again,) = after.jobs
    assert again.next_fire == job.next_fire + MINUTE
    assert again.next_prompt_id == f"cron.{job.id}.2"


def test_missed_fires_are_not_replayed() -> None:
    """A run down for an hour fires its every-minute job once, then goes on from now."""
    book, job = CronBook().add("* * * * *", "tick", recurring=True, durable=False, now=NOON)
    later = job.next_fire + 3600 + 5
    (again,) = book.fired(job.id, later).jobs
    assert again.next_fire == job.next_fire + 3600 + MINUTE


def test_a_recurring_job_expires() -> None:
    book, job = CronBook().add("0 12 * * *", "daily", recurring=True, durable=False, now=NOON)
    last = NOON + RECURRING_DAYS * 86_400 - 3600
    assert book.fired(job.id, last).jobs == ()


def test_a_bad_expression_or_too_many_jobs_is_refused() -> None:
    with pytest.raises(CronError):
        CronBook().add("61 * * * *", "x", recurring=True, durable=False, now=NOON)
    book = CronBook()
    for _ in range(MAX_JOBS):
        book, _job = book.add("* * * * *", "x", recurring=True, durable=False, now=NOON)
    with pytest.raises(ValueError, match="too many"):
        book.add("* * * * *", "x", recurring=True, durable=False, now=NOON)


def test_delete_and_the_table_on_disk(tmp_path: Path) -> None:
    book, job = CronBook().add("* * * * *", "x", recurring=True, durable=True, now=NOON)
    save_book(tmp_path, book)
    assert load_book(tmp_path) == book
    assert book.delete("nope") is None
    assert book.delete(job.id) == CronBook()
    assert load_book(tmp_path / "elsewhere") == CronBook()


# -- the tools -----------------------------------------------------------------------


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    (run / "procgroups").mkdir(parents=True)
    return run


@pytest.fixture
def agent(workspace: Path, run_dir: Path) -> ToolContext:
    return ToolContext(workspace=workspace, process_groups=run_dir / "procgroups")


async def test_create_list_delete(agent: ToolContext, run_dir: Path) -> None:
    made = await CronCreateTool().run({"cron": "*/10 * * * *", "prompt": "look at CI"}, agent)
    assert not made.is_error
    (job,) = load_book(run_dir).jobs
    assert (job.cron, job.prompt, job.recurring, job.durable) == (
        "*/10 * * * *",
        "look at CI",
        True,
        False,
    )
    assert f"Scheduled recurring job {job.id}" in made.content
    listed = await CronListTool().run({}, agent)
    assert job.id in listed.content
    assert "look at CI" in listed.content
    deleted = await CronDeleteTool().run({"id": job.id}, agent)
    assert not deleted.is_error
    assert load_book(run_dir).jobs == ()
    assert (await CronListTool().run({}, agent)).content == "No scheduled jobs."


async def test_a_headless_run_is_told_the_job_will_not_fire_in_it(
    agent: ToolContext, run_dir: Path
) -> None:
    (run_dir / "config.json").write_text(json.dumps({"conversation": False, "loop": None}))
    made = await CronCreateTool().run({"cron": "* * * * *", "prompt": "x"}, agent)
    assert "will not fire in it" in made.content
    (run_dir / "config.json").write_text(json.dumps({"conversation": True}))
    made = await CronCreateTool().run({"cron": "* * * * *", "prompt": "y"}, agent)
    assert "survives a resume" in made.content


async def test_mistakes_are_error_results(agent: ToolContext) -> None:
    bad = await CronCreateTool().run({"cron": "0 0 31 2 *", "prompt": "never"}, agent)
    assert bad.is_error
    assert "never comes" in bad.content
    missing = await CronDeleteTool().run({"id": "deadbeef"}, agent)
    assert missing.is_error
    assert "deadbeef" in missing.content


async def test_an_agent_without_a_run_has_no_jobs(workspace: Path) -> None:
    result = await CronListTool().run({}, ToolContext(workspace=workspace))
    assert result.is_error


def test_they_are_deferred_and_change_only_run_state() -> None:
    for tool in (CronCreateTool(), CronListTool(), CronDeleteTool()):
        assert tool.capabilities.deferred
        assert tool.capabilities.confined


# -- the scheduler fires them ----------------------------------------------------


class FakeLead(Actor):
    """Answers every prompt at once, keeping (id, text)."""

    def __init__(self, seen: list[tuple[str, str]]) -> None:
        self.seen = seen

    async def handle(self, ctx: ActorContext, message: Message) -> None:
        if message.kind == PROMPT:
            self.seen.append((message.id, message.body["text"]))
            await ctx.reply(message, RESULT, _result(message.body["text"]))


def _result(text: str) -> dict[str, Any]:
    return {
        "result": text,
        "is_error": False,
        "subtype": "success",
        "num_turns": 1,
        "usage": {},
        "total_cost_usd": 0.0,
        "duration_ms": 0,
    }


async def _fire(run_dir: Path, book: CronBook, minutes: float) -> list[tuple[str, str]]:
    """Run the scheduler (its cron clock on Trio's, from NOON) for *minutes*."""
    save_book(run_dir, book)
    seen: list[tuple[str, str]] = []
    post = PostOffice(None)
    start = trio.current_time()

    def clock() -> float:
        return NOON + (trio.current_time() - start)

    specs = [
        actor_spec("lead", lambda _: FakeLead(seen), post),
        actor_spec(SCHEDULER, lambda _: Scheduler(run_dir, cron_clock=clock), post),
    ]
    async with services(*specs):
        await trio.sleep(minutes * MINUTE)
    return seen


async def test_a_due_job_is_a_prompt_to_the_lead(run_dir: Path, autojump_clock: object) -> None:
    book, job = CronBook().add("* * * * *", "tick", recurring=True, durable=False, now=NOON)
    seen = await _fire(run_dir, book, 2.4)  # 10:01 and 10:02
    assert seen == [(f"cron.{job.id}.1", "tick"), (f"cron.{job.id}.2", "tick")]
    (left,) = load_book(run_dir).jobs
    assert left.fires == 2


async def test_a_one_shot_job_fires_once(run_dir: Path, autojump_clock: object) -> None:
    book, job = CronBook().add("2 10 * * *", "once", recurring=False, durable=False, now=NOON)
    seen = await _fire(run_dir, book, 5)
    assert seen == [(f"cron.{job.id}.1", "once")]
    assert load_book(run_dir).jobs == ()


async def test_a_job_created_while_it_runs_is_seen(run_dir: Path, autojump_clock: object) -> None:
    """The table is read again as the scheduler waits (a CronCreate's job fires)."""
    seen: list[tuple[str, str]] = []
    post = PostOffice(None)
    start = trio.current_time()

    def clock() -> float:
        return NOON + (trio.current_time() - start)

    specs = [
        actor_spec("lead", lambda _: FakeLead(seen), post),
        actor_spec(SCHEDULER, lambda _: Scheduler(run_dir, cron_clock=clock), post),
    ]
    async with services(*specs):
        await trio.sleep(30)
        book, job = CronBook().add("* * * * *", "new", recurring=False, durable=False, now=clock())
        save_book(run_dir, book)
        await trio.sleep(2 * MINUTE)
    assert seen == [(f"cron.{job.id}.1", "new")]


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"])
def test_the_gate_lets_them_through_in_every_mode(workspace: Path, mode: str) -> None:
    """They change only the run's own schedule: never asked, plan mode included."""
    policy = PermissionPolicy.from_rules(mode=mode)  # type: ignore[arg-type]
    for tool in (CronCreateTool(), CronListTool(), CronDeleteTool()):
        decision = policy.check(tool, {}, ToolContext(workspace=workspace))
        assert decision.behavior == "allow", (tool.name, mode)
