"""Marketplace catalogues and sources, and which installed plugins a run's settings load."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.extensions.installed import enabled_plugins, run_plugins
from coterie.extensions.marketplaces import (
    MarketplaceError,
    Source,
    parse_source,
    read_catalogue,
)
from coterie.extensions.plugins import load_plugins
from coterie.projectconfig import project_items
from coterie.tools.permissions.settings import PermissionSettings, load_settings
from coterie.trust import set_trust
from tests.extensions.pluginfiles import hooks_json, put, write_plugin

NAMES = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,10}", fullmatch=True)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "https://git.example.com/team/mp.git",
            Source("git", "https://git.example.com/team/mp.git"),
        ),
        ("file:///srv/mp#v2", Source("git", "file:///srv/mp", "v2")),
        ("git@example.com:team/mp.git", Source("git", "git@example.com:team/mp.git")),
        ("anthropics/claude-code", Source("github", "anthropics/claude-code")),
        ("owner/repo#main", Source("github", "owner/repo", "main")),
    ],
)
def test_a_source_is_a_git_url_or_a_github_repository(text: str, expected: Source) -> None:
    assert parse_source(text, Path("/nonexistent")) == expected


def test_a_local_folder_or_catalogue_file_is_read_where_it_is(tmp_path: Path) -> None:
    catalogue = put(tmp_path / "mp" / ".claude-plugin" / "marketplace.json", "{}")
    assert parse_source("mp", tmp_path) == Source("directory", str(tmp_path / "mp"))
    assert parse_source(str(catalogue), tmp_path) == Source("file", str(catalogue))
    with pytest.raises(MarketplaceError, match="no such folder"):
        parse_source("./gone", tmp_path)
    with pytest.raises(MarketplaceError, match="by URL is not supported"):
        parse_source("https://example.com/marketplace.json", tmp_path)


@given(owner=NAMES, repo=NAMES, ref=st.none() | NAMES)
def test_every_owner_repo_is_github_and_its_json_round_trips(
    owner: str, repo: str, ref: str | None
) -> None:
    text = f"{owner}/{repo}" + (f"#{ref}" if ref else "")
    source = parse_source(text, Path("/nonexistent"))
    assert source == Source("github", f"{owner}/{repo}", ref)
    assert Source.from_json(source.to_json(), "x") == source
    assert source.url == f"https://github.com/{owner}/{repo}.git"


def catalogue(root: Path, plugins: list[object], **extra: object) -> Path:
    data = {"name": "mp", "owner": {"name": "T"}, "plugins": plugins, **extra}
    put(root / ".claude-plugin" / "marketplace.json", json.dumps(data))
    return root


def test_an_entry_that_cannot_be_used_is_one_line_and_the_others_stay(tmp_path: Path) -> None:
    root = catalogue(tmp_path / "mp", [
        {"name": "good", "source": "./plugins/good", "version": "2.0.0"},
        {"name": "escapes", "source": "../../etc"},
        {"name": "bad name!", "source": "./x"},
        {"name": "nosource"},
        {"name": "good", "source": "./plugins/other"},
        {"name": "remote", "source": {"source": "github", "repo": "o/r", "sha": "a" * 40}},
    ])  # fmt: skip
    found = read_catalogue(root)
    assert [e.name for e in found.plugins] == ["good", "remote"]
    assert found.plugins[0].source == (root / "plugins" / "good").resolve()
    assert found.plugins[1].source == Source("github", "o/r")
    assert found.plugins[1].sha == "a" * 40
    assert len(found.notices) == 4
    assert all("marketplace.json" in line and "\n" not in line for line in found.notices)
    assert "is not inside the marketplace" in found.notices[0]


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ({"source": "url", "url": "ext::sh -c touch% /tmp/x"}, "is not a git URL"),
        ({"source": "url", "url": "/home/someone/private"}, "is not a git URL"),
        ({"source": "github", "repo": "o/r", "sha": "--orphan=x"}, "sha must be"),
        ({"source": "url", "url": "https://h/r.git", "ref": "--upload-pack=x"}, "is not a ref"),
        ({"source": "npm", "package": "x"}, "source must be a path"),
    ],
)
def test_a_git_entry_names_a_repository_and_a_commit_nothing_else(
    tmp_path: Path, source: dict[str, str], words: str
) -> None:
    found = read_catalogue(catalogue(tmp_path, [{"name": "p", "source": source}]))
    assert found.plugins == ()
    [line] = found.notices
    assert words in line


SEGMENTS = st.lists(st.sampled_from(["..", ".", "a", "b", "plugins"]), min_size=1, max_size=6)


@given(parts=SEGMENTS, bare=st.booleans())
def test_an_entry_source_never_leads_out_of_the_marketplace(parts: list[str], bare: bool) -> None:
    text = "/".join(parts) if bare else "./" + "/".join(parts)
    data = {"name": "mp", "owner": {"name": "T"}, "plugins": [{"name": "p", "source": text}]}
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "market"
        put(root / ".claude-plugin" / "marketplace.json", json.dumps(data))
        found = read_catalogue(root)
        for entry in found.plugins:
            assert isinstance(entry.source, Path)
            assert entry.source.is_relative_to(root.resolve())
        assert len(found.plugins) + len(found.notices) == 1


def test_a_bare_source_is_found_under_the_plugin_root(tmp_path: Path) -> None:
    root = catalogue(tmp_path / "mp", [{"name": "p", "source": "p"}],
                     metadata={"pluginRoot": "./plugins"})  # fmt: skip
    assert read_catalogue(root).plugins[0].source == (root / "plugins" / "p").resolve()


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"owner": {"name": "T"}, "plugins": []}, "marketplace name None"),
        ({"name": "inline", "owner": {"name": "T"}, "plugins": []}, "marketplace name 'inline'"),
        ({"name": "mp", "plugins": []}, "owner must be an object"),
        ({"name": "mp", "owner": {"name": "T"}, "plugins": {}}, "plugins must be a list"),
    ],
)
def test_a_bad_catalogue_is_an_error_naming_it(
    tmp_path: Path, data: dict[str, object], words: str
) -> None:
    path = put(tmp_path / ".claude-plugin" / "marketplace.json", json.dumps(data))
    with pytest.raises(MarketplaceError, match=words) as caught:
        read_catalogue(tmp_path)
    assert str(path) in str(caught.value)


# -- which installed plugins a run loads ------------------------------------------


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user (HOME, coterie home) with ``hello@demo-mp`` installed; the workspace."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("COTERIE_HOME", str(tmp_path / "coterie-home"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    folder = write_plugin(home / ".claude/plugins/cache/demo-mp/hello/1.2.0", "hello",
                          hooks=hooks_json())  # fmt: skip
    item = {"scope": "user", "installPath": str(folder), "version": "1.2.0"}
    put(home / ".claude/plugins/installed_plugins.json",
        json.dumps({"version": 2, "plugins": {"hello@demo-mp": [item]}}))  # fmt: skip
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


def user_settings(workspace: Path, data: object) -> None:
    put(Path.home() / ".claude" / "settings.json", json.dumps(data))


def run_settings(workspace: Path) -> PermissionSettings:
    return load_settings(workspace, user_settings=Path.home() / ".claude" / "settings.json")


def test_the_users_enabled_plugins_load_with_their_marketplace_as_source(state: Path) -> None:
    user_settings(state, {"enabledPlugins": {"hello@demo-mp": True}})
    plugins = run_plugins([], run_settings(state))
    folder = Path.home() / ".claude/plugins/cache/demo-mp/hello/1.2.0"
    assert plugins.to_json() == [
        {"name": "hello", "path": str(folder), "source": "hello@demo-mp", "version": "1.2.0"}
    ]
    assert plugins.notices == ()
    [handler] = plugins.hooks.handlers("PreToolUse", "Bash")
    assert dict(handler.env)["CLAUDE_PLUGIN_ROOT"] == str(folder)


def test_no_settings_no_installed_plugins(state: Path) -> None:
    user_settings(state, {"enabledPlugins": {"hello@demo-mp": True}})
    assert load_plugins([]).plugins == ()


def test_an_untrusted_projects_enabled_plugins_load_nothing_and_say_so(state: Path) -> None:
    put(state / ".claude" / "settings.json", json.dumps({
        "enabledPlugins": {"hello@demo-mp": True},
        "extraKnownMarketplaces": {"evil": {"source": {"source": "github", "repo": "e/v"}}},
    }))  # fmt: skip
    enabled = enabled_plugins(run_settings(state))
    assert enabled.plugins == ()
    [line] = enabled.notices
    assert "not trusted" in line
    assert "hello@demo-mp" in line
    assert "marketplace evil" in line


def test_a_trusted_projects_enabled_plugins_load_as_it_was_trusted(state: Path) -> None:
    settings = put(state / ".claude" / "settings.json",
                   json.dumps({"enabledPlugins": {"hello@demo-mp": True}}))  # fmt: skip
    set_trust(state, trusted=True, items=project_items(state))
    assert [pid for pid, _ in enabled_plugins(run_settings(state)).plugins] == ["hello@demo-mp"]
    settings.write_text(json.dumps({"enabledPlugins": {"hello@demo-mp": True}, "x": 1}))
    changed = enabled_plugins(run_settings(state))
    assert changed.plugins == ()
    assert len(changed.notices) == 1


def test_the_most_local_file_decides(state: Path) -> None:
    user_settings(state, {"enabledPlugins": {"hello@demo-mp": True}})
    put(state / ".claude" / "settings.local.json",
        json.dumps({"enabledPlugins": {"hello@demo-mp": False}}))  # fmt: skip
    set_trust(state, trusted=True, items=project_items(state))
    assert enabled_plugins(run_settings(state)).plugins == ()


def test_a_plugin_enabled_but_not_installed_is_one_line(state: Path) -> None:
    user_settings(state, {"enabledPlugins": {"other@demo-mp": True, "off@demo-mp": False}})
    enabled = enabled_plugins(run_settings(state))
    assert enabled.plugins == ()
    assert enabled.notices == (
        "plugin other@demo-mp is enabled but not installed: `coterie plugin install other@demo-mp`",
    )
