"""Chaos rounds on team runs: one random fault per round, then resume, then the invariants.

    python bench/chaos.py [--rounds 50] [--seed S] [--paths scripted,sdk]
                          [--faults kill9,sigint,sigterm,crash,model,cut,silent,enospc,damage]
                          [--tasks 4] [--resumes 3] [--timeout 120] [--keep] [--source DIR]

Each round is a real ``coterie team -p`` run (a CLI subprocess, in a fresh
temporary workspace with its own ``HOME`` and ``COTERIE_HOME``) on a generated
scenario: the lead creates ``--tasks`` tasks, alternately for alice and bob;
per task a teammate does two Bash steps and one Write, then answers. Each
Bash step appends its own unique line to ``steps.log`` and its shell's pid
(its process group) to ``pgids.log``, leaves a ``sleep 30`` running in the
background of its group and sleeps a little in the foreground.

Rounds alternate between two paths to the model (``--paths``): ``scripted``
(``--scenario FILE``, the scripted model in the process) and ``sdk`` (the
real ``anthropic`` SDK, as for real use: no ``--scenario``, a dummy
``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL`` pointing at a ``coterie
mock-server`` the round starts on 127.0.0.1 and keeps across resumes, and
``COTERIE_STREAM_IDLE_TIMEOUT=2``). The rounds go through every (fault,
path) pair in turn; one fault is injected per round at a random moment:

  kill9, sigint, sigterm
      the signal is sent to the coterie process after a random delay (if the
      run finished first, the fault counts as not injected; a signal that
      kills Python before the run is recorded is a kill at startup: the
      command is started over); then
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
      (a filler file) after a random delay; the run must exit 1 saying "No
      space left on device"; then the filler is removed and the run resumed;
  damage
      kill -9 after a random delay from the first transcript on, then (unless
      ``state.json`` says the run had finished) one durable file of the run is
      damaged (the board log, a mailbox segment, a transcript or
      ``state.json``; a flipped bit, a truncated tail, zeroed or deleted),
      then resumed.

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
    each exactly once, the lead heard of each, and the lead's TaskCreate calls
    all created a task or were reported to it as cut short;
  * no Bash step's line twice in ``steps.log`` (no tool side effect twice);
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

One line per round, then a table per fault kind and path: rounds, faults
injected, outcomes (completed / clear error), invariant violations. Exit 1
on any violation. ``--keep`` keeps the directories of rounds with a violation.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The coterie source tree the rounds run (``--source``; default: this checkout).
REPO = Path(__file__).resolve().parents[1]

FAULTS = ("kill9", "sigint", "sigterm", "crash", "model", "cut", "silent", "enospc", "damage")
#: The two ways to the model: the scripted model in the process, or the real
#: ``anthropic`` SDK against a ``coterie mock-server`` of the round.
PATHS = ("scripted", "sdk")
#: Faults that exist on one path only (a cut or silent stream needs a wire).
ONLY_ON = {"cut": "sdk", "silent": "sdk"}
#: The durable files a ``damage`` round may damage, and how.
DAMAGE_TARGETS = ("board", "mailbox", "transcript", "state")
DAMAGE_MODES = ("flip", "truncate", "zero", "delete")
#: Seconds of silence after which the SDK path cuts a stream (``silent`` rounds).
IDLE_TIMEOUT = "2"
#: Size of a round's tmpfs in ``enospc`` rounds.
TMPFS_SIZE = "24m"
SIGNALS = {"kill9": signal.SIGKILL, "sigint": signal.SIGINT, "sigterm": signal.SIGTERM}
#: The exit code a run must end with when it is stopped by each signal.
STOP_CODES = {"kill9": -signal.SIGKILL, "sigint": 130, "sigterm": 143}
BYPASS = ("--permission-mode", "bypassPermissions")
TEAMMATES = ("alice", "bob")
MODEL_ERRORS = (
    {"status": 529, "type": "overloaded_error", "message": "Overloaded"},
    {"status": 429, "type": "rate_limit_error", "message": "Rate limited"},
)


# -- the scenario ------------------------------------------------------------


def step_command(token: str) -> str:
    return f"echo {token} >> steps.log; echo $$ >> pgids.log; sleep 30 >/dev/null 2>&1 & sleep 0.15"


def create(subject: str, owner: str) -> dict[str, Any]:
    return {
        "name": "TaskCreate",
        "input": {"subject": subject, "description": f"Do: {subject}", "owner": owner},
    }


@dataclass
class Plan:
    """A round's scenario and what its steps should leave behind."""

    tracks: dict[str, list[dict[str, Any]]]
    tasks: int
    #: per teammate: the Bash tokens and the Write paths of its steps, in order.
    bash: dict[str, list[str]] = field(default_factory=dict)
    writes: dict[str, list[str]] = field(default_factory=dict)
    #: the task (job index) of each Bash token and Write path.
    job: dict[str, int] = field(default_factory=dict)


