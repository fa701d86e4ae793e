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
