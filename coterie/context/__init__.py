"""An agent's context (docs/context.md, issue 4): durable transcripts and compaction.

This package owns what an agent's conversation becomes over a long run: the
crash-safe, append-only transcript of each actor (``transcript``), the token
estimate of a history calibrated by the API's usage figures (``tokens``),
the memory hierarchy of CLAUDE.md files that the first user message carries
(``memory``), and the compaction funnel that keeps a history within its context budget
(``funnel``, with its cheap stages in ``stages`` and the LLM summary in
``summary``). It works on Messages-format lists and on files in the
directories it is given; it talks to a model only through a
:class:`~coterie.models.Model` passed to it (role ``summarizer``). It must
not import from ``coterie.agent``, ``coterie.actors``, ``coterie.supervisors``
or ``coterie.tools``: the loop calls into it, never the other way round.
"""

from coterie.context.funnel import CompactionReport, ContextOverflow, Funnel, FunnelConfig
from coterie.context.history import (
    HistoryInvalid,
    check_history,
    repair_history,
    user_texts,
)
from coterie.context.memory import MemoryFile, memory_text, project_memory
from coterie.context.summary import SUMMARY_SYSTEM, summary_request
from coterie.context.tokens import (
    CONTEXT_WINDOWS,
    DEFAULT_CONTEXT_WINDOW,
    Budget,
    TokenCounter,
    context_window,
)
from coterie.context.transcript import Replica, TranscriptCorruption, TranscriptLog

__all__ = [
    "CONTEXT_WINDOWS",
    "DEFAULT_CONTEXT_WINDOW",
    "SUMMARY_SYSTEM",
    "Budget",
    "CompactionReport",
    "ContextOverflow",
    "Funnel",
    "FunnelConfig",
    "HistoryInvalid",
    "MemoryFile",
    "Replica",
    "TokenCounter",
    "TranscriptCorruption",
    "TranscriptLog",
    "check_history",
    "context_window",
    "memory_text",
    "project_memory",
    "repair_history",
    "summary_request",
    "user_texts",
]
