"""Team runs at scale with the scripted model: wall time, harness CPU per task, peak memory.

    python bench/team.py [--sizes 10,50,200] [--tasks-per-teammate 10] [--quick]
                         [--nofile N] [--timeout S]

For each size N, a team of N teammates does 10 tasks per teammate (N = 50:
500 tasks), in process (``trio.run`` around ``coterie.team.open_team``), in
a temporary workspace, with the project's defaults: file mailboxes
(durability ``batch``), durable transcripts, the durable board, the event
log, and the scripted model keeping its cursors in a state file (fsynced
each turn, as ``coterie team --scenario`` does). There is no switch for
"no fsync" in the library, so there is none here.

The generated scenario: the lead's first turn asks for every task at once
(one ``TaskCreate`` per task, each assigned to a teammate, round robin),
then answers; then one text turn per teammate result (as many as
``--lead-turns each`` takes; with the default, ``batched``, the lead answers
once when every task is done and the spare turns go unused). Each teammate's track does, per task, one ``Write``
of a small file (``out/<teammate>-<k>.txt``) then answers. Every turn gives
its token usage, so the scripted model does not estimate it from the whole
history.

Measured per size, each size in a fresh interpreter (so peak RSS is that
run's own):
  * wall time of ``session.query`` (until every task is done and the team is
    shut down) and tasks per second; "creates": until the lead's last
    TaskCreate returned (teammates work on the first tasks meanwhile);
    "wrap": from the last task completed on the board to the lead's answer
    (the lead's backlog of results, then the shutdown protocol);
  * process CPU (``time.process_time``: all threads, user + system) from
    opening the team to the answer, per task; the scripted model's own
    share is timed apart (choosing the turn, writing its state file) and
    subtracted to give the harness CPU. It is not negligible in small
    teams (~1.5 ms of ~9 ms per task: a JSON state file written and fsynced
    at every turn) and is never what grows;
  * peak RSS (``getrusage().ru_maxrss``: the OS's figure for the whole
    process, Python heap, interpreter and buffers; not tracemalloc) and its
    growth over the RSS before the team started; open file descriptors at
    their peak (sampled every 0.25 s);
  * where it goes: how often teammates read the whole board (``list``) and
    made a claim that found nothing, per task done (counters on the board
    object), times the CPU of one such idle wake-up measured after the run
    on the full board; and the lead's mailbox cursor at its largest with
    the CPU of one acknowledgement at that size.

Baseline, measured in the same run, in a fresh interpreter too: the same
number of tasks done by ONE agent (``coterie.open_agent``, same runtime:
actor, file mailbox, transcript, event log, scripted model with its state
file), one ``query`` per task doing the same ``Write`` then answer. The
ratio team / one agent per task is what it costs per task to split work
across a team (a lead turn per result, board claims and completions, two
messages per task, teammates waiting on the board) beyond doing the same
work in one agent loop. The one agent is sequential, so its wall time is
not a lower bound for the team's; CPU per task is the fair comparison.

--quick: 4, 8 and 16 teammates with 5 tasks each (a smoke run, ~10 s). The
full run (10, 50, 200) takes 4-5 minutes on 2 cores, most of it the
200-teammate team. The soft RLIMIT_NOFILE is raised to 4096 in the runs if
it is lower (a team holds ~3 descriptors per teammate); ``--nofile N`` sets
it instead, e.g. ``--sizes 400 --tasks-per-teammate 1 --nofile 1024`` shows
what a 1024 limit does to a team of 400.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coterie import open_agent, open_team
from coterie.board import TaskStatus
from coterie.mailbox._cursor import encode_cursor
from coterie.models import ScriptedModel, load_scenario
from coterie.team import default_names

USAGE = {"input_tokens": 100, "output_tokens": 20}
GOAL = "Do every job."
#: A team of 200 holds ~2 descriptors per actor; stay clear of a 1024 soft limit.
WANT_FDS = 4096


# -- scenarios ---------------------------------------------------------------------


def work_turns(path: str, k: int) -> list[dict[str, Any]]:
    """One task: write a small file, then answer."""
    write = {"name": "Write", "input": {"file_path": path, "content": f"job {k}\n"}}
    return [{"tool_uses": [write], "usage": USAGE}, {"text": f"wrote {path}", "usage": USAGE}]


def team_scenario(names: tuple[str, ...], per: int, directory: Path) -> Path:
    creates = []
    tracks: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for k in range(per):
        for name in names:
            path = f"out/{name}-{k}.txt"
            creates.append(
                {
                    "name": "TaskCreate",
                    "input": {
                        "subject": f"write {path}",
                        "description": f"Write {path}.",
                        "owner": name,
                    },
                }
            )
            tracks[name] += work_turns(path, k)
    lead = [{"tool_uses": creates, "usage": USAGE}, {"text": "planned", "usage": USAGE}]
    lead += [{"text": "noted", "usage": USAGE} for _ in creates]
    out = directory / "team.json"
    out.write_text(json.dumps({"name": "team-bench", "tracks": {"lead": lead, **tracks}}))
    return out


def solo_scenario(tasks: int, directory: Path) -> Path:
    track = [turn for k in range(tasks) for turn in work_turns(f"out/solo-{k}.txt", k)]
    path = directory / "solo.json"
    path.write_text(json.dumps({"name": "solo-bench", "tracks": {"lead": track}}))
    return path


# -- instruments -------------------------------------------------------------------


class TimedPlayer:
    """Stands in for the scripted model's scenario player and times it (CPU).

    The player is the scripted model's own work: choose the turn, write the
    state file. (``ScriptedModel.complete`` has a checkpoint before it, so it
    cannot be timed from outside without counting other tasks' work.)
    """

    def __init__(self, player: Any) -> None:
        self.player = player
        self.cpu = 0.0
        self.calls = 0

    @property
    def cursors(self) -> dict[str, int]:
        return dict(self.player.cursors)

    def next_turn(self, *args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return self.player.next_turn(*args, **kwargs)
        finally:
            self.cpu += time.process_time() - start
            self.calls += 1


def timed_model(scenario: Path, state: Path) -> tuple[ScriptedModel, TimedPlayer]:
    """The scripted model as ``coterie team --scenario`` builds it, with its player timed."""
    model = ScriptedModel(load_scenario(scenario), state_path=state)
    player = TimedPlayer(model._player)
    model._player = player  # type: ignore[assignment]
    return model, player


class BoardCounters:
    """Counts calls on the team's AsyncBoard (instance attributes, this process only)."""

    def __init__(self, board: Any) -> None:
        self.lists = self.claims = self.empty_claims = self.waits = 0
        self.last_create = self.last_complete = 0.0
        self.creates = self.completes = 0
        list_, claim, wait = board.list, board.claim, board.wait_for_change
        create, complete = board.create, board.complete
        self.original = (list_, claim, wait)

        async def counted_list() -> Any:
            self.lists += 1
            return await list_()

        async def counted_claim(*args: Any, **kwargs: Any) -> Any:
            task = await claim(*args, **kwargs)
            self.claims += 1
            self.empty_claims += task is None
            return task

        async def counted_wait(*args: Any, **kwargs: Any) -> Any:
            self.waits += 1
            return await wait(*args, **kwargs)

        async def counted_create(*args: Any, **kwargs: Any) -> Any:
            task = await create(*args, **kwargs)
            self.creates += 1
            self.last_create = time.perf_counter()
            return task

        async def counted_complete(*args: Any, **kwargs: Any) -> Any:
            task = await complete(*args, **kwargs)
            self.completes += 1
            self.last_complete = time.perf_counter()
            return task

        board.list, board.claim, board.wait_for_change = counted_list, counted_claim, counted_wait
        board.create, board.complete = counted_create, counted_complete


async def idle_wakeup(original: tuple[Any, ...], me: str) -> None:
    """What a waiting teammate does when the board changes and nothing is for it
    (``Teammate.run`` -> ``_next_task`` -> ``_wait``, without the mailbox parts)."""
    list_, claim, wait = original
    seq = await wait(-1)
    for task in await list_():
        if task.status is TaskStatus.IN_PROGRESS and task.owner == me:
            break
    await claim(me, lease_seconds=120.0)
    async with trio.open_nursery() as nursery:

        async def board() -> None:
            await wait(seq - 1, poll_interval=5.0)
            nursery.cancel_scope.cancel()

        nursery.start_soon(board)
        nursery.start_soon(trio.sleep_forever)


async def wakeup_cost(original: tuple[Any, ...], me: str, rounds: int = 300) -> float:
    """CPU seconds of one idle wake-up on the board as it is (every task on it)."""
    start = time.process_time()
    for _ in range(rounds):
        await idle_wakeup(original, me)
    return (time.process_time() - start) / rounds


def open_fds() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return -1


def rss_now_kb() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


async def sample(peaks: dict[str, Any], cursor: Path) -> None:
    """Every 0.25 s: open descriptors, and the lead's mailbox cursor file at its largest."""
    while True:
        peaks["fds"] = max(peaks.get("fds", 0), open_fds())
        try:
            data = cursor.read_bytes()
            if len(data) > peaks.get("cursor", 0):
                state = json.loads(data)
                listed = [*state.get("acked", []), *state.get("unacked", [])]
                peaks.update(cursor=len(data), acked={(a, b) for a, b in listed})
        except (FileNotFoundError, ValueError, KeyError):
            pass  # not written yet, or caught mid-replace
        await trio.sleep(0.25)


def set_fd_limit(nofile: int | None) -> tuple[int, int]:
    """Set the soft RLIMIT_NOFILE to *nofile*, or raise it to WANT_FDS if it is lower
    (within the hard limit); returns (before, after)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = WANT_FDS if nofile is None else nofile
    want = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if nofile is not None or (soft != resource.RLIM_INFINITY and soft < want):
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
        return soft, want
    return soft, soft


# -- one measured run (in a fresh interpreter) -----------------------------------------


async def run_team(teammates: int, per: int, root: Path, timeout: float) -> dict[str, Any]:
    names = default_names(teammates)
    tasks = teammates * per
    workspace = root / "ws"
    workspace.mkdir()
    scenario = team_scenario(names, per, root)
    model, player = timed_model(scenario, root / "scenario-state.json")
    rss0 = rss_now_kb()
    peaks: dict[str, Any] = {}
    cpu0, t0 = time.process_time(), time.perf_counter()
    async with open_team(
        workspace,
        names=names,
        model=model,
        permission_mode="bypassPermissions",
        user_settings=root / "no-settings.json",
    ) as session:
        assert session.board is not None
        counters = BoardCounters(session.board)
        cursor = session.run_dir / "mailboxes" / "lead" / "cursor"
        async with trio.open_nursery() as nursery:
            nursery.start_soon(sample, peaks, cursor)
            t1 = time.perf_counter()
            with trio.fail_after(timeout):
                result = await session.query(GOAL)
            t2 = time.perf_counter()
            cpu = time.process_time() - cpu0
            nursery.cancel_scope.cancel()
        board = await session.board.list()
        wakeup_s = await wakeup_cost(counters.original, names[0])
    t3 = time.perf_counter()
    peaks["fds"] = max(peaks.get("fds", 0), open_fds())
    assert not result.is_error, result
    done = [t for t in board if t.status is TaskStatus.COMPLETED]
    assert len(board) == len(done) == tasks, (len(board), len(done), tasks)
    written = list((workspace / "out").iterdir())
    assert len(written) == tasks, (len(written), tasks)
    # The CPU one acknowledgement by the lead costs at the cursor's peak (the
    # JSON of encode_cursor for the positions it listed then; not the fsync).
    acked = peaks.get("acked", set())
    low = min(acked, default=(0, 0))
    c = time.perf_counter()
    for _ in range(20):
        encode_cursor(low, acked)
    encode_ms = (time.perf_counter() - c) / 20 * 1e3
    return {
        "kind": "team",
        "teammates": teammates,
        "tasks": tasks,
        "open_s": t1 - t0,
        "query_s": t2 - t1,
        "close_s": t3 - t2,
        "creates_s": counters.last_create - t1,
        "wrapup_s": t2 - counters.last_complete,
        "cpu_s": cpu,
        "model_cpu_s": player.cpu,
        "model_calls": player.calls,
        "rss0_kb": rss0,
        "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "fds": peaks["fds"],
        "lists": counters.lists,
        "claims": counters.claims,
        "empty_claims": counters.empty_claims,
        "waits": counters.waits,
        "wakeup_ms": wakeup_s * 1e3,
        "cursor_peak_b": peaks.get("cursor", 0),
        "cursor_positions": len(acked),
        "ack_encode_ms": encode_ms,
    }


async def run_solo(tasks: int, root: Path, timeout: float) -> dict[str, Any]:
    workspace = root / "ws"
    workspace.mkdir()
    scenario = solo_scenario(tasks, root)
    model, player = timed_model(scenario, root / "scenario-state.json")
    rss0 = rss_now_kb()
    cpu0, t0 = time.process_time(), time.perf_counter()
    async with open_agent(
        workspace,
        model=model,
        permission_mode="bypassPermissions",
        user_settings=root / "no-settings.json",
    ) as session:
        t1 = time.perf_counter()
        with trio.fail_after(timeout):
            for k in range(tasks):
                result = await session.query(f"Your task {k}: write out/solo-{k}.txt")
                assert not result.is_error, result
        t2 = time.perf_counter()
        cpu = time.process_time() - cpu0
    t3 = time.perf_counter()
    assert len(list((workspace / "out").iterdir())) == tasks
    return {
        "kind": "solo",
        "tasks": tasks,
        "open_s": t1 - t0,
        "query_s": t2 - t1,
        "close_s": t3 - t2,
        "cpu_s": cpu,
        "model_cpu_s": player.cpu,
        "model_calls": player.calls,
        "rss0_kb": rss0,
        "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "fds": open_fds(),
    }


def child(kind: str, size: int, per: int, timeout: float, nofile: int | None) -> None:
    limits = set_fd_limit(nofile)
    with tempfile.TemporaryDirectory(prefix=f"coterie-bench-team-{kind}-") as tmp:
        if kind == "team":
            out = trio.run(run_team, size, per, Path(tmp), timeout)
        else:
            out = trio.run(run_solo, size * per, Path(tmp), timeout)
    out["nofile"] = limits
    print(json.dumps(out))


def measure(kind: str, size: int, per: int, timeout: float, nofile: int | None) -> dict[str, Any]:
    """One run in a fresh interpreter (its own peak RSS)."""
    limit = [] if nofile is None else ["--nofile", str(nofile)]
    done = subprocess.run(
        [sys.executable, __file__, "--child", kind, "--size", str(size),
         "--tasks-per-teammate", str(per), "--timeout", str(timeout), *limit],
        capture_output=True,
        text=True,
    )  # fmt: skip
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-4000:])
        raise SystemExit(f"{kind} run with {size} teammates failed (exit {done.returncode})")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


# -- the report ----------------------------------------------------------------------


def per_task_ms(run: dict[str, Any], key: str) -> float:
    return float(run[key]) / float(run["tasks"]) * 1e3


def harness_ms(run: dict[str, Any]) -> float:
    return float(run["cpu_s"] - run["model_cpu_s"]) / float(run["tasks"]) * 1e3


def growth(sizes: list[int], values: list[float]) -> str:
    return "  ".join(
        f"{b}/{a}: {vb / va:.2f}x"
        for a, b, va, vb in zip(sizes, sizes[1:], values, values[1:], strict=False)
        if va > 0
    )


def report(
    sizes: list[int], per: int, teams: list[dict[str, Any]], solos: list[dict[str, Any]]
) -> None:
    print()
    head = (
        f"{'teammates':>9} {'tasks':>6} {'wall s':>8} {'tasks/s':>8} {'creates s':>9} {'wrap s':>7}"
        f" {'CPU ms/task':>11} {'model':>6} {'harness':>8} {'peak RSS MB':>11} {'+MB':>6} {'fds':>5}"
    )
    print(head)
    print("-" * len(head))
    for run in teams:
        print(
            f"{run['teammates']:>9} {run['tasks']:>6} {run['query_s']:>8.2f} {run['tasks'] / run['query_s']:>8.1f}"
            f" {run['creates_s']:>9.2f} {run['wrapup_s']:>7.2f}"
            f" {per_task_ms(run, 'cpu_s'):>11.2f} {per_task_ms(run, 'model_cpu_s'):>6.2f} {harness_ms(run):>8.2f}"
            f" {run['maxrss_kb'] / 1024:>11.1f} {(run['maxrss_kb'] - run['rss0_kb']) / 1024:>6.1f} {run['fds']:>5}"
        )
    print()
    print(
        "baseline: the same tasks done by ONE agent (open_agent, one query per task), same runtime"
    )
    head = f"{'tasks':>6} {'wall s':>8} {'tasks/s':>8} {'CPU ms/task':>11} {'model':>6} {'harness':>8} {'peak RSS MB':>11}   team/one agent (harness CPU per task)"
    print(head)
    print("-" * len(head))
    for run, team in zip(solos, teams, strict=True):
        print(
            f"{run['tasks']:>6} {run['query_s']:>8.2f} {run['tasks'] / run['query_s']:>8.1f}"
            f" {per_task_ms(run, 'cpu_s'):>11.2f} {per_task_ms(run, 'model_cpu_s'):>6.2f} {harness_ms(run):>8.2f}"
            f" {run['maxrss_kb'] / 1024:>11.1f}   {harness_ms(team) / harness_ms(run):6.2f}x"
        )
    print()
    print("growth with team size (per task unless said):")
    print(f"  harness CPU/task   {growth(sizes, [harness_ms(r) for r in teams])}")
    print(f"  wall time/task     {growth(sizes, [r['query_s'] / r['tasks'] for r in teams])}")
    print(f"  peak RSS (total)   {growth(sizes, [float(r['maxrss_kb']) for r in teams])}")
    print(
        f"  RSS growth/teammate {growth(sizes, [(r['maxrss_kb'] - r['rss0_kb']) / r['teammates'] for r in teams])}"
    )
    print(f"  one agent CPU/task {growth(sizes, [harness_ms(r) for r in solos])}")
    print()
    print("where it goes (team runs):")
    head = (
        f"{'teammates':>9} {'board reads':>11} {'empty claims':>12} {'idle wake-up':>12}"
        f" {'= wake-ups':>10} {'lead cursor':>11} {'one ack':>8} {'= acks':>7}"
    )
    print(head)
    print(
        f"{'':>9} {'per task':>11} {'per task':>12} {'CPU ms':>12} {'% CPU':>10} {'peak KB':>11}"
        f" {'CPU ms':>8} {'% CPU':>7}"
    )
    print("-" * len(head))
    for run in teams:
        tasks = run["tasks"]
        harness = run["cpu_s"] - run["model_cpu_s"]
        herd = run["empty_claims"] * run["wakeup_ms"] / 1e3
        # Cursor rewrites grow linearly to their peak: about half the peak cost per ack.
        acks = run["cursor_positions"] * run["ack_encode_ms"] / 2 / 1e3
        print(
            f"{run['teammates']:>9} {run['lists'] / tasks:>11.1f} {run['empty_claims'] / tasks:>12.1f}"
            f" {run['wakeup_ms']:>12.3f} {herd / harness:>10.0%} {run['cursor_peak_b'] / 1024:>11.1f}"
            f" {run['ack_encode_ms']:>8.2f} {acks / harness:>7.1%}"
        )
    print()
    print(
        "  A board change wakes only the idle teammates it concerns (a task's owner, everyone\n"
        "  for unassigned work): a woken teammate that finds nothing makes an empty claim.\n"
        "  'idle wake-up' is the CPU of one such wake-up, measured after the run on the full\n"
        "  board, and '= wake-ups' that times the empty claims, as a share of the harness CPU.\n"
        "  Each acknowledgement rewrites (and fsyncs) the lead's mailbox cursor, which lists\n"
        "  the positions it must (the holes left by unacknowledged messages, or those\n"
        "  acknowledged past the cursor, whichever is fewer): 'lead cursor' is its largest\n"
        "  size, 'one ack' the CPU of encoding it then (no fsync), '= acks' an estimate of\n"
        "  them all (half the peak cost each, times the acknowledgements)."
    )
    model = sum(r["model_cpu_s"] for r in teams) / sum(r["cpu_s"] for r in teams)
    soft = teams[-1]["nofile"]
    print()
    print(
        f"CPU is time.process_time() of the whole process (all threads, user + system); the\n"
        f"scripted model's own share (choosing turns, writing its state file) is {model:.1%} of the\n"
        f"teams' CPU and is subtracted in 'harness'. Peak RSS is getrusage ru_maxrss of a fresh\n"
        f"process per run; '+MB' is its growth over the RSS just before the team started.\n"
        f"RLIMIT_NOFILE soft limit: {soft[0]}"
        + (f", set to {soft[1]} in the runs." if soft[1] != soft[0] else " (not changed).")
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sizes", default=None, help="teammates per run, comma separated (10,50,200)"
    )
    parser.add_argument("--tasks-per-teammate", type=int, default=None, help="(10)")
    parser.add_argument("--quick", action="store_true", help="4, 8, 16 teammates, 5 tasks each")
    parser.add_argument("--timeout", type=float, default=1800.0, help="per run, seconds")
    parser.add_argument(
        "--nofile",
        type=int,
        default=None,
        help=f"soft RLIMIT_NOFILE for the runs (default: raised to {WANT_FDS} if lower)",
    )
    parser.add_argument("--child", choices=["team", "solo"], help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    per = args.tasks_per_teammate or (5 if args.quick else 10)
    if args.child:
        child(args.child, args.size, per, args.timeout, args.nofile)
        return
    sizes = [int(s) for s in (args.sizes or ("4,8,16" if args.quick else "10,50,200")).split(",")]
    print(
        f"teams of {', '.join(map(str, sizes))} teammates, {per} tasks each; scripted model;"
        f" {os.cpu_count()} CPUs; each run in a fresh interpreter"
    )
    teams, solos = [], []
    for size in sizes:
        # Interleaved, so that a burst of load elsewhere hits both.
        solos.append(measure("solo", size, per, args.timeout, args.nofile))
        teams.append(run := measure("team", size, per, args.timeout, args.nofile))
        print(
            f"  {size} teammates: {run['tasks']} tasks in {run['query_s']:.1f} s;"
            f" one agent: {solos[-1]['query_s']:.1f} s",
            flush=True,
        )
    report(sizes, per, teams, solos)


if __name__ == "__main__":
    # The runs' state goes to a coterie home of the bench's own, not the user's
    # (child processes inherit it).
    os.environ.setdefault("COTERIE_HOME", tempfile.mkdtemp(prefix="coterie-bench-home-"))
    main()
