"""coterie: a multi-agent coding harness built as an actor-model runtime on Trio.

The embedding entry point is :func:`open_agent` (``async with
coterie.open_agent(workdir) as agent: await agent.query(prompt)``, or ``async
for message in agent.stream(prompt)`` for the Agent SDK's typed messages as
they happen: :class:`AssistantMessage`, :class:`ResultMessage`...); the
runtime's parts live in ``coterie.mailbox``, ``coterie.actors``,
``coterie.supervisors``, ``coterie.models``, ``coterie.tools`` and
``coterie.agent``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coterie.version import __claude_code_version__ as __claude_code_version__
from coterie.version import __version__ as __version__

__all__ = [
    "AgentSession", "RunOptions", "RunResult", "open_agent", "open_team",
    # the typed messages of AgentSession.stream (coterie.sdkmessages)
    "AssistantMessage", "ContentBlock", "HookEventMessage", "Message", "ResultMessage",
    "StreamEvent", "SystemMessage", "TaskNotificationMessage", "TaskProgressMessage",
    "TaskStartedMessage", "TaskUpdatedMessage", "TextBlock", "ThinkingBlock",
    "ToolResultBlock", "ToolUseBlock", "UserMessage",
]  # fmt: skip
_SESSION = ("open_agent", "open_team", "AgentSession", "RunOptions")

if TYPE_CHECKING:
    from coterie.agent import RunResult
    from coterie.sdkmessages import (
        AssistantMessage,
        ContentBlock,
        HookEventMessage,
        Message,
        ResultMessage,
        StreamEvent,
        SystemMessage,
        TaskNotificationMessage,
        TaskProgressMessage,
        TaskStartedMessage,
        TaskUpdatedMessage,
        TextBlock,
        ThinkingBlock,
        ToolResultBlock,
        ToolUseBlock,
        UserMessage,
    )
    from coterie.session import AgentSession, RunOptions, open_agent, open_team


def __getattr__(name: str) -> Any:
    # Lazy, so that `import coterie.mailbox` does not load the whole engine.
    if name in _SESSION:
        from coterie import session

        return getattr(session, name)
    if name == "RunResult":
        from coterie.agent import RunResult

        return RunResult
    if name in __all__:  # the rest are the messages
        from coterie import sdkmessages

        return getattr(sdkmessages, name)
    raise AttributeError(f"module 'coterie' has no attribute {name!r}")
