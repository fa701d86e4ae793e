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

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coterie.tools.permissions.gate import Answer, Asker, NarrowedGate, PermissionGate
    from coterie.tools.permissions.harddeny import hard_deny_reason
    from coterie.tools.permissions.localsettings import add_local_allow_rule, local_settings_path
    from coterie.tools.permissions.modes import MODES, Mode
    from coterie.tools.permissions.policy import (
        Behavior,
        BypassNotLaunched,
        Decision,
        PermissionPolicy,
    )
    from coterie.tools.permissions.rules import PATH_RULE_KINDS, Rule, RuleError, parse_rule
    from coterie.tools.permissions.settings import (
        USER_SETTINGS,
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
    "BypassNotLaunched",
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


#: Where each public name is defined. Imported on first use (PEP 562), so that one
#: light module of the package can be imported by its full dotted path (the
#: command line's parser does) without loading the whole package.
_HOMES = {
    "Answer": "coterie.tools.permissions.gate",
    "Asker": "coterie.tools.permissions.gate",
    "NarrowedGate": "coterie.tools.permissions.gate",
    "PermissionGate": "coterie.tools.permissions.gate",
    "hard_deny_reason": "coterie.tools.permissions.harddeny",
    "add_local_allow_rule": "coterie.tools.permissions.localsettings",
    "local_settings_path": "coterie.tools.permissions.localsettings",
    "Behavior": "coterie.tools.permissions.policy",
    "Decision": "coterie.tools.permissions.policy",
    "PermissionPolicy": "coterie.tools.permissions.policy",
    "BypassNotLaunched": "coterie.tools.permissions.policy",
    "PATH_RULE_KINDS": "coterie.tools.permissions.rules",
    "Rule": "coterie.tools.permissions.rules",
    "RuleError": "coterie.tools.permissions.rules",
    "parse_rule": "coterie.tools.permissions.rules",
    "MODES": "coterie.tools.permissions.modes",
    "USER_SETTINGS": "coterie.tools.permissions.settings",
    "Mode": "coterie.tools.permissions.modes",
    "PermissionMode": "coterie.tools.permissions.settings",
    "PermissionSettings": "coterie.tools.permissions.settings",
    "SettingsError": "coterie.tools.permissions.settings",
    "load_settings": "coterie.tools.permissions.settings",
    "load_settings_file": "coterie.tools.permissions.settings",
    "merge_settings": "coterie.tools.permissions.settings",
    "ShellAnalysis": "coterie.tools.permissions.shell",
    "analyze": "coterie.tools.permissions.shell",
    "command_views": "coterie.tools.permissions.shell",
    "Suggestion": "coterie.tools.permissions.suggest",
    "suggest_rule": "coterie.tools.permissions.suggest",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, _, attribute = home.partition(":")
    value = getattr(importlib.import_module(module), attribute or name)
    globals()[name] = value  # once is enough
    return value
