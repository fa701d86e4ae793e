"""ripgrep finds the files, coterie reads and shows them: the same answers as the walk.

Glob and Grep use an ``rg`` binary when one is at hand (issue 14): ripgrep
lists the files (Glob) or those that may match (Grep), and coterie's own
safe reading and rendering do the rest. Hypothesis builds trees and searches
and checks that both ways give exactly the same output.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coterie.tools import GlobTool, GrepTool, ToolContext
from coterie.tools._ripgrep import RG_ENV, find_rg, rg_files, rg_matching

RG = find_rg()
needs_rg = pytest.mark.skipif(
    RG is None and os.environ.get("CI") != "true", reason="no rg binary (pip install ripgrep)"
)

NAMES = st.sampled_from(["a.py", "b.txt", ".env", "c.md", "Main.PY", "d e.py", "x:y.txt"])
DIRS = st.sampled_from(["", "src/", "src/deep/", ".hidden/", ".git/", "node_modules/"])
WORDS = st.sampled_from(["alpha", "Beta", "gamma delta", "def f():", "TODO: fix", "", "x = 1"])
FILES = st.dictionaries(
    st.builds(lambda d, n: d + n, DIRS, NAMES),
    st.lists(WORDS, max_size=6).map(lambda lines: "\n".join(lines) + "\n"),
    max_size=10,
)
SEARCHES = st.fixed_dictionaries(
    {"pattern": st.sampled_from(["alpha", "beta", "^def", "TODO|gamma", r"\bx\b", "a.*a"])},
    optional={
        "output_mode": st.sampled_from(["content", "files_with_matches", "count"]),
        "-i": st.booleans(),
        "-C": st.integers(0, 2),
        "-n": st.booleans(),
        "glob": st.sampled_from(["*.py", "*.{py,md}", "src/**/*.py", "*.PY"]),
        "type": st.sampled_from(["py", "md", "txt"]),
        "head_limit": st.integers(0, 3),
        "multiline": st.booleans(),
    },
)
GLOBS = st.sampled_from(["**/*", "*.py", "**/*.py", "src/**", ".*", "**/*.{txt,md}"])


def both(tool: Any, input: dict[str, Any], root: Path) -> tuple[str, str]:
    """*tool*'s answer to *input* in *root*: with ripgrep, then with the walk."""
    answers = []
    for value in (RG or "", "off"):
        os.environ[RG_ENV] = value
        try:
            result = trio.run(tool.run, input, ToolContext(workspace=root))
        finally:
            del os.environ[RG_ENV]
        answers.append(result.content)
    return answers[0], answers[1]


def build(files: dict[str, str]) -> Path:
    root = Path(tempfile.mkdtemp()).resolve()
    for i, (name, text) in enumerate(sorted(files.items())):
        path = root / name
        if any(p.is_file() for p in path.parents if p != root and p.is_relative_to(root)):
            continue  # a file where a directory would go
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir():
            continue
        path.write_text(text)
        os.utime(path, (1_000_000 + i, 1_000_000 + i))
    return root


@needs_rg
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(FILES, SEARCHES)
def test_grep_answers_the_same_with_ripgrep_and_without(
    files: dict[str, str], search: dict[str, Any]
) -> None:
    root = build(files)
    try:
        with_rg, walked = both(GrepTool(), search, root)
        assert with_rg == walked
    finally:
        shutil.rmtree(root)


@needs_rg
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(FILES, GLOBS)
def test_glob_answers_the_same_with_ripgrep_and_without(
    files: dict[str, str], pattern: str
) -> None:
    root = build(files)
    try:
        with_rg, walked = both(GlobTool(), {"pattern": pattern}, root)
        assert with_rg == walked
    finally:
        shutil.rmtree(root)


@needs_rg
def test_a_pattern_ripgrep_does_not_take_falls_back_to_python(tmp_path: Path) -> None:
    """Look-ahead and back-references are Python ``re``, not ripgrep's syntax."""
    (tmp_path / "a.txt").write_text("foobar\nfoobaz\n")
    assert RG is not None
    assert rg_matching(RG, tmp_path, "foo(?=bar)") is None
    with_rg, walked = both(GrepTool(), {"pattern": r"(o)\1(?=bar)", "output_mode": "content"},
                           tmp_path)  # fmt: skip
    assert with_rg == walked == f"{tmp_path / 'a.txt'}:1:foobar"


