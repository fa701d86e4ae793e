"""kill -9, then resume: nothing lost, nothing done twice.

The work runs in a child process of the demo (``python -m
coterie.demos.kill9``): a supervised worker takes jobs from its durable
mailbox and records each in a ledger file of the workspace (``ledger-RUN_ID.jsonl``,
fsynced) before acknowledging it. The demo kills that process with SIGKILL
while job 4 is recorded but not yet acknowledged, then starts it again on the
same run. The jobs still in the mailbox are all there (the mailbox is a file
log, fsynced); job 4 is delivered again, since it was never acknowledged, and
the worker finds it in the ledger and acknowledges it without doing it again
(delivery is at least once; the effect is once because the worker checks
before it acts). The closing counts come from the ledger and the event log.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from coterie.actors import Actor, ActorContext, actor_spec
from coterie.demos.lab import DEFAULT_PACE, hold_lab_run, print_event
from coterie.events import EventLog
from coterie.mailbox import Durability, PostOffice
from coterie.messages import Message
from coterie.supervisors import Supervisor
from coterie.ui.follow import LogTail

if TYPE_CHECKING:
    from rich.console import Console


INTRO = """\
a child process: root ── worker (durable mailbox, 8 jobs; each recorded in a ledger)
the process is killed with SIGKILL in the middle of job 4, then started again.
"""
JOBS = 8
SLOW_JOB = 4


def ledger_path(workdir: Path, run_dir: Path) -> Path:
    """The run's ledger: a file of the workspace, one per run."""
    return workdir / f"ledger-{run_dir.name}.jsonl"


def ledger_jobs(path: Path) -> list[int]:
    """The jobs recorded in the ledger at *path*, in order (a torn last line skipped)."""
    try:
        lines = path.read_text().splitlines(keepends=True)
    except FileNotFoundError:
        return []
    return [json.loads(line)["job"] for line in lines if line.endswith("\n")]


def record(path: Path, job: int) -> None:
    """Append *job* to the ledger, durably."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (json.dumps({"job": job, "at": time.time()}) + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)


class Worker(Actor):
    """Does each job once: checks the ledger, works, records, then acknowledges."""

    def __init__(self, ledger: Path, pace: float, slow_at: int | None, done: trio.Event) -> None:
        self.ledger, self.pace, self.slow_at, self.done = ledger, pace, slow_at, done

    async def handle(self, ctx: ActorContext, message: Message) -> None:
        job = message.body["job"]
        if job in ledger_jobs(self.ledger):  # delivered again: it was not acknowledged
            text = f"job {job} delivered again, and in the ledger already: not done twice"
            ctx.emit("demo.note", step="skipped", text=text, job=job)
        else:
            await trio.sleep(self.pace)
            record(self.ledger, job)
            ctx.emit("demo.note", step="done", text=f"job {job} done and recorded", job=job)
            if job == self.slow_at:
                text = f"job {job} recorded; its last step is slow (not acknowledged yet)"
                ctx.emit("demo.note", step="slow", text=text, job=job)
                await trio.sleep(3600)  # the demo kills the process here
        if len(set(ledger_jobs(self.ledger))) >= JOBS:
            self.done.set()


async def send_jobs(run_dir: Path) -> None:
    """Put the jobs in the worker's durable mailbox (before any worker runs)."""
    (run_dir / "mailboxes" / "worker").mkdir(parents=True, exist_ok=True)
    events = EventLog(run_dir / "events.jsonl")
    post = PostOffice(run_dir / "mailboxes", durability=Durability.ALWAYS, events=events)
    for job in range(1, JOBS + 1):
        await post.send(Message.new("user", "worker", "job", {"job": job}))
    await post.aclose()
    text = f"{JOBS} jobs in the worker's durable mailbox"
    events.emit("demo.note", actor="user", step="sent", text=text, job=None)
    events.close()


async def work(run_dir: Path, workdir: Path, pace: float, slow_at: int | None) -> None:
    """The child process's run: the worker's tree, until every job is in the ledger."""
    events = EventLog(run_dir / "events.jsonl")
    post = PostOffice(run_dir / "mailboxes", durability=Durability.ALWAYS, events=events)
    done = trio.Event()
    ledger = ledger_path(workdir, run_dir)
    spec = actor_spec("worker", lambda _: Worker(ledger, pace, slow_at, done), post, events=events)
    root = Supervisor("root", [spec], events=events)
    async with trio.open_nursery() as nursery:
        await nursery.start(root.run)
        if len(set(ledger_jobs(ledger))) >= JOBS:
            done.set()
        await done.wait()
        await root.stop()
    await post.aclose()
    events.close()


async def _follow(
    console: Console,
    tail: LogTail,
    steps: Counter[str],
    proc: trio.Process,
    until: str | None,
    start: float,
) -> None:
    """Print the run's events as the child writes them (counting its notes in *steps*),
    until a ``demo.note`` of step *until* (or, with None, until the child has exited)."""
    while True:
        exited, reached = proc.poll() is not None, False
        for event in tail.read():
            steps[str(event.data.get("step"))] += event.type == "demo.note"
            print_event(console, event, start)
            reached = reached or (until is not None and event.data.get("step") == until)
        if exited or reached:
            return
        await trio.sleep(0.05)


async def _main(console: Console, workdir: Path, pace: float) -> int:
    with hold_lab_run(console, workdir, "kill9", pace, INTRO) as run:
        run_dir = run.run_dir
        tail, start = LogTail(run_dir / "events.jsonl"), time.monotonic()
        steps: Counter[str] = Counter()  # the demo.note events seen, by step
        command = [
            sys.executable,
            "-m",
            "coterie.demos.kill9",
            str(run_dir),
            str(workdir),
            str(pace),
        ]
        await send_jobs(run_dir)
        first = await trio.lowlevel.open_process([*command, str(SLOW_JOB)])
        await _follow(console, tail, steps, first, "slow", start)
        await trio.sleep(pace)
        if first.poll() is None:  # else it died on its own: the counts will say so
            first.send_signal(signal.SIGKILL)
        await first.wait()
        console.print(f"✗ kill -9: worker process {first.pid} killed", style="bold red")
        console.print("↻ starting it again on the same run", style="yellow")
        second = await trio.lowlevel.open_process(command)
        await _follow(console, tail, steps, second, None, start)
        await second.wait()
        done = Counter(ledger_jobs(ledger_path(workdir, run_dir)))
        twice = sorted(job for job, n in done.items() if n > 1)
        missing = sorted(set(range(1, JOBS + 1)) - set(done))
        console.print()
        console.print(
            f"jobs: {JOBS} sent · {len(done)} done · done twice: {len(twice)} · lost: "
            f"{len(missing)} · delivered again and skipped: {steps['skipped']}"
            " · exit codes:"
            f" {first.returncode} (killed), {second.returncode}",
            style="bold",
            soft_wrap=True,
        )
        return run.ended(0 if not twice and not missing and second.returncode == 0 else 1)


def run(console: Console, workdir: Path, pace: float | None = None) -> int:
    """Run the demo in *workdir* at *pace* seconds a step; returns the exit code."""
    return trio.run(_main, console, workdir, DEFAULT_PACE if pace is None else pace)


if __name__ == "__main__":
    # The child process: RUN_DIR WORKDIR PACE [SLOW_JOB]
    slow = int(sys.argv[4]) if len(sys.argv) > 4 else None
    trio.run(work, Path(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3]), slow)
