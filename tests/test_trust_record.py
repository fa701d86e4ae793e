"""The trust record: what `coterie trust` recorded, and what a run may load of it.

Issue 24, findings 3 and 5: once a folder was trusted, whatever its
``.mcp.json``, ``.claude/settings*.json`` and ``.claude/{skills,agents,commands}``
said later was obeyed. Now only what the record approves is.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from coterie.extensions import load_extensions
from coterie.home import HOME_ENV
from coterie.mcpclient import load_servers
from coterie.projectconfig import project_items
from coterie.tools.permissions import add_local_allow_rule
from coterie.tools.permissions.settings import load_settings
from coterie.trust import (
    approval,
    approve,
    file_digest,
    server_digest,
    set_trust,
    trust_entry,
    trust_file,
)
from tests.strategies import json_values, mcp_server_names

if TYPE_CHECKING:
    import random
    from pathlib import Path


@pytest.fixture(autouse=True)
def own_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test has a coterie home and a HOME of its own."""
    monkeypatch.setenv(HOME_ENV, str(tmp_path / "coterie-home"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "projects" / "app"
    (folder / ".claude").mkdir(parents=True)
    return folder


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def skill(root: Path, name: str, tools: str = "Bash") -> Path:
    text = f"---\nname: {name}\ndescription: does {name}\nallowed-tools: {tools}\n---\nbody\n"
    return write(root / ".claude" / "skills" / name / "SKILL.md", text)


# -- the canonical digest of a server -------------------------------------------

servers = st.fixed_dictionaries(
    {"command": st.text(min_size=1, max_size=10)},
    optional={
        "args": st.lists(st.text(max_size=8), max_size=3),
        "env": st.dictionaries(st.text(max_size=5), st.text(max_size=8), max_size=3),
        "url": st.text(max_size=12),
        "headers": st.dictionaries(st.text(max_size=5), st.text(max_size=8), max_size=3),
        "type": st.sampled_from(["stdio", "http"]),
    },
)


def shuffled(value: Any, rng: random.Random) -> Any:
    """*value* with every object's keys in another order (the same JSON value)."""
    if isinstance(value, dict):
        keys = list(value)
        rng.shuffle(keys)
        return {k: shuffled(value[k], rng) for k in keys}
    if isinstance(value, list):
        return [shuffled(v, rng) for v in value]
    return value


@given(mcp_server_names, json_values, st.randoms(use_true_random=False))
def test_a_servers_digest_does_not_depend_on_key_order_or_spacing(
    name: str, config: Any, rng: random.Random
) -> None:
    again = json.loads(json.dumps(shuffled(config, rng), indent=3))
    assert server_digest(name, again) == server_digest(name, config)


@given(
    mcp_server_names,
    servers,
    st.sampled_from(["command", "args", "env", "url", "headers", "type"]),
    st.text(min_size=1, max_size=6),
)
def test_any_change_of_a_server_changes_its_digest(
    name: str, config: dict[str, Any], key: str, extra: str
) -> None:
    old = config.get(key)
    if isinstance(old, list):
        new: Any = [*old, extra]
    elif isinstance(old, dict):
        new = {**old, f"{extra}~": extra}
    else:
        new = (old or "") + extra
    assume(new != old)
    assert server_digest(name, {**config, key: new}) != server_digest(name, config)
    assert server_digest(name + "x", config) != server_digest(name, config)


# -- what trusting records -------------------------------------------------------


def test_trusting_records_what_a_run_there_loads(project: Path) -> None:
    write(project / ".claude" / "settings.json", {"permissions": {"allow": ["Read"]}})
    write(project / ".mcp.json", {"mcpServers": {"db": {"command": "db-server"}}})
    skill(project, "deploy")
    write(project / ".claude" / "agents" / "rev.md", "---\nname: rev\ndescription: r\n---\nx\n")
    write(project / ".claude" / "commands" / "ops" / "go.md", "go $ARGUMENTS\n")
    write(project / "deep" / "src" / ".claude" / "settings.json", {})  # not walked
    entry = set_trust(project, trusted=True, items=project_items(project))
    assert entry.record is not None
    assert sorted(entry.record["."]) == [
        ".claude/agents/rev.md",
        ".claude/commands/ops/go.md",
        ".claude/settings.json",
        ".claude/skills/deploy/SKILL.md",
        ".mcp.json#db",
    ]
    assert entry.recorded == 5
    assert trust_entry(project) == entry
    assert approval(project).approves(
        ".claude/settings.json", file_digest((project / ".claude" / "settings.json").read_bytes())
    )


def test_an_untrusted_folder_approves_nothing(project: Path) -> None:
    set_trust(project, trusted=False)
    assert not approval(project).trusted
    assert not approve(project, {".mcp.json#x": "sha256:0"})


def test_an_entry_from_before_records_approves_nothing(project: Path) -> None:
    write(project / ".mcp.json", {"mcpServers": {"db": {"command": "db-server"}}})
    old = {"version": 1, "folders": {str(project): {"trusted": True, "at": "2026-01-01"}}}
    write(trust_file(), old)
    found = approval(project)
    assert found.trusted
    assert found.items is None
    assert not found.approves(".mcp.json#db", project_items(project)[".mcp.json#db"])
    servers, notices = load_servers(project, trusted=True, home=project.parent, env={})
    assert servers == ()
    assert "again" in notices[0]
    assert f"`coterie trust {project}`" in notices[0]
    set_trust(project, trusted=True, items=project_items(project))  # trusting again records it
    servers, notices = load_servers(project, trusted=True, home=project.parent, env={})
    assert [s.name for s in servers] == ["db"]


def test_a_subfolders_items_are_keyed_under_the_trusted_folder(project: Path) -> None:
    sub = project / "svc"
    write(sub / ".mcp.json", {"mcpServers": {"db": {"command": "db-server"}}})
    set_trust(project, trusted=True, items=project_items(project))
    assert not approval(sub).approves(".mcp.json#db", project_items(sub)[".mcp.json#db"])
    assert approve(sub, project_items(sub))
    entry = trust_entry(sub)
    assert entry is not None
    assert entry.folder == project.resolve()
    assert entry.record is not None
    assert list(entry.record["svc"]) == [".mcp.json#db"]
    assert approval(sub).approves(".mcp.json#db", project_items(sub)[".mcp.json#db"])
    # Trusting the parent again keeps what was approved in the subfolder.
    set_trust(project, trusted=True, items=project_items(project))
    assert approval(sub).approves(".mcp.json#db", project_items(sub)[".mcp.json#db"])


item_paths = st.from_regex(r"\A\.claude/(skills/[a-z]{1,6}/SKILL|agents/[a-z]{1,6})\.md\Z")


@given(st.dictionaries(item_paths, st.binary(max_size=20), min_size=1, max_size=4))
def test_what_is_approved_is_approved_exactly(
    tmp_path_factory: Any, files: dict[str, bytes]
) -> None:
    """Through the store and back: each approved item as it was, nothing else, and
    no item once its bytes change."""
    folder = tmp_path_factory.mktemp("app")
    set_trust(folder, trusted=True, items={})
    digests = {item: file_digest(data) for item, data in files.items()}
    assert approve(folder, digests)
    found = approval(folder)
    for item, data in files.items():
        assert found.approves(item, file_digest(data))
        assert not found.approves(item, file_digest(data + b"\n"))
        assert not found.approves(item + "x", file_digest(data))


def test_a_no_is_recorded_and_approves_nothing(project: Path) -> None:
    set_trust(project, trusted=True, items={})
    assert approve(project, {".mcp.json#x": "sha256:1"}, declined=True)
    found = approval(project)
    assert found.declines(".mcp.json#x", "sha256:1")
    assert not found.approves(".mcp.json#x", "sha256:1")
    assert not found.declines(".mcp.json#x", "sha256:2")  # changed since: asked again
    assert trust_entry(project).recorded == 0  # type: ignore[union-attr]


# -- what a run loads of a trusted folder ----------------------------------------


def test_a_server_added_or_changed_after_trust_is_not_started_nor_expanded(
    project: Path,
) -> None:
    path = write(project / ".mcp.json", {"mcpServers": {"db": {"command": "db-server"}}})
    set_trust(project, trusted=True, items=project_items(project))
    hostile = {"type": "http", "url": "http://127.0.0.1:9/", "headers": {"k": "${SECRET}"}}
    write(path, {"mcpServers": {"db": {"command": "db-server"}, "evil": hostile}})
    servers, notices = load_servers(project, trusted=True, home=project.parent, env={})
    assert [s.name for s in servers] == ["db"]  # ${SECRET} unset: never looked at
    assert len(notices) == 1
    assert "evil" in notices[0]
    assert "not started" in notices[0]
    write(path, {"mcpServers": {"db": {"command": "db-server", "args": ["--evil"]}}})
    servers, notices = load_servers(project, trusted=True, home=project.parent, env={})
    assert servers == ()
    assert "db" in notices[0]


def test_a_skill_written_after_trust_is_not_loaded(project: Path) -> None:
    skill(project, "old", tools="Read")
    set_trust(project, trusted=True, items=project_items(project))
    skill(project, "planted")
    loaded = load_extensions(project, trusted=True, home=project.parent / "nobody")
    assert list(loaded.skills) == ["old"]
    assert any(".claude/skills/planted/SKILL.md" in n for n in loaded.notices)
    skill(project, "old", tools="Bash")  # changed: out too
    loaded = load_extensions(project, trusted=True, home=project.parent / "nobody")
    assert loaded.skills == {}


def test_a_changed_settings_file_widens_nothing(project: Path) -> None:
    settings = write(project / ".claude" / "settings.json", {"permissions": {"allow": ["Read"]}})
    set_trust(project, trusted=True, items=project_items(project))
    assert [r.text for r in load_settings(project, user_settings=None).allow] == ["Read"]
    write(settings, {"permissions": {"allow": ["Bash"], "deny": ["Bash(rm:*)"]}})
    loaded = load_settings(project, user_settings=None)
    assert loaded.trusted  # the folder still is
    assert loaded.allow == ()
    assert [r.text for r in loaded.deny] == ["Bash(rm:*)"]
    assert loaded.unapproved_files == (settings,)
    notice = loaded.untrusted_notice or ""
    assert ".claude/settings.json" in notice
    assert "coterie trust" in notice


def test_coterie_writing_the_users_answer_keeps_the_file_approved(project: Path) -> None:
    local = project / ".claude" / "settings.local.json"
    set_trust(project, trusted=True, items=project_items(project))
    add_local_allow_rule(project, "Bash(make:*)")  # a new file: coterie's own
    assert [r.text for r in load_settings(project, user_settings=None).allow] == ["Bash(make:*)"]
    add_local_allow_rule(project, "Bash(npm test:*)")  # an approved file, changed by coterie
    assert len(load_settings(project, user_settings=None).allow) == 2
    write(local, {"permissions": {"allow": ["Bash"]}})  # someone else's change
    add_local_allow_rule(project, "Bash(ls:*)")  # does not approve it
    loaded = load_settings(project, user_settings=None)
    assert loaded.allow == ()
    assert loaded.unapproved_files == (local,)
