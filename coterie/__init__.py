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
#: The Claude Code release whose command line and stream-json protocol coterie
#: follows (docs/cli.md): what ``coterie -v`` and ``system/init`` report as
#: ``claude_code_version``, for the Agent SDKs that check the CLI they drive.
__claude_code_version__ = "2.1.332"
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
