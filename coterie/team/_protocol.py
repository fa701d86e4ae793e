"""What the members of a team say to each other: message kinds, and how another
agent's message is shown to a model (as data from that agent, never the user)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coterie.actors import ActorContext
    from coterie.messages import Message

#: A teammate's outcome for a task: body ``{task_id, status, result}`` (to the lead).
RESULT = "result"
#: A teammate has nothing to do: body ``{task_id}`` (the task it just finished, or null).
IDLE = "idle"
#: Free text between members (``SendMessage``): body ``{text}``.
MESSAGE = "message"
#: The lead asks a teammate to stop: body ``{}``; answered by a ``shutdown_response``.
SHUTDOWN_REQUEST = "shutdown_request"
SHUTDOWN_RESPONSE = "shutdown_response"
#: A teammate in plan mode asks to carry out its plan: body ``{task_id, plan}``.
PLAN_REQUEST = "plan_request"
#: The lead's answer: body ``{task_id, approve, feedback}``.
PLAN_APPROVAL = "plan_approval"
#: The runtime tells the lead a teammate was stopped for good: body ``{teammate, reason, tasks}``.
TEAMMATE_STOPPED = "teammate_stopped"

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


def render(message: Message) -> str:
    """*message* as the recipient's model sees it: tagged with its sender, as data."""
    body: dict[str, Any] = message.body if isinstance(message.body, dict) else {}
    if message.kind == RESULT:
        text = f"Task {body.get('task_id')} {body.get('status')}. Result:\n{body.get('result', '')}"
    elif message.kind == PLAN_REQUEST:
        text = (
            f"Plan for {body.get('task_id')} (approve or reject it with ApprovePlan):\n"
            f"{body.get('plan', '')}"
        )
    elif message.kind == TEAMMATE_STOPPED:
        tasks = ", ".join(body.get("tasks", [])) or "none"
        text = (
            f"Teammate {body.get('teammate')} was stopped after repeated crashes "
            f"({body.get('reason')}). Its tasks went back to the board: {tasks}."
        )
    else:
        text = str(body.get("text", ""))
    return tagged(message.sender, message.kind, text)


_CLOSING = re.compile(r"</(agent-message)", re.IGNORECASE)


def tagged(sender: str, kind: str, text: str) -> str:
    """*text* from agent *sender*, in tags it cannot close itself (in any letter case)."""
    safe = _CLOSING.sub(r"<\\/\1", text)
    return f'<agent-message from="{sender}" kind="{kind}">\n{safe}\n</agent-message>'


def preview(kind: str, body: dict[str, Any]) -> str:
    """One line of what a team message says (for ``team.message`` events)."""
    if kind == PLAN_APPROVAL:
        verdict = "approved" if body.get("approve") else "rejected"
        feedback = body.get("feedback")
        text = f"{verdict} the plan for {body.get('task_id')}"
        return f"{text}: {feedback}" if feedback else text
    return str(body.get("text") or body.get("result") or body.get("plan") or "")


async def tell(
    ctx: ActorContext,
    to: str,
    kind: str,
    body: dict[str, Any],
    *,
    message_id: str | None = None,
    correlation_id: str | None = None,
) -> Message:
    """Send a team message (durably), and report it as a ``team.message`` event.

    A *message_id* chosen by the caller makes a re-send after a crash the
    same message, which the recipient recognises and does not handle twice.
    """
    message = await ctx.send(to, kind, body, correlation_id=correlation_id, id=message_id)
    report(ctx, to, kind, body)
    return message


def report(ctx: ActorContext, to: str, kind: str, body: dict[str, Any]) -> None:
    """A ``team.message`` event for a message from *ctx* to *to*."""
    text = preview(kind, body)[:500]
    ctx.emit("team.message", sender=ctx.name, recipient=to, kind=kind, text=text)
