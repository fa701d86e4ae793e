"""The gate's "ask a person" step answered by the host: Claude Code's ``can_use_tool``.

With ``--permission-prompt-tool stdio`` the program driving the run (an Agent
SDK host's ``can_use_tool`` callback) is the person the permission gate asks.
:func:`can_use_tool_request` is the request's body in Claude Code's shape
(``tool_name``, ``input``, ``permission_suggestions``, ``decision_reason``,
``agent_id`` for any agent but the lead), :func:`answer_of` reads the host's
answer (``{"behavior": "allow", "updatedInput": ...}`` or ``{"behavior":
"deny", "message": ...}``) into the gate's :class:`Answer`. Both are pure.
Fail-closed: no answer in time, an error answer, a host gone or an answer in
any other shape is a denial the model can read.

A question only a person answers (AskUserQuestion, the plan tools: their
capabilities say so) goes to the host the same way, marked as Claude Code
marks it (``requires_user_interaction``); the host's ``updatedInput`` carries
AskUserQuestion's ``answers``. Its yes to ExitPlanMode leaves plan mode for
the mode a ``setMode`` of its ``updatedPermissions`` names (``acceptEdits``
or ``default``; ``default`` otherwise, as Claude Code), and to EnterPlanMode
enters plan mode (:func:`~coterie.tools.permissions.answering.mode_after`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from coterie.tools.permissions import Answer
from coterie.tools.permissions.answering import approval, mode_after, person_tools

if TYPE_CHECKING:
    from coterie.hostlink import HostLink, Response
    from coterie.tools.permissions import Suggestion

__all__ = [
    "HOST_ANSWER_SECONDS",
    "HostAsker",
    "answer_of",
    "can_use_tool_request",
    "granted_rule",
]

#: How long a question waits for the host (a person may be answering it).
HOST_ANSWER_SECONDS = 900.0


def can_use_tool_request(
    tool_name: str,
    input: dict[str, Any],
    reason: str,
    *,
    agent: str = "",
    suggestion: Suggestion | None = None,
    tool_use_id: str | None = None,
) -> dict[str, Any]:
    """The body of a ``can_use_tool`` request for one call the policy could not decide."""
    body: dict[str, Any] = {
        "tool_name": tool_name,
        "input": input,
        "permission_suggestions": [] if suggestion is None else [suggestion.for_hooks()],
        "decision_reason": reason,
        "tool_use_id": tool_use_id,
    }
    if agent and agent != "lead":
        body["agent_id"] = agent
    if tool_name in person_tools():
        body["requires_user_interaction"] = True
    return body


def answer_of(response: Response | None, *, tool_name: str) -> Answer:
    """The gate's answer from the host's response (None: it gave none)."""
    if response is None:
        return Answer(
            False,
            reason=f"The program driving this run gave no answer about {tool_name} in time,"
            " so the call is denied.",
            rule="host",
        )
    if response.outcome == "error":
        return Answer(
            False,
            reason=f"The program driving this run could not answer ({response.error}), so"
            " the call is denied.",
            rule="host",
        )
    body = response.body
    behavior = body.get("behavior")
    if behavior == "allow":
        updated = body.get("updatedInput")
        return Answer(True, reason="Allowed by the program driving this run.", rule="host",
                      updated_input=updated if isinstance(updated, dict) else None,
                      grant=granted_rule(body.get("updatedPermissions")))  # fmt: skip
    if behavior == "deny":
        message = body.get("message")
        text = message if isinstance(message, str) and message else "Denied."
        return Answer(False, reason=f"The program driving this run denied it: {text}",
                      rule="host")  # fmt: skip
    return Answer(
        False,
        reason=f"The program driving this run answered in a shape coterie cannot read"
        f" ({str(body)[:120]}), so the call is denied.",
        rule="host",
    )


def granted_rule(updates: Any) -> str | None:
    """The allow rule a host's ``updatedPermissions`` grants (its first ``addRules``
    of behaviour ``allow``, as ``Bash(npm test:*)``), for the rest of the run; None
    if it grants none. Other updates (modes, directories, deny rules) are not
    taken from an answer."""
    for update in updates if isinstance(updates, list) else ():
        if not isinstance(update, dict) or update.get("type") not in ("addRules", "replaceRules"):
            continue
        if update.get("behavior") != "allow":
            continue
        for rule in update.get("rules") or ():
            name = rule.get("toolName") if isinstance(rule, dict) else None
            if isinstance(name, str) and name:
                content = rule.get("ruleContent")
                return f"{name}({content})" if isinstance(content, str) and content else name
    return None


@attrs.frozen
class HostAsker:
    """Asks the host through *link*; every agent of the run asks through it."""

    link: HostLink
    answer_within: float = HOST_ANSWER_SECONDS

    async def ask(
        self,
        tool_name: str,
        input: dict[str, Any],
        reason: str,
        *,
        agent: str = "",
        suggestion: Suggestion | None = None,
        tool_use_id: str | None = None,
    ) -> Answer:
        body = can_use_tool_request(
            tool_name, input, reason, agent=agent, suggestion=suggestion, tool_use_id=tool_use_id
        )
        response = await self.link.ask("can_use_tool", body, answer_within=self.answer_within)
        answer = answer_of(response, tool_name=tool_name)
        if answer.approved and response is not None and tool_name in person_tools():
            # The host answered for the person: its answers, and the mode a plan sets.
            mode = mode_after(tool_name, response.body.get("updatedPermissions"))
            return approval(answer.reason or "Answered by the host.", mode=mode,
                            updated_input=answer.updated_input)  # fmt: skip
        return answer