def team_plan(tasks: int) -> Plan:
    lead: list[dict[str, Any]] = [
        {"tool_uses": [create(f"job {i}", TEAMMATES[i % 2]) for i in range(tasks)]},
        {"text": "planned"},
    ]
    lead += [{"text": "noted"} for _ in range(tasks)]
    plan = Plan(tracks={"lead": lead}, tasks=tasks)
    for who, name in enumerate(TEAMMATES):
        turns: list[dict[str, Any]] = []
        plan.bash[name], plan.writes[name] = [], []
        for i in range(who, tasks, 2):
            for step in range(2):
                token = f"{name}-{i}-{step}"
                plan.bash[name].append(token)
                plan.job[token] = i
                command = step_command(token)
                turns.append({"tool_uses": [{"name": "Bash", "input": {"command": command}}]})
            path = f"w-{name}-{i}.txt"
            plan.writes[name].append(path)
            plan.job[path] = i
            content = f"{name} wrote job {i}\n"
            turns.append(
                {"tool_uses": [{"name": "Write", "input": {"file_path": path, "content": content}}]}
            )
            turns.append({"text": f"job {i} done"})
        plan.tracks[name] = turns
    return plan


def insert_turn(plan: Plan, rng: random.Random, turn: dict[str, Any]) -> str:
    """Put *turn* at a random place of a random track; where, as text."""
    track = rng.choice(sorted(plan.tracks))
    turns = plan.tracks[track]
    # Not after a track's last turn: a track that ends in a fault is a different test.
    at = rng.randrange(len(turns))
    turns.insert(at, turn)
    return f"{track}[{at}]"


# -- processes -----------------------------------------------------------------


@dataclass
class Round:
    index: int
    fault: str
    path: str
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

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "COTERIE_"))}
        env.update(PYTHONPATH=str(REPO), HOME=str(self.home), COTERIE_HOME=str(self.chome))
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
        return subprocess.Popen(
            [sys.executable, "-m", "coterie", *args],
            cwd=self.workspace,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # so that a hung one can be killed with all it started
        )

    def finish(self, proc: subprocess.Popen[str], label: str) -> tuple[int | None, str, str]:
        """Wait for *proc*; a hang is a violation (then it is killed with its group)."""
        try:
            out, err = proc.communicate(timeout=self.timeout)
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


def wait_then_signal(
    rnd: Round, proc: subprocess.Popen[str], sig: signal.Signals, delay: float
) -> bool:
    """Send *sig* to *proc* after *delay* s of its run; False if it finished first."""
    deadline = time.monotonic() + delay
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        rnd.sample_groups()
        time.sleep(0.01)
    if proc.poll() is not None:
        return False
    os.kill(proc.pid, sig)
    return True


def run_to_end(rnd: Round, proc: subprocess.Popen[str], label: str) -> tuple[int | None, str, str]:
    while proc.poll() is None:
        rnd.sample_groups()
        time.sleep(0.02)
        if time.monotonic() - started(proc) > rnd.timeout:
            break
    return rnd.finish(proc, label)


_STARTS: dict[int, float] = {}


def started(proc: subprocess.Popen[str]) -> float:
    return _STARTS.setdefault(proc.pid, time.monotonic())


# -- what is left behind ---------------------------------------------------------


def proc_stat(pid: str) -> tuple[int, str] | None:
    """(pgid, state) of a process, or None if it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2 :].split()
    return int(fields[2]), fields[0]


def leftovers(rnd: Round) -> list[str]:
    """Live processes in the round's recorded groups or working under its directory."""
    pgids = set(rnd.pgids)
    with contextlib.suppress(OSError):
        pgids |= {int(x) for x in (rnd.workspace / "pgids.log").read_text().split()}
    root = str(rnd.root)
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) in (os.getpid(), rnd.server_pid):
            continue
        stat = proc_stat(pid)
        if stat is None or stat[1] == "Z":
            continue
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            cwd = ""
        if stat[0] in pgids or cwd == root or cwd.startswith(root + os.sep):
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                cmd = "?"
            found.append(f"pid {pid} (pgid {stat[0]}): {cmd.strip()}")
    return found


