"""Preparing a run: everything that can fail on bad input, done before any actor starts.

:func:`prepare` loads the settings, builds the permission policy (the one
place a permission mode is defaulted: the options', else the settings'
``defaultMode``, else ``default``), checks the loop spec and the teammates'
names, creates the run directory with its ``config.json`` (the options as
resolved, so that a resume runs exactly as the run did) and makes the
model, wrapped in the run's one spend ledger. A resume reads the recorded
options back instead.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from coterie.autonomy import parse_loop_spec
from coterie.context import Budget
from coterie.models import MeteredModel, model_from_env
from coterie.runs import create_run, find_run, read_config
from coterie.runtime.options import RunOptions
from coterie.team import team_names
from coterie.tools import (
    Bubblewrap,
    PermissionPolicy,
    PermissionSettings,
    SandboxError,
    SandboxSettings,
    load_settings,
    probe_sandbox,
)
from coterie.tools.permissions import USER_SETTINGS

if TYPE_CHECKING:
    from coterie.models import Model

__all__ = ["PreparedRun", "prepare"]


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
    #: The OS sandbox every Bash command runs in (None: not enabled, or not working).
    sandbox: Bubblewrap | None = None
    #: What the user must be told once, before the run starts (settings ignored in
    #: an untrusted folder, a sandbox that cannot work here, ...).
    notices: tuple[str, ...] = ()

    @property
    def workdir(self) -> Path:
        return self.options.workdir

    def budget(self) -> Budget:
        """The context budget of the run's agents."""
        options = self.options
        budget = Budget.for_model(options.model, threshold=options.compact_at)
        if options.context_window is None:
            return budget
        return attrs.evolve(budget, window=options.context_window)


def prepare(
    options: RunOptions, *, model: Model | str | None = None, resume: str | None = None
) -> PreparedRun:
    """A new run with *options*, or, with *resume* (a run id or a unique prefix of
    one in ``options.workdir``), that run as it recorded itself.

    *model* is a model object to use instead of the one the options name (a
    name replaces the options' model for a new run).
    """
    workdir = options.workdir.resolve()
    if resume is not None:
        run_dir = find_run(workdir, resume)
        recorded = RunOptions.from_json(read_config(run_dir, verified=True))
        settings, policy = _policy(recorded)
        sandbox, policy, notices = _sandbox(settings, policy, recorded)
        the_model = _model(model, recorded, run_dir)
        return PreparedRun(
            recorded, run_dir.name, run_dir, settings, policy, the_model, sandbox, notices
        )
    if isinstance(model, str):
        options = attrs.evolve(options, model=model)
    elif model is not None:
        options = attrs.evolve(options, model=model.name)
    scenario = options.scenario.resolve() if options.scenario is not None else None
    options = attrs.evolve(options, workdir=workdir, scenario=scenario)
    if options.teammates:
        team_names(None, options.teammates)
    if options.loop is not None:
        parse_loop_spec(options.loop)  # a usage error before anything is created
    settings, policy = _policy(options)
    extra = tuple(Path(d).resolve() for d in (*options.add_dirs, *settings.additional_directories))
    options = attrs.evolve(options, permission_mode=policy.mode, add_dirs=extra)
    sandbox, policy, notices = _sandbox(settings, policy, options)
    run_id, run_dir = create_run(workdir, options.to_json())
    try:
        the_model = _model(model, options, run_dir)
    except BaseException:
        shutil.rmtree(run_dir)  # no credentials or a bad scenario: leave no empty run behind
        raise
    return PreparedRun(options, run_id, run_dir, settings, policy, the_model, sandbox, notices)


def _policy(options: RunOptions) -> tuple[PermissionSettings, PermissionPolicy]:
    settings = load_settings(options.workdir, user_settings=options.user_settings or USER_SETTINGS)
    return settings, PermissionPolicy.from_settings(settings, mode=options.permission_mode)


def _sandbox(
    settings: PermissionSettings, policy: PermissionPolicy, options: RunOptions
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
        wanted, workdir, options.add_dirs, hidden, read_deny_rules=has_read_rules
    )
    policy = attrs.evolve(
        policy,
        sandbox_auto_allow=wanted.auto_allow_bash,
        sandbox_excluded=wanted.excluded_commands,  # type: ignore[arg-type]  # attrs converter
    )
    return sandbox, policy, (*notices, *(f"sandbox: {note}" for note in wanted.notes))


def _model(model: Model | str | None, options: RunOptions, run_dir: Path) -> MeteredModel:
    if model is None or isinstance(model, str):
        inner = model_from_env(options.model, options.scenario, run_dir / "scenario-state.json")
    else:
        inner = model
    return MeteredModel(inner)
