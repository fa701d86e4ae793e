"""What the members of a team say to each other: one attrs class per message kind,
and how another agent's message is shown to a model (as data from that agent,
never the user's words).

Each body class declares its kind (``KIND``) and its fields; :func:`tell`
sends one, :func:`parse` reads one back from a delivered message (``None``
for a body of the wrong shape: a bug or damage, never acted on).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import attrs

if TYPE_CHECKING:
    from collections.abc import Iterable

    from coterie.actors import ActorContext
    from coterie.messages import Message

_str = attrs.validators.instance_of(str)
_optional_str = attrs.validators.optional(_str)
_bool = attrs.validators.instance_of(bool)


def _strings(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(str(v) for v in value)


@attrs.frozen
class Result:
    """A teammate's outcome for a task (to the lead)."""

    KIND: ClassVar[str] = "result"
    task_id: str = attrs.field(validator=_str)
    status: Literal["completed", "failed"] = attrs.field(
        validator=attrs.validators.in_(("completed", "failed"))
    )
    result: str = attrs.field(default="", validator=_str)
    #: ``--isolation worktree``: the branch the task's work was committed on, and
    #: that branch's head (the lead merges it with MergeTask).
    branch: str | None = attrs.field(default=None, validator=_optional_str)
    commit: str | None = attrs.field(default=None, validator=_optional_str)


@attrs.frozen
class Idle:
    """A teammate has nothing to do (*task_id*: the task it just finished, if any)."""

    KIND: ClassVar[str] = "idle"
    task_id: str | None = attrs.field(default=None, validator=_optional_str)


@attrs.frozen
class Text:
    """Free text between members (``SendMessage``)."""

    KIND: ClassVar[str] = "message"
    text: str = attrs.field(validator=_str)


@attrs.frozen
class ShutdownRequest:
    """The lead asks a teammate to stop; answered by a :class:`ShutdownResponse`."""

    KIND: ClassVar[str] = "shutdown_request"


@attrs.frozen
class ShutdownResponse:
    """A teammate's answer to a shutdown request (it stops when it approves)."""

    KIND: ClassVar[str] = "shutdown_response"
    approve: bool = attrs.field(default=True, validator=_bool)


@attrs.frozen
class PlanRequest:
    """A teammate in plan mode asks to carry out its plan."""

    KIND: ClassVar[str] = "plan_request"
    task_id: str = attrs.field(validator=_str)
    plan: str = attrs.field(validator=_str)


@attrs.frozen
class PlanApproval:
    """The lead's answer to a plan request."""

    KIND: ClassVar[str] = "plan_approval"
    task_id: str = attrs.field(validator=_str)
    approve: bool = attrs.field(validator=_bool)
    feedback: str = attrs.field(default="", validator=_str)


@attrs.frozen
class TeammateStopped:
    """The runtime tells the lead a teammate was stopped for good; its tasks went back."""

    KIND: ClassVar[str] = "teammate_stopped"
    teammate: str = attrs.field(validator=_str)
    reason: str = attrs.field(validator=_str)
    tasks: tuple[str, ...] = attrs.field(default=(), converter=_strings)


Body = (
    Result | Idle | Text | ShutdownRequest | ShutdownResponse | PlanRequest | PlanApproval
    | TeammateStopped
)  # fmt: skip
#: Every kind of team message, by its kind.
BODIES: dict[str, type[Body]] = {
    cls.KIND: cls
    for cls in (
        Result, Idle, Text, ShutdownRequest, ShutdownResponse, PlanRequest, PlanApproval,
        TeammateStopped,
    )
}  # fmt: skip

RESULT = Result.KIND
IDLE = Idle.KIND
MESSAGE = Text.KIND
SHUTDOWN_REQUEST = ShutdownRequest.KIND
SHUTDOWN_RESPONSE = ShutdownResponse.KIND
PLAN_REQUEST = PlanRequest.KIND
PLAN_APPROVAL = PlanApproval.KIND
TEAMMATE_STOPPED = TeammateStopped.KIND

#: What the lead's model is told about (each is one turn of the lead).
LEAD_TURNS = frozenset({RESULT, MESSAGE, PLAN_REQUEST, TEAMMATE_STOPPED})

#: The readable list of default teammate names.
NAMES = (
    "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy",
    "mallory", "niaj", "olivia", "peggy", "rupert", "sybil", "trent", "victor", "walter", "zoe",
)  # fmt: skip


def default_names(count: int) -> tuple[str, ...]:
    """*count* teammate names: the readable list first, then ``teammate-N``."""
    if count < 0:
        raise ValueError(f"a team cannot have {count} teammates")
    extra = (f"teammate-{i}" for i in range(len(NAMES) + 1, count + 1))
    return (*NAMES[:count], *extra)


