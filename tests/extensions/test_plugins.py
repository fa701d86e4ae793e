"""Plugins read from ``--plugin-dir``: manifests, parts, hooks, servers, and bad plugins."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coterie.extensions import load_extensions
from coterie.extensions.plugins import PluginError, load_plugins, plugin_dir
from coterie.hooks import HooksConfigError
from coterie.hooks.config import parse_hooks_file
from coterie.mcpclient import HttpServer, StdioServer
from tests.extensions.pluginfiles import hooks_json, put, write_plugin


@pytest.fixture(autouse=True)
def coterie_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test's own coterie home (where CLAUDE_PLUGIN_DATA folders are made)."""
    home = tmp_path / "coterie-home"
    monkeypatch.setenv("COTERIE_HOME", str(home))
    return home


def test_a_manifest_names_the_plugin_and_system_init_lists_it(tmp_path: Path) -> None:
    root = write_plugin(tmp_path / "some-folder", "myplugin")
    plugins = load_plugins([root])
    assert plugins.notices == ()
    assert plugins.to_json() == [
        {"name": "myplugin", "path": str(root.resolve()), "source": "myplugin@inline",
         "version": "1.2.0"}
    ]  # fmt: skip


def test_a_plugin_without_a_manifest_is_named_after_its_folder(tmp_path: Path) -> None:
    root = put(tmp_path / "bare-plugin" / "commands" / "c.md", "Do c.\n").parents[1]
    (plugin,) = load_plugins([root]).plugins
    assert plugin.to_json() == {
        "name": "bare-plugin", "path": str(root.resolve()), "source": "bare-plugin@inline"
    }  # fmt: skip


@pytest.mark.parametrize(
    ("manifest", "problem"),
    [
        ("{not json", "not valid JSON"),
        ('{"version": "1.0.0"}', "the manifest has no name"),
        ('{"name": "My Plugin"}', "the plugin name 'My Plugin'"),
        ('["a list"]', "expected a JSON object"),
        ('{"name": "p", "commands": "../elsewhere"}', "'../elsewhere' is not inside the plugin"),
        ('{"name": "p", "agents": "/etc"}', "'/etc' is not inside the plugin"),
    ],
)
def test_a_bad_manifest_is_one_line_and_the_other_plugins_load(
    tmp_path: Path, manifest: str, problem: str
) -> None:
    bad = write_plugin(tmp_path / "bad", manifest=manifest)
    good = write_plugin(tmp_path / "good", "good")
    plugins = load_plugins([bad, good])
    assert [p.name for p in plugins.plugins] == ["good"]
    (notice,) = plugins.notices
    assert "\n" not in notice
    assert str(bad.resolve() / ".claude-plugin" / "plugin.json") in notice
    assert problem in notice


@pytest.mark.parametrize(
    ("hooks", "problem"),
    [
        ("{not json", "cannot read the hooks"),
        ('{"hooks": {"PreToolUse": "x"}}', "hooks.PreToolUse: must be a list"),
        ('{"hooks": {}, "extra": 1}', "unknown key"),
    ],
)
def test_a_bad_hooks_file_leaves_its_plugin_out_whole(
    tmp_path: Path, hooks: str, problem: str
) -> None:
    """A hook that did not load could be the guard of the rest: none of it loads."""
    bad = write_plugin(tmp_path / "bad", "bad", hooks=hooks)
    good = write_plugin(tmp_path / "good", "good", hooks=hooks_json())
    plugins = load_plugins([bad, good])
    assert [p.name for p in plugins.plugins] == ["good"]
    (notice,) = plugins.notices
    assert str(bad.resolve() / "hooks" / "hooks.json") in notice
    assert problem in notice
    assert "\n" not in notice


def test_hooks_run_with_the_plugins_root_in_their_environment(tmp_path: Path) -> None:
    """The command line is left as written: the shell expands ${CLAUDE_PLUGIN_ROOT}."""
    root = write_plugin(tmp_path / "p", "p", hooks=hooks_json())
    (pre,) = load_plugins([root]).hooks.handlers("PreToolUse", "Bash")
    assert "$CLAUDE_PLUGIN_ROOT" in pre.target
    assert dict(pre.env)["CLAUDE_PLUGIN_ROOT"] == str(root.resolve())
    data = Path(dict(pre.env)["CLAUDE_PLUGIN_DATA"])
    assert data.is_dir()
    assert data.name == "p-inline"


