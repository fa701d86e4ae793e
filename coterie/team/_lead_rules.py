"""The team lead's decisions, as a pure state machine: events in, decisions out.

Theory of operation. The lead's first turn plans the user's request; then it
leads: its driver (:class:`coterie.team.TeamLead`) reports what it sees, and
the machine says what to do.

    events in                                 decisions out
    ---------                                 -------------
    arrived(id, kind, sender, task_id, ...)   Ack(ids) | None (kept)
    free(begun)                               Turn(items) | None
    turned(turn, answered)                    Turned(ack, rejections)
    board(tasks, alive, mail_waiting)         Turn(final) | Finish(ack) | Wait()

**What costs a turn.** With ``lead_turns="batched"`` (the default) every
teammate message is *kept*: it waits, unacknowledged, for the next turn the
lead takes. The lead takes a turn when something needs its decision (it
*wakes*): a ``plan_request``, a ``message`` addressed to it, a
``teammate_stopped``, a ``result`` of a failed task. That one turn carries
every message kept so far, rendered together. Idle notices and the results
of completed tasks wake nobody: they go with the next turn, or with the
final one, taken when every task is finished (or nothing can move any
more), which so sees every result not seen yet (an idle notice is only
acknowledged with the turn: the model never reads one). A team whose tasks all
succeed costs the lead two turns: its plan and its answer. With
``lead_turns="each"`` every message but an idle notice is a turn of its own,
one after another (idle notices are acknowledged at once).

**Durability.** A kept message is acknowledged only once the turn that
carries it is recorded (:meth:`LeadMachine.turned`); a crash before leaves
it in the mailbox, delivered again. A turn's work id follows from the ids it
carries (:func:`work_id`), so a restarted lead that finds those messages
again, first in its mailbox as they were, and the work id in its transcript
(*begun*), continues that turn instead of taking another (:meth:`free`).
Only idle notices are ever acknowledged without a turn: when the team
finishes with nothing else kept, they have nothing to tell.

**Plans.** A plan request must be answered, or its teammate waits forever:
a turn that carried one and ended without the lead's ``ApprovePlan`` for it
is a rejection whose feedback is the lead's text (:class:`RejectPlan`), one
per plan in the turn; whether the turn answered it is read from the lead's
history (:func:`answered_plan`), so a lead restarted in the middle of that
turn still knows.

**Finishing.** When nothing is waiting in the mailbox and every task on the
board is finished, or the team is :func:`stuck` (nothing can move any more),
the lead takes its final turn if anything is kept, else finishes; otherwise
it waits for mail or a board change. A teammate reports a result *before* it
completes its task on the board, so once the board is done every report is
in the mailbox: the lead never finishes over a result it has not read.

:func:`final_result` turns the lead's last answer and the board into the run's
result: an error when a task failed or could not be done.
"""

from __future__ import annotations

import hashlib
import itertools
from typing import TYPE_CHECKING, Any

import attrs

from coterie.board import Task, TaskStatus
from coterie.context.history import succeeded_calls
from coterie.team import _protocol as proto
from coterie.team.turns import LEAD_TURNS_MODES, LeadTurns

if TYPE_CHECKING:
    from collections.abc import Collection, Container, Iterator, Mapping

    from coterie.agent import RunResult

__all__ = [
    "LEAD_TURNS_MODES",
    "Ack",
    "Finish",
    "Kept",
    "LeadMachine",
    "LeadTurns",
    "RejectPlan",
    "Turn",
    "Turned",
    "Wait",
    "answered_plan",
    "final_result",
    "stuck",
    "work_id",
]

#: What needs the lead's decision, whatever it says.
WAKES = frozenset({proto.MESSAGE, proto.PLAN_REQUEST, proto.TEAMMATE_STOPPED})


@attrs.frozen
class Kept:
    """A teammate's message waiting, unacknowledged, for the turn that carries it."""

    id: str
    kind: str
    sender: str
    task_id: str | None = None
    #: Whether it needs the lead's decision (a turn now).
    wakes: bool = False
    #: Whether it may have been handed out before (a turn may have carried it).
    redelivered: bool = False


def work_id(items: tuple[Kept, ...]) -> str:
    """The work id of a turn carrying *items*: a lone message's own id, else the
    first one's and a digest of them all (fixed by the messages, in their order)."""
    *_, last = _work_ids(items)
    return last


def _work_ids(items: tuple[Kept, ...] | list[Kept]) -> Iterator[str]:
    """The work ids of the turns carrying each prefix of *items*, shortest first."""
    digest = hashlib.sha256()
    for n, item in enumerate(items):
        digest.update((f"\n{item.id}" if n else item.id).encode())
        yield item.id if n == 0 else f"{items[0].id}+{n}.{digest.copy().hexdigest()[:12]}"


@attrs.frozen
class Turn:
    """Take one model turn on *items* (rendered together as other agents' data);
    *final*: every task is finished and this is the lead's answer."""

    items: tuple[Kept, ...]
    final: bool = False

    @property
    def work_id(self) -> str:
        return work_id(self.items)


@attrs.frozen
class Ack:
    """Acknowledge these messages now; they need no turn."""

    ids: tuple[str, ...]


@attrs.frozen
class RejectPlan:
    """Tell *teammate* its plan for *task_id* was not approved (the lead's turn said why)."""

    teammate: str
    task_id: str
    #: The id of the plan request (the rejection's id is made from it).
    request_id: str = ""


