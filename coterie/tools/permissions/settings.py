"""Loading permission settings from Claude Code's settings files.

Files, lowest precedence first: the user's ``~/.claude/settings.json``, the
project's ``.claude/settings.json``, then ``.claude/settings.local.json``
(both in the workspace). As in Claude Code, rule lists (``permissions.allow``,
``ask``, ``deny``) and ``additionalDirectories`` are merged from every file,
while a single value (``permissions.defaultMode``) comes from the
highest-precedence file that sets it. Keys coterie does not use are ignored;
a file that is not valid JSON, or a permissions entry of the wrong shape or
with a malformed rule, is a :class:`SettingsError` naming the file.

Auto Mode's classifier rules (``autoMode``: ``environment``, ``allow``,
``soft_deny``, ``hard_deny``, with ``"$defaults"`` splicing the built-ins in;
see :mod:`coterie.autonomy.rules`) are read from the user's file and the
local file only, never from the project's checked-in ``.claude/settings.json``:
as in Claude Code, a cloned repository must not be able to loosen the
classifier. Per section, the most local file that sets it wins; a section no
trusted file sets keeps the built-ins.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Final, Literal, get_args

import attrs

from coterie.autonomy import (
    SECTIONS,
    AutoModeRule,
    AutoModeRules,
    AutoModeRulesError,
    load_auto_mode_rules,
)
from coterie.errors import CoterieError
from coterie.tools.permissions.rules import Rule, RuleError, parse_rule

__all__ = [
    "MODES",
    "USER_SETTINGS",
    "Mode",
    "PermissionMode",
    "PermissionSettings",
    "SettingsError",
    "load_settings",
    "load_settings_file",
    "merge_settings",
    "settings_files",
]

Mode = Literal["default", "acceptEdits", "plan", "auto", "dontAsk", "bypassPermissions"]
PermissionMode = Mode  # the name callers outside this package use
MODES: Final[tuple[str, ...]] = get_args(Mode)


class SettingsError(CoterieError, ValueError):
    """A settings file cannot be used: bad JSON, a wrong shape or a malformed rule."""


class _UserDefault:
    def __repr__(self) -> str:
        return "USER_SETTINGS"


#: Stands for ``~/.claude/settings.json`` in :func:`load_settings` (the default).
USER_SETTINGS: Final = _UserDefault()


@attrs.frozen
class PermissionSettings:
    """The permission part of the merged settings, with the files it came from."""

    allow: tuple[Rule, ...] = ()
    ask: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()
    default_mode: Mode | None = None
    additional_directories: tuple[Path, ...] = ()
    files: tuple[Path, ...] = ()
    #: The ``autoMode`` sections the trusted files set, resolved (``$defaults``
    #: spliced in), in :data:`~coterie.autonomy.SECTIONS` order.
    auto_mode_sections: tuple[tuple[str, tuple[AutoModeRule, ...]], ...] = ()
    #: Trusted files (user, local) whose ``autoMode`` was applied.
    auto_mode_files: tuple[Path, ...] = ()
    #: Project files whose ``autoMode`` was ignored (the CLI may say so).
    auto_mode_ignored: tuple[Path, ...] = ()

    @property
    def auto_mode_rules(self) -> AutoModeRules:
        """The Auto Mode classifier's rules: the built-ins, with the sections set here."""
        rules = load_auto_mode_rules()
        if not self.auto_mode_sections:
            return rules
        return attrs.evolve(rules, **dict(self.auto_mode_sections))


def _project_root(path: Path) -> Path:
    # `/path` rules and relative directories are anchored where `.claude` lives.
    parent = path.parent
    return parent.parent if parent.name == ".claude" else parent


