"""Which settings keys Claude Code documents, and which of them coterie honours.

Every key of Claude Code's settings reference is here once, with whether
coterie acts on it. :func:`check_keys` turns one file's keys into what the
user is told: an unknown (or misspelt) key gets a line naming it and the
file, with the closest known key; a documented key coterie does not act on
is listed, so that nothing is silently ignored.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["PERMISSIONS_KEYS", "TOP_LEVEL_KEYS", "check_keys"]

#: Claude Code's top-level settings keys: True where coterie honours it
#: (``hooks`` and the MCP keys are read by their own parts of coterie).
TOP_LEVEL_KEYS: Final[dict[str, bool]] = {
    "$schema": True,
    "permissions": True,
    "sandbox": True,
    "autoMode": True,
    "model": True,
    "outputStyle": True,
    "env": True,
    "hooks": True,
    "enableAllProjectMcpServers": True,
    "enabledMcpjsonServers": True,
    "disabledMcpjsonServers": True,
    "apiKeyHelper": False,
    "awsAuthRefresh": False,
    "awsCredentialExport": False,
    "cleanupPeriodDays": True,
    "companyAnnouncements": False,
    "includeCoAuthoredBy": False,
    "includeGitInstructions": False,
    "attribution": False,
    "disableAllHooks": False,
    "allowManagedHooksOnly": False,
    "allowManagedPermissionRulesOnly": False,
    "allowManagedMcpServersOnly": False,
    "allowedHttpHookUrls": False,
    "httpHookAllowedEnvVars": False,
    "availableModels": False,
    "otelHeadersHelper": False,
    "statusLine": True,
    "fileSuggestion": False,
    "respectGitignore": False,
    "forceLoginMethod": False,
    "forceLoginOrgUUID": False,
    "allowedMcpServers": False,
    "deniedMcpServers": False,
    "strictKnownMarketplaces": False,
    "enabledPlugins": True,
    "extraKnownMarketplaces": True,
    "alwaysThinkingEnabled": False,
    "effortLevel": False,
    "plansDirectory": False,
    "showTurnDuration": False,
    "spinnerVerbs": False,
    "spinnerTipsEnabled": False,
    "spinnerTipsOverride": False,
    "terminalProgressBarEnabled": False,
    "prefersReducedMotion": False,
    "language": False,
    "autoUpdatesChannel": False,
    "autoMemoryEnabled": False,
    "claudeMdExcludes": False,
    "editorMode": False,
    "theme": False,
    "preferredNotifChannel": False,
    "verbose": False,
    "autoCompactEnabled": False,
    "teammateMode": False,
    "skipWebFetchPreflight": False,
    "feedbackSurveyRate": False,
    "disableAutoMode": False,
    "useAutoModeDuringPlan": False,
    "skipDangerousModePermissionPrompt": False,
    "fastMode": False,
    "outputStyles": False,
}

#: The keys of ``permissions``: True where coterie honours it.
PERMISSIONS_KEYS: Final[dict[str, bool]] = {
    "allow": True,
    "ask": True,
    "deny": True,
    "additionalDirectories": True,
    "defaultMode": True,
    "disableBypassPermissionsMode": False,
    "disableAutoMode": False,
}


def check_keys(raw: dict[str, Any], path: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """One file's (warnings about unknown keys, documented keys coterie does not honour)."""
    unknown: list[str] = []
    unsupported: list[str] = []
    permissions = raw.get("permissions")
    sections = [("", raw, TOP_LEVEL_KEYS)]
    if isinstance(permissions, dict):
        sections.append(("permissions.", permissions, PERMISSIONS_KEYS))
    for prefix, obj, known in sections:
        for key in obj:
            if key not in known:
                close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
                hint = f"; did you mean {prefix}{close[0]!r}?" if close else ""
                unknown.append(f"{path}: unknown setting {prefix}{key!r} (ignored){hint}")
            elif not known[key]:
                unsupported.append(f"{prefix}{key}")
    return tuple(unknown), tuple(unsupported)
