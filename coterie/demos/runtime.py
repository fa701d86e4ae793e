"""The runtime demo: supervised actors passing jobs through durable mailboxes.

A planner hands six small jobs to two workers, alice and bob; a recorder
collects the results. bob has a (deliberate) bug that crashes him in the
middle of his second job. His supervisor restarts him, the job he had not
acknowledged is delivered to him again, and the run finishes with every
result in. Everything printed comes from the run's event log; the run is
recorded completed (or failed, with a job missing) when the demo ends.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import trio
import trio.lowlevel
from rich.tree import Tree

from coterie.actors import Actor, ActorContext, actor_spec
from coterie.demos.record import demo_run
from coterie.events import Event, EventLog
from coterie.mailbox import Durability, PostOffice
from coterie.messages import Message
from coterie.supervisors import Strategy, Supervisor

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import Console

JOBS = [
    "the quick brown fox jumps over the lazy dog",
    "actors share nothing",
    "let it crash",
    "a supervisor restarts what fails",
    "mailboxes survive kill -9",
    "trio keeps concurrency structured",
]
WORKERS = ["alice", "bob"]


class Planner(Actor):
    """Splits the work, then waits for the recorder to say all is done."""

    def __init__(self, done: trio.Event) -> None:
        self.done = done

    async def handle(self, ctx: ActorContext, message: Message) -> None:
        if message.kind == "plan":
            for i, job in enumerate(JOBS, start=1):
                worker = WORKERS[(i - 1) % len(WORKERS)]
                await ctx.send(worker, "job", {"job": i, "text": job})
                ctx.emit("demo.sent", to=worker, job=i, text=job)
        elif message.kind == "all_done":
            self.done.set()


class Worker(Actor):
    """Does jobs; bob's second job trips a bug the first time round."""

    def __init__(self, bugs: set[int], pace: float) -> None:
        self.bugs, self.pace = bugs, pace

    async def handle(self, ctx: ActorContext, message: Message) -> None:
        job = message.body["job"]
        if ctx.redelivered:
            ctx.emit("demo.redelivered", job=job)
        await trio.sleep(self.pace)  # the "work"
        if job in self.bugs:
            self.bugs.discard(job)
            raise RuntimeError(f"simulated bug while doing job {job}")
        words = len(message.body["text"].split())
        await ctx.send("recorder", "result", {"job": job, "words": words, "by": ctx.name})


class Recorder(Actor):
    """Collects results; tells the planner when every job has one."""

    def __init__(self, results: dict[int, dict[str, Any]]) -> None:
        self.results = results

    async def handle(self, ctx: ActorContext, message: Message) -> None:
        body = message.body
        self.results[body["job"]] = body
        ctx.emit("demo.result", job=body["job"], words=body["words"], by=body["by"])
        if len(self.results) == len(JOBS):
            await ctx.send("planner", "all_done", {})


def _describe(event: Event) -> tuple[str, str] | None:
    """(who, what) for the events worth showing, else None."""
    d = event.data
    actor = d.get("actor") or d.get("supervisor") or "?"
    match event.type:
        case "actor.started" if d.get("attempt", 0) == 0:
            return actor, "[green]started[/]"
        case "actor.started":
            return actor, f"[green]running again[/] (incarnation {d['attempt'] + 1})"
        case "actor.crashed":
            return actor, f"[bold red]CRASHED[/]: {d['reason']}"
        case "actor.restarted":
            return d["supervisor"], f"[yellow]restarting {actor}[/] (attempt {d['attempt']})"
        case "demo.sent":
            return "planner", f"→ {d['to']}: job {d['job']}, count the words of '{d['text']}'"
        case "demo.redelivered":
            return actor, (
                f"[yellow]job {d['job']} delivered again[/]: it was not acknowledged "
                "when the crash happened"
            )
        case "demo.result":
            return "recorder", f"← job {d['job']} from {d['by']}: {d['words']} words"
        case "actor.stopped" | "actor.exited":
            return actor, "[dim]stopped[/]"
        case "supervisor.gave_up" | "supervisor.escalated":
            return actor, f"[bold red]{event.type}[/]: {d.get('reason')}"
    return None


async def _main(console: Console, workdir: Path, pace: float) -> int:
    with demo_run(workdir, "runtime", pace=pace) as run:
        return run.ended(await _play(console, run.run_id, run.run_dir, pace))


async def _play(console: Console, run_id: str, run_dir: Path, pace: float) -> int:
    """The demo itself, in its (held) run *run_dir*; returns its exit code."""
    events = EventLog(run_dir / "events.jsonl")
    post = PostOffice(run_dir / "mailboxes", durability=Durability.BATCH, events=events)
    done = trio.Event()
    results: dict[int, dict[str, Any]] = {}
    bugs = {4}  # bob's second job (jobs alternate alice, bob, alice, bob, ...)

    services = Supervisor(
        "services",
        [actor_spec("recorder", lambda _: Recorder(results), post, events=events)],
        events=events,
    )
    team = Supervisor(
        "team",
        [
            actor_spec("planner", lambda _: Planner(done), post, events=events),
            *(actor_spec(w, lambda _: Worker(bugs, pace), post, events=events) for w in WORKERS),
        ],
        strategy=Strategy.ONE_FOR_ONE,
        max_restarts=3,
        period=5.0,
        events=events,
    )
    root = Supervisor(
        "root", [services.as_child(), team.as_child()], strategy=Strategy.ONE_FOR_ALL, events=events
    )

    tree = Tree("[bold]root[/] (one_for_all)")
    tree.add("[bold]services[/] (one_for_one): recorder")
    tree.add("[bold]team[/] (one_for_one): planner, alice, bob")
    console.print(f"[bold]coterie demo[/] — run [cyan]{run_id}[/]")
    console.print(f"run directory: {run_dir}")
    console.print(tree)
    console.print()

    t0 = time.monotonic()
    with events.subscribe() as feed:
        async with trio.open_nursery() as nursery:

            async def show() -> None:
                async for event in feed:
                    described = _describe(event)
                    if described:
                        who, what = described
                        console.print(f"{time.monotonic() - t0:6.2f}s  [bold]{who:9}[/] {what}")

            nursery.start_soon(show)
            await nursery.start(root.run)
            # The "user" asks the planner for the work; it is a message like any other.
            await post.send(Message.new("user", "planner", "plan"))
            with trio.move_on_after(30):
                await done.wait()
            await root.stop()
            await trio.lowlevel.checkpoint()
            nursery.cancel_scope.cancel()
    await post.aclose()
    events.close()

    crashes = sum(1 for e in events.history if e.type == "actor.crashed")
    restarts = sum(1 for e in events.history if e.type == "actor.restarted")
    console.print()
    ok = len(results) == len(JOBS)
    status = "[green]all jobs done[/]" if ok else "[red]jobs missing[/]"
    console.print(
        f"{status}: {len(results)}/{len(JOBS)} results, {crashes} crash, {restarts} restart, "
        f"{time.monotonic() - t0:.2f}s"
    )
    console.print(f"event log: {run_dir / 'events.jsonl'}")
    return 0 if ok else 1


#: Seconds each job takes when ``--pace`` is not given.
DEFAULT_PACE = 0.15


def run(console: Console, workdir: Path, pace: float | None = None) -> int:
    """Run the demo in *workdir* (each job taking *pace* seconds); returns the exit code."""
    return trio.run(_main, console, workdir, DEFAULT_PACE if pace is None else pace)
