"""The pure, sans-io part of ``--goal``, ``--loop`` and ``--auto`` (docs/autonomy.md, issue 6).

This package owns the parsers and decisions that let a run go on unattended:
durations and ``--loop`` specs with the ``ScheduleWakeup`` delay clamp
(``durations``, ``loopspec``), the goal and block verdicts (``verdicts``),
the Auto Mode rules with their settings merge and the allow rules Auto Mode
drops (``rules``, ``execution``), the sanitised transcript and the
classifier's prompts (``sanitize``, ``classifier``), the denial limits
(``denials``), and the decisions of a goal pursuit and of a loop's ticks as
pure state machines (``pursuit``, ``ticks``). Apart from reading its rules
asset it does no I/O, never sleeps and never talks to a model; it must not
import ``trio``, ``coterie.actors``, ``coterie.supervisors``,
``coterie.models``, ``coterie.tools``, ``coterie.agent``, ``coterie.context``
or the CLI. The actors that drive it live elsewhere and call in.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coterie.autonomy.classifier import Stage, classifier_request, classifier_system_prompt
    from coterie.autonomy.denials import CONSECUTIVE_LIMIT, TOTAL_LIMIT, DenialTracker
    from coterie.autonomy.durations import DurationError, format_duration, parse_duration
    from coterie.autonomy.execution import (
        ARBITRARY_EXECUTION_COMMANDS,
        drop_arbitrary_execution,
        grants_arbitrary_execution,
    )
    from coterie.autonomy.loopspec import (
        MAX_DELAY,
        MIN_DELAY,
        LoopSpec,
        LoopSpecError,
        clamp_delay,
        parse_loop_spec,
        schedule_hint,
    )
    from coterie.autonomy.pursuit import (
        END_SUBTYPES,
        END_TEXTS,
        End,
        Ending,
        GoalMachine,
        Judge,
        PursuitProtocolError,
        Work,
        feedback,
    )
    from coterie.autonomy.rules import (
        DEFAULTS_MARKER,
        SECTIONS,
        AutoModeRule,
        AutoModeRules,
        AutoModeRulesError,
        default_auto_mode_rules,
        load_auto_mode_rules,
    )
    from coterie.autonomy.sanitize import PENDING_LABEL, classifier_transcript, escape_json
    from coterie.autonomy.ticks import (
        Schedule,
        Stop,
        Tick,
        TickMachine,
        TickOutcome,
        TickProtocolError,
        Wait,
    )
    from coterie.autonomy.verdicts import (
        BlockVerdict,
        GoalStatus,
        GoalVerdict,
        parse_block_verdict,
        parse_goal_verdict,
    )

__all__ = [
    "Schedule",
    "Stop",
    "Tick",
    "TickMachine",
    "TickOutcome",
    "TickProtocolError",
    "Wait",
    "END_SUBTYPES",
    "END_TEXTS",
    "End",
    "Ending",
    "GoalMachine",
    "Judge",
    "PursuitProtocolError",
    "Work",
    "feedback",
    "ARBITRARY_EXECUTION_COMMANDS",
    "CONSECUTIVE_LIMIT",
    "DEFAULTS_MARKER",
    "MAX_DELAY",
    "MIN_DELAY",
    "PENDING_LABEL",
    "SECTIONS",
    "TOTAL_LIMIT",
    "AutoModeRule",
    "AutoModeRules",
    "AutoModeRulesError",
    "BlockVerdict",
    "DenialTracker",
    "DurationError",
    "GoalStatus",
    "GoalVerdict",
    "LoopSpec",
    "LoopSpecError",
    "Stage",
    "classifier_request",
    "classifier_system_prompt",
    "classifier_transcript",
    "clamp_delay",
    "default_auto_mode_rules",
    "drop_arbitrary_execution",
    "escape_json",
    "format_duration",
    "grants_arbitrary_execution",
    "load_auto_mode_rules",
    "parse_loop_spec",
    "parse_block_verdict",
    "parse_duration",
    "parse_goal_verdict",
    "schedule_hint",
]

#: Where each public name is defined, imported on first use (PEP 562): a run
#: imports only the parsers and machines it uses (a plain run needs the denial
#: limits, not the classifier's prompts or the goal machine).
_HOMES = {
    "Stage": "coterie.autonomy.classifier",
    "classifier_request": "coterie.autonomy.classifier",
    "classifier_system_prompt": "coterie.autonomy.classifier",
    "CONSECUTIVE_LIMIT": "coterie.autonomy.denials",
    "TOTAL_LIMIT": "coterie.autonomy.denials",
    "DenialTracker": "coterie.autonomy.denials",
    "DurationError": "coterie.autonomy.durations",
    "format_duration": "coterie.autonomy.durations",
    "parse_duration": "coterie.autonomy.durations",
    "ARBITRARY_EXECUTION_COMMANDS": "coterie.autonomy.execution",
    "drop_arbitrary_execution": "coterie.autonomy.execution",
    "grants_arbitrary_execution": "coterie.autonomy.execution",
    "MAX_DELAY": "coterie.autonomy.loopspec",
    "MIN_DELAY": "coterie.autonomy.loopspec",
    "LoopSpec": "coterie.autonomy.loopspec",
    "LoopSpecError": "coterie.autonomy.loopspec",
    "clamp_delay": "coterie.autonomy.loopspec",
    "parse_loop_spec": "coterie.autonomy.loopspec",
    "schedule_hint": "coterie.autonomy.loopspec",
    "END_SUBTYPES": "coterie.autonomy.pursuit",
    "END_TEXTS": "coterie.autonomy.pursuit",
    "End": "coterie.autonomy.pursuit",
    "Ending": "coterie.autonomy.pursuit",
    "GoalMachine": "coterie.autonomy.pursuit",
    "Judge": "coterie.autonomy.pursuit",
    "PursuitProtocolError": "coterie.autonomy.pursuit",
    "Work": "coterie.autonomy.pursuit",
    "feedback": "coterie.autonomy.pursuit",
    "DEFAULTS_MARKER": "coterie.autonomy.rules",
    "SECTIONS": "coterie.autonomy.rules",
    "AutoModeRule": "coterie.autonomy.rules",
    "AutoModeRules": "coterie.autonomy.rules",
    "AutoModeRulesError": "coterie.autonomy.rules",
    "default_auto_mode_rules": "coterie.autonomy.rules",
    "load_auto_mode_rules": "coterie.autonomy.rules",
    "PENDING_LABEL": "coterie.autonomy.sanitize",
    "classifier_transcript": "coterie.autonomy.sanitize",
    "escape_json": "coterie.autonomy.sanitize",
    "Schedule": "coterie.autonomy.ticks",
    "Stop": "coterie.autonomy.ticks",
    "Tick": "coterie.autonomy.ticks",
    "TickMachine": "coterie.autonomy.ticks",
    "TickOutcome": "coterie.autonomy.ticks",
    "TickProtocolError": "coterie.autonomy.ticks",
    "Wait": "coterie.autonomy.ticks",
    "BlockVerdict": "coterie.autonomy.verdicts",
    "GoalStatus": "coterie.autonomy.verdicts",
    "GoalVerdict": "coterie.autonomy.verdicts",
    "parse_block_verdict": "coterie.autonomy.verdicts",
    "parse_goal_verdict": "coterie.autonomy.verdicts",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # once is enough
    return value
