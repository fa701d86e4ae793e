"""Every settings key is honoured or reported; ``model`` and ``env`` are honoured."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.tools import SettingsError, load_settings
from coterie.tools.permissions.keys import PERMISSIONS_KEYS, TOP_LEVEL_KEYS

if TYPE_CHECKING:
    from pathlib import Path


def write(folder: Path, data: dict[str, Any], name: str = "settings.json") -> Path:
    (folder / ".claude").mkdir(parents=True, exist_ok=True)
    path = folder / ".claude" / name
    path.write_text(json.dumps(data))
    return path


def test_a_misspelt_key_is_named_with_its_file_and_the_close_match(tmp_path: Path) -> None:
    path = write(tmp_path, {"modle": "x", "permissions": {"alow": []}})
    settings = load_settings(tmp_path, user_settings=None, trusted=True)
    assert settings.key_notices == (
        f"{path}: unknown setting 'modle' (ignored); did you mean 'model'?",
        f"{path}: unknown setting permissions.'alow' (ignored); did you mean permissions.'allow'?",
    )


def test_documented_keys_not_supported_are_listed_once(tmp_path: Path) -> None:
    user = write(tmp_path / "home", {"theme": "dark", "companyAnnouncements": ["hi"]})
    write(tmp_path, {"theme": "light", "hooks": {}, "enabledMcpjsonServers": []})
    settings = load_settings(tmp_path, user_settings=user, trusted=True)
    (line,) = settings.key_notices
    assert line.startswith(
        "settings not supported by coterie (ignored): theme, companyAnnouncements"
    )
    assert "hooks" not in line
    assert "enabledMcpjsonServers" not in line


@given(st.sampled_from(sorted(TOP_LEVEL_KEYS)))
def test_every_documented_key_is_known(key: str) -> None:
    from pathlib import Path

    from coterie.tools.permissions.keys import check_keys

    unknown, unsupported = check_keys({key: None}, Path("s.json"))
    assert unknown == ()
    assert (key in unsupported) is (not TOP_LEVEL_KEYS[key])


def test_the_permission_keys_coterie_reads_are_honoured() -> None:
    assert {k for k, v in PERMISSIONS_KEYS.items() if v} == {
        "allow", "ask", "deny", "additionalDirectories", "defaultMode"
    }  # fmt: skip


def test_model_and_env_merge_the_most_local_wins(tmp_path: Path) -> None:
    user = write(tmp_path / "home", {"model": "claude-haiku-4-5", "env": {"A": "1", "B": 2}})
    write(
        tmp_path, {"model": "claude-opus-4-5", "env": {"B": "3", "C": True}}, "settings.local.json"
    )
    settings = load_settings(tmp_path, user_settings=user, trusted=True)
    assert settings.model == "claude-opus-4-5"
    assert settings.env == {"A": "1", "B": "3", "C": "true"}


def test_an_untrusted_project_sets_neither_model_nor_env(tmp_path: Path) -> None:
    write(tmp_path, {"model": "claude-opus-4-5", "env": {"PATH": "/evil"}})
    settings = load_settings(tmp_path, user_settings=None, trusted=False)
    assert settings.model is None
    assert settings.env == {}
    assert "env" in settings.ignored
    assert "model" in settings.ignored


@pytest.mark.parametrize(
    "data", [{"env": []}, {"env": {"A": {}}}, {"env": {"A=B": "x"}}, {"model": 3}, {"model": ""}]
)
def test_bad_model_or_env_is_a_settings_error(tmp_path: Path, data: dict[str, Any]) -> None:
    write(tmp_path, data)
    with pytest.raises(SettingsError):
        load_settings(tmp_path, user_settings=None, trusted=True)
