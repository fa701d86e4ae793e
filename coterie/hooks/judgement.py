"""What a model judging a hook is asked, and how its answer is read. Pure: no I/O.

A ``prompt`` or ``agent`` hook's prompt has ``$ARGUMENTS`` replaced by the
hook input JSON (:func:`with_arguments`; without the placeholder the input is
added after the prompt); the model answers a JSON object, ``{"ok": true}`` or
``{"ok": false, "reason": "..."}`` (the older ``decision: "approve"|"block"``
with ``reason`` is read the same way). :func:`read_judgement` turns that into
an :class:`~coterie.hooks.outcome.Outcome`:

- ``ok: true``: the action goes ahead as if no hook had spoken: a model's yes
  grants no permission (the permission rules and mode still decide);
- ``ok: false`` on Stop or SubagentStop: the agent is told the reason and
  keeps working; on the other events the action is blocked (a tool call
  denied, a prompt not sent) and the agent stops, the reason shown to the
  user, as a command hook's ``continue: false`` would;
- no usable answer (not JSON, no ``ok``, an error or a timeout): blocks where
  blocking keeps an action from happening
  (:data:`~coterie.hooks.catalogue.JUDGE_FAILS_CLOSED`), else a notice.

The answer is data: only the ``ok``/``decision`` and ``reason`` fields are read.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from coterie.hooks.catalogue import JUDGE_FAILS_CLOSED
from coterie.hooks.outcome import Outcome

if TYPE_CHECKING:
    from coterie.hooks.catalogue import HookEvent

__all__ = ["JUDGE_SYSTEM", "judge_failed", "read_judgement", "with_arguments"]

#: The placeholder a hook's prompt holds for the hook input JSON.
ARGUMENTS = "$ARGUMENTS"

JUDGE_SYSTEM = """\
You check one step of a coding agent's work on behalf of its user, who wrote \
the criteria below. The step is described by the JSON input included in the \
criteria. Decide whether the step meets them.

Reply with one JSON object and nothing else:
{"ok": true} when it does, or
{"ok": false, "reason": "<what is wrong, in one or two sentences>"} when it does not."""

AGENT_NOTE = """

You may use the Read, Grep and Glob tools to look at the workspace before you \
decide. Your last message must be the JSON object alone."""

_STOPS = frozenset({"Stop", "SubagentStop"})
_DENIES = frozenset({"PreToolUse", "PermissionRequest"})


def with_arguments(prompt: str, payload: str) -> str:
    """*prompt* with the hook input *payload* (JSON) in place of ``$ARGUMENTS``."""
    if ARGUMENTS in prompt:
        return prompt.replace(ARGUMENTS, payload)
    return f"{prompt}\n\n{payload}"


def read_judgement(event: HookEvent, text: str) -> Outcome:
    """The outcome of a model's answer *text* to a hook of *event*."""
    data = _answer(text)
    if data is None:
        return judge_failed(event, "the model answered no JSON decision")
    ok = data.get("ok")
    if not isinstance(ok, bool):
        decision = data.get("decision")
        if decision not in ("approve", "block"):
            return judge_failed(event, 'the model\'s answer has no "ok" decision')
        ok = decision == "approve"
    if ok:
        return Outcome()
    reason = data.get("reason")
    reason = reason.strip() if isinstance(reason, str) and reason.strip() else None
    reason = reason or f"A {event} hook's model said no."
    if event in _STOPS:
        return Outcome(blocked=True, reason=reason)
    return Outcome(
        blocked=True,
        reason=reason,
        permission="deny" if event in _DENIES else None,
        stop=True,
        stop_reason=reason,
        notice=reason,
    )


def judge_failed(event: HookEvent, why: str) -> Outcome:
    """The outcome of a judge that gave no usable answer (*why*)."""
    if event in JUDGE_FAILS_CLOSED:
        reason = f"A {event} hook could not decide ({why}), so this does not go ahead."
        return Outcome(
            blocked=True,
            reason=reason,
            permission="deny" if event in _DENIES else None,
            notice=reason,
        )
    return Outcome(notice=f"{event} hook failed: {why}")


def _answer(text: str) -> dict[str, Any] | None:
    """The JSON object of *text*: all of it, or the outermost ``{...}`` in it (a
    model may wrap it in a code fence or a sentence)."""
    body = text.strip()
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end < start:
        return None
    try:
        data = json.loads(body[start : end + 1])
    except ValueError:
        return None
    return data if isinstance(data, dict) else None
