"""One chaos round: its scenario and fault, the run, the resumes, then the checks.

A fault fired at a moment of the run (:data:`chaos_plan.TIMED`) waits for its
:class:`chaos_schedule.Trigger`; one put in the scenario (a crash, a model
error, a cut or silent stream) is found afterwards in the run's events. A
round's fault *landed* if it hit a live run (the run recorded, its
``state.json`` there) and the run acted on it (a signal's own exit code, a
disk full noticed, a file damaged, a crash, error or cut stream seen in the
events); a round whose fault did not land is re-drawn by the caller.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from bench.chaos_checks import check_left_behind, check_round, reap_round
from bench.chaos_plan import (
    BYPASS,
    DAMAGE_MODES,
    DAMAGE_TARGETS,
    MODEL_ERRORS,
    ONLY_ON,
    SIGNALS,
    STOP_CODES,
    TEAMMATES,
    TIMED,
    TMPFS_SIZE,
    fault_turn,
    insert_turn,
    team_plan,
)
from bench.chaos_proxy import PARTITION_SECONDS, SLOW_DELAY, SLOW_SECONDS, Proxy
from bench.chaos_redis import LINK_FAULTS, OOM_SECONDS, REDIS_FAULTS, Redis
from bench.chaos_round import (
    Round,
    read_events,
    run_to_end,
    started,
    wait_for,
    wait_then_signal,
)
from bench.chaos_schedule import Schedule, Trigger, draw, landed_inside

if TYPE_CHECKING:
    import random


def fill(root: Path) -> int:
    """Fill the file system holding *root* (a filler file); the bytes written."""
    written = 0
    chunk = b"\0" * (256 * 1024)
    with contextlib.suppress(OSError), open(root / "filler", "wb", buffering=0) as f:
        while True:
            written += f.write(chunk)
    with contextlib.suppress(OSError), open(root / "filler", "ab", buffering=0) as f:
        while f.write(b"\0" * 512):  # the last blocks too
            written += 512
    return written


def finished(run_dir: Path) -> bool:
    """Whether ``state.json`` says the run completed or failed (read before any damage)."""
    try:
        return json.loads((run_dir / "state.json").read_text()).get("state") in (
            "completed",
            "failed",
        )
    except (OSError, ValueError, AttributeError):
        return False


def wait_for_transcripts(rnd: Round, proc: subprocess.Popen[str]) -> None:
    """Until the run has a transcript (or *proc* ends)."""
    while proc.poll() is None:
        run_dir = rnd.run_dir()
        if run_dir is not None and any((run_dir / "transcripts").glob("*.log")):
            return
        rnd.sample_groups()
        time.sleep(0.01)


def damage(run_dir: Path, rng: random.Random) -> str:
    """Damage one durable file of the run (a flipped bit, a truncated tail, zeroed
    or deleted); what was done, or "" if the chosen kind of file is not there."""
    candidates = {
        "board": [run_dir / "board" / "board.log"],
        "mailbox": sorted(run_dir.glob("mailboxes/*/*.log")),
        "transcript": sorted(run_dir.glob("transcripts/*.log")),
        "state": [run_dir / "state.json"],
    }
    present = {
        target: files
        for target in DAMAGE_TARGETS
        if (files := [p for p in candidates[target] if p.is_file() and p.stat().st_size > 0])
    }
    if not present:
        return ""
    files = present[rng.choice(sorted(present))]
    path = rng.choice(files)
    mode = rng.choice(DAMAGE_MODES)
    data = bytearray(path.read_bytes())
    if mode == "flip":
        at = rng.randrange(len(data))
        data[at] ^= 1 << rng.randrange(8)
        path.write_bytes(bytes(data))
        mode = f"flip byte {at} of {len(data)}"
    elif mode == "truncate":
        keep = rng.randrange(len(data))
        path.write_bytes(bytes(data[:keep]))
        mode = f"truncate {len(data)} to {keep}"
    elif mode == "zero":
        path.write_bytes(bytes(len(data)))
    else:
        path.unlink()
    return f"{mode} {path.relative_to(run_dir)}"


def interrupted(code: int | None) -> bool:
    return code is not None and (code in (130, 143) or code < 0)


def one_round(
    index: int,
    fault: str,
    path: str,
    rng: random.Random,
    modes: list[str],
    options: dict[str, float],
    base: Path,
    source: Path,
) -> Round:
    """Play one round; *options*: ``tasks``, ``resumes``, ``timeout``, ``redis`` (1: on a
    Redis server of its own)."""
    root = Path(tempfile.mkdtemp(prefix=f"chaos-{index:04d}-", dir=base))
    rnd = Round(
        index, fault, path, source, root, root / "ws", root / "home", root / "chome",
        options["timeout"],
    )  # fmt: skip
    if fault == "enospc":
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE}", "tmpfs", str(root)],
            capture_output=True,
            text=True,
            check=False,
        )
        if mounted.returncode != 0:
            rnd.violations.append(f"cannot mount a tmpfs: {mounted.stderr.strip()}")
            return rnd
    redis = proxy = None
    try:
        if fault in REDIS_FAULTS or options.get("redis"):
            redis = Redis(base / f"{root.name}-redis").start()
            rnd.backend = redis.url
            if fault in LINK_FAULTS:  # the run talks to the server through the link cut
                proxy = Proxy(redis.port).start()
                rnd.backend = proxy.url
        tasks, resumes = int(options["tasks"]), int(options["resumes"])
        play_round(rnd, rng, modes, tasks, resumes, redis, proxy)
    finally:
        reap_round(rnd)  # the harness stopped mid-round: nothing of it stays behind
        if proxy is not None:
            proxy.stop()
        if redis is not None:
            redis.stop()
            shutil.rmtree(redis.directory, ignore_errors=True)
        if fault == "enospc":
            with contextlib.suppress(OSError):
                (root / "filler").unlink()
            if rnd.violations:  # the tmpfs goes with the round: keep a copy of it
                shutil.copytree(root, root.with_name(root.name + "-kept"), symlinks=True)
            subprocess.run(["umount", "-l", str(root)], check=False)
    return rnd


def play_round(
    rnd: Round,
    rng: random.Random,
    modes: list[str],
    tasks: int,
    resumes: int,
    redis: Redis | None,
    proxy: Proxy | None = None,
) -> None:
    for d in (rnd.workspace, rnd.home, rnd.chome):
        d.mkdir()
    fault, index = rnd.fault, rnd.index
    plan = team_plan(tasks)
    trigger = None
    if fault in TIMED:
        delay = (0.2, 1.4) if rnd.path == "scripted" else (1.0, 5.0)
        trigger = draw(rng, modes, sum(len(b) for b in plan.bash.values()), delay)
        if trigger.mode == "restart":  # a teammate crashes: the fault comes during its restart
            insert_turn(plan, rng, {"crash": f"chaos restart {index}"}, TEAMMATES)
    if fault == "crash":
        rnd.where = insert_turn(plan, rng, {"crash": f"chaos crash {index}"})
        rnd.injected = True
    elif fault == "model":
        error = rng.choice(MODEL_ERRORS)
        rnd.where = f"{error['status']} at " + insert_turn(plan, rng, {"error": dict(error)})
        rnd.injected = True
    elif fault in ONLY_ON:
        rnd.where = fault_turn(plan, rng, fault)
        rnd.injected = True
    scenario = rnd.root / "scenario.json"
    scenario.write_text(json.dumps({"name": f"chaos-{index}", "tracks": plan.tracks}))
    model = ["--scenario", str(scenario)] if rnd.path == "scripted" else []
    first = ["team", "-p", *BYPASS, *model, "go"]
    server = rnd.start_mock_server(scenario) if rnd.path == "sdk" else None
    try:
        code, out, err = run_with_fault(rnd, rng, first, resumes, trigger, redis, proxy)
    finally:
        if server is not None:
            rnd.stop_mock_server(server)
    if fault not in TIMED:
        scripted_landed(rnd)
    check_round(rnd, plan, code, out, err)
    check_left_behind(rnd, "at the end")


def scripted_landed(rnd: Round) -> None:
    """Whether a fault put in the scenario happened: its trace in the run's events."""
    events, _ = read_events(rnd.run_dir())
    kinds = {e.get("type") for e in events}
    if rnd.fault == "crash":
        rnd.landed = any(
            e.get("type") == "actor.crashed" and "chaos crash" in str(e.get("reason"))
            for e in events
        )
    elif rnd.fault == "model":
        rnd.landed = "model.retrying" in kinds or any(
            e.get("type") == "agent.result" and e.get("is_error") for e in events
        )
    else:  # a cut or silent stream: the client retried it
        rnd.landed = "model.retrying" in kinds
    if not rnd.landed:
        rnd.missed = "no trace of it in the run's events"


