"""Every tool declares its capabilities; registries and subagent types follow from them."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.tools import (
    BUILTIN_TOOLS,
    SUBAGENT_TYPES,
    Access,
    Capabilities,
    Effect,
    PathInput,
    Provides,
    ToolRegistry,
    UnknownSubagentType,
    add_team_tools,
    builtin_registry,
    builtin_tools,
    default_registry,
    subagent_registry,
    team_tools,
)

R, W = Access.READ, Access.WRITE
#: What each built-in tool declares: (effect, path key and access, team-only, lead-only, needs).
DECLARED: dict[str, tuple[Effect, tuple[str, Access] | None, bool, bool, str | None]] = {
    "Bash": (Effect.EXECUTION, None, False, False, None),
    "Read": (Effect.READ_ONLY, ("file_path", R), False, False, None),
    "Write": (Effect.WORKSPACE, ("file_path", W), False, False, None),
    "Edit": (Effect.WORKSPACE, ("file_path", W), False, False, None),
    "NotebookEdit": (Effect.WORKSPACE, ("notebook_path", W), False, False, None),
    "Glob": (Effect.READ_ONLY, ("path", R), False, False, None),
    "Grep": (Effect.READ_ONLY, ("path", R), False, False, None),
    "TodoWrite": (Effect.READ_ONLY, None, False, False, None),
    "AskUserQuestion": (Effect.RUN_STATE, None, False, False, None),
    "EnterPlanMode": (Effect.RUN_STATE, None, False, False, None),
    "ExitPlanMode": (Effect.RUN_STATE, None, False, False, None),
    "WebFetch": (Effect.NETWORK, None, False, False, None),
    "WebSearch": (Effect.NETWORK, None, False, False, None),
    "CronCreate": (Effect.RUN_STATE, None, False, False, None),
    "CronList": (Effect.READ_ONLY, None, False, False, None),
    "CronDelete": (Effect.RUN_STATE, None, False, False, None),
    "EnterWorktree": (Effect.WORKSPACE, None, False, False, None),
    "ExitWorktree": (Effect.WORKSPACE, None, False, False, None),
    "TaskStop": (Effect.RUN_STATE, None, False, False, None),
    "Monitor": (Effect.EXECUTION, None, False, False, None),
    "BashOutput": (Effect.READ_ONLY, None, False, False, None),
    "TaskCreate": (Effect.RUN_STATE, None, True, False, None),
    "TaskUpdate": (Effect.RUN_STATE, None, True, False, None),
    "TaskList": (Effect.READ_ONLY, None, True, False, None),
    "TaskGet": (Effect.READ_ONLY, None, True, False, None),
    "SendMessage": (Effect.RUN_STATE, None, True, False, None),
    "ListAgents": (Effect.READ_ONLY, None, False, False, None),
    "ScheduleWakeup": (Effect.RUN_STATE, None, False, False, "loop"),
    "Agent": (Effect.RUN_STATE, None, False, False, "subagents"),
    "Workflow": (Effect.RUN_STATE, ("scriptPath", Access.READ), False, False, "subagents"),
    "ApprovePlan": (Effect.RUN_STATE, None, True, True, None),
    "MergeTask": (Effect.WORKSPACE, None, True, False, "workspaces"),
}

CORE = [
    "Bash",
    "Read",
    "Write",
    "Edit",
    "NotebookEdit",
    "Glob",
    "Grep",
    "TodoWrite",
    "AskUserQuestion",
    "EnterPlanMode",
    "ExitPlanMode",
    "WebFetch",
    "WebSearch",
    "CronCreate",
    "CronList",
    "CronDelete",
    "EnterWorktree",
    "ExitWorktree",
    "TaskStop",
    "Monitor",
    "BashOutput",
    "ListAgents",
]
TEAM = ["TaskCreate", "TaskUpdate", "TaskList", "TaskGet", "SendMessage"]
SUB = ["Agent", "Workflow"]


def test_every_built_in_tool_declares_its_capabilities() -> None:
    tools = builtin_tools()
    assert len({t.name for t in tools}) == len(BUILTIN_TOOLS)
    for tool in tools:
        # A class attribute: the declaration is the tool's, not an instance's.
        assert isinstance(type(tool).capabilities, Capabilities), tool.name


def test_the_declarations() -> None:
    got = {}
    for tool in builtin_tools():
        caps = tool.capabilities
        path = (caps.path.key, caps.path.access) if caps.path else None
        got[tool.name] = (caps.effect, path, caps.team_only, caps.lead_only, caps.needs)
    assert got == DECLARED


def test_only_bash_and_monitor_name_a_shell_command() -> None:
    assert {t.name: t.capabilities.command for t in builtin_tools() if t.capabilities.command} == {
        "Bash": "command",
        "Monitor": "command",
    }


def test_every_declared_path_key_is_in_the_tools_schema() -> None:
    for tool in builtin_tools():
        if tool.capabilities.path is not None:
            assert tool.capabilities.path.key in tool.input_schema["properties"], tool.name
        if tool.capabilities.command is not None:
            # Monitor's is optional, as in Claude Code; the tool refuses a call without it.
            assert tool.capabilities.command in tool.input_schema["properties"], tool.name


# -- declarations that contradict themselves are refused --------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"effect": Effect.RUN_STATE, "lead_only": True}, "set team_only"),
        ({"effect": Effect.READ_ONLY, "path": PathInput("p", W)}, "effect WORKSPACE"),
        ({"effect": Effect.WORKSPACE, "command": "command"}, "effect EXECUTION"),
    ],
)
def test_contradictory_declarations_are_refused(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        Capabilities(**kwargs)


@given(
    effect=st.sampled_from(Effect),
    access=st.none() | st.sampled_from(Access),
    command=st.booleans(),
    team_only=st.booleans(),
    lead_only=st.booleans(),
)
def test_an_accepted_declaration_is_coherent(
    effect: Effect, access: Access | None, command: bool, team_only: bool, lead_only: bool
) -> None:
    """Whatever is accepted, the policy's readings of it agree with each other."""
    try:
        caps = Capabilities(
            effect,
            PathInput("p", access) if access else None,
            "command" if command else None,
            team_only,
            lead_only,
        )
    except ValueError:
        return
    assert caps.read_only == (effect is Effect.READ_ONLY)
    assert caps.confined == (effect in (Effect.READ_ONLY, Effect.RUN_STATE))
    assert not (caps.edits_files and caps.reads_files)
    assert not caps.edits_files or effect is Effect.WORKSPACE
    assert not caps.lead_only or caps.team_only


