"""Chaos rounds on team runs: one random fault per round, then resume, then the invariants.

    python bench/chaos.py [--rounds 50] [--seed S] [--paths scripted,sdk]
                          [--faults kill9,sigint,sigterm,crash,model,cut,silent,enospc,damage]
                          [--schedule delay,tool,in_tool,restart] [--redraws 3]
                          [--backend files|redis]
                          [--tasks 4] [--resumes 3] [--timeout 120] [--keep] [--source DIR]
                          [--json FILE] [--mutants [--mutant-rounds 12] [--mutant-names A,B]]

The harness is split: ``chaos_plan`` (the scenario), ``chaos_schedule`` (when
a fault fires, sans-io), ``chaos_round`` (the processes and the firing loop),
``chaos_faults`` (one round), ``chaos_checks`` (the invariants),
``chaos_campaign`` (rounds, re-draws, the table), ``chaos_redis`` (a Redis
server of the round's own and its faults) and ``chaos_mutants``
(``--mutants``).

Each round is a real ``coterie team -p`` run (a CLI subprocess, in a fresh
temporary workspace with its own ``HOME`` and ``COTERIE_HOME``) on a generated
scenario: the lead creates ``--tasks`` tasks, alternately for alice and bob;
per task a teammate does two Bash steps and one Write, then answers. Each
Bash step appends its own unique line to ``steps.log`` (or fails, if it
cannot: a full disk) and its shell's pid
(its process group) to ``pgids.log``, leaves a ``sleep 30`` running in the
background of its group and sleeps a little in the foreground.

Rounds alternate between two paths to the model (``--paths``): ``scripted``
(``--scenario FILE``, the scripted model in the process) and ``sdk`` (the
real ``anthropic`` SDK, as for real use: no ``--scenario``, a dummy
``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL`` pointing at a ``coterie
mock-server`` the round starts on 127.0.0.1 and keeps across resumes, and
``COTERIE_STREAM_IDLE_TIMEOUT=2``). The rounds go through every (fault,
path) pair in turn; one fault is injected per round. A signal, a full disk or a
damaged file fires at a moment the run's own events choose (``--schedule``,
see ``chaos_schedule``): after a random delay, right after the k-th tool call
started, inside a teammate's k-th Bash step (after its side effect, before
its result), or during a teammate's restart (after its ``actor.crashed``).
A round whose fault did not land inside a live run (before the run existed,
ignored, the run finished first) is counted apart and drawn again (at most
``--redraws`` times). The faults:

  kill9, sigint, sigterm
      the signal is sent to the coterie process when its trigger is due (if
      the run finished first, the fault counts as not injected; a signal that
      kills Python before the run is recorded is a kill at startup: the
      command is started over, and the fault did not land); then
      ``coterie resume RUN -p`` until the run ends (at most ``--resumes``);
  crash
      a scenario ``crash`` turn at a random place of a random track (an
      actor crash: its supervisor restarts it);
  model
      a scenario ``error`` turn (529 overloaded or 429 rate limit) at a random
      place of a random track: on the scripted model (no retries) the
      agent's turn fails; through the SDK the client retries it;
  cut, silent (sdk only)
      a random reply turn gets a scenario ``fault``: the mock server cuts its
      stream after 0-8 SSE events, or sends nothing, the first time; the
      client's retry gets it whole;
  enospc
      the round's directory is a small tmpfs (``mount -t tmpfs``), filled
      (a filler file) when its trigger is due; the run must exit 1 saying "No
      space left on device"; then the filler is removed and the run resumed;
  damage
      kill -9 when its trigger is due (the delay counted from the first
      transcript on), then (unless
      ``state.json`` says the run had finished) one durable file of the run is
      damaged (the board log, a mailbox segment, a transcript or
      ``state.json``; a flipped bit, a truncated tail, zeroed or deleted),
      then resumed;
  redis-restart, redis-oom, redis-partition, redis-slow (asked for by
  ``--faults``; not in the default set)
      the round runs on a ``redis-server`` of its own (``COTERIE_BACKEND``);
      when the trigger is due the server is killed and started again empty
      (no AOF), or refuses every write (``maxmemory 1``, ``noeviction``) for
      0.5-3 s, or the link to it (a proxy, ``chaos_proxy``) goes dark for
      0.5-8 s, or passes each chunk 20-150 ms late for 1-5 s; the run must
      complete, or stop with one line and be resumed (see ``chaos_redis``).
      ``--backend redis`` runs every round on a Redis server of its own.

The invariants checked after each round (any failure is a violation):

  * the run completed (exit 0) or ended with a clear error: exit 1 or 2 and a
    line saying why (on stderr, or as the result: the tasks that did not
    finish, the model call that failed, the damaged file), the run not
    listed as completed; a signal's own exit code is what it must be (130
    SIGINT, 143 SIGTERM), a full disk exits 1 with its line, and no process
    hangs (``--timeout``);
  * no stderr of any process of the round (the mock server's included)
    holds a traceback;
  * no task on the board (its log, ``coterie.board.read_log``) completed
    twice; on success every task is completed (its last status in the log),
    each exactly once, the lead heard of each, the lead's TaskCreate calls
    all created a task or were reported to it as cut short, and the result
    printed is the lead's last answer as its transcript holds it;
  * no Bash step's line twice in ``steps.log`` (no tool side effect twice),
    and no agent told a Bash step was never run when its line is there;
  * no task claimed (board log) while in progress under another worker;
  * never a success over lost work: on success every step of every teammate
    is in its transcript, and each either had its effect (the line, the
    written file) or was reported to the teammate as failed (interrupted);
  * no acknowledged message lost: the mailboxes are sampled during the round
    (every segment scanned with ``coterie.journal.scan``); each message seen
    that is no longer pending (``coterie.mailbox.peek_mailbox``), i.e. was
    acknowledged, and that an agent must see, reached the recipient's
    transcript: the user's prompt, every teammate's task result in the
    lead's (after a damaged file, checked on success only);
  * nothing left behind: after a SIGINT, SIGTERM or full disk (before any
    resume) and at the end of the round, no process of a recorded group
    (``pgids.log`` and the run's ``procgroups/`` records sampled during the
    run) and no process working in the round's directory is alive.

One line per round, then a table per fault kind and path: rounds drawn,
faults landed inside a live run (and by schedule mode), rounds re-drawn,
outcomes (completed / clear error), invariant violations; ``--json FILE``
writes the same. Exit 1 on any violation. ``--keep`` keeps the directories
of rounds with a violation.

``--mutants`` runs the harness against deliberately broken builds instead:
each patch of ``bench/mutants/*.diff`` applied to a copy of the source tree's
``coterie`` package (``git apply``); rounds until the first violation, at
most ``--mutant-rounds``; a mutant not caught is a failure of the harness
(exit 1). The files of every run are read with the readers of this checkout,
never with the build's under test.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

# Run as a script: the harness's own checkout is importable (``bench.*`` and the
# ``coterie`` readers the checks use), whatever source tree the rounds run.
HERE = Path(__file__).resolve().parents[1]
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from bench.chaos_campaign import play, table  # noqa: E402
from bench.chaos_mutants import run_mutants  # noqa: E402
from bench.chaos_plan import FAULTS, ONLY_ON, PATHS  # noqa: E402
from bench.chaos_redis import REDIS_FAULTS  # noqa: E402
from bench.chaos_round import restore_sigint  # noqa: E402
from bench.chaos_schedule import MODES  # noqa: E402


def choose(
    parser: argparse.ArgumentParser, text: str, allowed: tuple[str, ...], what: str
) -> list[str]:
    chosen = [x.strip() for x in text.split(",") if x.strip()]
    unknown = sorted(set(chosen) - set(allowed))
    if unknown or not chosen:
        parser.error(f"unknown {what} {unknown}; choose from {','.join(allowed)}")
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--faults", default=",".join(FAULTS))
    parser.add_argument(
        "--paths", default=",".join(PATHS), help="scripted,sdk (default: both, alternating)"
    )
    parser.add_argument(
        "--schedule", default=",".join(MODES), help="when timed faults fire (default: all modes)"
    )
    parser.add_argument(
        "--backend",
        choices=("files", "redis"),
        default="files",
        help="every round's backend (redis: a redis-server of its own); redis faults use redis",
    )
    parser.add_argument("--redraws", type=int, default=3, help="most re-draws of a round")
    parser.add_argument("--tasks", type=int, default=4, help="tasks per team run (default 4)")
    parser.add_argument("--resumes", type=int, default=3, help="most resumes per round")
    parser.add_argument("--timeout", type=float, default=120, help="most seconds per process")
    parser.add_argument("--keep", action="store_true", help="keep the rounds with a violation")
    parser.add_argument(
        "--source", type=Path, default=HERE, help="the coterie source tree to run (default: here)"
    )
    parser.add_argument("--json", type=Path, default=None, help="write the table as JSON here")
    parser.add_argument(
        "--mutants", action="store_true", help="run against the broken builds of bench/mutants"
    )
    parser.add_argument(
        "--mutant-rounds", type=int, default=12, help="most rounds to catch a mutant"
    )
    parser.add_argument(
        "--mutant-names", default="", help="only these mutants (names, comma-separated)"
    )
    args = parser.parse_args(argv)
    restore_sigint()
    source = args.source.resolve()
    faults = choose(parser, args.faults, FAULTS + REDIS_FAULTS, "faults")
    paths = choose(parser, args.paths, PATHS, "paths")
    modes = choose(parser, args.schedule, MODES, "schedule modes")
    kinds = [(f, p) for f in faults for p in paths if ONLY_ON.get(f, p) == p]
    if not kinds:
        parser.error(f"no fault of {','.join(faults)} exists on {','.join(paths)}")
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    rng = random.Random(seed)
    options = {
        "tasks": args.tasks,
        "resumes": args.resumes,
        "timeout": args.timeout,
        "redraws": args.redraws,
        "redis": float(args.backend == "redis"),
    }
    base = Path(tempfile.mkdtemp(prefix="coterie-chaos-"))
    began = time.monotonic()
    try:
        if args.mutants:
            print(f"chaos --mutants: seed {seed}, paths {','.join(paths)}, source {source}")
            names = {n.strip() for n in args.mutant_names.split(",") if n.strip()}
            results = run_mutants(
                source, paths, modes, options, args.mutant_rounds, rng, base, sys.stdout, names
            )
            caught = all(r["caught_in"] for r in results)
            if args.json:
                args.json.write_text(json.dumps({"seed": seed, "mutants": results}, indent=2))
            print(f"\n{len(results)} mutants in {time.monotonic() - began:.0f} s (seed {seed})")
            return 0 if caught and results else 1
        print(
            f"chaos: {args.rounds} rounds, seed {seed}, faults {','.join(faults)}, "
            f"paths {','.join(paths)}, schedule {','.join(modes)}, backend {args.backend}, "
            f"source {source}",
            flush=True,
        )
        tally = play(
            kinds, args.rounds, rng, modes, options, base, source, sys.stdout, keep=args.keep
        )
    finally:
        if args.keep:  # only what was kept stays
            with contextlib.suppress(OSError):
                base.rmdir()
        else:
            shutil.rmtree(base, ignore_errors=True)
    elapsed = time.monotonic() - began
    print()
    table(tally, sys.stdout)
    print(
        f"\n{tally.played} rounds ({args.rounds} drawn anew, the rest re-drawn) in "
        f"{elapsed:.0f} s (seed {seed}); {tally.failed} round(s) with a violation"
    )
    if args.json:
        summary = {"seed": seed, "played": tally.played, "failed": tally.failed}
        args.json.write_text(json.dumps({**summary, "kinds": tally.to_json()}, indent=2))
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())
