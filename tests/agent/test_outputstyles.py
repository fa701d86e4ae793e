"""Output styles (coterie.agent.outputstyles) and what they do to the system prompt."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.agent import build_system_prompt
from coterie.agent._prompt import BRIEF, CODING, DATA, IDENTITY
from coterie.agent.outputstyles import (
    BUILTIN_STYLES,
    DEFAULT_STYLE,
    OutputStyle,
    choose_style,
    find_style,
    parse_style,
    styles_from_files,
    switch_reminder,
)
from coterie.extensions import FrontmatterError

BUILTINS = {style.name: style for style in BUILTIN_STYLES}


def test_the_builtins_are_claude_codes_names_in_its_order() -> None:
    assert list(BUILTINS) == ["default", "Proactive", "Concise", "Explanatory", "Learning"]
    assert BUILTINS["default"].instructions == ""
    assert all(s.keep_coding_instructions for n, s in BUILTINS.items() if n != DEFAULT_STYLE)
    assert "Insight" in BUILTINS["Explanatory"].instructions
    assert "TODO(human)" in BUILTINS["Learning"].instructions


def test_a_style_file_gives_name_description_and_keep_coding_instructions() -> None:
    text = "---\nname: Tutor\ndescription: teaches\nkeep-coding-instructions: true\n---\nTeach.\n"
    style = parse_style(text, "tutor-file", "user", Path("/u/tutor-file.md"))
    assert (style.name, style.description, style.instructions) == ("Tutor", "teaches", "Teach.")
    assert style.keep_coding_instructions
    assert style.source == "user"


def test_a_file_without_frontmatter_is_named_after_itself_and_drops_coding() -> None:
    style = parse_style("Write like a poet.\n", "poet", "project")
    assert (style.name, style.description, style.instructions) == ("poet", "", "Write like a poet.")
    assert not style.keep_coding_instructions


def test_unknown_keys_are_ignored_and_a_list_is_not_a_name() -> None:
    text = "---\nname: [a, b]\ncolour: blue\nkeep-coding-instructions: maybe\n---\nX\n"
    style = parse_style(text, "stem", "user")
    assert style.name == "stem"
    assert not style.keep_coding_instructions


def test_a_malformed_file_is_skipped_with_one_notice_naming_it() -> None:
    bad, good = Path("/p/.claude/output-styles/bad.md"), Path("/p/.claude/output-styles/ok.md")
    styles, notices = styles_from_files(
        [("project", bad, "---\nname: x\n"), ("project", good, "Fine."), ("user", bad, None)]
    )
    assert "ok" in styles
    assert "x" not in styles
    assert len(notices) == 2
    assert all(str(bad) in notice for notice in notices)


def test_the_project_shadows_the_user_and_the_builtins_come_first() -> None:
    styles, _ = styles_from_files(
        [("user", Path("/u/a.md"), "user's"), ("project", Path("/p/a.md"), "project's")]
    )
    assert list(styles)[:5] == list(BUILTINS)
    assert styles["a"].instructions == "project's"


def test_the_settings_name_is_exact_and_an_unknown_one_falls_back_with_a_notice() -> None:
    assert choose_style(None, BUILTINS) == (BUILTINS["default"], None)
    assert choose_style("Explanatory", BUILTINS) == (BUILTINS["Explanatory"], None)
    style, notice = choose_style("explanatory", BUILTINS)
    assert style.is_default
    assert notice is not None
    assert "'explanatory'" in notice


def test_a_person_may_type_a_name_in_any_case() -> None:
    found = find_style("LEARNING", BUILTINS)
    assert found is not None
    assert found.name == "Learning"
    assert find_style("nope", BUILTINS) is None


def prompt(style: OutputStyle | None) -> str:
    return build_system_prompt(Path("/w"), headless=True, style=style, append="APPENDED")


def test_default_leaves_the_prompt_as_it_was() -> None:
    assert prompt(None) == prompt(BUILTINS["default"])
    assert prompt(None).startswith(IDENTITY)


def test_a_builtin_keeps_the_coding_part_drops_the_brief_one_and_comes_before_append() -> None:
    text = prompt(BUILTINS["Explanatory"])
    assert CODING in text
    assert DATA in text
    assert BRIEF not in text
    assert text.index("# Output style: Explanatory") < text.index("APPENDED")


def test_a_custom_style_drops_the_coding_part_unless_it_keeps_it() -> None:
    poet = OutputStyle("poet", instructions="Rhyme.", source="user")
    assert CODING not in prompt(poet)
    assert DATA in prompt(poet)  # what tools return is never the user, whatever the style
    assert prompt(poet).rstrip().endswith("Rhyme.\n\nAPPENDED")
    kept = OutputStyle("poet", instructions="Rhyme.", keep_coding_instructions=True)
    assert CODING in prompt(kept)


def test_a_style_is_added_to_a_replaced_prompt_too() -> None:
    text = build_system_prompt(
        Path("/w"), headless=True, replace="Host's.", style=BUILTINS["Concise"]
    )
    assert text.startswith("Host's.\n\n# Output style: Concise")


def test_a_switch_says_the_style_or_the_return_to_default() -> None:
    assert "# Output style: Learning" in switch_reminder(BUILTINS["Learning"])
    back = switch_reminder(BUILTINS["default"])
    assert back.startswith("<system-reminder>")
    assert "back to default" in back


_KEYS = st.sampled_from(["name", "description", "keep-coding-instructions", "other"])
_VALUES = st.text(st.characters(blacklist_categories=["Cs"]), max_size=20)


@given(
    entries=st.dictionaries(_KEYS, _VALUES, max_size=4),
    body=st.text(max_size=200),
    stem=st.text(st.characters(whitelist_categories=["L", "N"]), min_size=1, max_size=12),
)
def test_any_file_is_a_style_or_a_frontmatter_error(
    entries: dict[str, str], body: str, stem: str
) -> None:
    """Lenient, never half-understood: whatever a file says, it parses to a style with a
    non-empty name (its own, or the file's), or is refused as a whole."""
    front = "".join(f"{key}: {value}\n" for key, value in entries.items())
    text = f"---\n{front}---\n{body}"
    try:
        style = parse_style(text, stem, "user")
    except FrontmatterError:
        return
    assert style.name.strip()
    assert style.name == stem or "name" in entries
    assert style.instructions == style.instructions.strip()
    assert isinstance(style.keep_coding_instructions, bool)


@given(st.text(max_size=300))
def test_any_text_loads_or_is_one_notice(text: str) -> None:
    path = Path("/u/output-styles/s.md")
    styles, notices = styles_from_files([("user", path, text)])
    loaded = [style for style in styles.values() if style.path == path]
    assert len(loaded) + len(notices) == 1
    assert all(str(path) in notice for notice in notices)


@pytest.mark.parametrize(
    "name", [None, "default", "Proactive", "Concise", "Explanatory", "Learning"]
)
def test_every_builtin_is_chosen_by_its_name(name: str | None) -> None:
    style, notice = choose_style(name, BUILTINS)
    assert notice is None
    assert style.name == (name or DEFAULT_STYLE)


def test_output_style_in_settings_must_be_a_name(tmp_path: Path) -> None:
    from coterie.tools.permissions import SettingsError, load_settings_file

    path = tmp_path / "settings.json"
    assert load_settings_file(path, text='{"outputStyle": "Concise"}').output_style == "Concise"
    with pytest.raises(SettingsError, match="outputStyle"):
        load_settings_file(path, text='{"outputStyle": 3}')


def test_the_loader_skips_a_malformed_user_style_with_one_notice(tmp_path: Path) -> None:
    from coterie.extensions import load_extensions

    folder = tmp_path / "home" / ".claude" / "output-styles"
    folder.mkdir(parents=True)
    (folder / "broken.md").write_text("---\nname: [unclosed\n---\nX\n")
    (folder / "fine.md").write_text("---\nname: Fine\n---\nFINE\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    loaded = load_extensions(workspace, trusted=False, home=tmp_path / "home", output_style="Fine")
    assert loaded.output_style is not None
    assert loaded.output_style.instructions == "FINE"
    (notice,) = loaded.notices
    assert "broken.md" in notice