def test_two_plugins_with_the_same_hook_command_run_it_twice(tmp_path: Path) -> None:
    one = write_plugin(tmp_path / "one", "one", hooks=hooks_json())
    two = write_plugin(tmp_path / "two", "two", hooks=hooks_json())
    handlers = load_plugins([one, two]).hooks.handlers("PostToolUse", "Bash")
    roots = [dict(h.env)["CLAUDE_PLUGIN_ROOT"] for h in handlers]
    assert roots == [str(one.resolve()), str(two.resolve())]


def test_a_manifest_adds_hooks_inline_or_from_a_file(tmp_path: Path) -> None:
    """Both the manifest's hooks and hooks/hooks.json run, as in Claude Code."""
    stop = {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}
    inline = write_plugin(tmp_path / "p", manifest={"name": "p", "hooks": stop}, hooks=hooks_json())
    events = {g.event for g in load_plugins([inline]).hooks.groups}
    assert events == {"PreToolUse", "PostToolUse", "Stop"}
    filed = write_plugin(tmp_path / "q", manifest={"name": "q", "hooks": "./more/hooks.json"})
    put(filed / "more" / "hooks.json", json.dumps({"hooks": stop}))
    hooks = load_plugins([filed]).hooks
    assert [g.event for g in hooks.groups] == ["Stop"]
    assert hooks.files == (filed.resolve() / "more" / "hooks.json",)


def test_parse_hooks_file_takes_the_wrapped_and_the_bare_shape(tmp_path: Path) -> None:
    group = [{"hooks": [{"type": "command", "command": "true"}]}]
    wrapped = parse_hooks_file(tmp_path / "h.json", {"description": "d", "hooks": {"Stop": group}})
    bare = parse_hooks_file(tmp_path / "h.json", {"Stop": group})
    assert wrapped.groups == bare.groups
    with pytest.raises(HooksConfigError, match=r"h\.json: cannot read"):
        parse_hooks_file(tmp_path / "h.json")


def test_a_folder_of_plugins_loads_each_with_a_manifest(tmp_path: Path) -> None:
    write_plugin(tmp_path / "all" / "one", "one")
    write_plugin(tmp_path / "all" / "two", "two")
    put(tmp_path / "all" / "notes" / "README.md", "not a plugin")
    plugins = load_plugins([tmp_path / "all"])
    assert [p.name for p in plugins.plugins] == ["one", "two"]
    assert plugins.notices == ()
    empty = load_plugins([put(tmp_path / "empty" / "x.txt", "").parent])
    assert empty.plugins == ()
    assert "no plugin there" in empty.notices[0]


def test_a_second_plugin_of_the_same_name_is_left_out(tmp_path: Path) -> None:
    plugins = load_plugins(
        [write_plugin(tmp_path / "a", "same"), write_plugin(tmp_path / "b", "same")]
    )
    assert [p.root.name for p in plugins.plugins] == ["a"]
    assert "another plugin is named 'same'" in plugins.notices[0]


def test_a_missing_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(PluginError, match="no such directory"):
        load_plugins([tmp_path / "gone"])
    # The command line only records it (parsed the same anywhere); the run says so.
    assert plugin_dir(str(tmp_path / "gone")) == str((tmp_path / "gone").resolve())
    assert plugin_dir(str(tmp_path)) == str(tmp_path.resolve())


def test_parts_are_named_after_the_plugin_with_its_root_in_their_bodies(tmp_path: Path) -> None:
    root = write_plugin(tmp_path / "p", "myplugin").resolve()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    ext = load_extensions(
        workspace, trusted=False, home=tmp_path / "home", plugins=load_plugins([root])
    )
    assert set(ext.commands) == {"myplugin:hello", "myplugin:git:status"}
    assert set(ext.agents) == {"myplugin:helper"}
    assert set(ext.skills) == {"myplugin:greet"}  # its folder's name, not its frontmatter's
    assert [p.name for p in ext.plugins] == ["myplugin"]
    helper = ext.agents["myplugin:helper"]
    assert helper.prompt == f"You help. Your notes are in {root}/notes."
    assert helper.description == "Helps, from ${CLAUDE_PLUGIN_ROOT}"  # as Claude Code lists it
    assert ext.skills["myplugin:greet"].body == f"Read {root}/skills/greet/phrases.txt first."
    expansion = ext.expand("/myplugin:hello world")
    assert expansion is not None
    assert expansion.prompt == f"Greet world using {root}/greeting.txt."
    assert expansion.command.label == "(plugin:myplugin)"


