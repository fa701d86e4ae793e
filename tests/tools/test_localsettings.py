"""Saving a "don't ask again" rule into the project's .claude/settings.local.json."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.tools.permissions import SettingsError, add_local_allow_rule, load_settings_file

if TYPE_CHECKING:
    from pathlib import Path


def test_the_rule_is_added_to_a_new_file(tmp_path: Path) -> None:
    path = add_local_allow_rule(tmp_path, "Bash(npm test:*)")
    assert path == tmp_path / ".claude" / "settings.local.json"
    assert json.loads(path.read_text()) == {"permissions": {"allow": ["Bash(npm test:*)"]}}
    assert [r.text for r in load_settings_file(path).allow] == ["Bash(npm test:*)"]


def test_other_keys_and_rules_stay_and_a_rule_is_not_added_twice(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    path = tmp_path / ".claude" / "settings.local.json"
    before = {"env": {"A": "1"}, "permissions": {"allow": ["Read"], "deny": ["Bash(rm:*)"]}}
    path.write_text(json.dumps(before))
    add_local_allow_rule(tmp_path, "Bash(make:*)")
    add_local_allow_rule(tmp_path, "Bash(make:*)")
    assert json.loads(path.read_text()) == {
        "env": {"A": "1"},
        "permissions": {"allow": ["Read", "Bash(make:*)"], "deny": ["Bash(rm:*)"]},
    }
    assert [p.name for p in path.parent.iterdir()] == ["settings.local.json"]  # no temp left


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"permissions": []}',
                                  '{"permissions": {"allow": "Bash"}}'])  # fmt: skip
def test_a_file_that_cannot_be_merged_is_left_untouched(tmp_path: Path, text: str) -> None:
    (tmp_path / ".claude").mkdir()
    path = tmp_path / ".claude" / "settings.local.json"
    path.write_text(text)
    with pytest.raises(SettingsError, match="not saved"):
        add_local_allow_rule(tmp_path, "Bash(make:*)")
    assert path.read_text() == text


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(st.dictionaries(st.text(max_size=8).filter(lambda k: k != "permissions"), json_values))
def test_no_other_key_is_ever_clobbered(tmp_path_factory: Any, other: dict[str, Any]) -> None:
    project = tmp_path_factory.mktemp("p")
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.local.json").write_text(json.dumps(other))
    path = add_local_allow_rule(project, "Bash(make:*)")
    after = json.loads(path.read_text())
    assert after.pop("permissions") == {"allow": ["Bash(make:*)"]}
    assert after == other
