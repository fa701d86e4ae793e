"""Reading the evaluators' answers: goal verdicts and Auto Mode block verdicts.

Both parsers fail towards the safe side, and say why (docs/autonomy.md):

* a goal verdict that cannot be trusted counts as **not met** (so a broken
  evaluator never ends a pursuit), with ``valid=False`` and a reason that is
  fed back to the pursuing agent;
* a block verdict that cannot be trusted **blocks** (fail-closed), with
  ``valid=False`` and a reason for the tool result.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final, Literal

import attrs

__all__ = [
    "BlockVerdict",
    "GoalStatus",
    "GoalVerdict",
    "parse_block_verdict",
    "parse_goal_verdict",
]

GoalStatus = Literal["met", "not_met", "impossible"]

_GOAL_FORMAT: Final = (
    'the evaluator must answer one JSON object: {"ok": true, "reason": "..."},'
    ' {"ok": false, "reason": "..."} or {"ok": false, "impossible": true, "reason": "..."}'
)
# One optional fence around the whole answer, as models like to add; nothing else.
_FENCE: Final = re.compile(r"```(?:json)?[ \t]*\n?(.*?)\n?[ \t]*```", re.DOTALL | re.IGNORECASE)
_BLOCK: Final = re.compile(r"<block>\s*((?i:yes|no))\s*</block>")
_REASON: Final = re.compile(r"\s*<reason>(.*?)</reason>", re.DOTALL)
_ANOTHER_BLOCK: Final = re.compile(r"<\s*/?\s*block\s*>", re.IGNORECASE)
_EXCERPT: Final = 80


@attrs.frozen
class GoalVerdict:
    """The GoalEvaluator's judgement of the goal after one turn.

    ``valid`` is False when the answer was unusable; ``status`` is then
    ``not_met`` and ``reason`` says what was wrong with the answer.
    """

    status: GoalStatus
    reason: str
    valid: bool = True

    @property
    def stops(self) -> bool:
        """Whether the pursuit ends here (the goal is met or impossible)."""
        return self.status != "not_met"


@attrs.frozen
class BlockVerdict:
    """The Auto Mode classifier's answer for one action.

    ``valid`` is False when the answer was unusable; ``block`` is then True
    and ``reason`` says what was wrong with the answer.
    """

    block: bool
    reason: str | None = None
    valid: bool = True


def parse_goal_verdict(text: str) -> GoalVerdict:
    """Read the evaluator's answer; anything but a well-formed verdict is not met."""
    if not isinstance(text, str):
        return _unusable(f"the answer was {type(text).__name__}, not text")
    body = text.strip()
    fenced = _FENCE.fullmatch(body)
    if fenced is not None:
        body = fenced.group(1).strip()
    if not body:
        return _unusable("the answer was empty")
    try:
        data = json.loads(body, object_pairs_hook=_no_duplicate_keys)
    except _DuplicateKey as exc:
        return _unusable(f"the key {exc.args[0]!r} appears twice")
    except (ValueError, RecursionError):
        return _unusable(
            f"the answer is not a single JSON object (it began {json.dumps(_excerpt(body))})"
        )
    if not isinstance(data, dict):
        return _unusable(f"the answer is JSON {_json_type(data)}, not an object")
    reason = data.get("reason")
    problem = _goal_problem(data)
    if problem is not None:
        if isinstance(reason, str) and reason.strip():
            problem += f"; its reason was: {reason.strip()}"
        return _unusable(problem)
    assert isinstance(reason, str)
    if data["ok"] is True:
        return GoalVerdict("met", reason.strip())
    if data.get("impossible") is True:
        return GoalVerdict("impossible", reason.strip())
    return GoalVerdict("not_met", reason.strip())


def _goal_problem(data: dict[str, Any]) -> str | None:
    """What makes *data* an unusable verdict, or ``None`` if it is well formed."""
    if "ok" not in data:
        return 'the key "ok" is missing'
    ok = data["ok"]
    if not isinstance(ok, bool):
        return f'"ok" must be true or false, not {_excerpt(json.dumps(ok))}'
    impossible = data.get("impossible", False)
    if not isinstance(impossible, bool):
        return f'"impossible" must be true or false, not {_excerpt(json.dumps(impossible))}'
    if ok and impossible:
        return '"ok": true contradicts "impossible": true'
    if "reason" not in data:
        return 'the key "reason" is missing'
    reason = data["reason"]
    if not isinstance(reason, str):
        return f'"reason" must be a string, not {_json_type(reason)}'
    if not reason.strip():
        return '"reason" is empty'
    return None


def _unusable(problem: str) -> GoalVerdict:
    return GoalVerdict(
        "not_met",
        f"the goal evaluator's answer could not be used ({problem}), so the goal counts as"
        f" not met; {_GOAL_FORMAT}",
        valid=False,
    )


class _DuplicateKey(ValueError):
    pass


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json keeps the last of two equal keys; {"ok": false, "ok": true} must not pass as met.
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _json_type(value: object) -> str:
    names = {bool: "a boolean", str: "a string", list: "an array", dict: "an object"}
    if value is None:
        return "null"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "a number"
    return names.get(type(value), type(value).__name__)


def _excerpt(text: str) -> str:
    return text if len(text) <= _EXCERPT else text[: _EXCERPT - 3] + "..."


def parse_block_verdict(text: str) -> BlockVerdict:
    """Read the classifier's answer; anything but a clear verdict blocks.

    The answer must begin (after whitespace) with ``<block>yes</block>`` or
    ``<block>no</block>`` (yes/no in any case), optionally followed by
    ``<reason>...</reason>``. Text after that is ignored, unless it holds
    another ``<block>`` tag: an answer that contradicts itself blocks.
    """
    if not isinstance(text, str):
        return _fail_closed(f"the answer was {type(text).__name__}, not text")
    answer = text.lstrip()
    match = _BLOCK.match(answer)
    if match is None:
        return _fail_closed(
            "the classifier's answer did not begin with <block>yes</block> or <block>no</block>"
        )
    rest = answer[match.end() :]
    reason: str | None = None
    found = _REASON.match(rest)
    if found is not None:
        reason = found.group(1).strip() or None
        rest = rest[found.end() :]
    if _ANOTHER_BLOCK.search(rest):
        return _fail_closed("the classifier's answer held more than one <block> verdict")
    return BlockVerdict(block=match.group(1).lower() == "yes", reason=reason)


def _fail_closed(problem: str) -> BlockVerdict:
    return BlockVerdict(block=True, reason=f"{problem}; blocked to be safe", valid=False)