def test_a_plugins_parts_load_in_an_untrusted_workspace_and_shadow_nothing(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    put(home / ".claude" / "commands" / "hello.md", "The user's own hello.\n")
    ext = load_extensions(
        tmp_path, trusted=False, home=home, plugins=load_plugins([write_plugin(tmp_path / "p")])
    )
    assert ext.commands["hello"].body == "The user's own hello.\n".strip()
    assert "myplugin:hello" in ext.commands


def test_manifest_paths_replace_commands_and_agents_and_add_skills(tmp_path: Path) -> None:
    manifest = {"name": "p", "commands": ["./extra/special.md"], "agents": "./team",
                "skills": "./more-skills"}  # fmt: skip
    root = write_plugin(tmp_path / "p", manifest=manifest)
    put(root / "extra" / "special.md", "Special.\n")
    put(root / "team" / "lead.md", "---\nname: lead\ndescription: Leads\n---\nLead.\n")
    put(root / "more-skills" / "extra" / "SKILL.md", "---\ndescription: More\n---\nMore.\n")
    ext = load_extensions(tmp_path, trusted=False, home=tmp_path / "h",
                          plugins=load_plugins([root]))  # fmt: skip
    assert set(ext.commands) == {"p:special"}
    assert set(ext.agents) == {"p:lead"}
    assert set(ext.skills) == {"p:greet", "p:extra"}


def test_a_plugins_servers_are_named_after_it_with_its_root_expanded(tmp_path: Path) -> None:
    root = write_plugin(tmp_path / "p", "tools")
    server = {"command": sys.executable, "args": ["${CLAUDE_PLUGIN_ROOT}/server.py"],
              "env": {"TOKEN": "${TOKEN:-none}"}}  # fmt: skip
    put(root / ".mcp.json", json.dumps({"mcpServers": {"srv": server}}))
    inline = {"name": "tools", "mcpServers": {"web": {"type": "http", "url": "http://x/mcp"}}}
    put(root / ".claude-plugin" / "plugin.json", json.dumps(inline))
    stdio, http = load_plugins([root], env={}).servers
    assert isinstance(stdio, StdioServer)
    assert stdio.name == "plugin_tools_srv"
    assert stdio.args == (f"{root.resolve()}/server.py",)
    assert dict(stdio.env)["TOKEN"] == "none"
    assert dict(stdio.env)["CLAUDE_PLUGIN_ROOT"] == str(root.resolve())
    assert isinstance(http, HttpServer)
    assert http.name == "plugin_tools_web"


def test_a_servers_file_without_its_mcpservers_key_is_taken(tmp_path: Path) -> None:
    root = write_plugin(tmp_path / "p", "p")
    put(root / ".mcp.json", json.dumps({"srv": {"command": "run-it"}}))
    (server,) = load_plugins([root], env={}).servers
    assert server.name == "plugin_p_srv"


@pytest.mark.parametrize(
    ("servers", "problem"),
    [
        ({"srv": {"command": "x", "args": ["${UNSET_VAR}"]}}, "UNSET_VAR is not set"),
        ({"srv": {"type": "sdk", "name": "srv"}}, "a plugin has no 'sdk' server"),
        ("{oops", "cannot be read as JSON"),
    ],
)
def test_a_bad_servers_file_leaves_its_plugin_out(
    tmp_path: Path, servers: object, problem: str
) -> None:
    root = write_plugin(tmp_path / "p", "p")
    put(root / ".mcp.json", servers if isinstance(servers, str) else json.dumps(servers))
    plugins = load_plugins([root], env={})
    assert plugins.plugins == ()
    assert problem in plugins.notices[0]


segments = st.lists(st.sampled_from(["..", ".", "a", "b", "", "/"]), min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(parts=segments)
def test_a_manifest_path_never_reaches_outside_its_plugin(
    tmp_path_factory: pytest.TempPathFactory, parts: list[str]
) -> None:
    base = tmp_path_factory.mktemp("contain")
    root = write_plugin(base / "p", "p")
    put(base / "outside" / "leak.md", "Leaked.\n")
    value = "/".join(parts)
    put(root / ".claude-plugin" / "plugin.json", json.dumps({"name": "p", "commands": value}))
    plugins = load_plugins([root])
    for plugin in plugins.plugins:
        for path in plugin.commands:
            assert path.resolve().is_relative_to(root.resolve())
    if not plugins.plugins:
        assert (
            "is not inside the plugin" in plugins.notices[0]
            or "must be a path" in (plugins.notices[0])
        )
