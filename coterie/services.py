"""The services of a run (DESIGN §7): the goal evaluator, the scheduler and the
Auto Mode classifier, each an actor under the ``services`` supervisor, and
what the agents need to use them (the goal pursuit, the Auto Mode gate)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import attrs

from coterie.actors.classifier import AutoModeAsker, classifier_spec, read_claude_md
from coterie.actors.evaluator import evaluator_spec
from coterie.actors.goal import GoalPursuit
from coterie.actors.scheduler import scheduler_spec
from coterie.actors.summarizer import summarizer_spec, use_summarizer
from coterie.autonomy import DenialTracker, parse_loop_spec
from coterie.fsutil import atomic_write
from coterie.tools import PermissionGate, ScheduleWakeupTool

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path

    from coterie.actors import ActorContext
    from coterie.agent import AgentFactory, AgentLoop
    from coterie.config import AgentConfig, PreparedRun
    from coterie.mailbox import PostOffice
    from coterie.supervisors import ChildSpec
    from coterie.tools import ToolRegistry


def service_children(
    prepared: PreparedRun, factory: AgentFactory, post: PostOffice
) -> list[ChildSpec]:
    """The summarizer (every agent's compaction funnel asks it), and the actors
    the run's options need: evaluator (``--goal``), scheduler (``--loop``),
    classifier (``--auto``)."""
    config, events = prepared.config, factory.events
    children = [summarizer_spec(prepared.model, post, events=events)]
    if config.goal is not None:
        children.append(evaluator_spec(prepared.model, post, events=events))
    if config.loop is not None:
        children.append(
            scheduler_spec(
                post,
                prepared.run_dir,
                max_ticks=config.max_ticks,
                max_turns=config.max_turns,
                events=events,
            )
        )
    if prepared.policy.mode == "auto":
        rules = prepared.settings.auto_mode_rules
        children.append(classifier_spec(prepared.model, post, rules=rules, events=events))
    return children


def goal_pursuit(config: AgentConfig) -> GoalPursuit | None:
    """``--goal``'s pursuit, if the run has a goal."""
    if config.goal is None:
        return None
    return GoalPursuit(config.goal, config.max_goal_iterations)


def add_loop_tools(config: AgentConfig, registry: ToolRegistry) -> ToolRegistry:
    """``ScheduleWakeup`` exists only during a dynamic loop."""
    if config.loop is not None and parse_loop_spec(config.loop).dynamic:
        registry.register(ScheduleWakeupTool())
    return registry


@attrs.define
class DurableDenials(DenialTracker):
    """An agent's Auto Mode denial counts, kept in the run directory: they
    belong to the agent, not to one incarnation of it, so neither a crash nor
    a ``coterie resume`` starts them over."""

    path: Path | None = None

    @classmethod
    def load(cls, path: Path) -> DurableDenials:
        tracker = cls(path=path)
        try:
            data = json.loads(path.read_text())
        except (FileNotFoundError, ValueError):
            return tracker
        tracker._consecutive = int(data.get("consecutive", 0))
        tracker._total = int(data.get("total", 0))
        return tracker

    def record(self, blocked: bool) -> None:
        super().record(blocked)
        self._save()

    def human_answered(self) -> None:
        super().human_answered()
        self._save()

    def _save(self) -> None:
        if self.path is not None:
            data = {"consecutive": self.consecutive, "total": self.total}
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self.path, json.dumps(data).encode(), sync=True)


def use_services(
    factory: AgentFactory,
    ctx: ActorContext,
    loop: AgentLoop,
    history: Callable[[], Sequence[Mapping[str, Any]]] | None = None,
) -> None:
    """Connect *loop* to the services: its funnel's summaries come from the
    summarizer; in Auto Mode its gate's asker is the classifier (one per
    agent, with its own denial limits; the person, if any, after the limits)."""
    use_summarizer(ctx, loop)
    if factory.policy.mode != "auto":
        return
    asker = AutoModeAsker(
        ctx,
        history or (lambda: loop.messages),
        claude_md=read_claude_md(factory.config.workdir),
        tracker=DurableDenials.load(factory.run_dir / "auto-mode" / f"{ctx.name}.json"),
        human=factory.asker,
    )
    loop.gate = PermissionGate(factory.policy, asker)


def the_user_asked(request: str | None) -> list[dict[str, Any]]:
    """The user's request as a history message (what a teammate's actions are weighed by)."""
    if not request:
        return []
    return [{"role": "user", "content": [{"type": "text", "text": request}]}]


__all__ = ["add_loop_tools", "goal_pursuit", "service_children", "the_user_asked", "use_services"]
