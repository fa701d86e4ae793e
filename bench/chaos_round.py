"""A chaos round's processes: the coterie commands it starts, what it samples while
they run, and the loop that fires its fault when the run's events say so.

Every command is a CLI subprocess (``python -m coterie``) with the source tree
under test on ``PYTHONPATH``, in the round's workspace, its own ``HOME`` and
``COTERIE_HOME``, in a session of its own (so that a hung one is killed with
all it started). SIGINT is never inherited as ignored: :func:`restore_sigint`
gives the harness a handler, and a handled signal is reset to its default in
a child at exec (a shell that starts the harness in the background makes
SIGINT ignored, and an ignored signal stays ignored across exec); SIGTERM stops
the harness as SIGINT does, the rounds' processes with it. A child that
still ignores the signal sent to it (``SigIgn`` in ``/proc/PID/status``) makes
the round's fault not landed, never passed.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.chaos_plan import IDLE_TIMEOUT

if TYPE_CHECKING:
    from bench.chaos_schedule import Schedule


def restore_sigint() -> None:
    """Give SIGINT a handler if it is ignored, so that children start with its default;
    and SIGTERM one that stops the harness as SIGINT does (``SystemExit(143)``), so
    that each round's ``finally`` kills what the round started (by default SIGTERM
    ends the interpreter at once and leaves them running)."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _terminated)


def _terminated(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def ignores(pid: int, sig: signal.Signals) -> bool:
    """Whether process *pid* ignores *sig* (its ``SigIgn`` mask)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("SigIgn:"):
                return bool(int(line.split()[1], 16) >> (sig - 1) & 1)
    return False


@dataclass
class Round:
    index: int
    fault: str
    path: str
    #: The coterie source tree the round's commands run.
    source: Path
    root: Path
    workspace: Path
    home: Path
    chome: Path
    timeout: float
    stderrs: list[tuple[str, str]] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    pgids: set[int] = field(default_factory=set)
    injected: bool = False
    where: str = ""
    outcome: str = ""
    #: The base URL and pid of the round's mock server (the sdk path).
    url: str = ""
    server_pid: int = 0
    #: The first line of the reason a run that ended in a clear error gave.
    said: str = ""
    #: Every mailbox message seen during the round: mailbox -> id -> message.
    seen: dict[str, dict[str, Any]] = field(default_factory=dict)
    sampled_at: float = 0.0
    #: A file was damaged (``damage``): the acknowledged-message check then
    #: only holds on success.
    damaged: str = ""
    #: The fault fired while the run existed (its ``state.json`` was there) and
    #: was acted on: it landed inside a live run. Rounds that did not land are
    #: re-drawn.
    landed: bool = False
    #: Why a fault that was fired did not land (before the run, ignored...).
    missed: str = ""
    #: When the fault was fired, whether the run existed.
    live_at_fire: bool = False
    #: The run's backend (``COTERIE_BACKEND``): a Redis URL, or "" for files.
    backend: str = ""
    #: Every process the round started itself (killed with its group if the
    #: harness stops mid-round: ``chaos_checks.reap_round``).
    started: list[subprocess.Popen[str]] = field(default_factory=list)

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "COTERIE_"))}
        env.update(PYTHONPATH=str(self.source), HOME=str(self.home), COTERIE_HOME=str(self.chome))
        if self.backend:
            env.update(COTERIE_BACKEND=self.backend)
        if self.url:
            env.update(
                ANTHROPIC_BASE_URL=self.url,
                ANTHROPIC_API_KEY="chaos-dummy-key",
                COTERIE_STREAM_IDLE_TIMEOUT=IDLE_TIMEOUT,
            )
        return env

    def start_mock_server(self, scenario: Path) -> subprocess.Popen[str]:
        """``coterie mock-server`` for the round's scenario, on 127.0.0.1; sets :attr:`url`."""
        server = subprocess.Popen(
            [sys.executable, "-m", "coterie", "mock-server", "--scenario", str(scenario),
             "--port", "0"],
            cwd=self.root,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )  # fmt: skip
        self.started.append(server)
        assert server.stdout is not None
        self.server_pid = server.pid
        self.url = server.stdout.readline().strip()
        if not self.url.startswith("http://127.0.0.1:"):
            self.violations.append(f"mock-server did not start: {self.url!r}")
        return server

    def stop_mock_server(self, server: subprocess.Popen[str]) -> None:
        server.terminate()
        try:
            _out, err = server.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            _out, err = server.communicate()
            self.violations.append("mock-server did not stop on SIGTERM")
        self.stderrs.append(("mock-server", err))
        if server.returncode != 0:
            self.violations.append(f"mock-server exited {server.returncode}")

    def start(self, args: list[str]) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "coterie", *args],
            cwd=self.workspace,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # so that a hung one can be killed with all it started
        )
        self.started.append(proc)
        return proc

    def finish(
        self, proc: subprocess.Popen[str], label: str, wait: float | None = None
    ) -> tuple[int | None, str, str]:
        """Wait for *proc* (*wait* s, else the timeout); a hang is a violation (then it
        is killed with its group)."""
        try:
            out, err = proc.communicate(timeout=self.timeout if wait is None else wait)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            self.violations.append(f"{label}: hung for {self.timeout:.0f} s")
            self.stderrs.append((label, err))
            return None, out, err
        self.stderrs.append((label, err))
        return proc.returncode, out, err

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "coterie", *args],
            cwd=self.workspace,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=self.timeout,
        )
        self.stderrs.append((" ".join(args[:1]), done.stderr))
        return done

    def run_dir(self) -> Path | None:
        runs = list((self.chome / "projects").glob("*/runs/*"))
        recorded = [p for p in runs if (p / "config.json").exists()]
        if len(runs) > 1:
            self.violations.append(f"{len(runs)} runs in one workspace")
        return recorded[0] if recorded else None

    def sample_mailboxes(self) -> None:
        """Note every message the run's mailboxes hold now (acknowledged segments go)."""
        for box in (self.chome / "projects").glob("*/runs/*/mailboxes/*"):
            for mid, message in mailbox_messages(box).items():
                self.seen.setdefault(box.name, {})[mid] = message

    def sample_groups(self) -> None:
        """Note the pgids the run has recorded so far (records go once a group is gone)."""
        if time.monotonic() - self.sampled_at > 0.1:
            self.sampled_at = time.monotonic()
            with contextlib.suppress(OSError):
                self.sample_mailboxes()
        for records in (self.chome / "projects").glob("*/runs/*/procgroups"):
            with contextlib.suppress(OSError):
                for name in os.listdir(records):
                    with contextlib.suppress(ValueError):
                        self.pgids.add(int(name.split("-")[0]))