def to_json(body: Body) -> dict[str, Any]:
    """*body* as a message's JSON body (tuples as lists)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in attrs.asdict(body).items()}


def parse(message: Message) -> Body | None:
    """The body of a team *message*, or None if its kind is not a team kind or its
    body has the wrong shape (missing or mistyped fields, unknown keys)."""
    cls = BODIES.get(message.kind)
    if cls is None or not isinstance(message.body, dict):
        return None
    try:
        return cls(**message.body)
    except (TypeError, ValueError):
        return None


#: How much of a teammate's result its report shows the lead: the whole result stays on
#: the board, where TaskGet reads it (a long answer is not paid for in every later turn).
RESULT_SHOWN = 1500


def shown_result(result: str, task_id: str) -> str:
    """*result* as a report shows it: whole up to :data:`RESULT_SHOWN` characters,
    else its start (cut at a line's end near the limit) and where the rest is."""
    if len(result) <= RESULT_SHOWN:
        return result
    cut = result[:RESULT_SHOWN]
    end = cut.rfind("\n", RESULT_SHOWN * 4 // 5)
    if end > 0:
        cut = cut[:end]
    rest = len(result) - len(cut)
    return f"{cut}\n[... {rest:,} more characters: TaskGet {{task_id: {task_id}}} reads it all]"


def render(message: Message) -> str:
    """*message* as the recipient's model sees it: tagged with its sender, as data."""
    body = parse(message)
    if isinstance(body, Result):
        shown = shown_result(body.result, body.task_id)
        text = f"Task {body.task_id} {body.status}. Result:\n{shown}"
        if body.branch is not None:
            text += (
                f"\n\nIts work is committed on branch {body.branch} at {body.commit}:"
                f" merge it into your workspace with MergeTask {{task_id: {body.task_id}}}."
            )
    elif isinstance(body, PlanRequest):
        text = f"Plan for {body.task_id} (approve or reject it with ApprovePlan):\n{body.plan}"
    elif isinstance(body, TeammateStopped):
        tasks = ", ".join(body.tasks) or "none"
        text = (
            f"Teammate {body.teammate} was stopped after repeated crashes "
            f"({body.reason}). Its tasks went back to the board: {tasks}."
        )
    elif isinstance(body, Text):
        text = body.text
    else:
        text = ""
    return tagged(message.sender, message.kind, text)


_CLOSING = re.compile(r"</(agent-message)", re.IGNORECASE)


def tagged(sender: str, kind: str, text: str) -> str:
    """*text* from agent *sender*, in tags it cannot close itself (in any letter case)."""
    safe = _CLOSING.sub(r"<\\/\1", text)
    return f'<agent-message from="{sender}" kind="{kind}">\n{safe}\n</agent-message>'


def preview(body: Body) -> str:
    """One line of what a team message says (for ``team.message`` events)."""
    if isinstance(body, PlanApproval):
        verdict = "approved" if body.approve else "rejected"
        text = f"{verdict} the plan for {body.task_id}"
        return f"{text}: {body.feedback}" if body.feedback else text
    if isinstance(body, Text):
        return body.text
    if isinstance(body, Result):
        return body.result or f"{body.task_id} {body.status}"
    if isinstance(body, PlanRequest):
        return body.plan
    if isinstance(body, TeammateStopped):
        return f"stopped: {body.reason}"
    # The bodies without text say what they are, so that no message shows empty.
    if isinstance(body, Idle):
        return f"idle after {body.task_id}" if body.task_id else "idle"
    if isinstance(body, ShutdownRequest):
        return "asks to stop"
    if isinstance(body, ShutdownResponse):
        return "stopping" if body.approve else "declines to stop"
    return ""


async def tell(
    ctx: ActorContext,
    to: str,
    body: Body,
    *,
    message_id: str | None = None,
    correlation_id: str | None = None,
) -> Message:
    """Send a team message (durably), and report it as a ``team.message`` event.

    A *message_id* chosen by the caller makes a re-send after a crash the
    same message, which the recipient recognises and does not handle twice.
    """
    message = await ctx.send(
        to, body.KIND, to_json(body), correlation_id=correlation_id, id=message_id
    )
    report(ctx, to, body)
    return message


def report(ctx: ActorContext, to: str, body: Body) -> None:
    """A ``team.message`` event for a message from *ctx* to *to*."""
    text = preview(body)[:500]
    ctx.emit("team.message", sender=ctx.name, recipient=to, kind=body.KIND, text=text)
