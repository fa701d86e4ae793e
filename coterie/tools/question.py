"""AskUserQuestion: the model's multiple-choice questions to the user, as Claude Code's.

The model sends one to four ``questions``, each with a short ``header``, two
to four ``options`` (a ``label`` and a ``description``) and ``multiSelect``.
The tool never asks anything itself: its capabilities say that every call
is a question to a person (``asks_person``), so the permission
gate puts it to whoever answers for the run, in every mode. A person at the
terminal picks options (:mod:`coterie.ui.asker`); an Agent SDK host answers
its ``can_use_tool`` request with ``updatedInput`` carrying ``answers``
(question text to the chosen label, several joined by ``", "``), as Claude
Code's hosts do. The approved input, answers included, is what :meth:`run`
receives, and the answers are its result. Headless, nobody can answer: the
gate denies the call with a reason the model reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coterie.tools._base import ToolResult
from coterie.tools.capabilities import Capabilities, Effect

if TYPE_CHECKING:
    from coterie.tools._base import ToolContext

__all__ = ["AskUserQuestionTool", "answered", "format_answers"]


_OPTION: dict[str, Any] = {
    "type": "object",
    "properties": {
        "label": {"type": "string", "description": "The choice, in one to five words"},
        "description": {"type": "string", "description": "What choosing it means"},
        "preview": {"type": "string", "description": "Optional content shown with it"},
    },
    "required": ["label", "description"],
    "additionalProperties": False,
}

_QUESTION: dict[str, Any] = {
    "type": "object",
    "properties": {
        "question": {"type": "string", "description": "The whole question, ending in '?'"},
        "header": {"type": "string", "description": "A label of at most 12 characters"},
        "options": {
            "type": "array",
            "minItems": 2,
            "maxItems": 4,
            "items": _OPTION,
            "description": "Two to four distinct choices ('Other' is always offered)",
        },
        "multiSelect": {
            "type": "boolean",
            "default": False,
            "description": "true if several options may be chosen",
        },
    },
    "required": ["question", "header", "options", "multiSelect"],
    "additionalProperties": False,
}

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "questions": {
            "type": "array",
            "minItems": 1,
            "maxItems": 4,
            "items": _QUESTION,
            "description": "One to four questions for the user",
        },
        "answers": {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "description": "Filled in with the user's answers; leave it out",
        },
        "annotations": {
            "type": "object",
            "additionalProperties": {"type": "object"},
            "description": "Notes the user added to answers, by question; leave it out",
        },
        "metadata": {
            "type": "object",
            "properties": {"source": {"type": "string"}},
            "additionalProperties": False,
            "description": "Where the question comes from (not shown to the user)",
        },
    },
    "required": ["questions"],
    "additionalProperties": False,
}


def answered(input: dict[str, Any]) -> dict[str, str]:
    """The answers an approved call carries: question text to answer (strings only)."""
    answers = input.get("answers")
    if not isinstance(answers, dict):
        return {}
    return {str(q): a for q, a in answers.items() if isinstance(a, str)}


def format_answers(answers: dict[str, str]) -> str:
    """The answers as the model reads them: ``"question"="answer"``, comma-separated."""
    return ", ".join(f'"{question}"="{answer}"' for question, answer in answers.items())


class AskUserQuestionTool:
    """Puts multiple-choice questions to the user; their answers are the result."""

    name = "AskUserQuestion"
    description = (
        "Ask the user one to four multiple-choice questions while you work: to learn what"
        " they prefer, settle an ambiguous instruction, or choose between approaches. Each"
        " question has a short header, two to four options with a label and a description,"
        " and multiSelect when several options may be chosen; the user can always answer in"
        " their own words instead. Put a recommended option first and end its label with"
        " '(Recommended)'. In plan mode, ask to settle requirements before you plan, not to"
        " get the plan approved (ExitPlanMode does that). Where nobody can answer (a"
        " headless run) the call is refused: decide yourself and say what you assumed."
    )
    input_schema = _SCHEMA
    # Run state: it changes nothing; each call is a question the person answers.
    # Not offered up front to a team's members (loaded with ToolSearch if needed).
    capabilities = Capabilities(Effect.RUN_STATE, asks_person=True, deferred_in_team=True)

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """The answers the approved input carries (an error if it carries none)."""
        answers = answered(input)
        asked = [q.get("question") for q in input["questions"] if isinstance(q, dict)]
        if not answers:
            return ToolResult(
                "The questions were not answered (whoever approved the call gave no answers)."
                " Decide yourself, and say what you assumed.",
                is_error=True,
            )
        missing = [q for q in asked if isinstance(q, str) and q not in answers]
        note = f" Not answered: {', '.join(missing)}." if missing else ""
        return ToolResult(
            f"The user answered your questions: {format_answers(answers)}.{note} Go on with"
            " these answers in mind."
        )
