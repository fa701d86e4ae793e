"""Preparing a run: everything that can fail on bad input, done before any actor starts.

:func:`prepare` loads the settings, builds the permission policy (the one
place a permission mode is defaulted: the options', else the settings'
``defaultMode``, else ``default``), checks the loop spec and the teammates'
names, creates the run directory with its signed ``config.json`` (the
options as asked for) and makes the model, wrapped in the run's one spend
ledger. A resume reads the recorded options back and derives the rest again
from the settings as they are now: what the settings grant (a
``defaultMode``, ``additionalDirectories``, allow rules) holds only while
they still grant it, so revoking a folder's trust also narrows its
interrupted runs.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from coterie.autonomy import parse_loop_spec
from coterie.context import Budget
from coterie.extensions import Extensions, load_extensions
from coterie.extensions.installed import run_plugins
from coterie.hooks import HookConfig, load_hooks
from coterie.mcpclient import load_servers
from coterie.models import (
    DEFAULT_MODEL,
    FallbackModel,
    MeteredModel,
    ScriptedModel,
    model_from_env,
)
from coterie.runs import create_run, find_run, read_config
from coterie.runtime.options import RunOptions
from coterie.runtime.scenariotools import check_tool_names, run_tool_names
from coterie.team import team_names
from coterie.tools import (
    Bubblewrap,
    PermissionPolicy,
    PermissionSettings,
    SandboxError,
    SandboxSettings,
    builtin_tools,
    load_settings,
    parse_rule,
    probe_sandbox,
)
from coterie.tools.permissions import USER_SETTINGS, load_settings_file, merge_settings
from coterie.tools.permissions.settings import SOURCES, settings_files
from coterie.trust import named_notice, run_approval
from coterie.workspaces import Checkouts, Repository, check_repository

if TYPE_CHECKING:
    from coterie.extensions.plugins import Plugins
    from coterie.mcpclient import ServerConfig
    from coterie.models import Model
    from coterie.tools import Rule

__all__ = ["PreparedRun", "prepare", "prepare_hosted"]


@attrs.frozen
class PreparedRun:
    """A run ready to start: its resolved options, directory, policy and model."""

    options: RunOptions
    run_id: str
    run_dir: Path
    settings: PermissionSettings
    policy: PermissionPolicy
    #: The run's model; its ledger is the run's one account of spend.
    model: MeteredModel
    #: The directories besides the workspace the tools admit (``--add-dir`` and
    #: the settings' ``additionalDirectories``), resolved.
    extra_dirs: tuple[Path, ...] = ()
    #: The OS sandbox every Bash command runs in (None: not enabled, or not working).
    sandbox: Bubblewrap | None = None
    #: What the user must be told once, before the run starts (settings ignored in
    #: an untrusted folder, a sandbox that cannot work here, ...).
    notices: tuple[str, ...] = ()
    #: The ``hooks`` of the settings files that apply (parsed whole: a malformed
    #: entry stops the run before it starts).
    hooks: HookConfig = attrs.field(factory=HookConfig)
    #: The MCP servers the run connects to (``coterie.mcpclient.load_servers``).
    mcp_servers: tuple[ServerConfig, ...] = ()
    #: The run's custom subagents, skills and commands.
    extensions: Extensions = attrs.field(factory=Extensions)
    #: ``--isolation worktree``: the teammates' own checkouts (None: shared).
    checkouts: Checkouts | None = None

    @property
    def workdir(self) -> Path:
        return self.options.workdir

    def budget(self) -> Budget:
        """The context budget of the run's agents."""
        options = self.options
        budget = Budget.for_model(self.model.name, threshold=options.compact_at)
        if options.context_window is None:
            return budget
        return attrs.evolve(budget, window=options.context_window)


