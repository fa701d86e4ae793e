"""Loading permission settings from Claude Code's settings files.

Files, lowest precedence first: the user's ``~/.claude/settings.json`` (in
``$CLAUDE_CONFIG_DIR`` when it is set, :func:`coterie.home.claude_dir`), the
project's ``.claude/settings.json``, then ``.claude/settings.local.json``
(both in the workspace). As in Claude Code, rule lists (``permissions.allow``,
``ask``, ``deny``) and ``additionalDirectories`` are merged from every file,
while a single value (``permissions.defaultMode``) comes from the
highest-precedence file that sets it. Every key Claude Code documents is
known (:mod:`~coterie.tools.permissions.keys`): an unknown or misspelt one is
a warning naming it and its file, a documented one coterie does not act on is
listed once (:attr:`PermissionSettings.key_notices`); ``model``, ``env``,
``outputStyle`` and ``statusLine`` (:mod:`coterie.ui.statusline`) are honoured.
A file that is not valid JSON, or a permissions entry of the wrong shape or
with a malformed rule, is a :class:`SettingsError` naming the file.

The ``sandbox`` object (Claude Code's keys, parsed by the Bash sandbox) is
merged as Claude Code merges settings: objects key by key, lists added up
(repeated values once), any other value from the most local file.

**Workspace trust** (:mod:`coterie.trust`): the project's and the local file
live in the checkout, so until the workspace is trusted (``coterie trust``)
what they would widen is ignored: ``permissions.allow``,
``additionalDirectories``, ``defaultMode``, ``autoMode``, ``env``, ``model``,
``outputStyle``, ``statusLine`` and every ``sandbox``
key but the narrowing ones (``filesystem.denyRead``/``denyWrite``,
``network.deniedDomains``, ``allowUnsandboxedCommands: false``,
``failIfUnavailable: true``). Their deny and ask rules always apply; the user's
file is never affected. :attr:`PermissionSettings.ignored` lists what was
left out and :attr:`PermissionSettings.untrusted_notice` says it in one line.
Once trusted, a project or local file applies whole only as it was when the
user trusted the folder (:class:`coterie.trust.Approval`): one that is new or
changed since counts as an untrusted folder's file, and the notice names it.

Auto Mode's classifier rules (``autoMode``, see :mod:`coterie.autonomy.rules`)
are read from the user's and the (trusted) local file, never from the project's
checked-in one: as in Claude Code, a cloned repository must not loosen the
classifier. Per section, the most local file that sets it wins; a section no
trusted file sets keeps the built-ins.
"""

from __future__ import annotations

import copy
import json
import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs

from coterie.autonomy import (
    SECTIONS,
    AutoModeRule,
    AutoModeRules,
    AutoModeRulesError,
    load_auto_mode_rules,
)
from coterie.errors import CoterieError
from coterie.home import claude_dir
from coterie.tools.permissions.keys import check_keys
from coterie.tools.permissions.modes import MODES, Mode
from coterie.tools.permissions.rules import Rule, RuleError, parse_rule
from coterie.trust import Approval, approval, file_digest

if TYPE_CHECKING:
    from collections.abc import Collection

    from coterie.ui.statusline import StatusLineConfig

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
    "settings_items",
]