def check_left_behind(rnd: Round, when: str) -> None:
    # A group killed a moment ago may still be exiting: give it a short grace.
    deadline = time.monotonic() + 2.0
    while (alive := leftovers(rnd)) and time.monotonic() < deadline:
        time.sleep(0.05)
    if alive:
        rnd.violations.append(f"left behind {when}: {'; '.join(alive[:3])}")
        for line in alive:  # clean up after the violation, so that rounds stay independent
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(line.split()[1]), signal.SIGKILL)


# -- the invariants ----------------------------------------------------------------


def transcript(run_dir: Path, actor: str) -> list[dict[str, Any]]:
    from coterie.context import TranscriptLog

    path = run_dir / "transcripts" / f"{actor}.log"
    if not path.exists():
        return []
    with TranscriptLog.open(path, "none") as log:
        return log.load()


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


def user_text(messages: list[dict[str, Any]]) -> str:
    """All the text the user side of a transcript holds (prompts, tool results, notes)."""
    parts: list[str] = []
    for m in messages:
        if m["role"] != "user":
            continue
        content = m["content"]
        if isinstance(content, str):
            parts.append(content)
            continue
        for b in content:
            if not isinstance(b, dict):
                continue
            if isinstance(b.get("text"), str):
                parts.append(b["text"])
            inner = b.get("content")
            if isinstance(inner, str):
                parts.append(inner)
            elif isinstance(inner, list):
                parts += [c.get("text", "") for c in inner if isinstance(c, dict)]
    return "\n".join(parts)


def check_acknowledged(rnd: Round, run_dir: Path) -> None:
    """No acknowledged message lost: each message a mailbox acknowledged (seen during
    the round, no longer pending) that an agent must see reached its transcript: the
    user's prompt and every teammate's task result in the lead's, a prompt in a
    teammate's."""
    from coterie.mailbox import peek_mailbox

    rnd.sample_mailboxes()
    for box, messages in rnd.seen.items():
        try:
            pending = {m.id for m in peek_mailbox(run_dir / "mailboxes" / box)}
        except Exception as exc:  # a damaged cursor: nothing can be told acknowledged
            if not rnd.damaged:
                rnd.violations.append(f"mailbox {box} unreadable: {exc}")
            continue
        told = user_text(transcript(run_dir, box)) if box != "user" else ""
        for mid, message in messages.items():
            if mid in pending:
                continue
            if message.kind == "prompt" and isinstance(message.body, dict):
                needle = str(message.body.get("text", ""))
            elif message.kind == "result" and box == "lead" and isinstance(message.body, dict):
                needle = str(message.body.get("task_id", ""))
            else:
                continue
            if needle and needle not in told:
                rnd.violations.append(
                    f"acknowledged {message.kind} {mid} from {message.sender} "
                    f"never reached {box}'s transcript ({needle!r})"
                )


def tool_outcomes(messages: list[dict[str, Any]]) -> list[tuple[dict[str, Any], bool | None]]:
    """Each tool_use with whether its result was an error (None: no result)."""
    results: dict[str, bool] = {}
    for m in messages:
        if m["role"] == "user" and isinstance(m["content"], list):
            for b in m["content"]:
                if b.get("type") == "tool_result":
                    results[b["tool_use_id"]] = bool(b.get("is_error"))
    uses = [
        b
        for m in messages
        if m["role"] == "assistant"
        for b in m["content"]
        if b.get("type") == "tool_use"
    ]
    return [(u, results.get(u["id"])) for u in uses]


def last_answer(messages: list[dict[str, Any]]) -> str:
    """The text of the last assistant message of *messages*."""
    for message in reversed(messages):
        if message["role"] == "assistant" and isinstance(message["content"], list):
            return "".join(b.get("text", "") for b in message["content"] if b.get("type") == "text")
    return ""


def clear_error(code: int | None, out: str, err: str) -> bool:
    """Exit 1 or 2 with a reason: a line on stderr, or a result on stdout that
    says what failed (a task that did not finish, a model call that failed)."""
    said = err.strip() or (out.strip() and out != "noted\n")
    return code in (1, 2) and bool(said)


