"""When a chaos round fires its fault: scheduled from the run's own events.

A sans-io decision: :class:`Schedule` is fed the run's events (the dicts the
lines of its ``events.jsonl`` hold), the Bash steps whose side effect is seen
(the tokens in ``steps.log``) and the clock, and says when the fault is due.
The thin loop that reads the files and sends the signal lives in
``chaos_round.py``.

Modes (:data:`MODES`):

  delay
      a random delay from the command's start (the wall-clock guess of old,
      kept as one mode among these);
  tool
      right after the k-th tool call started (``agent.tool_call``);
  in_tool
      inside the k-th Bash step of a teammate, after its side effect (its token is in
      ``steps.log``) and before its result (``agent.tool_result``): a kill
      there leaves a tool begun and not finished, which a resume must report
      interrupted and never run again;
  restart
      during an actor's restart: at its ``actor.crashed`` (the round puts a
      scenario ``crash`` turn in a teammate's track), before the supervisor
      has started it again.

Compaction is not reachable in these rounds (their histories are a few
thousand tokens; no ``context.*`` event happens), so it is no mode here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import random

MODES = ("delay", "tool", "in_tool", "restart")


@dataclass(frozen=True)
class Trigger:
    """What a round waits for before its fault: a mode, its k, its delay."""

    mode: str
    k: int = 1
    delay: float = 0.0

    def describe(self) -> str:
        if self.mode == "delay":
            return f"after {self.delay:.2f} s"
        if self.mode == "tool":
            return f"at tool call {self.k}"
        if self.mode == "in_tool":
            return f"inside Bash step {self.k}"
        return "during a restart"


def draw(rng: random.Random, modes: list[str], steps: int, delay: tuple[float, float]) -> Trigger:
    """A trigger of one of *modes*: k among the run's *steps* Bash calls (a team run
    starts with the lead's TaskCreate calls, so the k-th tool call is any of them)."""
    mode = rng.choice(modes)
    if mode == "delay":
        return Trigger(mode, delay=rng.uniform(*delay))
    if mode == "tool":
        return Trigger(mode, k=rng.randint(1, steps + 2))
    if mode == "in_tool":
        return Trigger(mode, k=rng.randint(1, steps))
    return Trigger(mode)


@dataclass
class Schedule:
    """Fed a run's events and effects; :meth:`due` says when its :class:`Trigger` fires."""

    trigger: Trigger
    #: when the command started (the clock of :meth:`due`).
    began: float = 0.0
    calls: int = 0
    bash_calls: int = 0
    #: tool call id -> the Bash step's token (its ``echo TOKEN``), while running
    #: (a step: a Bash call that echoes its token; no other Bash call counts).
    open_bash: dict[str, str] = field(default_factory=dict)
    #: the Bash call the trigger is waiting inside (``in_tool``), once started.
    target: str = ""
    target_token: str = ""
    crashed: bool = False

    def feed(self, event: dict[str, Any]) -> None:
        """One event of the run, in log order."""
        kind = event.get("type")
        if kind == "agent.tool_call":
            self.calls += 1
            command = str((event.get("input") or {}).get("command", ""))
            words = command.split()
            token = words[1] if len(words) > 1 and words[0] == "echo" else ""
            if event.get("name") == "Bash" and token:  # a step (a Bash call echoing its token)
                self.bash_calls += 1
                self.open_bash[str(event.get("id"))] = token
                if self.trigger.mode == "in_tool" and self.bash_calls == self.trigger.k:
                    self.target, self.target_token = str(event.get("id")), token
        elif kind == "agent.tool_result":
            self.open_bash.pop(str(event.get("id")), None)
        elif kind == "actor.crashed":
            self.crashed = True

    def due(self, now: float, effects: set[str]) -> bool:
        """Whether to fire now, given the Bash tokens whose effect is seen (*effects*)."""
        t = self.trigger
        if t.mode == "delay":
            return now - self.began >= t.delay
        if t.mode == "tool":
            return self.calls >= t.k
        if t.mode == "in_tool":
            return self.target in self.open_bash and self.target_token in effects
        return self.crashed

    def missed(self) -> bool:
        """Whether the trigger can no longer fire (its Bash call ended before its
        effect was seen): the round's fault is then not landed."""
        t = self.trigger
        return t.mode == "in_tool" and bool(self.target) and self.target not in self.open_bash


def landed_inside(events: list[dict[str, Any]], call_id: str) -> bool:
    """Whether the events (read after the fault) show the call *call_id* started
    and never finished: the fault landed inside it."""
    began = any(e.get("type") == "agent.tool_call" and e.get("id") == call_id for e in events)
    ended = any(e.get("type") == "agent.tool_result" and e.get("id") == call_id for e in events)
    return began and not ended
