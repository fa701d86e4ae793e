"""A teammate's cycle (IDLE → WORK or PLANNING → IDLE) as a pure state machine.

Theory of operation. The driver (:class:`coterie.team.Teammate`) reports
what happens; the machine says what to do next:

    state      event                         decision                        next state
    -----      -----                         --------                        ----------
    IDLE       mail(shutdown_request)        AnswerShutdown                  STOPPED
    IDLE       mail(message)                 Converse (one turn on it)       IDLE
    IDLE       mail(other kind)              Ignore                          IDLE
    IDLE       took(task, approved)          DoTask (working)                WORK
                                             DoTask (planning)               PLANNING
    WORK       turned(result)                Settle(task, result)            IDLE
    PLANNING   turned(result)                ProposePlan(task, plan)         AWAITING
                 an error, or no approval     Settle(task, failed)            IDLE
                 after MAX_PLAN_ROUNDS
    AWAITING   answered(approve)             Revise (working)                WORK
               answered(reject)              Revise (planning)               PLANNING

In IDLE the driver reads its mailbox first (a shutdown request first), then
takes a task from the board (the one it held before a restart, else a
claim), and otherwise waits for mail or a board change that concerns it.
A task whose plan the lead approved already (recorded durably) is worked on
at once; otherwise, with plan approval on, the teammate plans read-only
(under plan mode's ceiling), proposes its plan and waits for the lead's
answer; a rejection is revised and proposed again, at most
:data:`MAX_PLAN_ROUNDS` times, after which the task fails. A turn's error
ends the task as failed; its final text is the task's result.

Invariants: one task at a time; mail is handled only in IDLE (a message
arriving during work waits in the mailbox); after AnswerShutdown the
machine is finished. Events out of turn raise :class:`CycleProtocolError`.
"""

from __future__ import annotations

import enum
from typing import Any, Literal

import attrs

from coterie.context.history import succeeded_calls
from coterie.team import _protocol as proto

__all__ = [
    "MAX_PLAN_ROUNDS",
    "AnswerShutdown",
    "Converse",
    "CycleProtocolError",
    "DoTask",
    "Ignore",
    "Phase",
    "ProposePlan",
    "Revise",
    "Settle",
    "TeammateMachine",
    "presented_plan",
]

#: How many plans a teammate proposes for a task before it gives the task up.
MAX_PLAN_ROUNDS = 3


class CycleProtocolError(RuntimeError):
    """The driver fed the machine an event it cannot take now (a bug in the driver)."""


class Phase(enum.StrEnum):
    IDLE = "idle"
    WORK = "working"
    PLANNING = "planning"
    AWAITING = "awaiting approval"
    STOPPED = "stopped"


@attrs.frozen
class AnswerShutdown:
    """Approve the lead's shutdown request, and stop."""


@attrs.frozen
class Converse:
    """Take one turn on another member's message."""


@attrs.frozen
class Ignore:
    """A message of a kind a teammate does not take: report it and go on."""


@attrs.frozen
class DoTask:
    """Work on *task_id* (the first turn on it), planning read-only if *planning*."""

    task_id: str
    planning: bool


@attrs.frozen
class ProposePlan:
    """Send the lead this plan for *task_id* and wait for its answer."""

    task_id: str
    plan: str


@attrs.frozen
class Revise:
    """Take a turn on the lead's answer: carry the plan out, or revise it (*planning*)."""

    task_id: str
    planning: bool


@attrs.frozen
class Settle:
    """The task is over: report it to the lead, then complete or fail it on the board."""

    task_id: str
    status: Literal["completed", "failed"]
    result: str


@attrs.define
class TeammateMachine:
    """The decisions of one teammate incarnation (see the module docstring)."""

    plan_approval: bool = False
    phase: Phase = Phase.IDLE
    task: str | None = None
    _rejections: int = 0

    def mail(self, kind: str) -> AnswerShutdown | Converse | Ignore:
        """A message is next in the mailbox (only taken while idle)."""
        self._expect(Phase.IDLE, "mail")
        if kind == proto.SHUTDOWN_REQUEST:
            self.phase = Phase.STOPPED
            return AnswerShutdown()
        return Converse() if kind == proto.MESSAGE else Ignore()

    def took(self, task_id: str, *, approved: bool) -> DoTask:
        """The teammate holds *task_id* now (*approved*: its plan was approved before)."""
        self._expect(Phase.IDLE, "took")
        planning = self.plan_approval and not approved
        self.phase, self.task, self._rejections = (
            Phase.PLANNING if planning else Phase.WORK,
            task_id,
            0,
        )
        return DoTask(task_id, planning)

    def turned(self, is_error: bool, text: str) -> Settle | ProposePlan:
        """The turn on the task (or on the lead's answer) ended with *text*."""
        task = self._task("turned", Phase.WORK, Phase.PLANNING)
        if self.phase is Phase.WORK or is_error:
            return self._settle("failed" if is_error else "completed", text)
        if self._rejections >= MAX_PLAN_ROUNDS:
            reason = f"The lead did not approve a plan in {MAX_PLAN_ROUNDS} rounds."
            return self._settle("failed", reason)
        self.phase = Phase.AWAITING
        return ProposePlan(task, text)

    def answered(self, approve: bool) -> Revise:
        """The lead answered the plan."""
        task = self._task("answered", Phase.AWAITING)
        if approve:
            self.phase = Phase.WORK
        else:
            self.phase, self._rejections = Phase.PLANNING, self._rejections + 1
        return Revise(task, planning=not approve)

    def _settle(self, status: Literal["completed", "failed"], text: str) -> Settle:
        assert self.task is not None
        settle = Settle(self.task, status, text)
        self.phase, self.task = Phase.IDLE, None
        return settle

    def _expect(self, phase: Phase, event: str) -> None:
        if self.phase is not phase:
            raise CycleProtocolError(f"{event} while {self.phase.value}")

    def _task(self, event: str, *phases: Phase) -> str:
        if self.phase not in phases or self.task is None:
            raise CycleProtocolError(f"{event} while {self.phase.value}")
        return self.task


def presented_plan(messages: list[dict[str, Any]]) -> str | None:
    """The plan of the last ExitPlanMode call of the latest turn in *messages* that
    succeeded (a teammate presenting its plan), or None if it made none."""
    for call in succeeded_calls(messages):
        plan = (call.get("input") or {}).get("plan")
        if call.get("name") == "ExitPlanMode" and isinstance(plan, str) and plan.strip():
            return plan.strip()
    return None