def check_round(rnd: Round, plan: Plan, code: int | None, out: str, err: str) -> None:
    v = rnd.violations
    for label, text in rnd.stderrs:
        if "Traceback" in text:
            lines = text[text.index("Traceback") :].splitlines()
            shown = "\n      ".join([*lines[:2], "...", *lines[-8:]] if len(lines) > 10 else lines)
            v.append(f"traceback on stderr of {label}:\n      {shown}")
    run_dir = rnd.run_dir()
    if run_dir is None:
        v.append("no run recorded")
        return
    from coterie.board import read_log

    board = run_dir / "board"
    log = read_log(board) if board.exists() else []
    created = [e.task_id for e in log if e.op == "create"]
    completions = Counter(e.task_id for e in log if e.fields.get("status") == "completed")
    twice = [t for t, n in completions.items() if n > 1]
    if twice:
        v.append(f"tasks completed more than once: {twice}")
    steps = (
        Counter((rnd.workspace / "steps.log").read_text().split())
        if (rnd.workspace / "steps.log").exists()
        else Counter()
    )
    repeated = [t for t, n in steps.items() if n > 1]
    if repeated:
        v.append(f"a tool ran twice: {repeated}")
    if code == 0 or not rnd.damaged:
        check_acknowledged(rnd, run_dir)
    if code == 0:
        rnd.outcome = "completed"
        lead_history = transcript(run_dir, "lead")
        failed_creates = any(e for u, e in tool_outcomes(lead_history) if u["name"] == "TaskCreate")
        # The script's last answer, unless a TaskCreate failed (a full disk, a
        # signal): then the scripted lead cannot react, and its result is its last
        # answer, whatever that is (the error was reported to it; see below).
        expected = last_answer(lead_history) if failed_creates else "noted"
        if out != f"{expected}\n":
            v.append(f"success with result {out!r}, not the lead's last answer {expected!r}")
        status: dict[str, str] = {}
        for e in log:  # each task's last status, as `coterie tasks` shows it
            if "status" in e.fields:
                status[e.task_id] = e.fields["status"]
        listed = [{"id": t, "status": st} for t, st in status.items()]
        not_done = [t["id"] for t in listed if t["status"] != "completed"]
        if not_done:
            v.append(f"success with tasks not completed: {not_done}")
        missing = [t for t in created if completions[t] != 1]
        if missing:
            v.append(f"success with tasks not completed exactly once: {missing}")
        lead = lead_history
        creates = [(u, e) for u, e in tool_outcomes(lead) if u["name"] == "TaskCreate"]
        cut_short = sum(1 for _u, e in creates if e)
        if len(created) + cut_short < plan.tasks:
            v.append(
                f"success with {plan.tasks - len(created) - cut_short} TaskCreate lost "
                f"({len(created)} created, {cut_short} cut short)"
            )
        told = "\n".join(
            b.get("text", "") if isinstance(b, dict) else ""
            for m in lead
            if m["role"] == "user"
            for b in (m["content"] if isinstance(m["content"], list) else [{"text": m["content"]}])
        )
        unheard = [t for t in created if f"Task {t} completed" not in told]
        if unheard:
            v.append(f"success, but the lead never heard of tasks {unheard}")
        subjects = {e.fields.get("subject") for e in log if e.op == "create"}
        jobs = {i for i in range(plan.tasks) if f"job {i}" in subjects}
        check_teammates(rnd, plan, run_dir, jobs)
    elif clear_error(code, out, err):
        rnd.outcome = "clear error"
        said = err.strip().splitlines()[0] if err.strip() else out.strip().splitlines()[-1]
        rnd.said = f"exit {code}: {said[:110]}"
        listed = rnd.run("runs", "--json")
        with contextlib.suppress(ValueError):
            state = json.loads(listed.stdout.splitlines()[0])["state"]
            if state == "completed":
                v.append(f"exit {code}, but the run is listed as completed")
    else:
        rnd.outcome = f"exit {code}"
        tail = err.strip().splitlines()[-1:] if err.strip() else ["(no stderr)"]
        v.append(f"ended with exit {code}, not a clear error: {tail}")