def fire(
    rnd: Round,
    proc: subprocess.Popen[str],
    rng: random.Random,
    trigger: Trigger,
    redis: Redis | None,
    proxy: Proxy | None = None,
) -> Schedule:
    """Fire the round's timed fault when *trigger* is due; the schedule that waited."""
    fault = rnd.fault
    if fault == "damage" and trigger.mode == "delay":
        # From the first transcript on: the files to damage exist by then.
        wait_for_transcripts(rnd, proc)
        trigger = Trigger("delay", delay=time.monotonic() - started(proc) + trigger.delay / 2)
    schedule = Schedule(trigger)
    rnd.where = trigger.describe()
    if fault == "enospc":
        rnd.injected = wait_for(rnd, proc, schedule)
        if rnd.injected:
            fill(rnd.root)
    elif fault in REDIS_FAULTS:
        assert redis is not None
        rnd.injected = wait_for(rnd, proc, schedule)
        if rnd.injected and fault == "redis-restart":
            redis.restart_empty()
        elif rnd.injected and fault == "redis-oom":
            redis.refuse_writes()
            hold = hold_while(rnd, proc, rng.uniform(*OOM_SECONDS))
            redis.take_writes()
            rnd.where += f", writes refused for {hold:.1f} s"
        elif rnd.injected and fault == "redis-partition":
            assert proxy is not None
            proxy.partition()
            hold = hold_while(rnd, proc, rng.uniform(*PARTITION_SECONDS))
            proxy.heal()
            rnd.where += f", the link cut for {hold:.1f} s"
        elif rnd.injected:
            assert proxy is not None
            delay = rng.uniform(*SLOW_DELAY)
            proxy.slow(delay)
            hold = hold_while(rnd, proc, rng.uniform(*SLOW_SECONDS))
            proxy.heal()
            rnd.where += f", each chunk {delay * 1000:.0f} ms late for {hold:.1f} s"
    else:
        sig = signal.SIGKILL if fault == "damage" else SIGNALS[fault]
        rnd.injected = wait_then_signal(rnd, proc, sig, schedule)
    return schedule


