"""The invariants a chaos round is checked against, once its run has ended.

Every failure is a violation (a line in :attr:`Round.violations`). The files
of the run are read with the readers of the harness's own checkout (the
journal's ``scan``, ``TranscriptLog``, the board's ``read_log`` or
``read_redis_log``), never with those of the source tree under test: a
deliberately broken build (``--mutants``) must not be judged by its own
broken readers. On a Redis backend the mailboxes are on the server: the
acknowledged-message check (which scans mailbox files) sees none there.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.chaos_plan import TEAMMATES, Plan
from bench.chaos_round import read_events

if TYPE_CHECKING:
    from bench.chaos_round import Round

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


def reap_round(rnd: Round) -> None:
    """Kill what is left of the round: every process it started, with its group, and
    whatever else runs in its groups or under its directory (the harness stopping
    mid-round, by SIGINT or SIGTERM; after a round that ended, nothing is left)."""
    running = [proc for proc in rnd.started if proc.poll() is None]
    for proc in running:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    # Before waiting: a process of another group could hold their pipes open.
    for line in leftovers(rnd):
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(line.split()[1]), signal.SIGKILL)
    for proc in running:
        proc.communicate()


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
    log = board_log(rnd, run_dir)
    created = [e.task_id for e in log if e.op == "create"]
    completions = Counter(e.task_id for e in log if e.fields.get("status") == "completed")
    twice = [t for t, n in completions.items() if n > 1]
    if twice:
        v.append(f"tasks completed more than once: {twice}")
    if shared := claimed_twice(log):
        v.append(f"a task claimed while another held it: {sorted(set(shared))[:4]}")
    if not rnd.damaged and (silent := unanswered(run_dir)):
        v.append(f"shutdown requests never answered (a message lost?): {silent}")
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
    if not rnd.damaged:
        for name in TEAMMATES:
            ran = said_not_run(transcript(run_dir, name), set(steps))
            if ran:
                v.append(f"{name} was told {ran} never ran, but they did (steps.log)")
    if code == 0:
        rnd.outcome = "completed"
        lead_history = transcript(run_dir, "lead")
        # The lead's real last answer, as its transcript holds it: not the
        # script's last line (a lead that heard of several results in one turn,
        # or whose turn a fault cut, answers with another of its lines).
        expected = last_answer(lead_history)
        if not expected or out != f"{expected}\n":
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
        check_teammates(rnd, plan, run_dir, jobs_done(log))
    elif clear_error(code, out, err):
        rnd.outcome = "clear error"
        said = err.strip().splitlines()[0] if err.strip() else out.strip().splitlines()[-1]
        rnd.said = f"exit {code}: {said[:110]}"
        runs = rnd.run("runs", "--json")
        with contextlib.suppress(ValueError):
            state = json.loads(runs.stdout.splitlines()[0])["state"]
            if state == "completed":
                v.append(f"exit {code}, but the run is listed as completed")
    else:
        rnd.outcome = f"exit {code}"
        tail = err.strip().splitlines()[-1:] if err.strip() else ["(no stderr)"]
        v.append(f"ended with exit {code}, not a clear error: {tail}")


def jobs_done(log: list[Any]) -> dict[str, set[int]]:
    """Per teammate, the jobs (``job N`` tasks) it completed, as the board log says
    (a task handed back may be completed by the other teammate, whose scripted
    track has no steps for it)."""
    subject: dict[str, str] = {}
    owner: dict[str, str] = {}
    done: dict[str, set[int]] = {name: set() for name in TEAMMATES}
    for e in log:
        if e.op == "create":
            subject[e.task_id] = str(e.fields.get("subject", ""))
        if "owner" in e.fields:
            owner[e.task_id] = str(e.fields["owner"])
        job = subject.get(e.task_id, "").removeprefix("job ")
        if e.fields.get("status") == "completed" and job.isdigit():
            done.setdefault(owner.get(e.task_id, ""), set()).add(int(job))
    return done


def check_teammates(rnd: Round, plan: Plan, run_dir: Path, jobs: dict[str, set[int]]) -> None:
    """On success, every step of every task each teammate completed (*jobs*; a
    TaskCreate cut short was reported to the lead) is in its transcript and had
    its effect or failed."""
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
        expected = [s for s in plan.bash[name] + plan.writes[name] if plan.job[s] in jobs[name]]
        absent = [s for s in expected if s not in ran]
        if absent:
            rnd.violations.append(f"success, but {name} never did {absent[:4]}")
        for token in plan.bash[name]:
            if token in ran and not ran[token] and token not in steps:
                rnd.violations.append(f"{name}'s step {token} reported done, no effect")
        for path in plan.writes[name]:
            if path in ran and not ran[path] and not (rnd.workspace / path).exists():
                rnd.violations.append(f"{name}'s Write of {path} reported done, no file")


def claimed_twice(log: list[Any]) -> list[str]:
    """Tasks the board log shows claimed while in progress under another worker."""
    status: dict[str, str] = {}
    owner: dict[str, str] = {}
    shared = []
    for e in log:
        if e.op == "create":
            status[e.task_id] = str(e.fields.get("status", "pending"))
            owner[e.task_id] = str(e.fields.get("owner"))
            continue
        new_owner = str(e.fields.get("owner", owner.get(e.task_id)))
        busy = status.get(e.task_id) == "in_progress" and new_owner != owner.get(e.task_id)
        if e.op == "claim" and busy:
            shared.append(e.task_id)
        status[e.task_id] = str(e.fields.get("status", status.get(e.task_id)))
        owner[e.task_id] = new_owner
    return shared


def said_not_run(messages: list[dict[str, Any]], steps: set[str]) -> list[str]:
    """The Bash steps whose result told the agent the call was never run (the
    session stopped before it started), although its line is in ``steps.log``."""
    from coterie.context.history import NOT_RUN

    lied = []
    for use, _failed in tool_outcomes(messages):
        if use["name"] != "Bash":
            continue
        token = use["input"]["command"].split()[1]
        if token in steps and result_text(messages, use["id"]) == NOT_RUN:
            lied.append(token)
    return lied


def result_text(messages: list[dict[str, Any]], tool_use_id: str) -> str:
    for m in messages:
        if m["role"] == "user" and isinstance(m["content"], list):
            for b in m["content"]:
                if b.get("type") == "tool_result" and b.get("tool_use_id") == tool_use_id:
                    content = b.get("content")
                    return content if isinstance(content, str) else ""
    return ""


def unanswered(run_dir: Path) -> list[str]:
    """The teammates that never answered the lead's shutdown request (its
    ``team.shutdown_timeout`` events): in these rounds nothing keeps a teammate
    busy for the lead's whole wait, so the request or its answer was lost."""
    events, _ = read_events(run_dir)
    return [str(e.get("teammate")) for e in events if e.get("type") == "team.shutdown_timeout"]


def board_log(rnd: Round, run_dir: Path) -> list[Any]:
    """The run's board log: its file, or its stream on the round's Redis server
    (none if the server lost it)."""
    if rnd.backend:
        import trio

        from coterie.backends.redis import read_redis_log
        from coterie.backends.redis.client import parse_backend

        try:
            return trio.run(read_redis_log, parse_backend(rnd.backend), run_dir.name)
        except Exception as exc:  # the server gone: the checks see no board
            rnd.said = rnd.said or f"(the board could not be read: {exc})"
            return []
    from coterie.board import read_log

    board = run_dir / "board"
    return read_log(board) if board.exists() else []