def check_teammates(rnd: Round, plan: Plan, run_dir: Path, jobs: set[int]) -> None:
    """On success, every step of every task created (the *jobs*; a TaskCreate cut
    short was reported to the lead) is in its teammate's transcript and had its
    effect or failed."""
    steps = set()
    if (rnd.workspace / "steps.log").exists():
        steps = set((rnd.workspace / "steps.log").read_text().split())
    for name in TEAMMATES:
        outcomes = tool_outcomes(transcript(run_dir, name))
        ran: dict[str, bool | None] = {}
        for use, failed in outcomes:
            if use["name"] == "Bash":
                token = use["input"]["command"].split()[1]
                ran[token] = failed
            elif use["name"] == "Write":
                ran[use["input"]["file_path"]] = failed
        expected = [s for s in plan.bash[name] + plan.writes[name] if plan.job[s] in jobs]
        absent = [s for s in expected if s not in ran]
        if absent:
            rnd.violations.append(f"success, but {name} never did {absent[:4]}")
        for token in plan.bash[name]:
            if token in ran and not ran[token] and token not in steps:
                rnd.violations.append(f"{name}'s step {token} reported done, no effect")
        for path in plan.writes[name]:
            if path in ran and not ran[path] and not (rnd.workspace / path).exists():
                rnd.violations.append(f"{name}'s Write of {path} reported done, no file")


# -- one round ---------------------------------------------------------------------


def fault_turn(plan: Plan, rng: random.Random, kind: str) -> str:
    """Give a random reply turn of a random track a wire fault; where, as text."""
    track = rng.choice(sorted(plan.tracks))
    at = rng.randrange(len(plan.tracks[track]))
    turn = plan.tracks[track][at]
    if kind == "cut":
        after = rng.randrange(9)
        turn["fault"] = {"kind": "cut", "after": after}
        return f"cut after {after} at {track}[{at}]"
    turn["fault"] = {"kind": "silent"}
    return f"silent at {track}[{at}]"


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


def wait_then_fill(rnd: Round, proc: subprocess.Popen[str], delay: float) -> bool:
    """Fill the round's tmpfs after *delay* s of the run; False if it finished first."""
    deadline = time.monotonic() + delay
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        rnd.sample_groups()
        time.sleep(0.01)
    if proc.poll() is not None:
        return False
    fill(rnd.root)
    return True


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
    tasks: int,
    resumes: int,
    timeout: float,
    base: Path,
) -> Round:
    root = Path(tempfile.mkdtemp(prefix=f"chaos-{index:04d}-", dir=base))
    rnd = Round(index, fault, path, root, root / "ws", root / "home", root / "chome", timeout)
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
    try:
        play_round(rnd, rng, tasks, resumes)
    finally:
        if fault == "enospc":
            with contextlib.suppress(OSError):
                (root / "filler").unlink()
            if rnd.violations:  # the tmpfs goes with the round: keep a copy of it
                shutil.copytree(root, root.with_name(root.name + "-kept"), symlinks=True)
            subprocess.run(["umount", "-l", str(root)], check=False)
    return rnd


def play_round(rnd: Round, rng: random.Random, tasks: int, resumes: int) -> None:
    for d in (rnd.workspace, rnd.home, rnd.chome):
        d.mkdir()
    fault, index = rnd.fault, rnd.index
    plan = team_plan(tasks)
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
        code, out, err = run_with_fault(rnd, rng, first, resumes)
    finally:
        if server is not None:
            rnd.stop_mock_server(server)
    check_round(rnd, plan, code, out, err)
    check_left_behind(rnd, "at the end")


def run_with_fault(
    rnd: Round, rng: random.Random, first: list[str], resumes: int
) -> tuple[int | None, str, str]:
    """The round's first command with its fault, then resumes until the run ends."""
    fault = rnd.fault
    proc = rnd.start(first)
    started(proc)
    sig = signal.SIGKILL if fault == "damage" else SIGNALS.get(fault)
    if fault == "damage":
        # From the first transcript on: the files to damage exist by then.
        wait_for_transcripts(rnd, proc)
        delay = rng.uniform(0.0, 1.0) if rnd.path == "scripted" else rng.uniform(0.0, 3.0)
        rnd.where = f"{delay:.2f} s after the first transcript"
        rnd.injected = wait_then_signal(rnd, proc, sig, delay)
    elif sig is not None:
        delay = rng.uniform(0.2, 1.4) if rnd.path == "scripted" else rng.uniform(1.0, 5.0)
        rnd.where = f"after {delay:.2f} s"
        rnd.injected = wait_then_signal(rnd, proc, sig, delay)
    elif fault == "enospc":
        delay = rng.uniform(0.1, 1.2) if rnd.path == "scripted" else rng.uniform(0.5, 3.5)
        rnd.where = f"full after {delay:.2f} s"
        rnd.injected = wait_then_fill(rnd, proc, delay)
    code, out, err = run_to_end(rnd, proc, "team")
    attempts = 0
    space_freed = False
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
            else:
                rnd.damaged = damage(run_dir, rng)
                rnd.where += f", {rnd.damaged or 'nothing to damage'}"
            rnd.injected = bool(rnd.damaged)
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