def load_settings_file(path: Path, *, auto_mode: bool = True) -> PermissionSettings:
    """The permission settings of one file (which must exist).

    With ``auto_mode=False`` (the project's checked-in file) an ``autoMode``
    object is not applied, only recorded in ``auto_mode_ignored``.
    """
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise SettingsError(
            f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    except UnicodeDecodeError:
        raise SettingsError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise SettingsError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if not isinstance(raw, dict):
        raise SettingsError(f"{path}: the top level must be a JSON object")
    permissions = raw.get("permissions", {})
    if not isinstance(permissions, dict):
        raise SettingsError(f"{path}: 'permissions' must be an object")
    root = _project_root(path)
    lists: dict[str, tuple[Rule, ...]] = {}
    for key in ("allow", "ask", "deny"):
        entries = _string_list(permissions, key, path)
        try:
            lists[key] = tuple(parse_rule(e, root=root, source=str(path)) for e in entries)
        except RuleError as exc:
            raise SettingsError(f"{path}: permissions.{key}: {exc}") from None
    mode = permissions.get("defaultMode")
    if mode is not None and mode not in MODES:
        raise SettingsError(
            f"{path}: permissions.defaultMode is {mode!r}; expected one of {', '.join(MODES)}"
        )
    dirs = tuple(
        Path(os.path.realpath(root / os.path.expanduser(d)))
        for d in _string_list(permissions, "additionalDirectories", path)
    )
    sections: tuple[tuple[str, tuple[AutoModeRule, ...]], ...] = ()
    if "autoMode" in raw and auto_mode:
        sections = _auto_mode_sections(raw["autoMode"], path)
    return PermissionSettings(
        allow=lists["allow"],
        ask=lists["ask"],
        deny=lists["deny"],
        default_mode=mode,
        additional_directories=dirs,
        files=(path,),
        auto_mode_sections=sections,
        auto_mode_files=(path,) if "autoMode" in raw and auto_mode else (),
        auto_mode_ignored=(path,) if "autoMode" in raw and not auto_mode else (),
    )


def _auto_mode_sections(
    value: object, path: Path
) -> tuple[tuple[str, tuple[AutoModeRule, ...]], ...]:
    """The sections one file's ``autoMode`` sets, resolved; a bad shape is a SettingsError."""
    try:
        rules = load_auto_mode_rules(value, source=str(path))
    except AutoModeRulesError as exc:
        raise SettingsError(str(exc)) from None
    assert isinstance(value, dict)  # load_auto_mode_rules refused anything else
    return tuple((name, rules.section(name)) for name in SECTIONS if name in value)


def _string_list(permissions: dict[str, Any], key: str, path: Path) -> list[str]:
    value = permissions.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SettingsError(f"{path}: permissions.{key} must be a list of strings")
    return value


def merge_settings(*layers: PermissionSettings) -> PermissionSettings:
    """Merge layers given lowest precedence first: lists add up, a later mode wins."""
    mode: Mode | None = None
    sections: dict[str, tuple[AutoModeRule, ...]] = {}
    for layer in layers:
        if layer.default_mode is not None:
            mode = layer.default_mode
        sections.update(layer.auto_mode_sections)
    return PermissionSettings(
        allow=tuple(r for layer in layers for r in layer.allow),
        ask=tuple(r for layer in layers for r in layer.ask),
        deny=tuple(r for layer in layers for r in layer.deny),
        default_mode=mode,
        additional_directories=tuple(
            dict.fromkeys(d for layer in layers for d in layer.additional_directories)
        ),
        files=tuple(f for layer in layers for f in layer.files),
        auto_mode_sections=tuple((name, sections[name]) for name in SECTIONS if name in sections),
        auto_mode_files=tuple(f for layer in layers for f in layer.auto_mode_files),
        auto_mode_ignored=tuple(f for layer in layers for f in layer.auto_mode_ignored),
    )


def settings_files(
    workspace: Path, user_settings: Path | _UserDefault | None = USER_SETTINGS
) -> list[Path]:
    """The settings files that exist, lowest precedence first, each once."""
    if isinstance(user_settings, _UserDefault):
        user_settings = Path(os.path.expanduser("~")) / ".claude" / "settings.json"
    candidates = [
        user_settings,
        workspace / ".claude" / "settings.json",
        workspace / ".claude" / "settings.local.json",
    ]
    found: dict[str, Path] = {}
    for candidate in candidates:
        if candidate is not None and candidate.is_file():
            # A workspace that is the home directory must not load a file twice.
            found.setdefault(os.path.realpath(candidate), candidate)
    return list(found.values())


def load_settings(
    workspace: Path, *, user_settings: Path | _UserDefault | None = USER_SETTINGS
) -> PermissionSettings:
    """Load and merge the user, project and local settings of *workspace*.

    *user_settings* is the user file (default ``~/.claude/settings.json``;
    ``None`` skips it, as tests and ``--setting-sources``-style callers may).
    ``autoMode`` is taken from the user and local files, never the project's.
    """
    shared = _project_file(workspace, user_settings)
    return merge_settings(
        *(
            load_settings_file(p, auto_mode=os.path.realpath(p) != shared)
            for p in settings_files(workspace, user_settings)
        )
    )


def _project_file(workspace: Path, user_settings: Path | _UserDefault | None) -> str | None:
    """The real path of the project's checked-in settings file, unless it is also the
    user's own (a workspace that is the home directory): ``autoMode`` is not read there."""
    shared = os.path.realpath(workspace / ".claude" / "settings.json")
    if isinstance(user_settings, _UserDefault):
        user_settings = Path(os.path.expanduser("~")) / ".claude" / "settings.json"
    if user_settings is not None and os.path.realpath(user_settings) == shared:
        return None
    return shared
