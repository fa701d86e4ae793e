"""The agent engine: the turn loop, its limits, and the system prompt.

This package owns one agent's conversation with its model: call the model,
run the tools it asks for through the permission gate, feed the results
back, until a reply asks for no tool or a limit is reached (docs/engine.md). It
uses ``coterie.models`` and ``coterie.tools`` through their public names and
knows nothing of mailboxes or supervision: the Lead actor
(``coterie.actors.lead``) runs it inside the runtime, and the composition
root (``coterie.runtime``) builds each actor's loop.
"""

from coterie.agent._loop import AgentLoop, Limits
from coterie.agent._prompt import build_system_prompt, context_reminder
from coterie.agent.result import SUBTYPES, RunResult, Subtype

__all__ = [
    "SUBTYPES",
    "AgentLoop",
    "Limits",
    "RunResult",
    "Subtype",
    "build_system_prompt",
    "context_reminder",
]
