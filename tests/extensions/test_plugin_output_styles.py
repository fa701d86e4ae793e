"""A plugin's output styles: its ``output-styles/`` folder and the manifest's ``outputStyles``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from coterie.agent.outputstyles import choose_style, styles_from_files
from coterie.extensions import load_extensions
from coterie.extensions.plugins import PluginError, load_plugins, read_plugin
from tests.extensions.pluginfiles import put, write_plugin

if TYPE_CHECKING:
    from pathlib import Path

TEACH = "---\ndescription: Teaches as it goes\n---\nExplain each step.\n"
BRIEF = "---\nname: Brief\nkeep-coding-instructions: true\n---\nAnswer in one line.\n"


@pytest.fixture(autouse=True)
def coterie_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "coterie-home"
    monkeypatch.setenv("COTERIE_HOME", str(home))
    return home


def styled_plugin(root: Path, **manifest: object) -> Path:
    write_plugin(root, manifest={"name": "tutor", **manifest})
    put(root / "output-styles" / "teach.md", TEACH)
    put(root / "extra" / "brief.md", BRIEF)
    return root


def test_a_plugins_styles_are_named_after_it(tmp_path: Path) -> None:
    plugins = load_plugins([styled_plugin(tmp_path / "p", outputStyles="extra/brief.md")])
    styles, notices = styles_from_files(plugins.style_files())
    assert notices == ()
    teach, brief = styles["tutor:teach"], styles["tutor:Brief"]
    assert (teach.description, teach.instructions, teach.source) == (
        "Teaches as it goes",
        "Explain each step.",
        "plugin",
    )
    assert brief.keep_coding_instructions
    assert "teach" not in styles  # named after the plugin: it shadows no one's
    assert choose_style("tutor:teach", styles) == (teach, None)


def test_only_the_folder_without_a_manifest_entry(tmp_path: Path) -> None:
    plugins = load_plugins([styled_plugin(tmp_path / "p")])
    assert [path.name for _, path, _ in plugins.style_files()] == ["teach.md"]


def test_a_folder_with_only_styles_is_a_plugin(tmp_path: Path) -> None:
    put(tmp_path / "styles-only" / "output-styles" / "calm.md", "Stay calm.\n")
    plugins = load_plugins([tmp_path / "styles-only"])
    styles, _ = styles_from_files(plugins.style_files())
    assert styles["styles-only:calm"].instructions == "Stay calm."


def test_a_style_outside_the_plugin_is_refused(tmp_path: Path) -> None:
    root = styled_plugin(tmp_path / "p", outputStyles="../elsewhere")
    plugins = load_plugins([root])
    assert plugins.plugins == ()
    (line,) = plugins.notices
    assert "outputStyles" in line
    assert "not inside the plugin" in line
    with pytest.raises(PluginError):
        read_plugin(root, {})


def test_an_unreadable_style_is_one_notice(tmp_path: Path) -> None:
    root = styled_plugin(tmp_path / "p")
    (root / "output-styles" / "bad.md").write_bytes(b"\xff\xfe not text")
    styles, notices = styles_from_files(load_plugins([root]).style_files())
    assert "tutor:teach" in styles
    (line,) = notices
    assert "bad.md" in line


def test_a_run_may_choose_a_plugins_style(tmp_path: Path) -> None:
    plugins = load_plugins([styled_plugin(tmp_path / "p")])
    home = tmp_path / "home"
    put(home / ".claude" / "settings.json", json.dumps({}))
    ext = load_extensions(
        tmp_path, trusted=False, home=home, plugins=plugins, output_style="tutor:teach"
    )
    assert "tutor:teach" in ext.output_styles
    assert ext.output_style is not None
    assert ext.output_style.name == "tutor:teach"
