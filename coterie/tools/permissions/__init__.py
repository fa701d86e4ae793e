"""Permission rules, settings, the policy and the gate (docs/engine.md).

Owns: parsing Claude Code's rule syntax (``Bash(npm run test *)``,
``Read(./secrets/**)``), loading and merging its settings files, reading
shell commands well enough to judge every part, the hard deny list, the pure
:class:`PermissionPolicy` and the :class:`PermissionGate` that asks a human
(or the Auto Mode classifier) when the policy cannot decide alone, the rule
a prompt offers for "don't ask again" and writing it to the project's local
settings. It must
not run tools or talk to models.
"""

from coterie.tools.permissions.gate import Answer, Asker, NarrowedGate, PermissionGate
from coterie.tools.permissions.harddeny import hard_deny_reason
from coterie.tools.permissions.localsettings import add_local_allow_rule, local_settings_path
from coterie.tools.permissions.policy import Behavior, Decision, PermissionPolicy
from coterie.tools.permissions.rules import PATH_RULE_KINDS, Rule, RuleError, parse_rule
from coterie.tools.permissions.settings import (
    MODES,
    USER_SETTINGS,
    Mode,
    PermissionMode,
    PermissionSettings,
    SettingsError,
    load_settings,
    load_settings_file,
    merge_settings,
)
from coterie.tools.permissions.shell import ShellAnalysis, analyze, command_views
from coterie.tools.permissions.suggest import Suggestion, suggest_rule

__all__ = [
    "MODES",
    "PATH_RULE_KINDS",
    "USER_SETTINGS",
    "Answer",
    "Asker",
    "Behavior",
    "Decision",
    "Mode",
    "NarrowedGate",
    "PermissionGate",
    "PermissionMode",
    "PermissionPolicy",
    "PermissionSettings",
    "Rule",
    "RuleError",
    "SettingsError",
    "ShellAnalysis",
    "Suggestion",
    "add_local_allow_rule",
    "analyze",
    "command_views",
    "hard_deny_reason",
    "load_settings",
    "load_settings_file",
    "local_settings_path",
    "merge_settings",
    "parse_rule",
    "suggest_rule",
]
