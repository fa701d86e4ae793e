"""The Auto Mode classifier's rules: built-ins from a JSON asset, extended in settings.

Four sections (docs/autonomy.md): ``environment`` (facts about where the agent
works), ``hard_deny`` (never, whatever the user said), ``soft_deny`` (not
unless the user clearly asked, or an allow exception covers it) and
``allow`` (exceptions to soft deny). The built-ins ship as
``coterie/assets/auto_mode_rules.json``.

Users change them with the ``autoMode`` settings object. For each section a
list *replaces* the built-ins, unless it holds the string ``"$defaults"``,
which splices the built-ins in at that place; a section left out keeps the
built-ins. A rule is a string (its text) or an object with a
``description`` and an optional short ``name``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from importlib import resources
from typing import Final

import attrs

from coterie.errors import CoterieError

__all__ = [
    "DEFAULTS_MARKER",
    "SECTIONS",
    "AutoModeRule",
    "AutoModeRules",
    "AutoModeRulesError",
    "default_auto_mode_rules",
    "load_auto_mode_rules",
]

#: The sections of the rules, in the order the classifier's prompt shows them.
SECTIONS: Final = ("environment", "hard_deny", "soft_deny", "allow")
#: In a settings list, stands for the built-in rules of that section.
DEFAULTS_MARKER: Final = "$defaults"
_ASSET: Final = "auto_mode_rules.json"
_NAME_LENGTH: Final = 60


class AutoModeRulesError(CoterieError, ValueError):
    """The ``autoMode`` settings (or the built-in rules asset) have the wrong shape.

    It has the same bases as :class:`coterie.tools.SettingsError` (which this
    package cannot import without pulling in the tools and Trio), so the
    CLI's ``except ValueError`` and ``except CoterieError`` both catch it.
    """


@attrs.frozen
class AutoModeRule:
    """One rule: a short ``name`` (shown when it blocks) and its ``description``."""

    name: str
    description: str


@attrs.frozen
class AutoModeRules:
    """The rules the classifier applies, one tuple per section."""

    environment: tuple[AutoModeRule, ...] = ()
    hard_deny: tuple[AutoModeRule, ...] = ()
    soft_deny: tuple[AutoModeRule, ...] = ()
    allow: tuple[AutoModeRule, ...] = ()

    def section(self, name: str) -> tuple[AutoModeRule, ...]:
        """The rules of section *name* (one of :data:`SECTIONS`)."""
        if name not in SECTIONS:
            raise KeyError(name)
        rules: tuple[AutoModeRule, ...] = getattr(self, name)
        return rules


@functools.cache
def default_auto_mode_rules() -> AutoModeRules:
    """The built-in rules, read once from the package's JSON asset."""
    where = f"the built-in rules ({_ASSET})"
    try:
        raw = resources.files("coterie").joinpath("assets", _ASSET).read_text(encoding="utf-8")
        data = json.loads(raw)
    except (OSError, ValueError) as exc:
        raise AutoModeRulesError(f"{where} cannot be read: {exc}") from None
    if not isinstance(data, dict) or set(data) != set(SECTIONS):
        raise AutoModeRulesError(f"{where} must be an object with the keys {', '.join(SECTIONS)}")
    empty = AutoModeRules()
    return AutoModeRules(**{s: _section(data[s], s, empty, where) for s in SECTIONS})


def load_auto_mode_rules(
    settings_value: object | None = None, *, source: str | None = None
) -> AutoModeRules:
    """The rules after applying the ``autoMode`` settings object *settings_value*.

    ``None`` means no ``autoMode`` setting: the built-ins. *source* (a file
    name, say) goes into error messages. Raises :class:`AutoModeRulesError`
    for a value of the wrong shape: not an object, a section that is not a
    list, a rule that is neither a non-empty string nor an object with a
    non-empty ``description``, or ``"$defaults"`` twice in one list. Keys
    coterie does not know are ignored, as in the rest of the settings.
    """
    defaults = default_auto_mode_rules()
    if settings_value is None:
        return defaults
    where = f"{source}: autoMode" if source else "autoMode"
    if not isinstance(settings_value, Mapping):
        raise AutoModeRulesError(f"{where} must be an object, not {_kind(settings_value)}")
    sections = {
        name: (
            _section(settings_value[name], name, defaults, where)
            if name in settings_value
            else defaults.section(name)
        )
        for name in SECTIONS
    }
    return AutoModeRules(**sections)


def _section(
    value: object, name: str, defaults: AutoModeRules, where: str
) -> tuple[AutoModeRule, ...]:
    if not isinstance(value, list):
        raise AutoModeRulesError(f"{where}.{name} must be a list of rules, not {_kind(value)}")
    rules: list[AutoModeRule] = []
    spliced = False
    for index, entry in enumerate(value):
        if entry == DEFAULTS_MARKER:
            if spliced:
                raise AutoModeRulesError(f"{where}.{name}: {DEFAULTS_MARKER!r} appears twice")
            spliced = True
            rules.extend(defaults.section(name))
        else:
            rules.append(_rule(entry, f"{where}.{name}[{index}]"))
    return tuple(rules)


def _rule(entry: object, where: str) -> AutoModeRule:
    if isinstance(entry, str):
        text = " ".join(entry.split())
        if not text:
            raise AutoModeRulesError(f"{where}: a rule must not be empty")
        return AutoModeRule(name=_short(text), description=text)
    if not isinstance(entry, Mapping):
        raise AutoModeRulesError(
            f"{where}: a rule is a string or an object with a description, not {_kind(entry)}"
        )
    description = entry.get("description")
    if not isinstance(description, str) or not description.strip():
        raise AutoModeRulesError(f"{where}: the rule needs a non-empty string 'description'")
    name = entry.get("name")
    if name is None:
        name = _short(" ".join(description.split()))
    elif not isinstance(name, str) or not name.strip():
        raise AutoModeRulesError(f"{where}: 'name' must be a non-empty string")
    return AutoModeRule(name=" ".join(name.split()), description=description.strip())


def _short(text: str) -> str:
    # A rule's name is quoted when it blocks; a whole paragraph would drown the reason.
    return text if len(text) <= _NAME_LENGTH else text[: _NAME_LENGTH - 3].rstrip() + "..."


def _kind(value: object) -> str:
    if value is None:
        return "null"
    kinds = {bool: "a boolean", str: "a string", list: "a list", dict: "an object"}
    return kinds.get(type(value), "a number" if isinstance(value, int | float) else "a value")