PermissionMode = Mode  # the name callers outside this package use


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
    #: The merged raw ``sandbox`` objects of the files that apply (the Bash
    #: sandbox parses it); an untrusted checkout's only with its narrowing keys.
    sandbox: dict[str, Any] = attrs.field(factory=dict, hash=False)
    #: Whether the workspace was trusted when the settings were loaded (its
    #: project and local files applied whole). False unless :func:`load_settings` says so.
    trusted: bool = False
    #: What an untrusted workspace's files set and was ignored, as settings keys
    #: (``permissions.allow``, ``sandbox.network.allowedDomains``, ...), each once.
    ignored: tuple[str, ...] = ()
    #: The files some of whose settings were ignored.
    ignored_files: tuple[Path, ...] = ()
    #: The workspace these settings were loaded for (None for a single file).
    workspace: Path | None = None
    #: ``model``: the run's model when none is asked for (the most local file's).
    model: str | None = None
    #: ``env``: variables for the run's tools and model client (files merged;
    #: never an untrusted workspace's).
    env: dict[str, str] = attrs.field(factory=dict, hash=False)
    #: ``outputStyle``: the name of the run's output style (the most local file's;
    #: never an untrusted workspace's), as written (see :mod:`coterie.agent.outputstyles`).
    output_style: str | None = None
    #: ``cleanupPeriodDays``: how long a run's checkpoints are kept after its last
    #: one (docs/checkpoints.md); None: the default. Never an untrusted workspace's
    #: (it deletes the user's data).
    cleanup_period_days: int | None = None
    #: ``statusLine``: the command the interactive session shows under its prompt
    #: (the most local file's; never an untrusted workspace's: it is code).
    status_line: StatusLineConfig | None = None
    #: One line per unknown or misspelt key, naming it and its file.
    unknown_keys: tuple[str, ...] = ()
    #: Documented keys coterie does not act on, each with the file setting it.
    unsupported: tuple[tuple[str, Path], ...] = ()
    #: A trusted workspace's files that are new or changed since it was trusted:
    #: they apply as an untrusted folder's would (their hooks must not run).
    unapproved_files: tuple[Path, ...] = ()
    #: The one line saying so, and how to approve them.
    unapproved_notice: str | None = None
    #: What the run approved of the workspace's files, as :func:`load_settings`
    #: decided it (None for a single file): the extensions and MCP servers load by it.
    approval: Approval | None = attrs.field(default=None, eq=False)

    @property
    def key_notices(self) -> tuple[str, ...]:
        """What to tell the user about the keys: each unknown key, and once the
        documented keys that are not supported."""
        if not self.unsupported:
            return self.unknown_keys
        keys = dict.fromkeys(key for key, _ in self.unsupported)
        files = dict.fromkeys(str(path) for _, path in self.unsupported)
        line = (
            f"settings not supported by coterie (ignored): {', '.join(keys)}"
            f" (in {', '.join(files)})"
        )
        return (*self.unknown_keys, line)

    @property
    def untrusted_notice(self) -> str | None:
        """One line saying what an untrusted workspace's settings lost and how to
        trust it (or, in a trusted one, which files are new or changed since and how
        to approve them); None when nothing was ignored."""
        if self.unapproved_notice is not None:
            return self.unapproved_notice
        if not self.ignored:
            return None
        where = shlex.quote(str(self.workspace)) if self.workspace is not None else "DIR"
        return (
            f"{self.workspace or 'this folder'} is not trusted, so its settings' "
            f"{', '.join(self.ignored)} were ignored (deny and ask rules still apply);"
            f" `coterie trust {where}` trusts it"
        )

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


