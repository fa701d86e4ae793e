"""A run's configuration and its preparation: what was asked for, checked before
any actor starts, recorded in ``config.json`` so that a resume needs no flags."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import attrs

from coterie.autonomy import parse_loop_spec
from coterie.context import Budget
from coterie.models import DEFAULT_MODEL, Model, model_from_env
from coterie.runs import create_run, find_run, read_config
from coterie.tools import PermissionPolicy, PermissionSettings, load_settings
from coterie.tools.permissions import USER_SETTINGS

if TYPE_CHECKING:
    from coterie.tools import Asker


class RunOptions(TypedDict, total=False):
    """The options of :func:`coterie.open_agent` and :func:`coterie.team.open_team`.

    ``model``: a Model object or a model name; ``scenario``: replay that file
    offline with the scripted model; ``permission_mode``, ``add_dirs``,
    ``max_turns``, ``max_budget_usd``, ``context_window``, ``compact_at``,
    ``goal``, ``max_goal_iterations``: as the CLI options of the same names;
    ``asker``: who answers permission questions (None: nobody, so what
    would ask is denied, or judged by the classifier in ``auto``);
    ``user_settings``: the user settings file (default ``~/.claude/settings.json``);
    ``resume``: a run id (or unique prefix) to reopen with its recorded
    configuration (the other options, but ``model`` objects and ``asker``,
    are then ignored); ``record``: entries to add to a new run's
    ``config.json``.
    """

    model: Model | str | None
    scenario: Path | str | None
    permission_mode: str | None
    add_dirs: list[Path] | tuple[Path, ...]
    max_turns: int | None
    max_budget_usd: float | None
    context_window: int | None
    compact_at: float
    goal: str | None
    max_goal_iterations: int
    asker: Asker | None
    user_settings: Path | None
    resume: str | None
    record: dict[str, Any] | None


@attrs.frozen
class AgentConfig:
    """Everything a run was asked for; stored in the run's ``config.json``."""

    workdir: Path
    model: str = DEFAULT_MODEL
    scenario: Path | None = None
    permission_mode: str = "default"
    add_dirs: tuple[Path, ...] = ()
    max_turns: int | None = None
    max_budget_usd: float | None = None
    headless: bool = True
    user_settings: Path | None = None
    #: Tokens of context the model has (None: the model's known window).
    context_window: int | None = None
    #: Compact when a history passes this share of the window.
    compact_at: float = 0.8
    #: The teammates of a team run (empty: a single agent).
    teammates: tuple[str, ...] = ()
    #: Teammates work in plan mode until the lead approves their plan.
    plan_approval: bool = False
    #: ``--goal``: the condition the goal evaluator judges after each turn.
    goal: str | None = None
    #: The most goal iterations (turns fed a not-met reason) before giving up.
    max_goal_iterations: int = 25
    #: ``--loop``: the loop spec (an interval and a prompt, or a dynamic prompt).
    loop: str | None = None
    #: The most ticks of a loop.
    max_ticks: int = 100

    def to_json(self) -> dict[str, Any]:
        return {
            "workdir": str(self.workdir),
            "model": self.model,
            "scenario": str(self.scenario) if self.scenario else None,
            "permission_mode": self.permission_mode,
            "add_dirs": [str(d) for d in self.add_dirs],
            "max_turns": self.max_turns,
            "max_budget_usd": self.max_budget_usd,
            "headless": self.headless,
            "user_settings": str(self.user_settings) if self.user_settings else None,
            "context_window": self.context_window,
            "compact_at": self.compact_at,
            "teammates": list(self.teammates),
            "plan_approval": self.plan_approval,
            "goal": self.goal,
            "max_goal_iterations": self.max_goal_iterations,
            "loop": self.loop,
            "max_ticks": self.max_ticks,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AgentConfig:
        """The configuration a run recorded (see :meth:`to_json`)."""

        def path(key: str) -> Path | None:
            return Path(data[key]) if data.get(key) else None

        return cls(
            workdir=Path(data["workdir"]),
            model=str(data.get("model") or DEFAULT_MODEL),
            scenario=path("scenario"),
            permission_mode=str(data.get("permission_mode") or "default"),
            add_dirs=tuple(Path(d) for d in data.get("add_dirs", ())),
            max_turns=data.get("max_turns"),
            max_budget_usd=data.get("max_budget_usd"),
            headless=bool(data.get("headless", True)),
            user_settings=path("user_settings"),
            context_window=data.get("context_window"),
            compact_at=float(data.get("compact_at", 0.8)),
            teammates=tuple(data.get("teammates", ())),
            plan_approval=bool(data.get("plan_approval", False)),
            goal=data.get("goal"),
            max_goal_iterations=int(data.get("max_goal_iterations", 25)),
            loop=data.get("loop"),
            max_ticks=int(data.get("max_ticks", 100)),
        )

    def budget(self) -> Budget:
        """The context budget of the run's agents."""
        budget = Budget.for_model(self.model, threshold=self.compact_at)
        if self.context_window is None:
            return budget
        return attrs.evolve(budget, window=self.context_window)


@attrs.frozen
class PreparedRun:
    """A run ready to start: its configuration, permission policy, directory and model."""

    config: AgentConfig
    policy: PermissionPolicy
    run_id: str
    run_dir: Path
    model: Model
    settings: PermissionSettings


def _policy(config: AgentConfig) -> tuple[PermissionPolicy, tuple[Path, ...], PermissionSettings]:
    settings = load_settings(config.workdir, user_settings=config.user_settings or USER_SETTINGS)
    policy = PermissionPolicy.from_settings(settings, mode=config.permission_mode)
    extra = tuple(Path(d).resolve() for d in (*config.add_dirs, *settings.additional_directories))
    return policy, extra, settings


def _model_for(model: Model | str | None, config: AgentConfig, run_dir: Path) -> Model:
    if model is not None and not isinstance(model, str):
        return model
    return model_from_env(config.model, config.scenario, run_dir / "scenario-state.json")


def new_run(
    workdir: Path,
    *,
    model: Model | str | None,
    scenario: Path | str | None,
    permission_mode: str | None,
    record: dict[str, Any],
    **options: Any,
) -> PreparedRun:
    """Settings, policy, the run directory and the model: everything that can fail
    on bad input, done before any actor starts. *record* adds entries to
    ``config.json`` (the command, its prompt)."""
    workdir = workdir.resolve()
    if isinstance(model, str):
        model_name = model
    else:
        model_name = getattr(model, "name", DEFAULT_MODEL) if model is not None else DEFAULT_MODEL
    config = AgentConfig(
        workdir=workdir,
        model=model_name,
        scenario=Path(scenario).resolve() if scenario is not None else None,
        permission_mode=permission_mode or "default",
        **options,
    )
    if config.loop is not None:
        parse_loop_spec(config.loop)  # a usage error before anything is created
    policy, extra_dirs, settings = _policy(config)
    config = attrs.evolve(config, permission_mode=policy.mode, add_dirs=extra_dirs)
    run_id, run_dir = create_run(workdir, {**record, **config.to_json()})
    try:
        the_model = _model_for(model, config, run_dir)
    except BaseException:
        shutil.rmtree(run_dir)  # no credentials or a bad scenario: leave no empty run behind
        raise
    return PreparedRun(config, policy, run_id, run_dir, the_model, settings)


def old_run(workdir: Path, run: str, model: Model | str | None = None) -> PreparedRun:
    """The recorded configuration of run *run*, its policy and model, for a resume."""
    run_dir = find_run(workdir.resolve(), run)
    config = AgentConfig.from_json(read_config(run_dir))
    policy, _, settings = _policy(config)
    the_model = _model_for(model, config, run_dir)
    return PreparedRun(config, policy, run_dir.name, run_dir, the_model, settings)


def prepare(workdir: Path | str, command: str, options: RunOptions, **extra: Any) -> PreparedRun:
    """The run *options* ask for: a new one (``config.json`` records *command*
    and the options, *extra* for the command's own), or the one to resume."""
    model = options.get("model")
    resume = options.get("resume")
    if resume is not None:
        return old_run(Path(workdir), resume, model)
    settings = {
        key: value
        for key, value in options.items()
        if key not in ("model", "resume", "record", "asker", "scenario", "permission_mode")
    }
    settings["add_dirs"] = tuple(Path(d) for d in options.get("add_dirs", ()))
    return new_run(
        Path(workdir),
        model=model,
        scenario=options.get("scenario"),
        permission_mode=options.get("permission_mode"),
        record={"command": command, **(options.get("record") or {})},
        headless=options.get("asker") is None,
        **settings,
        **extra,
    )
