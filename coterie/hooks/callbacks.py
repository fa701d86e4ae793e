"""Hooks written in Python: the Agent SDK's ``HookMatcher``, for programs embedding coterie.

A program that opens a run (:func:`coterie.open_agent`, :func:`coterie.open_team`,
or the CLI serving an Agent SDK host) may give hooks as Python callbacks,
grouped as the SDK groups them: ``{"PreToolUse": [HookMatcher("Bash",
[check])]}``. Each callback takes the hook's input (the dict a command hook
reads on its stdin) and returns Claude Code's JSON output as a dict
(``{"decision": "block", "reason": ...}``, ``{"hookSpecificOutput": ...}``)
or None (no opinion). :func:`callback_hooks` turns them into a
:class:`HookConfig` of ``callback`` handlers and the table that names each
callback, so they run beside the settings' hooks, under the same rules
(matchers, timeouts, combination of several answers).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from coterie.hooks.catalogue import EVENTS
from coterie.hooks.config import DEFAULT_TIMEOUT, Handler, HookConfig, HookGroup

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from coterie.hooks.runner import HookCallback

__all__ = ["HookMatcher", "callback_hooks"]


@attrs.frozen
class HookMatcher:
    """Callbacks run for the events whose matched field *matcher* matches (None: all)."""

    matcher: str | None
    hooks: Sequence[HookCallback]
    #: Seconds each callback may take (Claude Code's default for a hook).
    timeout: float = DEFAULT_TIMEOUT


def callback_hooks(
    hooks: Mapping[str, Sequence[HookMatcher]], *, prefix: str = "py"
) -> tuple[HookConfig, dict[str, HookCallback]]:
    """The configuration of *hooks* and its callbacks by id (``prefix_N``, in order).

    An event coterie does not have is a :class:`ValueError` naming it."""
    groups: list[HookGroup] = []
    callbacks: dict[str, HookCallback] = {}
    for event, matchers in hooks.items():
        if event not in EVENTS:
            raise ValueError(f"no hook event {event!r} (events: {', '.join(EVENTS)})")
        for matcher in matchers:
            handlers = []
            for callback in matcher.hooks:
                key = f"{prefix}_{len(callbacks)}"
                callbacks[key] = callback
                handlers.append(Handler("callback", key, matcher.timeout))
            groups.append(HookGroup(event, matcher.matcher, tuple(handlers)))
    return HookConfig(tuple(groups)), callbacks