def prepare(
    options: RunOptions,
    *,
    model: Model | str | None = None,
    resume: str | None = None,
    run_id: str | None = None,
) -> PreparedRun:
    """A new run with *options* (named *run_id* if given: ``--session-id``), or, with
    *resume* (a run id or a unique prefix of one in ``options.workdir``), that run
    as it recorded itself.

    *model* is a model object to use instead of the one the options name (a
    name replaces the options' model for a new run).
    """
    workdir = options.workdir.resolve()
    if resume is not None and run_id is not None:
        raise ValueError("--session-id names a new run; a resumed run keeps its own id")
    if resume is not None:
        run_dir = find_run(workdir, resume)
        recorded = RunOptions.from_json(read_config(run_dir, verified=True))
        settings, policy, extra = _policy(recorded)
        derived = _derive(recorded, settings, policy, extra)
        the_model = _model(model, recorded, run_dir, settings.env)
        return derived.prepared(recorded, run_dir.name, run_dir, settings, the_model, extra)
    if isinstance(model, str):
        options = attrs.evolve(options, model=model)
    elif model is not None:
        options = attrs.evolve(options, model=model.name)
    scenario = options.scenario.resolve() if options.scenario is not None else None
    options = attrs.evolve(options, workdir=workdir, scenario=scenario)
    if options.teammates:
        team_names(None, options.teammates)
    if options.json_schema is not None and options.command != "run":
        raise ValueError(
            "--json-schema is for one agent's run (coterie run): a team's lead ends with"
            " a summary of its tasks"
        )
    if options.loop is not None:
        parse_loop_spec(options.loop)  # a usage error before anything is created
    if options.remote and (options.backend is None or not options.is_team):
        raise ValueError(
            "--remote leaves the teammates to `coterie worker` processes: it needs a team"
            " run (coterie team) and a Redis --backend"
        )
    if options.remote and options.scenario is not None:
        raise ValueError(
            "--remote leaves the teammates to `coterie worker` processes, which use the model"
            " of their own environment and never replay a --scenario file: drop --scenario"
            " (point the workers and the lead at the same model) or run the team in one process"
        )
    if options.remote and options.isolation == "worktree" and options.repo is None:
        raise ValueError(
            "--remote with --isolation worktree needs --repo URL: teammates on other hosts"
            " clone it and push their task branches there for the lead to merge"
        )
    options = attrs.evolve(
        options,
        add_dirs=tuple(Path(d).resolve() for d in options.add_dirs),
        plugin_dirs=tuple(Path(d).resolve() for d in options.plugin_dirs),
        mcp_configs=tuple(_json_or_path(f) for f in options.mcp_configs),
        settings=_settings_arg(options.settings),
    )
    settings, policy, extra = _policy(options)
    if model is None and options.model is None:  # Claude Code's order of precedence
        chosen = settings.model or os.environ.get("ANTHROPIC_MODEL") or DEFAULT_MODEL
        options = attrs.evolve(options, model=chosen)
    derived = _derive(options, settings, policy, extra)  # bad config: before a run exists
    run_id, run_dir = create_run(workdir, options.to_json(), run_id)
    try:
        the_model = _model(model, options, run_dir, settings.env)
    except BaseException:
        shutil.rmtree(run_dir)  # no credentials or a bad scenario: leave no empty run behind
        raise
    return derived.prepared(options, run_id, run_dir, settings, the_model, extra)


