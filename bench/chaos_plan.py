"""The scenario of a chaos round: the team's plan, its steps, and the faults put in it.

The lead creates ``tasks`` tasks, alternately for alice and bob; per task a
teammate does two Bash steps and one Write, then answers. Each Bash step
appends its own unique line to ``steps.log`` (or fails, if it cannot: a full
disk) and its shell's pid (its process group) to ``pgids.log``, leaves a ``sleep 30`` running in the background of
its group and sleeps a little in the foreground. Also the constants every
part of the harness shares (the fault kinds, the paths to the model).
"""

from __future__ import annotations

import signal
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import random

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
#: Faults fired at a moment of the run (a :class:`chaos_schedule.Trigger`); the
#: others are put in its scenario.
TIMED = (
    "kill9", "sigint", "sigterm", "enospc", "damage",
    "redis-restart", "redis-oom", "redis-partition", "redis-slow",
)  # fmt: skip


def step_command(token: str) -> str:
    # A step whose line could not be written (a full disk) fails: "done" means done.
    return (
        f"echo {token} >> steps.log || exit 1; echo $$ >> pgids.log; "
        "sleep 30 >/dev/null 2>&1 & sleep 0.15"
    )


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


def insert_turn(
    plan: Plan, rng: random.Random, turn: dict[str, Any], tracks: tuple[str, ...] = ()
) -> str:
    """Put *turn* at a random place of a random track (of *tracks*, if given); where."""
    track = rng.choice(sorted(tracks or plan.tracks))
    turns = plan.tracks[track]
    # Not after a track's last turn: a track that ends in a fault is a different test.
    at = rng.randrange(len(turns))
    turns.insert(at, turn)
    return f"{track}[{at}]"


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