@attrs.frozen
class Turned:
    """After a recorded turn: send the rejections, then acknowledge *ack*."""

    ack: tuple[str, ...]
    rejections: tuple[RejectPlan, ...] = ()


@attrs.frozen
class Wait:
    """Wait for mail or a change of the board."""


@attrs.frozen
class Finish:
    """The team is done (or can do no more): acknowledge *ack* (idle notices), run
    the shutdown protocol and answer."""

    ack: tuple[str, ...] = ()


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


def final_result(
    result: RunResult, tasks: list[Task], stopped: Mapping[str, str] | None = None
) -> RunResult:
    """The lead's last answer; an error if a task failed or could not be done (with
    why each teammate *stopped* for good, when one did)."""
    open_ = [t.id for t in tasks if not t.status.finished]
    failed = [t.id for t in tasks if t.status is TaskStatus.FAILED]
    if result.is_error or not (open_ or failed):
        return result
    problems = []
    if failed:
        problems.append(f"failed: {', '.join(failed)}")
    if open_:
        problems.append(f"not done (no teammate could take them): {', '.join(open_)}")
        problems += [f"{name} stopped: {why}" for name, why in sorted((stopped or {}).items())]
    text = f"{result.result}\n\nThe team did not finish every task ({'; '.join(problems)})."
    return attrs.evolve(result, result=text.strip(), is_error=True, subtype="error_tasks")


def answered_plan(messages: list[dict[str, Any]], teammate: str, task_id: str) -> bool:
    """Whether the lead's latest turn (since its last prompt) approved or rejected
    *teammate*'s plan for *task_id* with a successful ``ApprovePlan`` call."""
    return any(
        call.get("name") == "ApprovePlan"
        and (call.get("input") or {}).get("teammate") == teammate
        and (call.get("input") or {}).get("task_id") == task_id
        for call in succeeded_calls(messages)
    )


class LeadMachine:
    """What the lead does next (see the module docstring): the messages it keeps
    for its next turn, nothing else (plans are judged from the lead's history)."""

    def __init__(self, lead_turns: LeadTurns = "batched") -> None:
        if lead_turns not in LEAD_TURNS_MODES:
            raise ValueError(f"lead_turns must be one of {LEAD_TURNS_MODES}, got {lead_turns!r}")
        self.lead_turns: LeadTurns = lead_turns
        self._kept: list[Kept] = []
        self._kept_ids: set[str] = set()

    @property
    def kept(self) -> tuple[Kept, ...]:
        """The messages waiting for a turn, in the order they came."""
        return tuple(self._kept)

    def arrived(
        self,
        message_id: str,
        kind: str,
        sender: str,
        task_id: str | None = None,
        *,
        failed: bool = False,
        redelivered: bool = False,
    ) -> Ack | None:
        """A teammate's message (or the runtime's about one) was read from the
        mailbox (*kind* ``"malformed"`` for a body of the wrong shape; *failed*:
        a result whose task failed; *redelivered*: it may have been handed out
        before). None: it is kept for a turn."""
        if message_id in self._kept_ids:
            return None  # read again (delivered twice): it is kept already
        idle = kind == proto.IDLE
        if (kind not in proto.LEAD_TURNS and not idle) or (idle and self.lead_turns == "each"):
            return Ack((message_id,))
        wakes = not idle and (
            self.lead_turns == "each" or kind in WAKES or (kind == proto.RESULT and failed)
        )
        self._kept.append(Kept(message_id, kind, sender, task_id, wakes, redelivered))
        self._kept_ids.add(message_id)
        return None

    def free(self, begun: Container[str] = ()) -> Turn | None:
        """The lead is free and has read its mailbox: the turn to take now, if any.

        A turn whose work id is in *begun* (the lead's transcript) was begun
        before a restart and is continued first, carrying what it carried: the
        messages first in the mailbox, every one of them delivered again.
        """
        again = list(itertools.takewhile(lambda k: k.redelivered, self._kept))
        for end, wid in enumerate(_work_ids(again), 1):
            if wid in begun:
                return Turn(tuple(self._kept[:end]))
        if self.lead_turns == "each":
            return Turn((self._kept[0],)) if self._kept else None
        if any(k.wakes for k in self._kept):
            return Turn(tuple(self._kept))
        return None

    def turned(self, turn: Turn, answered: Collection[tuple[str, str]] = ()) -> Turned:
        """The *turn* is recorded; *answered*: the (teammate, task) plans it answered."""
        ids = {k.id for k in turn.items}
        self._kept = [k for k in self._kept if k.id not in ids]
        self._kept_ids -= ids
        rejections = tuple(
            RejectPlan(k.sender, str(k.task_id), k.id)
            for k in turn.items
            if k.kind == proto.PLAN_REQUEST and (k.sender, str(k.task_id)) not in answered
        )
        return Turned(tuple(k.id for k in turn.items), rejections)

    def board(
        self, tasks: list[Task], alive: tuple[str, ...], mail_waiting: bool
    ) -> Turn | Finish | Wait:
        """The board as it is now, and whether any message waits unread for the lead."""
        done = all(t.status.finished for t in tasks) or stuck(tasks, alive)
        if not done or mail_waiting:
            return Wait()
        if any(k.kind != proto.IDLE for k in self._kept):
            return Turn(tuple(self._kept), final=True)
        idle = tuple(k.id for k in self._kept)
        self._kept, self._kept_ids = [], set()
        return Finish(idle)