def prepare_hosted(
    recorded: RunOptions,
    run_id: str,
    run_dir: Path,
    *,
    workdir: Path,
    permission_mode: str,
    setting_sources: tuple[str, ...] | None = None,
) -> PreparedRun:
    """Run *run_id* (its options as *recorded* on the server) prepared for a worker
    (``coterie worker``) that hosts some of its teammates in *run_dir*, a directory
    of its own: the worker's *workdir* and settings, the worker's *permission_mode*
    and *setting_sources* (never the run's: the worker's owner decides what runs on
    their host, so a run started with ``--setting-sources project`` cannot drop the
    owner's own deny rules), the model from the environment (never a recorded
    scenario file), and nothing that names the lead's host (its extra directories,
    settings and MCP files, the caller's allow rules; deny rules, which only narrow,
    are kept)."""
    hosted = attrs.evolve(
        recorded,
        workdir=workdir.resolve(),
        permission_mode=permission_mode,
        setting_sources=setting_sources,
        scenario=None,
        add_dirs=(),
        mcp_configs=(),
        plugin_dirs=(),
        user_settings=None,
        settings=None,
        allowed_tools=(),
        allowed_rules=(),
        headless=True,
    )
    settings, policy, extra = _policy(hosted)
    derived = _derive(hosted, settings, policy, extra)
    the_model = _model(None, hosted, run_dir, settings.env)
    prepared = derived.prepared(hosted, run_id, run_dir, settings, the_model, extra)
    if prepared.checkouts is None:
        return prepared
    # The lead's process published the run's base branch; a worker's HEAD is not it.
    return attrs.evolve(prepared, checkouts=attrs.evolve(prepared.checkouts, publish=False))


@attrs.frozen
class _Derived:
    """What a run's options and settings make, before the run directory and the model."""

    sandbox: Bubblewrap | None
    policy: PermissionPolicy
    notices: tuple[str, ...]
    hooks: HookConfig
    servers: tuple[ServerConfig, ...]
    extensions: Extensions
    repository: Repository | None = None

    def prepared(
        self,
        options: RunOptions,
        run_id: str,
        run_dir: Path,
        settings: PermissionSettings,
        model: MeteredModel,
        extra: tuple[Path, ...],
    ) -> PreparedRun:
        return PreparedRun(
            options,
            run_id,
            run_dir,
            settings,
            self.policy,
            model,
            extra,
            self.sandbox,
            self.notices,
            self.hooks,
            self.servers,
            self.extensions,
            _checkouts(self.repository, run_id, options),
        )


def _derive(
    options: RunOptions,
    settings: PermissionSettings,
    policy: PermissionPolicy,
    extra: tuple[Path, ...],
) -> _Derived:
    """The sandbox, hooks, MCP servers and extensions of a run, and what to tell the
    user; every one of them checked (a bad file is a usage error now)."""
    sandbox, policy, notices = _sandbox(settings, policy, options, extra)
    # --plugin-dir and installed plugins: the user's own choice, so their hooks and
    # servers apply in any workspace (a workspace's enabledPlugins only once trusted).
    plugins = run_plugins(options.plugin_dirs, settings)
    hooks = _hooks(options, settings)
    notices = (*notices, *_ignored_hooks(hooks, settings))
    hooks = HookConfig.merge([hooks, plugins.hooks])
    servers, notices = _mcp(options, settings, notices, plugins)
    extensions = _extensions(options, settings, plugins)  # a bad --agents fails now
    notices = (*notices, *settings.key_notices, *policy.notices, *extensions.notices)
    named = None if settings.approval is None else named_notice(settings.approval)
    if named is not None:  # the command line, not the store, trusts the workspace
        notices = (named, *notices)
    repository = _repository(options)
    return _Derived(sandbox, policy, notices, hooks, servers, extensions, repository)


def _repository(options: RunOptions) -> Repository | None:
    """The workspace's repository when teammates get checkouts of their own (a
    workspace that is not a repository with a commit is a usage error now)."""
    if options.isolation == "shared":
        if options.repo is not None:
            raise ValueError("--repo gives each teammate a clone: it needs --isolation worktree")
        return None
    if options.command != "team":
        raise ValueError("--isolation worktree is for team runs (coterie team)")
    return check_repository(options.workdir)


def _checkouts(repository: Repository | None, run_id: str, options: RunOptions) -> Checkouts | None:
    return None if repository is None else Checkouts(repository, run_id, options.repo)


def _extensions(options: RunOptions, settings: PermissionSettings, plugins: Plugins) -> Extensions:
    """The run's custom subagents, skills, commands and output styles (the workspace's
    only when trusted), and the output style the settings chose."""
    known = {n for t in builtin_tools() for n in (t.name, *getattr(t, "aliases", ()))}
    return load_extensions(
        options.workdir,
        trusted=settings.trusted,
        approved=settings.approval,
        read_project="project" in _sources(options),
        agents_json=options.agents,
        known_tools={*known, "Skill"},
        output_style=settings.output_style,
        plugins=plugins,
    )


