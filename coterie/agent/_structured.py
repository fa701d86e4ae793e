"""The rule of a prompt whose answer must come through StructuredOutput (``--json-schema``).

Theory of operation: the agent's loop keeps one :class:`OutputRule` per prompt
(a fresh one for each ``run`` or ``resume``) and tells it two things. When the
model stops without calling the tool (and no Stop hook keeps it going),
:meth:`OutputRule.stopped` says whether to ask once more: the first time in a
prompt it gives the reminder to send as the next user message, after that
None, and the prompt ends with the model's text and no structured output, as
Claude Code's does. When a reply's calls of the tool were all refused (input
not fitting the schema), :meth:`OutputRule.failed` counts the reply as one
attempt; at :data:`MAX_ATTEMPTS` such replies in the prompt it gives the
message the run ends with (``error_max_structured_output_retries``). A call
that fits ends the prompt with that answer, once the reply's other calls have
run; the loop sees it through the tool (no event reaches the rule).

The counts are of the prompt as this incarnation of the agent saw it: an agent
restarted in the middle of a prompt counts again from zero (``--max-turns``
still bounds it). Nothing here does I/O or imports Trio.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["MAX_ATTEMPTS", "OutputRule", "answer_in"]

#: Replies whose StructuredOutput calls were refused before the prompt gives up
#: (Claude Code's default for ``MAX_STRUCTURED_OUTPUT_RETRIES``).
MAX_ATTEMPTS = 5


@attrs.define
class OutputRule:
    """Whether to ask again, and when to give up, on one prompt (see the module docstring)."""

    #: The tool the answer must come through.
    tool: str
    max_attempts: int = MAX_ATTEMPTS
    _reminded: bool = False
    _failed: int = 0

    def stopped(self) -> str | None:
        """The model stopped without calling the tool: the reminder to send, the first
        time in the prompt; else None (the prompt ends as it is)."""
        if self._reminded:
            return None
        self._reminded = True
        return (
            f"<system-reminder>This request needs its answer through the {self.tool}"
            f" tool: call {self.tool} now with the whole answer, in the shape its"
            " schema gives.</system-reminder>"
        )

    def answered(
        self, calls: Sequence[Mapping[str, Any]], results: Sequence[Mapping[str, Any]]
    ) -> str | None:
        """A reply's tool *calls* ran, with *results*, and none gave the answer: if the
        reply called the tool, it is one attempt (see :meth:`failed`); else None."""
        mine = {c["id"] for c in calls if c["name"] == self.tool}
        refused = [r for r in results if r["tool_use_id"] in mine and r.get("is_error")]
        return self.failed(str(refused[-1]["content"])) if refused else None

    def failed(self, error: str) -> str | None:
        """A reply's calls of the tool were refused (*error*: the last refusal): None
        to let the model try again, or, once the attempts are used up, why the
        prompt ends."""
        self._failed += 1
        if self._failed < self.max_attempts:
            return None
        return (
            f"No valid structured output after {self._failed} attempts; the last"
            f" {self.tool} call was refused: {error}"
        )


def answer_in(messages: list[dict[str, Any]], tool: str) -> dict[str, Any] | None:
    """The input of *tool*'s call in the last assistant message of *messages*, if the
    last message answers it without an error (a history that recorded the answer
    before its agent stopped; the caller checks it still fits)."""
    if len(messages) < 2 or messages[-1]["role"] != "user":
        return None
    calls, results = messages[-2]["content"], messages[-1]["content"]
    if messages[-2]["role"] != "assistant" or isinstance(results, str):
        return None
    fine = {
        b.get("tool_use_id")
        for b in results
        if b.get("type") == "tool_result" and not b.get("is_error")
    }
    for block in reversed(calls):
        if block.get("type") == "tool_use" and block.get("name") == tool and block["id"] in fine:
            answer: dict[str, Any] = block["input"]
            return answer
    return None
