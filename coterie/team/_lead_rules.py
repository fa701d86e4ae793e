"""The team lead's decisions, as a pure state machine: events in, decisions out.

Theory of operation. The lead's first turn plans the user's request; then it
leads: its driver (:class:`coterie.team.TeamLead`) reports what it sees, and
the machine says what to do.

    events in                                 decisions out
    ---------                                 -------------
    message(kind)                             Turn() | Note()
    turned(kind, sender, task_id, answered)   RejectPlan(teammate, task_id) | None
    board(tasks, alive, mail_waiting)         Finish(problems) | Wait()

A teammate's ``result``, ``message``, ``plan_request`` and the runtime's
``teammate_stopped`` each cost the lead one model turn (:class:`Turn`); an
``idle`` notice costs none (:class:`Note`: acknowledge it and go on). A plan
request must be answered, or its teammate waits forever: a turn on one that
ends without the lead's ``ApprovePlan`` is a rejection whose feedback is the
lead's text (:class:`RejectPlan`); whether the turn answered it is read
from the lead's history (:func:`answered_plan`), so a lead restarted in the
middle of that turn still knows. When nothing is waiting in the mailbox
and every task on the board is finished, or the team is :func:`stuck`
(nothing can move any more), the lead finishes; otherwise it waits for mail
or a board change. A teammate reports a result *before* it completes its
task on the board, so once the board is done every report is in the
mailbox: the lead never finishes over a result it has not read.

:func:`final_result` turns the lead's last answer and the board into the run's
result: an error when a task failed or could not be done.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from coterie.board import Task, TaskStatus
from coterie.team import _protocol as proto

if TYPE_CHECKING:
    from coterie.agent import RunResult

__all__ = [
    "Finish",
    "LeadMachine",
    "answered_plan",
    "Note",
    "RejectPlan",
    "Turn",
    "Wait",
    "final_result",
    "stuck",
]


@attrs.frozen
class Turn:
    """Take one model turn on the message (rendered as another agent's data)."""


@attrs.frozen
class Note:
    """Acknowledge the message; it needs no turn."""


@attrs.frozen
class RejectPlan:
    """Tell *teammate* its plan for *task_id* was not approved (the lead's turn said why)."""

    teammate: str
    task_id: str


@attrs.frozen
class Wait:
    """Wait for mail or a change of the board."""


@attrs.frozen
class Finish:
    """The team is done (or can do no more): run the shutdown protocol and answer."""


def stuck(tasks: list[Task], alive: tuple[str, ...]) -> bool:
    """Whether no open task can ever move: none in progress, none that a live
    teammate could take (every blocker completed, unassigned or assigned to it)."""
    status = {t.id: t.status for t in tasks}
    for task in tasks:
        if task.status is TaskStatus.IN_PROGRESS:
            return False
        ready = all(status.get(b) is TaskStatus.COMPLETED for b in task.blocked_by)
        takeable = task.owner is None or task.owner in alive
        if task.status is TaskStatus.PENDING and ready and takeable and alive:
            return False
    return True


def final_result(result: RunResult, tasks: list[Task]) -> RunResult:
    """The lead's last answer; an error if a task failed or could not be done."""
    open_ = [t.id for t in tasks if not t.status.finished]
    failed = [t.id for t in tasks if t.status is TaskStatus.FAILED]
    if result.is_error or not (open_ or failed):
        return result
    problems = []
    if failed:
        problems.append(f"failed: {', '.join(failed)}")
    if open_:
        problems.append(f"not done (no teammate could take them): {', '.join(open_)}")
    text = f"{result.result}\n\nThe team did not finish every task ({'; '.join(problems)})."
    return attrs.evolve(result, result=text.strip(), is_error=True, subtype="error_tasks")


def answered_plan(messages: list[dict[str, Any]], teammate: str, task_id: str) -> bool:
    """Whether the lead's latest turn (since its last prompt) approved or rejected
    *teammate*'s plan for *task_id* with a successful ``ApprovePlan`` call."""
    calls: set[str] = set()
    for message in reversed(messages):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        if message.get("role") == "user":
            for block in content:
                if block.get("type") == "tool_result" and not block.get("is_error"):
                    calls.add(str(block.get("tool_use_id")))
            if any(b.get("type") == "text" for b in content):
                return False  # reached the prompt of the turn
            continue
        for block in content:
            data = block.get("input") or {}
            if (
                block.get("type") == "tool_use"
                and block.get("name") == "ApprovePlan"
                and block.get("id") in calls
                and data.get("teammate") == teammate
                and data.get("task_id") == task_id
            ):
                return True
    return False


class LeadMachine:
    """What the lead does next (see the module docstring). It keeps no state of
    its own: what it decides follows from the event and, for a plan, the
    lead's durable history."""

    def message(self, kind: str) -> Turn | Note:
        """A teammate's message (or the runtime's about one) is next in the mailbox."""
        return Turn() if kind in proto.LEAD_TURNS else Note()

    def turned(
        self, kind: str, sender: str, task_id: str | None, *, answered: bool
    ) -> RejectPlan | None:
        """The turn on a message ended (*answered*: it answered the plan it was about)."""
        if kind == proto.PLAN_REQUEST and not answered:
            return RejectPlan(sender, str(task_id))
        return None

    def board(self, tasks: list[Task], alive: tuple[str, ...], mail_waiting: bool) -> Finish | Wait:
        """The board as it is now, and whether any message waits for the lead."""
        done = all(t.status.finished for t in tasks) or stuck(tasks, alive)
        return Finish() if done and not mail_waiting else Wait()