def load_settings_file(
    path: Path, *, auto_mode: bool = True, trusted: bool = True, text: str | None = None
) -> PermissionSettings:
    """The permission settings of one file (which must exist).

    With ``auto_mode=False`` (the project's checked-in file) an ``autoMode``
    object is not applied, only recorded in ``auto_mode_ignored``. With
    ``trusted=False`` (a file of an untrusted workspace) what it would widen is
    left out and listed in ``ignored``; the whole file is still checked.
    With *text* that is the file's content (``--settings '{...}'``; *path* then
    names it in errors and anchors its ``/path`` rules in its parent).
    """
    try:
        raw = json.loads(path.read_text(encoding="utf-8") if text is None else text)
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
    sandbox = raw.get("sandbox", {})
    if not isinstance(sandbox, dict):
        raise SettingsError(f"{path}: 'sandbox' must be an object")
    model = raw.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise SettingsError(f"{path}: 'model' must be a model name")
    env = _env(raw.get("env", {}), path)
    style = raw.get("outputStyle")
    if style is not None and (not isinstance(style, str) or not style.strip()):
        raise SettingsError(f"{path}: 'outputStyle' must be the name of an output style")
    status = _status_line(raw["statusLine"], path) if "statusLine" in raw else None
    days = raw.get("cleanupPeriodDays")
    if days is not None and (isinstance(days, bool) or not isinstance(days, int) or days < 1):
        raise SettingsError(f"{path}: 'cleanupPeriodDays' must be a number of days, 1 or more")
    unknown, unsupported = check_keys(raw, path)
    settings = PermissionSettings(
        allow=lists["allow"],
        ask=lists["ask"],
        deny=lists["deny"],
        default_mode=mode,
        additional_directories=dirs,
        files=(path,),
        auto_mode_sections=sections,
        auto_mode_files=(path,) if "autoMode" in raw and auto_mode else (),
        auto_mode_ignored=(path,) if "autoMode" in raw and not auto_mode else (),
        sandbox=copy.deepcopy(sandbox),
        trusted=trusted,
        model=model,
        env=env,
        output_style=style,
        status_line=status,
        cleanup_period_days=days,
        unknown_keys=unknown,
        unsupported=tuple((key, path) for key in unsupported),
    )
    return settings if trusted else _untrusted(settings, sandbox, path)


def _status_line(value: object, path: Path) -> StatusLineConfig:
    # Imported here: the status line's module is the interactive session's (coterie.ui).
    from coterie.ui.statusline import StatusLineError, parse_status_line

    try:
        return parse_status_line(value, str(path))
    except StatusLineError as exc:
        raise SettingsError(str(exc)) from None


def _env(value: object, path: Path) -> dict[str, str]:
    """``env`` as strings (numbers and booleans written as JSON writes them)."""
    if not isinstance(value, dict):
        raise SettingsError(f"{path}: 'env' must be an object of variables")
    env: dict[str, str] = {}
    for key, item in value.items():
        if not key or "=" in key or "\0" in key:
            raise SettingsError(f"{path}: env: {key!r} is not a variable name")
        if isinstance(item, bool):
            env[key] = "true" if item else "false"
        elif isinstance(item, (str, int, float)):
            env[key] = str(item)
        else:
            raise SettingsError(f"{path}: env.{key} must be a string")
    return env


def _untrusted(
    settings: PermissionSettings, sandbox: dict[str, Any], path: Path
) -> PermissionSettings:
    """*settings* of a file in an untrusted workspace: only what cannot widen."""
    ignored = [
        key
        for key, value in (
            ("permissions.allow", settings.allow),
            ("permissions.additionalDirectories", settings.additional_directories),
            ("permissions.defaultMode", settings.default_mode),
            ("autoMode", settings.auto_mode_files),
            # Not permissions, but fail-closed too: env reaches every command and
            # the model client (PATH, ANTHROPIC_BASE_URL), a model spends money.
            ("env", settings.env),
            ("model", settings.model),
            # A style can drop coterie's coding instructions: the repository's prompt.
            ("outputStyle", settings.output_style),
            # A command the session runs unasked, whenever it draws its prompt.
            ("statusLine", settings.status_line),
            # It deletes the user's checkpoints.
            ("cleanupPeriodDays", settings.cleanup_period_days),
        )
        if value
    ]
    kept: dict[str, Any] = {}
    for keys, value in _leaves(sandbox):
        if _narrows(keys, value):
            _put(kept, keys, copy.deepcopy(value))
        else:
            ignored.append(".".join(("sandbox", *keys)))
    return attrs.evolve(
        settings,
        allow=(),
        default_mode=None,
        additional_directories=(),
        auto_mode_sections=(),
        auto_mode_files=(),
        auto_mode_ignored=(*settings.auto_mode_ignored, *settings.auto_mode_files),
        sandbox=kept,
        env={},
        model=None,
        output_style=None,
        status_line=None,
        cleanup_period_days=None,
        ignored=tuple(ignored),
        ignored_files=(path,) if ignored else (),
    )