def hold_while(rnd: Round, proc: subprocess.Popen[str], seconds: float) -> float:
    """Wait *seconds* (the fault lasting) while the run goes on, sampling its process
    groups; the seconds it lasted."""
    until = time.monotonic() + seconds
    while time.monotonic() < until and proc.poll() is None:
        rnd.sample_groups()
        time.sleep(0.01)
    return seconds


def run_with_fault(
    rnd: Round,
    rng: random.Random,
    first: list[str],
    resumes: int,
    trigger: Trigger | None,
    redis: Redis | None = None,
    proxy: Proxy | None = None,
) -> tuple[int | None, str, str]:
    """The round's first command with its fault, then resumes until the run ends."""
    fault = rnd.fault
    proc = rnd.start(first)
    started(proc)
    schedule = fire(rnd, proc, rng, trigger, redis, proxy) if trigger is not None else None
    code, out, err = run_to_end(rnd, proc, "team")
    attempts = 0
    space_freed = False
    if schedule is not None and rnd.injected:
        landing(rnd, schedule, code)
    sig = signal.SIGKILL if fault == "damage" else SIGNALS.get(fault)
    if rnd.injected and sig is not None:
        if code == -sig and rnd.run_dir() is None:
            # Before coterie could handle it (Python still starting): nothing was
            # recorded, so it is a kill -9 at startup; the run is started over.
            rnd.where += " (before the run was recorded)"
        elif fault in STOP_CODES and code not in (STOP_CODES[fault], 0):
            rnd.violations.append(f"{fault}: exit {code}, expected {STOP_CODES[fault]}")
        if fault in ("sigint", "sigterm"):
            check_left_behind(rnd, f"after {fault}")
        run_dir = rnd.run_dir()
        if fault == "damage" and code == -sig and run_dir is not None:
            rnd.sample_mailboxes()
            if finished(run_dir):  # killed in its last moments: its result stands
                rnd.where += ", the run had finished"
                rnd.missed = "the run had finished"
            else:
                rnd.damaged = damage(run_dir, rng)
                rnd.where += f", {rnd.damaged or 'nothing to damage'}"
            rnd.injected = bool(rnd.damaged)
            rnd.landed = rnd.landed and rnd.injected
    if fault == "enospc" and rnd.injected:
        if code == 1:
            if "No space left on device" not in err or "Traceback" in err:
                tail = err.strip().splitlines()[-1:]
                rnd.violations.append(f"disk full: exit 1 without a clear line: {tail}")
            check_left_behind(rnd, "after the disk filled")
        elif code != 0:
            rnd.violations.append(f"disk full: exit {code}, expected 1 (or 0)")
        (rnd.root / "filler").unlink(missing_ok=True)
        space_freed = code == 1
    # The server back (empty, or taking writes again): a run it stopped goes on.
    space_freed = space_freed or (fault in REDIS_FAULTS and code in (1, 2))
    while (interrupted(code) or space_freed) and attempts < resumes:
        space_freed = False
        attempts += 1
        run_dir = rnd.run_dir()
        if run_dir is None:  # killed before the run was recorded: start over
            shutil.rmtree(rnd.chome)
            rnd.chome.mkdir()
            proc = rnd.start(first)
        else:
            proc = rnd.start(["resume", run_dir.name, "-p"])
        started(proc)
        code, out, err = run_to_end(rnd, proc, f"resume {attempts}")
    if interrupted(code):
        rnd.violations.append(f"still interrupted after {resumes} resumes")
    rnd.where += f", {attempts} resume(s)" if attempts else ""
    return code, out, err


def landing(rnd: Round, schedule: Schedule, code: int | None) -> None:
    """Whether the fault fired landed inside a live run and was acted on."""
    acted = {
        "kill9": code == -signal.SIGKILL,
        "damage": code == -signal.SIGKILL,
        "sigint": code == 130,
        "sigterm": code == 143,
        "enospc": code == 1,
    }.get(rnd.fault, True)  # a server's fault: fired while the run went on
    if not rnd.live_at_fire:
        rnd.missed = "before the run existed"
    elif not acted and not rnd.missed:
        rnd.missed = "ignored" if code == 0 else f"not acted on as it must be (exit {code})"
        if rnd.fault == "enospc":
            rnd.missed = "the run did not notice" if code == 0 else rnd.missed
    rnd.landed = rnd.live_at_fire and acted and not rnd.missed
    # Where a signal landed (a full disk stops the event log; a server's fault
    # does not stop the call).
    if rnd.landed and schedule.target and rnd.fault in ("kill9", "sigint", "sigterm", "damage"):
        inside = landed_inside(read_events(rnd.run_dir())[0], schedule.target)
        rnd.where += " (inside it)" if inside else " (after it ended)"
