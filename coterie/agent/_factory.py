"""Building the agents of a run: one loop per actor, sharing the run's model,
policy, event log and system prompt, each with its own durable transcript,
compaction funnel and tool state."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from coterie.agent._loop import AgentLoop, Limits
from coterie.agent._prompt import build_system_prompt
from coterie.context import Funnel, TokenCounter, TranscriptLog
from coterie.mailbox import Durability
from coterie.tools import PermissionGate, ToolContext

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.config import AgentConfig
    from coterie.events import EventLog
    from coterie.models import Model
    from coterie.tools import Asker, PermissionPolicy, ToolRegistry
    from coterie.tools.team import TeamContext


@attrs.define
class AgentFactory:
    """What every agent of one run shares, and how each one's loop is made."""

    config: AgentConfig
    run_dir: Path
    model: Model
    policy: PermissionPolicy
    asker: Asker | None
    events: EventLog | None
    system: str = ""
    #: The latest loop of each agent, for the run's spend.
    _loops: dict[str, AgentLoop] = attrs.field(init=False, factory=dict)

    def __attrs_post_init__(self) -> None:
        if not self.system:
            self.system = build_system_prompt(
                self.config.workdir,
                headless=self.asker is None,
                extra_dirs=list(self.config.add_dirs),
                auto_mode=self.policy.mode == "auto",
            )

    def transcript(self, actor: str) -> TranscriptLog:
        """*actor*'s durable transcript (reopened and repaired after a crash)."""
        return TranscriptLog.open(self.run_dir / "transcripts" / f"{actor}.log", Durability.BATCH)

    def funnel(
        self, actor: str, system: str, registry: ToolRegistry, transcript: TranscriptLog
    ) -> Funnel:
        """*actor*'s compaction funnel: its files under ``context/<actor>/``."""
        return Funnel(
            self.run_dir / "context" / actor,
            budget=self.config.budget(),
            counter=TokenCounter.for_request(system, registry.schemas()),
            model=self.model,
            actor=actor,
            events=self.events,
            transcript=transcript,
        )

    def loop(
        self,
        actor: str,
        role: str,
        registry: ToolRegistry,
        *,
        role_prompt: str | None = None,
        gate: PermissionGate | None = None,
        team: TeamContext | None = None,
    ) -> AgentLoop:
        """A loop for *actor*, its history and totals loaded from its transcript."""
        system = self.system if role_prompt is None else f"{self.system}\n\n{role_prompt}"
        transcript = self.transcript(actor)
        tools = ToolContext(
            workspace=self.config.workdir,
            extra_dirs=list(self.config.add_dirs),
            agent=actor,
            events=self.events,
            team=team,
        )
        loop = AgentLoop(
            model=self.model,
            registry=registry,
            gate=gate or PermissionGate(self.policy, self.asker),
            tools=tools,
            system=system,
            actor=actor,
            role=role,
            limits=Limits(self.config.max_turns, self.config.max_budget_usd),
            events=self.events,
            transcript=transcript,
            funnel=self.funnel(actor, system, registry, transcript),
            messages=transcript.load(),
        )
        loop.restore_totals()
        loop.spent = self.spent
        self._loops[actor] = loop
        return loop

    def spent(self) -> float:
        """What the run has spent: every agent's cost (restored from its transcript
        on resume), and the model calls of the services (summarizer, evaluator,
        classifier) in this process, from the model's ledger."""
        agents = sum(loop.cost for loop in self._loops.values())
        ledger = getattr(self.model, "ledger", None)
        if ledger is None:
            return agents
        services: float = sum(ledger.cost_usd(a) for a in ledger.actors if a not in self._loops)
        return agents + services