# -- the whole run -----------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    global REPO
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--faults", default=",".join(FAULTS))
    parser.add_argument(
        "--paths", default=",".join(PATHS), help="scripted,sdk (default: both, alternating)"
    )
    parser.add_argument("--tasks", type=int, default=4, help="tasks per team run (default 4)")
    parser.add_argument("--resumes", type=int, default=3, help="most resumes per round")
    parser.add_argument("--timeout", type=float, default=120, help="most seconds per process")
    parser.add_argument("--keep", action="store_true", help="keep the rounds with a violation")
    parser.add_argument(
        "--source", type=Path, default=REPO, help="the coterie source tree to run (default: here)"
    )
    args = parser.parse_args(argv)
    REPO = args.source.resolve()
    sys.path.insert(0, str(REPO))
    faults = [f.strip() for f in args.faults.split(",") if f.strip()]
    unknown = sorted(set(faults) - set(FAULTS))
    if unknown or not faults:
        parser.error(f"unknown faults {unknown}; choose from {','.join(FAULTS)}")
    paths = [p.strip() for p in args.paths.split(",") if p.strip()]
    if sorted(set(paths) - set(PATHS)) or not paths:
        parser.error(f"unknown paths in {args.paths!r}; choose from {','.join(PATHS)}")
    kinds = [(f, p) for f in faults for p in paths if ONLY_ON.get(f, p) == p]
    if not kinds:
        parser.error(f"no fault of {','.join(faults)} exists on {','.join(paths)}")
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    rng = random.Random(seed)
    print(
        f"chaos: {args.rounds} rounds, seed {seed}, faults {','.join(faults)}, "
        f"paths {','.join(paths)}, source {REPO}",
        flush=True,
    )
    base = Path(tempfile.mkdtemp(prefix="coterie-chaos-"))
    table: dict[tuple[str, str], Counter[str]] = {k: Counter() for k in kinds}
    began = time.monotonic()
    failed = 0
    try:
        for index in range(args.rounds):
            fault, path = kinds[index % len(kinds)]
            t0 = time.monotonic()
            rnd = one_round(index, fault, path, rng, args.tasks, args.resumes, args.timeout, base)
            row = table[fault, path]
            row["rounds"] += 1
            row["injected"] += rnd.injected
            row[rnd.outcome or "?"] += 1
            row["violations"] += len(rnd.violations)
            status = "ok" if not rnd.violations else "VIOLATION"
            injected = rnd.where if rnd.injected else f"not injected ({rnd.where})"
            print(
                f"round {index:4d} {fault:8s} {path:8s} {injected:40s} {rnd.outcome:12s} "
                f"{time.monotonic() - t0:5.1f} s  {status}",
                flush=True,
            )
            if rnd.said:
                print(f"    {rnd.said}", flush=True)
            for violation in rnd.violations:
                print(f"    ! {violation}", flush=True)
            if rnd.violations:
                failed += 1
                if args.keep:
                    print(f"    kept: {rnd.root}", flush=True)
                    continue
            shutil.rmtree(rnd.root, ignore_errors=True)
    finally:
        if not args.keep or not failed:
            shutil.rmtree(base, ignore_errors=True)
    elapsed = time.monotonic() - began
    print()
    header = f"{'fault':8s} {'path':8s} {'rounds':>6s} {'injected':>8s} {'completed':>9s} "
    print(header + f"{'error':>6s} {'violations':>10s}")
    total: Counter[str] = Counter()
    for (fault, path), row in table.items():
        total.update(row)
        print(
            f"{fault:8s} {path:8s} {row['rounds']:6d} {row['injected']:8d} "
            f"{row['completed']:9d} {row['clear error']:6d} {row['violations']:10d}"
        )
    print(
        f"{'all':8s} {'':8s} {total['rounds']:6d} {total['injected']:8d} "
        f"{total['completed']:9d} {total['clear error']:6d} {total['violations']:10d}"
    )
    print(
        f"\n{args.rounds} rounds in {elapsed:.0f} s (seed {seed}); "
        f"{failed} round(s) with a violation"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