@needs_rg
def test_ripgrep_leaves_out_git_and_nothing_else(tmp_path: Path) -> None:
    for name in (".git/config", ".env", "node_modules/x.js", "a/.b/c.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("needle\n")
    (tmp_path / ".gitignore").write_text("node_modules\n.env\n")
    assert RG is not None
    listed = rg_files(RG, tmp_path)
    assert listed is not None
    assert sorted(listed) == [
        ".env", ".gitignore", "a/.b/c.txt", "node_modules/x.js",
    ]  # fmt: skip


def test_coterie_rg_chooses_the_binary(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(RG_ENV, "off")
    assert find_rg() is None
    fake = tmp_path / "rg"
    fake.write_text("#!/bin/sh\necho 'not ripgrep'\n")
    fake.chmod(0o755)
    monkeypatch.setenv(RG_ENV, str(fake))
    assert find_rg() is None  # not a ripgrep: never trusted to list files
    if RG is not None:
        monkeypatch.setenv(RG_ENV, RG)
        assert find_rg() == RG


def test_a_missing_or_broken_rg_means_the_walk(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("needle\n")
    monkeypatch.setenv(RG_ENV, str(tmp_path / "no-such-rg"))
    result = trio.run(GrepTool().run, {"pattern": "needle"}, ToolContext(workspace=tmp_path))
    assert result.content.splitlines() == ["Found 1 file", str(tmp_path / "a.txt")]


def test_what_ripgrep_names_is_only_a_candidate(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An rg that names files outside the workspace, or files that do not match (as a
    walk through a swapped directory could): nothing it names is shown unchecked."""
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("needle SECRET\n")
    (ws / "plain.txt").write_text("nothing here\n")
    (ws / "real.txt").write_text("a needle\n")
    named = [outside / "secret.txt", ws / "plain.txt", ws / "real.txt", ws / "gone.txt"]
    fake = tmp_path / "rg"
    fake.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = --version ]; then echo "ripgrep 14.1.0"; exit 0; fi\n'
        + "".join(f"printf '%s\\0' '{p}'\n" for p in named)
    )
    fake.chmod(0o755)
    monkeypatch.setenv(RG_ENV, str(fake))
    assert find_rg() == str(fake)
    ctx = ToolContext(workspace=ws.resolve())
    found = trio.run(GrepTool().run, {"pattern": "needle", "output_mode": "content"}, ctx)
    assert found.content == f"{ws.resolve() / 'real.txt'}:1:a needle"
    # Paths alone: ripgrep's match stands (no file is read twice), but only for a
    # regular file found again inside the workspace.
    paths = trio.run(GrepTool().run, {"pattern": "needle"}, ctx).content.splitlines()
    assert sorted(paths[1:]) == [str(ws.resolve() / "plain.txt"), str(ws.resolve() / "real.txt")]
    listed = trio.run(GlobTool().run, {"pattern": "**/*"}, ctx)
    assert sorted(listed.content.splitlines()) == [
        str(ws.resolve() / "plain.txt"), str(ws.resolve() / "real.txt"),
    ]  # fmt: skip


PATTERNS = [
    "foo", "^$", "^foo$", r"o\sb", r"\s", r"[^a]", "o$", r"\bbar", r"foo\nbar", "^", "$",
    r"\Afoo", r"foo\Z", "(?<!o) b", "x(?!\r)", "r$", "(?i)foo",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["foo", "bar", "", " ", "foo bar", "x\r", "Foo"]), max_size=6).map(
        "\n".join
    ),
    st.booleans(),
    st.sampled_from(PATTERNS),
)
def test_one_search_of_the_whole_file_agrees_with_the_line_by_line_one(
    text: str, newline: bool, pattern: str
) -> None:
    """files_with_matches searches a file once, not line by line, when that tells."""
    import re

    from coterie.tools._grep import GrepOptions, _has_match, _matching_lines

    text += "\n" if newline else ""
    options = GrepOptions(regex=re.compile(pattern))
    assert _has_match(text, options) == bool(_matching_lines(text, options)[1])
