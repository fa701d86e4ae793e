"""What a hook answered, read as Claude Code reads it; several answers combined.

Theory of operation. :func:`read_result` turns one handler's exit code,
stdout and stderr into an :class:`Outcome`; :func:`combine` folds the
outcomes of one event's handlers (run in parallel) into the :class:`Verdict`
the firing place acts on. Pure: no I/O, no Trio.

- exit 0: stdout is parsed as JSON when it is an object; otherwise, for
  UserPromptSubmit and SessionStart, it is context for the model;
- exit 2: for a blocking event (:data:`~coterie.hooks.catalogue.BLOCKING`)
  the action is blocked and stderr is the reason fed to the model; for the
  others stderr is shown to the user;
- any other exit code: a non-blocking error, stderr shown to the user;
- a handler that could not run (spawn error, timeout, HTTP failure) is a
  non-blocking error, except for PreToolUse and PermissionRequest, where it
  blocks the call: a guard that did not answer has not said yes (coterie
  fails closed where Claude Code goes on).

JSON fields: ``continue: false`` (with ``stopReason``) stops the agent;
``systemMessage`` is shown to the user; ``suppressOutput`` hides stdout;
``decision: "block"`` with ``reason`` blocks (PreToolUse's older
``approve``/``block`` mean allow/deny); ``hookSpecificOutput`` carries
``permissionDecision`` (allow/deny/ask, with ``permissionDecisionReason``),
``updatedInput``, ``additionalContext``, and for PermissionRequest
``decision: {behavior, updatedInput, message}``. Combining: deny over ask
over allow; any block blocks (the reasons joined); contexts are joined; the
last ``updatedInput`` in configuration order wins.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal

import attrs

from coterie.hooks.catalogue import BLOCKING, STDOUT_IS_CONTEXT

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from coterie.hooks.catalogue import HookEvent

__all__ = ["Outcome", "Permission", "Verdict", "combine", "failed", "read_result"]

Permission = Literal["allow", "deny", "ask"]
_RANK: dict[Permission, int] = {"allow": 0, "ask": 1, "deny": 2}
_FAILS_CLOSED = frozenset({"PreToolUse", "PermissionRequest"})


@attrs.frozen
class Outcome:
    """One handler's answer to one event."""

    #: True when the action must not go ahead (exit 2, ``decision: block``,
    #: ``permissionDecision: deny``).
    blocked: bool = False
    #: Why, written for the model (stderr of exit 2, ``reason``...).
    reason: str | None = None
    permission: Permission | None = None
    updated_input: dict[str, Any] | None = None
    #: Text added to what the model sees next (``additionalContext``, a context stdout).
    context: str | None = None
    #: ``continue: false``: the agent stops after this event.
    stop: bool = False
    stop_reason: str | None = None
    #: What the user is shown (``systemMessage``, a non-blocking error's stderr).
    notice: str | None = None


@attrs.frozen
class Verdict:
    """What the handlers of one event decided together (no handler: go ahead)."""

    blocked: bool = False
    reason: str | None = None
    permission: Permission | None = None
    updated_input: dict[str, Any] | None = None
    context: str | None = None
    stop: bool = False
    stop_reason: str | None = None
    notices: tuple[str, ...] = ()
    #: SessionStart only: the variables its hooks wrote to ``CLAUDE_ENV_FILE``
    #: (:mod:`coterie.hooks.sessionenv`), for every later Bash call of the session.
    env: Mapping[str, str] = attrs.field(factory=dict)


def read_result(event: HookEvent, exit_code: int, stdout: str, stderr: str) -> Outcome:
    """The outcome of a handler of *event* that exited with *exit_code*."""
    err = stderr.strip()
    if exit_code == 2:
        if event in BLOCKING:
            reason = err or f"Blocked by a {event} hook."
            permission: Permission | None = "deny" if event in _FAILS_CLOSED else None
            return Outcome(blocked=True, reason=reason, permission=permission)
        return Outcome(notice=err or None)
    if exit_code != 0:
        return Outcome(notice=f"{event} hook exited {exit_code}" + (f": {err}" if err else ""))
    data = _json_object(stdout)
    if data is None:
        text = stdout.strip()
        return Outcome(context=text or None if event in STDOUT_IS_CONTEXT else None)
    return _from_json(event, data)


def failed(event: HookEvent, why: str) -> Outcome:
    """The outcome of a handler that could not run or answer (timeout, spawn, HTTP)."""
    if event in _FAILS_CLOSED:
        reason = f"A {event} hook could not run ({why}), so the call is not allowed."
        return Outcome(blocked=True, reason=reason, permission="deny", notice=reason)
    return Outcome(notice=f"{event} hook failed: {why}")


def combine(outcomes: Sequence[Outcome]) -> Verdict:
    """The verdict of several outcomes of one event, in configuration order."""
    blocked = [o for o in outcomes if o.blocked]
    permissions = [p for o in outcomes if (p := o.permission) is not None]
    permission: Permission | None = None
    for p in permissions:
        if permission is None or _RANK[p] > _RANK[permission]:
            permission = p
    updated = [o.updated_input for o in outcomes if o.updated_input is not None]
    contexts = [o.context for o in outcomes if o.context]
    stops = [o for o in outcomes if o.stop]
    reasons = [o.reason for o in blocked if o.reason]
    if not blocked and permission is not None:
        reasons = [o.reason for o in outcomes if o.permission == permission and o.reason]
    return Verdict(
        blocked=bool(blocked) or permission == "deny",
        reason="\n".join(dict.fromkeys(reasons)) or None,
        permission=permission,
        updated_input=updated[-1] if updated else None,
        context="\n".join(contexts) or None,
        stop=bool(stops),
        stop_reason=next((o.stop_reason for o in stops if o.stop_reason), None),
        notices=tuple(o.notice for o in outcomes if o.notice),
    )


def _json_object(stdout: str) -> dict[str, Any] | None:
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _from_json(event: HookEvent, data: dict[str, Any]) -> Outcome:
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    reason = _text(data.get("reason"))
    decision = data.get("decision")
    permission: Permission | None = None
    updated: dict[str, Any] | None = None
    blocked = decision == "block" and event in BLOCKING
    if event == "PreToolUse":
        if decision in ("approve", "block"):
            permission = "allow" if decision == "approve" else "deny"
        chosen = specific.get("permissionDecision")
        if chosen in _RANK:
            permission = chosen
            reason = _text(specific.get("permissionDecisionReason")) or reason
        if isinstance(specific.get("updatedInput"), dict):
            updated = specific["updatedInput"]
        blocked = permission == "deny"
    elif event == "PermissionRequest":
        answer = specific.get("decision")
        if isinstance(answer, dict) and answer.get("behavior") in ("allow", "deny"):
            permission = answer["behavior"]
            reason = _text(answer.get("message")) or reason
            if isinstance(answer.get("updatedInput"), dict):
                updated = answer["updatedInput"]
        blocked = permission == "deny"
    if blocked and reason is None:
        reason = f"Blocked by a {event} hook."
    stop = data.get("continue") is False
    return Outcome(
        blocked=blocked,
        reason=reason,
        permission=permission,
        updated_input=updated,
        context=_text(specific.get("additionalContext")),
        stop=stop,
        stop_reason=_text(data.get("stopReason")) if stop else None,
        notice=_text(data.get("systemMessage")),
    )
