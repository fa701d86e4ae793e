"""The permission gate with hooks: a hook's allow never beats a rule; PermissionRequest
answers before a person; Notification hears of a prompt."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import attrs

from coterie.hooks import Actor, HookConfig, Hooks
from coterie.tools import PermissionGate, PermissionPolicy, ToolContext, default_registry
from coterie.tools.permissions.policy import Decision

if TYPE_CHECKING:
    from pathlib import Path

TOOLS = {t.name: t for t in default_registry()}
WRITE = {"file_path": "a.txt", "content": "x"}
HOOK_ALLOW = Decision("allow", "the hook says yes", "hook:PreToolUse")
HOOK_ASK = Decision("ask", "the hook wants a person", "hook:PreToolUse")


@attrs.define
class Asker:
    answer: bool = True
    asked: list[str] = attrs.field(factory=list)

    async def ask(self, tool_name: str, input: dict[str, Any], reason: str, **context: Any) -> bool:
        self.asked.append(reason)
        return self.answer


def ctx_with(tmp_path: Path, hooks: dict[str, Any] | None = None) -> ToolContext:
    config = HookConfig.parse(hooks or {}, tmp_path / "settings.json")
    run = Hooks(config, session_id="r", cwd=tmp_path, permission_mode="default")
    return ToolContext(workspace=tmp_path, hooks=run.for_agent(Actor("lead", "lead")))


def command(event: str, text: str) -> dict[str, Any]:
    return {event: [{"hooks": [{"type": "command", "command": text}]}]}


async def test_a_hook_allow_answers_the_modes_question(tmp_path: Path) -> None:
    asker = Asker()
    gate = PermissionGate(PermissionPolicy(), asker)
    decision = await gate.authorize(TOOLS["Write"], WRITE, ctx_with(tmp_path), hook=HOOK_ALLOW)
    assert (decision.behavior, asker.asked) == ("allow", [])


async def test_a_hook_allow_does_not_answer_an_ask_rule(tmp_path: Path) -> None:
    asker = Asker(answer=False)
    gate = PermissionGate(PermissionPolicy.from_rules(ask=["Write"]), asker)
    decision = await gate.authorize(TOOLS["Write"], WRITE, ctx_with(tmp_path), hook=HOOK_ALLOW)
    assert decision.behavior == "deny"
    assert len(asker.asked) == 1


async def test_a_hook_allow_does_not_beat_a_deny_rule(tmp_path: Path) -> None:
    gate = PermissionGate(PermissionPolicy.from_rules(deny=["Write"]), Asker())
    decision = await gate.authorize(TOOLS["Write"], WRITE, ctx_with(tmp_path), hook=HOOK_ALLOW)
    assert decision.behavior == "deny"


async def test_a_hook_ask_asks_even_what_a_rule_allows(tmp_path: Path) -> None:
    asker = Asker(answer=False)
    gate = PermissionGate(PermissionPolicy.from_rules(allow=["Write"]), asker)
    decision = await gate.authorize(TOOLS["Write"], WRITE, ctx_with(tmp_path), hook=HOOK_ASK)
    assert decision.behavior == "deny"
    assert asker.asked == ["the hook wants a person"]


async def test_a_permission_request_hook_denies_before_the_person_is_asked(
    tmp_path: Path,
) -> None:
    asker = Asker()
    ctx = ctx_with(tmp_path, command("PermissionRequest", "echo 'not on Fridays' >&2; exit 2"))
    decision = await PermissionGate(PermissionPolicy(), asker).authorize(TOOLS["Write"], WRITE, ctx)
    assert (decision.behavior, decision.reason, asker.asked) == ("deny", "not on Fridays", [])


async def test_a_notification_hook_hears_of_a_permission_prompt(tmp_path: Path) -> None:
    ctx = ctx_with(tmp_path, command("Notification", "cat > note.json"))
    asker = Asker()
    decision = await PermissionGate(PermissionPolicy(), asker).authorize(TOOLS["Write"], WRITE, ctx)
    assert decision.behavior == "allow"
    note = json.loads((tmp_path / "note.json").read_text())
    assert note["notification_type"] == "permission_prompt"
    assert "Write" in note["message"]


async def test_a_permission_request_hook_is_told_the_rule_a_person_would_be_offered(
    tmp_path: Path,
) -> None:
    ctx = ctx_with(
        tmp_path, command("PermissionRequest", "cat >> request.json; echo >> request.json")
    )
    gate = PermissionGate(PermissionPolicy(), Asker())
    await gate.authorize(TOOLS["Bash"], {"command": "npm test --watch"}, ctx)
    await gate.authorize(TOOLS["Write"], WRITE, ctx)
    bash, write = [
        json.loads(line)["permission_suggestions"]
        for line in (tmp_path / "request.json").read_text().splitlines()
    ]
    rule = {"toolName": "Bash", "ruleContent": "npm test:*"}
    assert bash == [
        {"type": "addRules", "rules": [rule], "behavior": "allow", "destination": "localSettings"}
    ]
    assert write == [{"type": "setMode", "mode": "acceptEdits", "destination": "session"}]


async def test_a_call_no_rule_could_stop_asking_about_offers_none(tmp_path: Path) -> None:
    ctx = ctx_with(tmp_path, command("PermissionRequest", "cat > request.json"))
    asker = Asker()
    gate = PermissionGate(PermissionPolicy(), asker)
    await gate.authorize(TOOLS["Bash"], {"command": "touch a && touch b"}, ctx)
    assert asker.asked  # a question, with nothing to offer
    assert json.loads((tmp_path / "request.json").read_text())["permission_suggestions"] == []
