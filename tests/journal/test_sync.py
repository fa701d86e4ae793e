"""Where fsyncs run: inline while fast, in a worker thread once slow."""

from __future__ import annotations

import threading

from coterie.journal import SyncRunner


async def test_fast_jobs_run_inline_in_the_trio_thread() -> None:
    runner = SyncRunner(inline_below=10.0)
    where: list[threading.Thread] = []
    await runner.run(lambda: where.append(threading.current_thread()))
    assert where == [threading.main_thread()]
    assert (runner.inline_runs, runner.threaded_runs) == (1, 0)


async def test_a_slow_job_moves_the_next_ones_to_a_worker_thread() -> None:
    runner = SyncRunner(inline_below=1e-12)  # any real job counts as slow
    where: list[threading.Thread] = []
    await runner.run(lambda: where.append(threading.current_thread()))
    await runner.run(lambda: where.append(threading.current_thread()))
    assert where[0] is threading.main_thread()
    assert where[1] is not threading.main_thread()
    assert runner.threaded_runs == 1


async def test_a_disk_that_is_fast_again_brings_jobs_back_inline() -> None:
    runner = SyncRunner(inline_below=0.001, weight=0.5)
    runner.average = 0.004  # as after a slow spell
    for _ in range(4):
        await runner.run(lambda: None)  # instant jobs pull the average down
    assert runner.threaded_runs >= 1
    assert runner.inline


async def test_run_inline_runs_in_the_trio_thread_and_learns_the_duration() -> None:
    runner = SyncRunner(inline_below=10.0, weight=1.0)
    where: list[threading.Thread] = []
    runner.run_inline(lambda: where.append(threading.current_thread()))
    assert where == [threading.main_thread()]
    assert runner.inline_runs == 1
    assert runner.average > 0.0