def _hooks(options: RunOptions, settings: PermissionSettings) -> HookConfig:
    """The hooks of the settings files: the user's always, the project's and the
    local file's only in a trusted workspace (their hooks run programs), and only
    as they were when it was trusted (a file changed since runs no hook)."""
    user = options.user_settings or USER_SETTINGS
    files = settings_files(options.workdir, user, _sources(options))
    # The user's file alone: the list for a workspace that has no settings.
    mine = settings_files(Path("/nonexistent/coterie-no-workspace"), user)
    return load_hooks(
        [
            (path, path in mine or (settings.trusted and path not in settings.unapproved_files))
            for path in files
        ]
    )


def _mcp(
    options: RunOptions, settings: PermissionSettings, notices: tuple[str, ...], plugins: Plugins
) -> tuple[tuple[ServerConfig, ...], tuple[str, ...]]:
    """The MCP servers of the run (a bad file is a usage error now), and the notices;
    the plugins' too, unless ``--strict-mcp-config`` keeps only ``--mcp-config``'s."""
    servers, said = load_servers(
        options.workdir,
        trusted=settings.trusted,
        approved=settings.approval,
        home=Path(os.path.expanduser("~")),
        files=options.mcp_configs,
        env=os.environ,
        strict=options.strict_mcp_config,
    )
    if not options.strict_mcp_config:
        servers = (*servers, *plugins.servers)
    return servers, (*notices, *said)


def _policy(
    options: RunOptions,
) -> tuple[PermissionSettings, PermissionPolicy, tuple[Path, ...]]:
    """The settings as they are now, the policy they make with the options, and the
    directories the tools admit besides the workspace."""
    settings = load_settings(
        options.workdir,
        user_settings=options.user_settings or USER_SETTINGS,
        sources=_sources(options),
        approved=run_approval(options.workdir, options.setting_sources),
    )
    if options.settings is not None:  # --settings: the caller's own layer, over the files
        layer = _settings_layer(options.settings, options.workdir)
        merged = merge_settings(settings, layer)
        settings = attrs.evolve(
            merged,
            trusted=settings.trusted,
            workspace=settings.workspace,
            approval=settings.approval,
        )
    # --allowedTools / --disallowedTools: the caller's rules for this run (deny wins).
    settings = attrs.evolve(
        settings,
        allow=(*settings.allow, *_cli_rules(options.allowed_rules, options, "--allowedTools")),
        deny=(*settings.deny, *_cli_rules(options.disallowed_rules, options, "--disallowedTools")),
    )
    # A command's allowed-tools: rules of the run itself, a workspace command's only
    # while the workspace is trusted (a resume after `coterie trust --revoke` loses them).
    if options.allowed_tools and (options.allowed_tools_scope == "user" or settings.trusted):
        granted = tuple(
            parse_rule(r, root=options.workdir, source="allowed-tools")
            for r in options.allowed_tools
        )
        settings = attrs.evolve(settings, allow=(*settings.allow, *granted))
    policy = PermissionPolicy.from_settings(
        settings, mode=options.permission_mode, bypass_available=options.allow_bypass
    )
    extra = (*options.add_dirs, *(Path(d).resolve() for d in settings.additional_directories))
    return settings, policy, tuple(dict.fromkeys(extra))


def _json_or_path(value: str) -> str:
    """A ``--mcp-config`` as recorded: JSON text as it is, a file by its absolute path."""
    return value if value.lstrip().startswith("{") else str(Path(value).expanduser().resolve())


def _settings_arg(value: str | None) -> str | None:
    """``--settings`` as recorded: a file's absolute path (a resume finds it from
    anywhere), or the JSON text itself."""
    if value is None or value.lstrip().startswith("{"):
        return value
    return str(Path(value).expanduser().resolve())


