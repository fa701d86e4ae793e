"""Skills read as leniently as Claude Code 2.1 reads them (each case measured against it).

Named after the folder whatever ``name`` says; a description from the body's
first line when the frontmatter has none; ``when_to_use`` appended; keys
Claude Code ignores (nested maps too) ignored; frontmatter that is not YAML
ignored whole; ``disable-model-invocation`` and ``user-invocable`` kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.extensions import AgentsError, FrontmatterError, parse_frontmatter
from coterie.extensions.skills import read_skill, skill_from_folder

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.extensions import SkillDefinition


def skill(tmp_path: Path, folder: str, text: str) -> SkillDefinition:
    path = tmp_path / folder
    path.mkdir(parents=True, exist_ok=True)
    (path / "SKILL.md").write_text(text)
    return skill_from_folder(path, "project")


def test_a_title_case_name_loads_under_the_folder_s_name(tmp_path: Path) -> None:
    text = "---\nname: Hook Development\ndescription: Use to write hooks.\nversion: 0.1.0\n---\nB\n"
    found = skill(tmp_path, "hook-dev", text)
    assert found.name == "hook-dev"
    assert found.display_name is None  # a name with spaces is not shown
    assert found.listing == "- hook-dev: Use to write hooks."
    assert found.described


@pytest.mark.parametrize(
    ("given_name", "shown"),
    [("other-name", "other-name"), ("y_under", "y_under"), ("ZFolder", "ZFolder"),
     ("the-folder", None), ("Two Words", None)],
)  # fmt: skip
def test_a_different_name_without_spaces_is_shown_beside_the_folder(
    tmp_path: Path, given_name: str, shown: str | None
) -> None:
    found = skill(tmp_path, "the-folder", f"---\nname: {given_name}\ndescription: d\n---\nB\n")
    assert found.name == "the-folder"
    assert found.display_name == shown
    expected = f"the-folder ({shown})" if shown else "the-folder"
    assert found.listing == f"- {expected}: d"


@pytest.mark.parametrize(
    ("text", "description"),
    [
        ("---\nname: x\n---\n\nFirst line here\nsecond line.\n\nMore.\n", "First line here"),
        ("---\ndescription:\n---\n\n# The Heading\n\nParagraph.\n", "The Heading"),
        ("No frontmatter, first line.\nsecond\n", "No frontmatter, first line."),
        ("---\ndescription:\n  - one\n  - two\n---\nbody L\n", "body L"),
    ],
)
def test_without_a_description_the_body_s_first_line_stands_in(
    tmp_path: Path, text: str, description: str
) -> None:
    found = skill(tmp_path, "s", text)
    assert found.description == description
    assert not found.described


def test_when_to_use_follows_the_description_and_maps_are_ignored(tmp_path: Path) -> None:
    text = (
        "---\ndescription: |\n  Line one\n  line two\nwhen_to_use: when testing\n"
        "metadata:\n  author: someone\n  tags: [a, b]\nhooks:\n  PreToolUse:\n"
        "    - matcher: Bash\nlicense: MIT\n---\nBody\n"
    )
    found = skill(tmp_path, "multi", text)
    assert found.description == "Line one line two - when testing"
    assert found.body == "Body"


def test_frontmatter_that_is_not_yaml_is_ignored_whole(tmp_path: Path) -> None:
    text = "---\ndescription: bad yaml\nallowed-tools: Bash\nfoo: [unclosed\n---\nbody B\n"
    found = skill(tmp_path, "bad-yaml", text)
    assert found.description == "body B"
    assert found.body == "body B"
    assert found.allowed_tools == ()  # nothing granted from frontmatter not understood
    assert not found.described


def test_colons_in_a_plain_description_are_text(tmp_path: Path) -> None:
    text = "---\ndescription: Use when: the user says hi. Also: more\n---\nB\n"
    assert skill(tmp_path, "c", text).description == "Use when: the user says hi. Also: more"


def test_invocation_flags(tmp_path: Path) -> None:
    hidden = skill(tmp_path, "h", "---\ndescription: d\ndisable-model-invocation: true\n---\nB")
    assert (hidden.model_invocable, hidden.user_invocable) == (False, True)
    private = skill(tmp_path, "u", "---\ndescription: d\nuser-invocable: false\n---\nB")
    assert (private.model_invocable, private.user_invocable) == (True, False)
    plain = skill(tmp_path, "p", "---\ndescription: d\nargument-hint: [file]\n---\nB")
    assert (plain.model_invocable, plain.user_invocable) == (True, True)


def test_a_skill_with_no_text_at_all_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AgentsError, match="no description"):
        skill(tmp_path, "empty", "---\nname: empty\n---\n\n")


def test_a_folder_name_that_cannot_be_a_command_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AgentsError, match="folder name"):
        skill(tmp_path, "two words", "---\ndescription: d\n---\nB\n")


NAMES = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=30)


@given(NAMES)
def test_whatever_the_name_says_the_folder_names_the_skill(given_name: str) -> None:
    quoted = '"' + given_name.replace("\\", "\\\\").replace('"', '\\"') + '"'
    meta, body = read_skill(f"---\nname: {quoted}\ndescription: d\n---\nB\n")
    assert meta["name"] == given_name
    assert body == "B\n"


INNER_KEYS = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
INNER_VALUES = st.from_regex(r"[a-z0-9]{1,8}", fullmatch=True)


@given(st.dictionaries(INNER_KEYS, INNER_VALUES, min_size=1, max_size=4))
def test_nested_maps_are_left_out_when_asked(inner: dict[str, str]) -> None:
    block = "".join(f"  {k}: {v}\n" for k, v in inner.items())
    text = f"---\ndescription: d\nmetadata:\n{block}---\nBody\n"
    meta, body = parse_frontmatter(text, maps="skip")
    assert meta == {"description": "d"}
    assert body == "Body\n"
    strict, _ = parse_frontmatter(text)  # read as folded text there
    assert "metadata" in strict


def test_a_deeper_map_is_an_error_unless_skipped() -> None:
    text = "---\ndescription: d\nhooks:\n  PreToolUse:\n    - matcher: Bash\n---\nB\n"
    with pytest.raises(FrontmatterError):
        parse_frontmatter(text)
    assert parse_frontmatter(text, maps="skip")[0] == {"description": "d"}


def test_a_folded_text_is_not_a_map(tmp_path: Path) -> None:
    meta, _ = parse_frontmatter("---\ndescription:\n  Use when asked\n  twice\n---\n", maps="skip")
    assert meta == {"description": "Use when asked twice"}


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        ("description: Use when asked\n  to add a hook.", "Use when asked to add a hook."),
        ('description: "Quoted, and\n  it goes on."', "Quoted, and it goes on."),
        ("description: 'It''s long\n  too'", "It's long too"),
    ],
)  # fmt: skip
def test_a_text_may_go_on_over_indented_lines(raw: str, text: str) -> None:
    meta, _ = parse_frontmatter(f"---\n{raw}\n---\n")
    assert meta == {"description": text}
