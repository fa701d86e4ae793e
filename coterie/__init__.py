"""coterie: a multi-agent coding harness built as an actor-model runtime on Trio.

The embedding entry point is :func:`open_agent` (``async with
coterie.open_agent(workdir) as agent: await agent.query(prompt)``); the
runtime's parts live in ``coterie.mailbox``, ``coterie.actors``,
``coterie.supervisors``, ``coterie.models``, ``coterie.tools`` and
``coterie.agent``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["AgentSession", "RunOptions", "RunResult", "open_agent", "open_team"]

if TYPE_CHECKING:
    from coterie.agent import RunResult
    from coterie.session import AgentSession, RunOptions, open_agent, open_team


def __getattr__(name: str) -> Any:
    # Lazy, so that `import coterie.mailbox` does not load the whole engine.
    if name in ("open_agent", "open_team", "AgentSession", "RunOptions"):
        from coterie import session

        return getattr(session, name)
    if name == "RunResult":
        from coterie.agent import RunResult

        return RunResult
    raise AttributeError(f"module 'coterie' has no attribute {name!r}")