def _sources(options: RunOptions) -> tuple[str, ...]:
    return SOURCES if options.setting_sources is None else options.setting_sources


def _settings_layer(value: str, workdir: Path) -> PermissionSettings:
    """``--settings``: a settings file, or (text starting with ``{``) a JSON object,
    whose ``/path`` rules are anchored at the workspace."""
    if value.lstrip().startswith("{"):
        return load_settings_file(workdir / "--settings", text=value)
    return load_settings_file(Path(value).expanduser().resolve())


def _cli_rules(rules: tuple[str, ...], options: RunOptions, flag: str) -> tuple[Rule, ...]:
    return tuple(parse_rule(r, root=options.workdir, source=flag) for r in rules)


def _ignored_hooks(hooks: HookConfig, settings: PermissionSettings) -> tuple[str, ...]:
    # A file changed since the folder was trusted is named by the settings' own notice.
    untrusted = tuple(
        f"{path}: its hooks were ignored: the workspace is not trusted"
        for path in hooks.ignored_files
        if path not in settings.unapproved_files
    )
    return (*untrusted, *hooks.notices)


def _sandbox(
    settings: PermissionSettings,
    policy: PermissionPolicy,
    options: RunOptions,
    extra_dirs: tuple[Path, ...],
) -> tuple[Bubblewrap | None, PermissionPolicy, tuple[str, ...]]:
    """The Bash sandbox the settings ask for, the policy that goes with it, and what
    to tell the user. Fail-closed: a sandbox that cannot work here is said once and
    Bash goes back to asking (``sandbox.failIfUnavailable``: the run does not start)."""
    untrusted = settings.untrusted_notice
    notices: tuple[str, ...] = (untrusted,) if untrusted else ()
    wanted = SandboxSettings.from_json(settings.sandbox)
    if not wanted.enabled:
        return None, policy, notices
    why = probe_sandbox()
    if why is not None:
        if wanted.fail_if_unavailable:
            raise SandboxError(f"the Bash sandbox cannot run here: {why}")
        return None, policy, (*notices, f"sandbox: {why}; Bash commands will ask instead")
    workdir = options.workdir
    hidden = [
        anchor
        for rule in policy.deny
        if rule.tool == "Read"
        and not rule.whole_tool
        # Inside the workspace the sandbox finds what Read rules cover itself; an
        # anchor above it (a pattern like **/*.env) would hide the workspace.
        and not (anchor := rule.anchor(workdir)).is_relative_to(workdir)
        and not workdir.is_relative_to(anchor)
    ]
    has_read_rules = any(r.tool == "Read" for r in policy.deny)
    sandbox = Bubblewrap.from_settings(
        wanted, workdir, extra_dirs, hidden, read_deny_rules=has_read_rules
    )
    policy = attrs.evolve(
        policy,
        sandbox_auto_allow=wanted.auto_allow_bash,
        sandbox_excluded=wanted.excluded_commands,  # type: ignore[arg-type]  # attrs converter
        sandbox_escapable=wanted.allow_unsandboxed_commands,
    )
    return sandbox, policy, (*notices, *(f"sandbox: {note}" for note in wanted.notes))


def _model(
    model: Model | str | None, options: RunOptions, run_dir: Path, env: dict[str, str]
) -> MeteredModel:
    if model is None or isinstance(model, str):
        inner = model_from_env(
            options.model,
            options.scenario,
            run_dir / "scenario-state.json",
            env=env,
            thinking=options.thinking,
            effort=options.effort,
            betas=options.betas,
        )
        if isinstance(inner, ScriptedModel):  # a typo in a tool's name: before anything runs
            check_tool_names(inner.scenario, run_tool_names())
    else:
        inner = model
    if options.fallback_model:  # --fallback-model: overloaded calls go on with it
        inner = FallbackModel(inner, options.fallback_model)
    return MeteredModel(inner)
