"""The public surface of every package of coterie, as exact sets.

As trio's ``test_exports``: each package's ``__all__`` is exactly what is
written here (a name added or dropped is a decision, made in this file),
every name resolves, none is private, and every public class and function
has a docstring. A new package must be added here: a test walks ``coterie/``.

The CLI's namespaces (``coterie.commands``, ``coterie.demos``) hold modules,
not an API: they promise an empty ``__all__``. Package-specific checks (what
a package must not import, lazy imports) stay in ``tests/<part>/test_exports.py``.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import coterie

if TYPE_CHECKING:
    from types import ModuleType

PACKAGE = Path(coterie.__file__).parent

SURFACES: dict[str, set[str]] = {
    "coterie": {
        "AgentSession", "RunOptions", "RunResult", "open_agent", "open_team",
        # the typed messages of AgentSession.stream, in the Agent SDK's names
        "AssistantMessage", "ContentBlock", "HookEventMessage", "Message", "ResultMessage",
        "StreamEvent", "SystemMessage", "TaskNotificationMessage", "TaskProgressMessage",
        "TaskStartedMessage", "TaskUpdatedMessage", "TextBlock", "ThinkingBlock",
        "ToolResultBlock", "ToolUseBlock", "UserMessage",
    },
    "coterie.actors": {
        "STOP", "Actor", "ActorContext", "AutoModeAsker", "AutoModeClassifier", "Behaviour",
        "Classification", "GoalEvaluator", "SeenIds", "actor_spec", "classifier_spec",
        "classify_action", "evaluate_goal", "evaluator_spec", "goal_transcript"
    },
    "coterie.control": {
        "CONTROL", "DEFAULT_TIMEOUT", "FAULTS", "Control", "ControlError", "FaultName",
        "FaultRefused", "FaultRequest", "NoReply", "NoSuchActor", "RunNotRunning",
        "control_spec", "inject", "live_mailboxes"
    },
    "coterie.hostlink": {
        "Answered", "Cancel", "CancelHandler", "Decision", "Dispatch", "Exchange", "Frame",
        "FrameError", "Handler", "HostLink", "Request", "RequestRefused", "Response", "Stray",
        "Turn", "UserLine",
        "Write", "encode",
        "error_response", "parse_line", "success_response", "writes",
    },
    "coterie.agent": {
        "SUBTYPES", "AgentLoop", "Limits", "RunResult", "Subtype", "build_system_prompt",
        "context_reminder",
    },
    "coterie.autonomy": {
        "ARBITRARY_EXECUTION_COMMANDS", "CONSECUTIVE_LIMIT", "DEFAULTS_MARKER", "END_SUBTYPES",
        "END_TEXTS", "MAX_DELAY", "MIN_DELAY", "PENDING_LABEL", "SECTIONS", "TOTAL_LIMIT",
        "AutoModeRule", "AutoModeRules", "AutoModeRulesError", "BlockVerdict", "DenialTracker",
        "DurationError", "End", "Ending", "GoalMachine", "GoalStatus", "GoalVerdict", "Judge",
        "LoopSpec", "LoopSpecError", "PursuitProtocolError", "Schedule", "Stage", "Stop",
        "Tick", "TickMachine", "TickOutcome", "TickProtocolError", "Wait", "Work",
        "clamp_delay", "classifier_request", "classifier_system_prompt",
        "classifier_transcript", "default_auto_mode_rules", "drop_arbitrary_execution",
        "escape_json", "feedback", "format_duration", "grants_arbitrary_execution",
        "load_auto_mode_rules", "parse_block_verdict", "parse_duration", "parse_goal_verdict",
        "parse_loop_spec", "schedule_hint"
    },
    "coterie.backends": {
        "BACKEND_ENV", "PROVIDERS", "Backend", "BackendError", "Pending", "Provider",
        "ReadError", "Replica", "RunAddress", "RunDirectory", "RunReader", "RunSource",
        "RunStores", "RunSummary", "WorkerDirectory", "open_stores",
    },
    "coterie.backends.files": set(),
    "coterie.backends.redis": {
        "RedisBoard", "RedisMailbox", "RedisTarget", "connect", "open_redis_board",
        "open_redis_post_office", "parse_backend", "peek_redis_mailbox", "read_redis_log",
        "redis_mail_counts", "redis_mailbox_names", "remove_redis_mailbox", "server_errors",
    },
    "coterie.board": {
        "UNSET", "AsyncBoard", "Board", "BoardCorruption", "BoardError", "BoardLost",
        "BoardRefusal", "BoardStatistics", "InvalidOwnerName", "InvalidTaskField", "InvalidTaskId",
        "InvalidTransition", "Lease", "LogEntry", "NotTaskOwner", "Task", "TaskBoard",
        "TaskCycle", "TaskStatus", "UnknownTask", "Unset", "check_task_id", "open_board",
        "read_log", "rewind_log",
    },
    "coterie.context": {
        "CONTEXT_WINDOWS", "DEFAULT_CONTEXT_WINDOW", "SUMMARY_SYSTEM", "Budget",
        "CompactionReport", "ContextOverflow", "Funnel", "FunnelConfig", "HistoryInvalid",
        "MemoryFile", "Replica", "memory_text", "project_memory", "TokenCounter",
        "TranscriptCorruption",
        "TranscriptLog", "check_history",
        "context_window", "repair_history", "summary_request", "user_texts"
    },
    "coterie.journal": {
        "DISK", "HEADER_SIZE", "MAGIC", "MAX_RECORD", "SEAL", "Corrupt", "Durability",
        "FileLock", "GroupCommit", "Incomplete", "Item", "Record", "SyncPolicy", "SyncRunner",
        "ThreadGroupCommit", "cut_tail", "encode", "is_seal", "scan", "torn_tail", "write_all"
    },
    "coterie.mailbox": {
        "CorruptRecord", "Delivery", "Durability", "FileMailbox", "FileNames", "Mailbox",
        "MailboxStatistics", "MailboxWriter", "MemoryMailbox", "MemoryNames", "NameRegistry",
        "Position", "PostOffice", "open_file_mailbox", "peek_mailbox"
    },
    "coterie.mcpclient": {
        "Connection", "HttpServer", "McpConfigError", "McpServerDown", "McpServers", "McpTool",
        "ServerConfig", "Status", "StdioServer", "Timing", "cap_output", "expand",
        "load_servers", "parse_servers", "render_content", "seconds_from_env", "server_spec",
        "tool_name"
    },
    "coterie.models": {
        "DEFAULT_MODEL", "DEFAULT_MODEL_PRICE", "MODEL_ALIASES", "ROLES", "AnthropicModel",
        "FallbackModel", "Latency", "MeteredModel", "is_overloaded",
        "MockServer", "Model", "ModelAPIError", "ModelError", "ModelPrice", "ModelReply",
        "ModelRequest", "PromptTooLong", "RecordedRequest", "RequestInvalid", "RetrySink",
        "Retrying", "Scenario", "ScenarioError", "ScriptedCrash", "ScriptedModel", "StreamSink",
        "TextSink", "ToolUse", "Turn",
        "TurnError", "Usage", "UsageLedger", "cost_usd", "is_known_model", "load_scenario",
        "model_from_env", "parse_scenario", "price_for", "resolve_model", "serve_scenario",
        "validate_request",
    },
    "coterie.hooks": {
        "EVENTS", "HookEvent", "Handler", "HookConfig", "HookGroup", "HooksConfigError",
        "load_hooks", "Actor", "AgentHooks", "Hooks", "matches", "Outcome", "Verdict",
        "combine", "read_result", "HookCallback", "HookMatcher", "callback_hooks",
    },
    "coterie.runtime": {
        "MAX_RESTARTS", "RESTART_PERIOD", "USER", "AgentSession", "Agents", "Command",
        "DurableDenials", "PreparedRun", "RunOptions", "build_tree", "open_run", "prepare"
    },
    "coterie.supervisors": {
        "AlreadyPresent", "AlreadyStarted", "AutoShutdown", "Backoff", "ChildCounts",
        "ChildInfo", "ChildIsRunning", "ChildSpec", "ChildState", "Decision",
        "DynamicSupervisor", "FailedToStartChild", "GiveUp", "InitFailed", "InvalidChildSpec",
        "NoSuchChild", "RemoveChild", "Restart", "RestartChild", "ShutDown", "ShutdownExit",
        "StartChild", "StartFailed", "StopChildren", "Strategy", "SupervisionError",
        "SupervisionProtocolError", "Supervisor", "SupervisorGaveUp", "SupervisorMachine",
        "TooManyChildren", "isolated",
        "ChildNotRunning", "Fault", "InjectedCrash"
    },
    "coterie.team": {
        "LEAD_TURNS_MODES", "LeadTurns", "NAMES", "LeadMachine", "Team", "TeamLead", "Teammate",
        "Wakeups", "changed_tasks",
        "default_names", "final_result", "hand_back", "stuck", "team_names", "team_summary",
        "the_user_asked"
    },
    "coterie.tools": {
        # the interface, the registry and the one call the loop makes
        "Tool", "ShellSandbox",
        "ToolContext", "ToolResult", "FileStamp", "TeamContext", "ToolRegistry", "ToolSource",
        "Authorizer", "UnknownTool", "execute_tool_call",
        # capabilities and the catalogue chosen by them
        "Access", "Capabilities", "Effect", "Need", "PathInput", "BUILTIN_TOOLS", "Provides",
        # --tools / --allowedTools lists (coterie.tools.selection)
        "ListError", "split_list", "tool_choice", "tool_names",
        "builtin_registry", "builtin_tools", "default_registry", "team_tools", "add_team_tools",
        "SUBAGENT_TYPES", "SubagentType", "UnknownSubagentType", "subagent_registry",
        # the built-in tools
        "BashTool", "ReadTool", "WriteTool", "EditTool", "NotebookEditTool", "GlobTool", "GrepTool",
        "TodoWriteTool",
        "TaskCreateTool", "TaskUpdateTool", "TaskListTool", "TaskGetTool", "SendMessageTool",
        "ApprovePlanTool", "MergeTaskTool", "TaskTool", "ScheduleWakeupTool", "BROADCAST",
        "last_wakeup",
        # custom subagents and skills (coterie.extensions supplies them)
        "CustomType", "custom_registry", "Skill", "SkillTool", "NarrowedGate",
        # structured output (--json-schema)
        "STRUCTURED_OUTPUT", "SchemaError", "StructuredOutputTool", "check_schema", "load_schema",
        "todo_reminder",
        # permissions and the sandbox
        "Answer", "Asker", "Decision", "Mode", "PermissionGate", "PermissionMode",
        "PermissionPolicy", "PermissionSettings", "Rule", "RuleError", "SettingsError",
        "load_settings", "parse_rule", "SandboxViolation", "sandboxed_path", "Suggestion",
        # the OS sandbox for Bash (bubblewrap)
        "Bubblewrap", "NetworkSettings", "SandboxError", "SandboxSettings",
        "SandboxSettingsError", "probe_sandbox",
    },
    "coterie.tools.web": {"WebFetchTool", "WebSearchTool"},
    "coterie.tools.permissions": {
        "MODES", "PATH_RULE_KINDS", "USER_SETTINGS", "Answer", "Asker", "Behavior",
        "BypassNotLaunched", "Decision", "Mode", "PermissionGate", "PermissionMode",
        "PermissionPolicy", "PermissionSettings",
        "Rule", "RuleError", "SettingsError", "ShellAnalysis", "analyze", "command_views",
        "hard_deny_reason", "load_settings", "load_settings_file", "merge_settings",
        "parse_rule", "NarrowedGate", "Suggestion", "suggest_rule", "add_local_allow_rule",
        "local_settings_path"
    },
    "coterie.extensions": {
        "AgentDefinition", "AgentsError", "CommandDefinition", "CommandError", "Expansion",
        "Extensions", "FrontmatterError", "SkillDefinition", "expand", "load_extensions",
        "parse_agents_json", "parse_frontmatter"
    },
    "coterie.ui": {
        "ConsoleView", "JsonView", "StreamJsonView", "TerminalAsker", "TextView", "View",
        "ActorRow", "TeamState", "one_line"
    },
    "coterie.processes": {"end_group", "group_alive", "open_group"},
    "coterie.observe": {
        "Guard", "Injector", "Observer", "Refusal", "Route", "RunFeed", "RunView",
        "serve_observer", "sse_frame"
    },
    "coterie.events": {
        "EVENT_TYPES", "Event", "EventLog", "EventType", "read_events", "stored"
    },
    "coterie.backends.redis.eventstream": {
        "Forwarder", "StreamEvent", "forward_events", "read_stream", "stream_key"
    },
    "coterie.workspaces.gitsafe": {
        "GIT", "LIST_CONFIG", "RULES", "SAFE_GIT_CONFIG", "SAFE_PROTOCOLS", "USER_CONFIG",
        "GitRefused", "classify", "git_env", "has_submodule", "parse_listing", "plan",
        "user_config"
    },
    "coterie.workspaces.git": {
        "GitError", "GitOutput", "config_is_inert", "git", "git_command", "git_in_group",
        "git_sync", "run_git", "safe_git_config"
    },
    "coterie.backends.redis.mirror": {
        "Fence", "LogReplica", "RunMirror"
    },
    "coterie.eventtypes": {
        "EVENT_TYPES", "EventType"
    },
    "coterie.workspaces": {
        "WORKSPACES_ENV", "BadName", "Checkouts", "Committed", "GitError", "MergeOutcome",
        "NotARepository", "Repository", "Status", "TeammateWorkspace", "base_branch",
        "check_repository", "commit_message", "merge_message", "merge_task", "parse_status",
        "task_branch", "task_of_branch", "workspaces_root",
        # the one git runner, for the rest of the runtime (issue 32)
        "GitRefused", "config_is_inert", "git_in_group", "run_git",
    },
    "coterie.checkpoints": {
        "SCANS", "BadCheckpoint", "Checkpoint", "CheckpointLog", "CheckpointRow", "DamagedObject",
        "Entry", "ObjectStore", "RestoreRefused", "RewindPlan", "RewindRefused", "RewindReport",
        "Snapshot", "SnapshotTooLarge", "Span", "changed_paths", "checkpoint_log",
        "conversation_marks", "cut_point",
        "list_checkpoints", "plan_files", "plan_rewind", "restore", "resume_at",
        "rewind_checkpoints", "rewind_files", "rewind_run", "scan",
    },
    "coterie.workflows": {
        "CONCURRENCY", "MAX_AGENTS", "MAX_ITEMS", "AgentOutcome", "Done", "Failed", "Meta",
        "Note", "Progress", "Replay", "Request", "ScriptError", "ScriptMachine", "Summary",
        "WorkflowJournal", "call_key", "check_syntax", "label_of", "new_run_id", "read_meta",
        "run_workflow", "script_body", "unfinished_like",
    },
    "coterie.commands": set(),
    "coterie.demos": set(),
    "coterie.interactive": {
        "COMMANDS", "Conversation", "SlashInput", "closest", "history_path", "parse_slash"
    },
    "coterie.backends.redis.client": {
        "BACKEND_ENV", "BackendError", "RedisTarget", "accepted", "connect", "parse_backend",
        "refused", "server_errors",
    },
    "coterie.workers": {
        "RETIRED", "Hosted", "HostingWatch", "StartBackoff", "Unhosted", "Wanted",
        "WorkerConfig", "WorkerInfo", "choose_claims", "serve_worker"
    },
}  # fmt: skip


def _params() -> list[object]:
    return [pytest.param(name, id=name) for name in sorted(SURFACES)]


def _module(name: str) -> ModuleType:
    return importlib.import_module(name)


def _declared(name: str) -> list[str]:
    module = _module(name)
    assert hasattr(module, "__all__"), f"{name} has no __all__"
    return list(module.__all__)


@pytest.mark.parametrize("name", _params())
def test_all_is_exactly_the_expected_set(name: str) -> None:
    declared = _declared(name)
    assert len(declared) == len(set(declared)), "a name is listed twice"
    assert set(declared) == SURFACES[name]


@pytest.mark.parametrize("name", _params())
def test_every_exported_name_resolves(name: str) -> None:
    module = _module(name)
    assert [n for n in _declared(name) if not hasattr(module, n)] == []


@pytest.mark.parametrize("name", _params())
def test_no_private_name_is_exported(name: str) -> None:
    assert [n for n in _declared(name) if n.startswith("_")] == []


@pytest.mark.parametrize("name", _params())
def test_every_public_class_and_function_has_a_docstring(name: str) -> None:
    module = _module(name)
    undocumented = [
        n
        for n in _declared(name)
        if (inspect.isclass(obj := getattr(module, n, None)) or inspect.isfunction(obj))
        and not obj.__doc__
    ]
    assert undocumented == []


def test_every_package_of_coterie_has_its_surface_here() -> None:
    packages = {
        ".".join(("coterie", *path.parent.relative_to(PACKAGE).parts))
        for path in PACKAGE.rglob("__init__.py")
    }
    assert packages - set(SURFACES) == set()