# -- registries by selection -------------------------------------------------------


def test_default_registry_is_the_tools_needing_nothing() -> None:
    assert default_registry().names() == CORE
    assert builtin_registry(Provides()).names() == CORE


def test_team_tools_are_the_team_only_tools_but_the_leads() -> None:
    assert [t.name for t in team_tools()] == TEAM
    assert add_team_tools(default_registry()).names() == CORE + TEAM


@pytest.mark.parametrize(
    ("provides", "names"),
    [
        (Provides(subagents=True), [*CORE, *SUB]),
        (Provides(subagents=True, loop=True), [*CORE, "ScheduleWakeup", *SUB]),
        (Provides(team=True, subagents=True), [*CORE, *TEAM, *SUB]),
        (Provides(team=True, lead=True, subagents=True), [*CORE, *TEAM, *SUB, "ApprovePlan"]),
        (Provides(lead=True), CORE),  # a lead-only tool is a team tool too
        (Provides(team=True, workspaces=True), [*CORE, *TEAM, "MergeTask"]),
        (Provides(workspaces=True), CORE),  # MergeTask is a team tool too
    ],
)
def test_what_an_agent_is_given_follows_what_it_is_provided(
    provides: Provides, names: list[str]
) -> None:
    """The registries the runtime built by hand before: solo, solo looping, teammate, lead."""
    assert builtin_registry(provides).names() == names


def test_each_registry_has_fresh_tools() -> None:
    first, second = builtin_registry(), builtin_registry()
    assert all(a is not b for a, b in zip(first, second, strict=True))


def test_select_keeps_the_same_tool_objects_in_order() -> None:
    registry = builtin_registry()
    chosen = registry.select(lambda t: t.capabilities.read_only)
    assert chosen.names() == [
        "Read",
        "Glob",
        "Grep",
        "TodoWrite",
        "CronList",
        "BashOutput",
        "ListAgents",
        "TaskList",
        "TaskGet",
    ]
    assert all(t is registry.get(t.name) for t in chosen)
    assert len(registry) == len(BUILTIN_TOOLS)  # the original is untouched


def test_of_refuses_a_duplicate_name() -> None:
    with pytest.raises(ValueError, match="already registered"):
        ToolRegistry.of([*builtin_tools(), *default_registry()])


# -- subagent types --------------------------------------------------------------


def test_a_general_purpose_subagent_has_its_parents_tools_but_the_teams() -> None:
    lead = builtin_registry(Provides(team=True, lead=True, subagents=True))
    # Nor the questions to the person: a subagent reports to its parent.
    asks = {"AskUserQuestion", "EnterPlanMode", "ExitPlanMode"}
    expected = [name for name in CORE if name not in asks]
    assert subagent_registry(lead, "general-purpose").names() == [*expected, "Agent"]


def test_an_explore_subagent_has_only_its_parents_read_only_tools() -> None:
    teammate = builtin_registry(Provides(team=True, subagents=True))
    assert subagent_registry(teammate, "Explore").names() == [
        "Read",
        "Glob",
        "Grep",
        "TodoWrite",
        "CronList",
        "BashOutput",
        "ListAgents",
    ]


def test_a_subagent_never_has_a_tool_its_parent_lacks() -> None:
    parent = default_registry().select(lambda t: t.name != "Grep")
    for kind in SUBAGENT_TYPES:
        assert "Grep" not in subagent_registry(parent, kind)


def test_an_unknown_subagent_type_is_refused() -> None:
    with pytest.raises(UnknownSubagentType):
        subagent_registry(default_registry(), "Plan")
    with pytest.raises(LookupError):
        subagent_registry(default_registry(), "Plan")