#: ``sandbox`` keys that only take away (paths hidden or read-only, domains
#: refused): an untrusted checkout's apply, as its deny rules do.
_NARROWING_LISTS: Final = {("filesystem", "denyRead"), ("filesystem", "denyWrite"),
                           ("network", "deniedDomains")}  # fmt: skip
#: ``sandbox`` flags with the value that takes away.
_NARROWING_FLAGS: Final = {("allowUnsandboxedCommands",): False, ("failIfUnavailable",): True}


def _narrows(keys: tuple[str, ...], value: Any) -> bool:
    if keys in _NARROWING_LISTS:
        return isinstance(value, list)
    # `is`: 0 and 1 are not the booleans a flag needs.
    return keys in _NARROWING_FLAGS and value is _NARROWING_FLAGS[keys]


def _leaves(obj: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """The non-object values of a nested object, each with its key path."""
    out: list[tuple[tuple[str, ...], Any]] = []
    for key, value in obj.items():
        if isinstance(value, dict):
            out.extend(_leaves(value, (*prefix, key)))  # an empty one sets nothing
        else:
            out.append(((*prefix, key), value))
    return out


def _put(obj: dict[str, Any], keys: tuple[str, ...], value: Any) -> None:
    for key in keys[:-1]:
        obj = obj.setdefault(key, {})
    obj[keys[-1]] = value


def _merge_raw(lower: Any, higher: Any) -> Any:
    """*higher* layered over *lower* as Claude Code merges settings: objects key by
    key, lists added up with a repeated scalar kept once, anything else *higher*."""
    if isinstance(lower, dict) and isinstance(higher, dict):
        merged = dict(lower)
        for key, value in higher.items():
            merged[key] = _merge_raw(lower[key], value) if key in lower else value
        return merged
    if isinstance(lower, list) and isinstance(higher, list):
        merged_list = list(lower)
        for item in higher:
            # type() too: True == 1, but they are different settings values.
            if isinstance(item, (dict, list)) or not any(
                type(old) is type(item) and old == item for old in merged_list
            ):
                merged_list.append(item)
        return merged_list
    return higher


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
    sandbox: dict[str, Any] = {}
    model: str | None = None
    style: str | None = None
    status: StatusLineConfig | None = None
    days: int | None = None
    env: dict[str, str] = {}
    for layer in layers:
        if layer.default_mode is not None:
            mode = layer.default_mode
        model = layer.model or model
        style = layer.output_style or style
        status = layer.status_line or status
        days = layer.cleanup_period_days or days
        env.update(layer.env)
        sections.update(layer.auto_mode_sections)
        sandbox = _merge_raw(sandbox, copy.deepcopy(layer.sandbox))
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
        sandbox=sandbox,
        trusted=bool(layers) and all(layer.trusted for layer in layers),
        ignored=tuple(dict.fromkeys(k for layer in layers for k in layer.ignored)),
        ignored_files=tuple(f for layer in layers for f in layer.ignored_files),
        model=model,
        env=env,
        output_style=style,
        status_line=status,
        cleanup_period_days=days,
        unknown_keys=tuple(line for layer in layers for line in layer.unknown_keys),
        unsupported=tuple(item for layer in layers for item in layer.unsupported),
        unapproved_files=tuple(f for layer in layers for f in layer.unapproved_files),
        unapproved_notice=next(
            (n for layer in layers if (n := layer.unapproved_notice) is not None), None
        ),
    )


#: The settings files' sources (``--setting-sources``), lowest precedence first.
SOURCES = ("user", "project", "local")


def settings_files(
    workspace: Path,
    user_settings: Path | _UserDefault | None = USER_SETTINGS,
    sources: Collection[str] = SOURCES,
) -> list[Path]:
    """The settings files that exist, lowest precedence first, each once; only
    those of *sources* (``user``, ``project``, ``local``)."""
    candidates = [
        ("user", _user_file(user_settings)),
        ("project", workspace / ".claude" / "settings.json"),
        ("local", workspace / ".claude" / "settings.local.json"),
    ]
    found: dict[str, Path] = {}
    for source, candidate in candidates:
        if source in sources and candidate is not None and candidate.is_file():
            # A workspace that is the home directory must not load a file twice.
            found.setdefault(os.path.realpath(candidate), candidate)
    return list(found.values())