def mailbox_messages(box: Path) -> dict[str, Any]:
    """Every readable message of the mailbox in *box*, acknowledged or not, by id
    (its segments scanned with the journal's public :func:`coterie.journal.scan`)."""
    from coterie.journal import Record, is_seal, scan
    from coterie.messages import Message

    found: dict[str, Any] = {}
    for segment in sorted(box.glob("*.log")):
        try:
            data = segment.read_bytes()
        except OSError:
            continue
        for item in scan(data):
            if not isinstance(item, Record) or is_seal(item):
                continue
            with contextlib.suppress(ValueError, TypeError):
                message = Message.from_json_bytes(item.payload)
                found[message.id] = message
    return found


def read_events(run_dir: Path | None, offset: int = 0) -> tuple[list[dict[str, Any]], int]:
    """The complete lines of the run's ``events.jsonl`` from *offset*, parsed; the
    offset after them (a line being written is read next time)."""
    if run_dir is None:
        return [], offset
    try:
        with open(run_dir / "events.jsonl", "rb") as f:
            f.seek(offset)
            data = f.read()
    except OSError:
        return [], offset
    end = data.rfind(b"\n") + 1
    events = []
    for line in data[:end].splitlines():
        with contextlib.suppress(ValueError):
            event = json.loads(line)
            if isinstance(event, dict):
                events.append(event)
    return events, offset + end


def live(run_dir: Path | None) -> bool:
    """Whether the run exists: recorded (``config.json``) with its ``state.json``."""
    return run_dir is not None and (run_dir / "state.json").exists()


def effects(workspace: Path) -> set[str]:
    """The Bash steps whose side effect is seen (their tokens in ``steps.log``)."""
    try:
        return set((workspace / "steps.log").read_text().split())
    except OSError:
        return set()


def wait_for(rnd: Round, proc: subprocess.Popen[str], schedule: Schedule) -> bool:
    """Until *schedule* is due (True), or the command ended or the trigger can no
    longer fire (False); then notes whether the run existed (:attr:`Round.live_at_fire`)."""
    schedule.began = started(proc)
    offset = 0
    run_dir = None
    while proc.poll() is None:
        run_dir = run_dir or rnd.run_dir()
        events, offset = read_events(run_dir, offset)
        for event in events:
            schedule.feed(event)
        seen = effects(rnd.workspace) if schedule.trigger.mode == "in_tool" else set()
        if schedule.due(time.monotonic(), seen):
            rnd.live_at_fire = live(rnd.run_dir())
            return proc.poll() is None
        if schedule.missed():
            rnd.missed = "its tool call ended before the fault"
            return False
        if time.monotonic() - schedule.began > rnd.timeout:
            return False
        rnd.sample_groups()
        time.sleep(0.003)
    return False


def wait_then_signal(
    rnd: Round, proc: subprocess.Popen[str], sig: signal.Signals, schedule: Schedule
) -> bool:
    """Send *sig* to *proc* when *schedule* is due; False if it was not sent."""
    if not wait_for(rnd, proc, schedule):
        return False
    if ignores(proc.pid, sig):
        rnd.missed = f"the child ignores {sig.name}"
    os.kill(proc.pid, sig)
    return True


def run_to_end(rnd: Round, proc: subprocess.Popen[str], label: str) -> tuple[int | None, str, str]:
    while proc.poll() is None:
        rnd.sample_groups()
        time.sleep(0.02)
        if time.monotonic() - started(proc) > rnd.timeout:
            break
    # What is left of its timeout (a hang is not waited for twice).
    return rnd.finish(proc, label, max(1.0, rnd.timeout - (time.monotonic() - started(proc))))


#: When each process was started, by the process itself: never by its pid, which a
#: campaign of thousands of processes sees reused (a new run then took an old one's
#: start, was found "hung" at once and killed: five false violations in 622 rounds).
_STARTS: weakref.WeakKeyDictionary[subprocess.Popen[str], float] = weakref.WeakKeyDictionary()


def started(proc: subprocess.Popen[str]) -> float:
    return _STARTS.setdefault(proc, time.monotonic())
