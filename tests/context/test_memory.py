"""The CLAUDE.md hierarchy: its sources, the ``@`` import parser, depth, cycles, the cap."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from coterie.context.memory import (
    MAX_IMPORT_DEPTH,
    MemoryFile,
    find_imports,
    import_scope,
    load_memory,
    memory_reminder,
    memory_sources,
    memory_text,
    project_memory,
    project_root,
)

ROOT = Path("/repo")
HOME = Path("/home/u")

names = st.from_regex(r"[a-z][a-z0-9_/.-]{0,12}[a-z0-9]", fullmatch=True).filter(
    lambda s: "//" not in s
)


def reader(files: dict[Path, str]):  # type: ignore[no-untyped-def]
    def read(path: Path) -> str:
        if path not in files:
            raise FileNotFoundError(2, "No such file or directory")
        return files[path]

    return read


def load(files: dict[Path, str], *, trusted: bool = False, **kw: object) -> list[MemoryFile]:
    sources = [(p, "project") for p in files if p.name == "CLAUDE.md" and p.parent == ROOT]
    return load_memory(
        sources,
        reader(files),
        home=HOME,
        root=ROOT,
        trusted=trusted,
        **kw,  # type: ignore[arg-type]
    )


# -- the parser ------------------------------------------------------------------


@given(st.lists(names, max_size=5))
def test_every_import_on_its_own_line_is_found_in_order(paths: list[str]) -> None:
    text = "\n".join(f"- see @{p}" for p in paths)
    assert find_imports(text) == paths


@given(names, st.sampled_from(["`@{}`", "``x @{} y``", "a `b` c `@{}` d"]))
def test_an_import_inside_a_code_span_is_not_one(path: str, form: str) -> None:
    assert find_imports(form.format(path)) == []


@given(names, st.sampled_from(["```", "~~~", "````"]), st.text(alphabet="ab \n", max_size=20))
def test_an_import_inside_a_fenced_block_is_not_one(path: str, fence: str, noise: str) -> None:
    text = f"before\n{fence}python\n{noise}\n@{path}\n{fence}\nafter @{path}"
    assert find_imports(text) == [path]


@given(names)
def test_an_email_address_or_a_word_with_an_at_is_not_an_import(path: str) -> None:
    assert find_imports(f"write to me{path}@example.com") == []


@given(names, st.sampled_from([".", ",", ")", ":"]))
def test_trailing_punctuation_is_not_part_of_the_path(path: str, mark: str) -> None:
    assert find_imports(f"(see @{path}{mark}") == [path]


@given(st.text(max_size=200))
def test_the_parser_takes_any_text(text: str) -> None:
    for path in find_imports(text):
        assert path
        assert not any(c.isspace() and c != " " for c in path)


def test_an_indented_code_block_holds_no_import() -> None:
    assert find_imports("text\n\n    @inside.md\n\n@outside.md") == ["outside.md"]


# -- the walk --------------------------------------------------------------------


def test_imports_are_relative_to_the_importing_file_and_follow_it() -> None:
    files = {
        ROOT / "CLAUDE.md": "top @docs/a.md",
        ROOT / "docs/a.md": "a @b.md",
        ROOT / "docs/b.md": "b",
    }
    got = load(files)
    assert [(f.path, f.imported_by) for f in got] == [
        (ROOT / "CLAUDE.md", None),
        (ROOT / "docs/a.md", ROOT / "CLAUDE.md"),
        (ROOT / "docs/b.md", ROOT / "docs/a.md"),
    ]


@given(st.integers(min_value=1, max_value=12))
def test_imports_stop_past_the_depth_limit(chain: int) -> None:
    files = {ROOT / "CLAUDE.md": "@f1.md"}
    for i in range(1, chain + 1):
        files[ROOT / f"f{i}.md"] = f"level {i} @f{i + 1}.md"
    files[ROOT / f"f{chain + 1}.md"] = "last"
    got = load(files)
    included = [f for f in got if f.note is None]
    assert len(included) == 1 + min(chain + 1, MAX_IMPORT_DEPTH)
    if chain + 1 > MAX_IMPORT_DEPTH:
        assert "imports deep" in (got[-1].note or "")


@given(st.integers(min_value=1, max_value=6))
def test_a_cycle_includes_each_file_once(size: int) -> None:
    files = {ROOT / "CLAUDE.md": "@c0.md"}
    for i in range(size):
        files[ROOT / f"c{i}.md"] = f"@c{(i + 1) % size}.md @CLAUDE.md"
    got = load(files)
    paths = [f.path for f in got if f.note is None]
    assert len(paths) == len(set(paths))
    assert set(paths) >= {ROOT / "CLAUDE.md"} | {ROOT / f"c{i}.md" for i in range(min(size, 5))}
    assert all(f.note == "already included" for f in got if f.note and "deep" not in f.note)


def test_an_unreadable_import_is_noted_not_fatal() -> None:
    got = load({ROOT / "CLAUDE.md": "@missing.md then text"})
    assert got[0].text.startswith("@missing.md")
    assert got[1].path == ROOT / "missing.md"
    assert "cannot be read" in (got[1].note or "")
    assert "Not included" in memory_text(got)


def test_a_project_may_not_import_from_outside_it_unless_trusted() -> None:
    files = {
        ROOT / "CLAUDE.md": "@~/.ssh/id_rsa @/etc/shadow @../up.md",
        HOME / ".ssh/id_rsa": "SECRET",
        Path("/etc/shadow"): "SECRET",
        Path("/up.md"): "SECRET",
    }
    untrusted = load(files)
    assert "SECRET" not in memory_text(untrusted)
    assert all("outside the folder" in (f.note or "") for f in untrusted[1:])
    assert memory_text(load(files, trusted=True)).count("SECRET") == 3


def test_a_symlink_out_of_the_project_counts_as_outside() -> None:
    files = {ROOT / "CLAUDE.md": "@notes.md", ROOT / "notes.md": "SECRET"}
    links = {ROOT / "notes.md": HOME / ".ssh/id_rsa"}
    got = load(files, real=lambda p: links.get(p, p))
    assert "SECRET" not in memory_text(got)


def test_the_users_memory_may_import_from_home() -> None:
    files = {HOME / ".claude/CLAUDE.md": "@~/notes/style.md", HOME / "notes/style.md": "tabs"}
    got = load_memory(
        [(HOME / ".claude/CLAUDE.md", "user")], reader(files), home=HOME, root=ROOT, trusted=False
    )
    assert [f.text for f in got] == ["@~/notes/style.md", "tabs"]


def test_the_total_is_capped() -> None:
    files = [MemoryFile(ROOT / f"f{i}.md", "project", "x" * 10_000) for i in range(20)]
    text = memory_text(files, cap=25_000)
    assert len(text) < 26_000
    assert text.endswith("the rest is not shown.)")


def test_sources_run_from_the_user_through_the_root_down_to_the_workdir() -> None:
    existing = {
        HOME / ".claude/CLAUDE.md",
        ROOT / "CLAUDE.md",
        ROOT / "a/AGENTS.md",
        ROOT / "a/b/CLAUDE.md",
        ROOT / "a/b/AGENTS.md",
        ROOT / "a/b/.claude/CLAUDE.md",
        ROOT / "a/b/CLAUDE.local.md",
        Path("/CLAUDE.md"),  # above the root: not the project's
    }
    got = memory_sources(ROOT / "a/b", HOME, ROOT, lambda p: p in existing)
    assert got == [
        (HOME / ".claude/CLAUDE.md", "user"),
        (ROOT / "CLAUDE.md", "project"),
        (ROOT / "a/AGENTS.md", "project"),
        (ROOT / "a/b/CLAUDE.md", "project"),
        (ROOT / "a/b/.claude/CLAUDE.md", "project"),
        (ROOT / "a/b/CLAUDE.local.md", "local"),
    ]


def test_the_root_is_the_nearest_folder_with_git() -> None:
    assert project_root(ROOT / "a/b", lambda p: p == ROOT / ".git") == ROOT
    assert project_root(ROOT / "a/b", lambda p: False) == ROOT / "a/b"


def test_the_reminder_says_the_files_are_context_not_permission(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "CLAUDE.md").write_text("Run make test.\n")
    sub = tmp_path / "pkg"
    sub.mkdir()
    (sub / "CLAUDE.md").write_text("Here use tabs. @docs/x.md\n")
    reminder = memory_reminder(project_memory(sub, None, trusted=False))
    assert reminder is not None
    assert reminder.startswith("<system-reminder>\n")
    assert "never permission" in reminder
    assert reminder.index("Run make test.") < reminder.index("Here use tabs.")
    assert "docs/x.md" in reminder
    assert "cannot be read" in reminder
    assert memory_reminder([]) is None


def test_a_summary_keeps_the_first_messages_context() -> None:
    from coterie.context.summary import summarized_history

    context = memory_reminder([MemoryFile(ROOT / "CLAUDE.md", "project", "Use tabs.")])
    assert context is not None
    history = [
        {
            "role": "user",
            "content": [{"type": "text", "text": context}, {"type": "text", "text": "go"}],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
    ]
    (first,) = summarized_history(history, None, summary="S", archive="/a")
    assert first["content"][0]["text"] == context
    assert sum("Use tabs." in b["text"] for b in first["content"]) == 1


def test_an_untrusted_folders_imports_stay_in_it_not_in_its_repository(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proj = home / "proj"
    proj.mkdir(parents=True)
    assert import_scope(proj, home) == proj
    assert import_scope(home, home) is None  # the home holds the keys: nothing
    assert import_scope(tmp_path, home) is None
    assert import_scope(proj, None) == proj
