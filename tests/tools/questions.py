"""The AskUserQuestion input the question tests share (in Claude Code's shape)."""

from __future__ import annotations

from typing import Any

#: One single-choice question.
QUESTION: dict[str, Any] = {
    "question": "Which database should we use?",
    "header": "Database",
    "multiSelect": False,
    "options": [
        {"label": "Postgres", "description": "relational"},
        {"label": "SQLite", "description": "one file"},
    ],
}
#: A multiple-choice question to ask after it.
EXTRAS: dict[str, Any] = {
    "question": "Which extras?",
    "header": "Extras",
    "multiSelect": True,
    "options": [
        {"label": "Docs", "description": "write docs"},
        {"label": "Tests", "description": "write tests"},
        {"label": "Bench", "description": "a benchmark"},
    ],
}
