"""The hook events Claude Code documents, and what each one's answer may do.

Declared once here: which events a hook can block (exit 2, or
``decision: "block"``), which take a matcher and against which input field,
and which take a plain stdout as context for the model.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

__all__ = [
    "BLOCKING",
    "EVENTS",
    "JUDGE_FAILS_CLOSED",
    "MATCHED_ON",
    "MODEL_JUDGED",
    "STDOUT_IS_CONTEXT",
    "HookEvent",
]

HookEvent = Literal[
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "Notification",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "TeammateIdle",
    "TaskCreated",
    "TaskCompleted",
]
EVENTS: Final[tuple[HookEvent, ...]] = get_args(HookEvent)

#: Events whose exit 2 (or ``decision: "block"``) changes what happens: the
#: call, prompt, stop, idling, task creation or completion does not go ahead
#: (PostToolUse/PostToolUseFailure: the reason is fed to the model, the tool
#: has run). For the others exit 2 is only shown to the user.
BLOCKING: Final[frozenset[HookEvent]] = frozenset(
    {
        "UserPromptSubmit",
        "PreToolUse",
        "PermissionRequest",
        "PostToolUse",
        "PostToolUseFailure",
        "Stop",
        "SubagentStop",
        "TeammateIdle",
        "TaskCreated",
        "TaskCompleted",
    }
)

#: The input field a group's ``matcher`` is matched against; events not here
#: ignore the matcher (every group applies).
MATCHED_ON: Final[dict[HookEvent, str]] = {
    "PreToolUse": "tool_name",
    "PermissionRequest": "tool_name",
    "PostToolUse": "tool_name",
    "PostToolUseFailure": "tool_name",
    "SessionStart": "source",
    "SessionEnd": "reason",
    "Notification": "notification_type",
    "SubagentStart": "agent_type",
    "SubagentStop": "agent_type",
    "PreCompact": "trigger",
    "PostCompact": "trigger",
}

#: Events where a plain (non-JSON) stdout of an exit-0 hook is context for the model.
STDOUT_IS_CONTEXT: Final[frozenset[HookEvent]] = frozenset({"UserPromptSubmit", "SessionStart"})

#: Events a ``prompt`` or ``agent`` hook may judge (a model answers ``ok``): those
#: with something to allow or refuse. Elsewhere such a hook is refused on loading.
MODEL_JUDGED: Final[frozenset[HookEvent]] = frozenset(
    {
        "UserPromptSubmit",
        "PreToolUse",
        "PermissionRequest",
        "PostToolUse",
        "PostToolUseFailure",
        "Stop",
        "SubagentStop",
        "TaskCreated",
        "TaskCompleted",
    }
)

#: Where a model judge that gave no usable answer (malformed, missing, timed out)
#: blocks: the events whose block keeps an action from happening. Elsewhere (a
#: Stop asked to go on, a tool that ran already) its failure is only a notice.
JUDGE_FAILS_CLOSED: Final[frozenset[HookEvent]] = frozenset(
    {"UserPromptSubmit", "PreToolUse", "PermissionRequest", "TaskCreated", "TaskCompleted"}
)