def load_settings(
    workspace: Path,
    *,
    user_settings: Path | _UserDefault | None = USER_SETTINGS,
    trusted: bool | None = None,
    sources: Collection[str] = SOURCES,
    approved: Approval | None = None,
) -> PermissionSettings:
    """Load and merge the user, project and local settings of *workspace*.

    *user_settings* is the user file (default ``~/.claude/settings.json``, or
    ``$CLAUDE_CONFIG_DIR/settings.json``;
    ``None`` skips it, as tests and ``--setting-sources``-style callers may).
    *trusted* says whether the workspace is trusted; None (the default) asks
    the trust store (:func:`coterie.trust.approval`), so that every caller,
    the CLI and embedders alike, gets the same rule. The project's and the
    local file apply whole only when it is, and then (asked of the store)
    only as the user trusted them: a file new or changed since applies as an
    untrusted folder's. The user's always does.
    ``autoMode`` is taken from the user and local files, never the project's.
    *sources* are the files read (``--setting-sources``). *approved*, given, is
    what the run approved of the workspace (:func:`coterie.trust.run_approval`),
    asked of nobody else; it overrides *trusted*.
    """
    if approved is None and trusted is None:
        approved = approval(workspace)
    if approved is not None:
        trusted = approved.trusted
    user = _user_file(user_settings)
    shared = os.path.realpath(workspace / ".claude" / "settings.json")
    layers = []
    unapproved: list[Path] = []
    for path in settings_files(workspace, user_settings, sources):
        # The user's own file is the user's, even when it is also the workspace's
        # (a workspace that is the home directory).
        mine = user is not None and os.path.realpath(path) == os.path.realpath(user)
        text, ok = None, mine or bool(trusted)
        if ok and not mine and approved is not None:
            text, ok = _approved_text(path, workspace, approved)
            if not ok:
                unapproved.append(path)
        layers.append(
            load_settings_file(
                path, auto_mode=mine or os.path.realpath(path) != shared, trusted=ok, text=text
            )
        )
    merged = merge_settings(*layers)
    notice = None
    if unapproved and approved is not None:
        names = ", ".join(_item(workspace, p) for p in unapproved)
        notice = approved.notice(
            f"the settings {names}", "widen nothing (deny and ask rules still apply)"
        )
    return attrs.evolve(
        merged,
        trusted=bool(trusted),
        workspace=workspace,
        unapproved_files=tuple(unapproved),
        unapproved_notice=notice,
        approval=approved,
    )


def _item(workspace: Path, path: Path) -> str:
    """A workspace file as the trust record names it: its path in the workspace."""
    return path.relative_to(workspace).as_posix()


def _approved_text(path: Path, workspace: Path, approved: Approval) -> tuple[str | None, bool]:
    """The text of *path* (read once: what is checked is what is parsed), and
    whether the user approved it as it is; a file that cannot be read or is not
    text is left for :func:`load_settings_file` to report, as unapproved."""
    try:
        data = path.read_bytes()
    except OSError:
        return None, False
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, False  # read again to be reported: as untrusted, whatever it is then
    return text, approved.approves(_item(workspace, path), file_digest(data))


def settings_items(workspace: Path) -> dict[str, str]:
    """The workspace's settings files as the trust record keeps them (digests by path)."""
    items: dict[str, str] = {}
    for path in settings_files(workspace, None, ("project", "local")):
        try:
            items[_item(workspace, path)] = file_digest(path.read_bytes())
        except OSError:
            continue  # unreadable: not recorded, so not approved
    return items


def _user_file(user_settings: Path | _UserDefault | None) -> Path | None:
    if isinstance(user_settings, _UserDefault):
        return claude_dir() / "settings.json"
    return user_settings
