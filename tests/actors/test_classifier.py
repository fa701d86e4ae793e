"""The AutoModeClassifier actor: two stages, and every failure blocking."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
import trio

from coterie.actors import Classification, classifier_spec, classify_action
from coterie.actors.classifier import CLASSIFICATION, CLASSIFIER, CLASSIFY, CRASHED
from coterie.autonomy import AutoModeRule, AutoModeRules, classifier_transcript
from coterie.events import EventLog
from coterie.mailbox import PostOffice
from tests.actors._support import RecordingModel, client, services

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from coterie.models import ModelReply, ModelRequest, RetrySink, TextSink

TRANSCRIPT = classifier_transcript(
    [{"role": "user", "content": "Tidy the repo"}],
    {"name": "Bash", "input": {"command": "git clean -fdx"}},
)
YES = {"text": "<block>yes</block>"}
NO = {"text": "<block>no</block>"}
OVERLOADED = {"error": {"status": 529, "type": "overloaded_error", "message": "busy"}}


@pytest.fixture
async def post() -> AsyncIterator[PostOffice]:
    """A memory post office."""
    office = PostOffice(None)
    yield office
    await office.aclose()


async def classify(post: PostOffice, model: Any, **kwargs: Any) -> Classification:
    """Run the classifier under a supervisor and ask it about TRANSCRIPT once."""
    async with services(classifier_spec(model, post, **kwargs)):
        return await classify_action(client(post), TRANSCRIPT, "Use pnpm.", timeout=30)


async def test_a_stage_1_allow_is_final_and_stage_2_never_runs(
    post: PostOffice, autojump_clock: object
) -> None:
    model = RecordingModel.of(classifier=[NO, {"text": "<block>yes</block>"}])
    result = await classify(post, model)
    assert result == Classification(block=False, reason=None, stage=1, valid=True)
    assert model.cursors == {"classifier": 1}
    assert len(model.requests) == 1
    assert "Stage 1" in model.request_text(0)


async def test_a_stage_1_block_cleared_by_stage_2(post: PostOffice, autojump_clock: object) -> None:
    cleared = {"text": "<block>no</block><reason>the user asked for it</reason>"}
    model = RecordingModel.of(classifier=[YES, cleared])
    result = await classify(post, model)
    assert result == Classification(block=False, reason="the user asked for it", stage=2)
    assert [r.max_tokens for r in model.requests] == [64, 1024]
    assert "Stage 2" in model.request_text(1)


async def test_a_stage_2_block_is_final_and_names_the_rule(
    post: PostOffice, autojump_clock: object
) -> None:
    blocked = {"text": "<block>yes</block><reason>destructive git: clean -fdx</reason>"}
    model = RecordingModel.of(classifier=[YES, blocked])
    result = await classify(post, model)
    assert result == Classification(block=True, reason="destructive git: clean -fdx", stage=2)


@pytest.mark.parametrize(
    "answers",
    [
        [{"text": "Sure, go ahead."}, {"text": "no block needed"}],
        [YES, {"text": "<block>no</block> but also <block>yes</block>"}],
        [OVERLOADED, OVERLOADED],
        [],  # the scenario's track runs out: the scripted model blocks
    ],
    ids=["garbage", "contradiction", "model-error", "exhausted"],
)
async def test_anything_but_a_clear_answer_blocks(
    post: PostOffice, autojump_clock: object, answers: list[dict[str, Any]]
) -> None:
    result = await classify(post, RecordingModel.of(classifier=answers))
    assert result.block
    assert result.stage == 2


async def test_garbage_at_stage_1_goes_to_stage_2(post: PostOffice, autojump_clock: object) -> None:
    model = RecordingModel.of(classifier=[{"text": "I think it is fine"}, NO])
    result = await classify(post, model)
    assert result == Classification(block=False, stage=2)


async def test_a_model_error_is_named_in_the_block(
    post: PostOffice, autojump_clock: object
) -> None:
    result = await classify(post, RecordingModel.of(classifier=[OVERLOADED, OVERLOADED]))
    assert not result.valid
    assert result.reason is not None
    assert "overloaded_error" in result.reason
    assert result.reason.endswith("blocked to be safe")


async def test_a_crash_blocks_after_the_restart(
    post_office: PostOffice, autojump_clock: object
) -> None:
    """The restarted classifier blocks the redelivered request without judging again."""
    events = EventLog()
    model = RecordingModel.of(classifier=[{"crash": "bug in the classifier"}, NO])
    async with services(classifier_spec(model, post_office, events=events), events=events):
        result = await classify_action(client(post_office), TRANSCRIPT, timeout=30)
    assert result.block
    assert not result.valid
    assert result.reason == CRASHED
    assert model.cursors == {"classifier": 1}  # the "no" turn was never served
    assert len(events.of_type("actor.crashed")) == 1


class SlowModel:
    """A model that never answers."""

    name = "slow"

    async def complete(
        self,
        request: ModelRequest,
        *,
        on_text: TextSink | None = None,
        on_retry: RetrySink | None = None,
    ) -> ModelReply:
        await trio.sleep_forever()
        raise AssertionError("unreachable")


async def test_a_timeout_blocks(post: PostOffice, autojump_clock: object) -> None:
    async with services(classifier_spec(SlowModel(), post)):
        start = trio.current_time()
        result = await classify_action(client(post), TRANSCRIPT, timeout=60)
        assert trio.current_time() - start == pytest.approx(60)
    assert result.block
    assert not result.valid
    assert result.reason is not None
    assert "within 60 s" in result.reason


async def test_an_unknown_classifier_blocks(post: PostOffice) -> None:
    result = await classify_action(client(post), TRANSCRIPT, timeout=1)
    assert result.block
    assert not result.valid


@pytest.mark.parametrize(
    "body",
    [None, {}, {"transcript": 3}, {"transcript": "  "}, {"transcript": "x", "claude_md": 1}],
)
async def test_a_malformed_request_blocks_without_a_model_call(
    post: PostOffice, autojump_clock: object, body: Any
) -> None:
    model = RecordingModel.of(classifier=[NO, NO])
    async with services(classifier_spec(model, post)):
        reply = await client(post).call(CLASSIFIER, CLASSIFY, body, timeout=30)
    assert reply.kind == CLASSIFICATION
    assert reply.body["block"] is True
    assert reply.body["valid"] is False
    assert model.requests == []


async def test_the_rules_and_claude_md_reach_both_stages(
    post: PostOffice, autojump_clock: object
) -> None:
    rules = AutoModeRules(soft_deny=(AutoModeRule("no tabs", "Never indent with tabs."),))
    model = RecordingModel.of(classifier=[YES, NO])
    await classify(post, model, rules=rules)
    for index in (0, 1):
        text = model.request_text(index)
        assert "no tabs: Never indent with tabs." in text
        assert "Use pnpm." in text
        assert "git clean -fdx" in text
        request = model.requests[index]
        assert request.tools == []
        assert (request.actor, request.role) == (CLASSIFIER, "classifier")


@pytest.mark.parametrize(
    "body",
    [
        {"block": False, "reason": None, "stage": 1, "valid": False},
        {"block": "no", "reason": None, "stage": 1, "valid": True},
        {"block": False, "reason": None, "stage": 3, "valid": True},
        {"block": False, "reason": 7, "stage": 1, "valid": True},
    ],
)
def test_a_malformed_reply_body_blocks(body: dict[str, Any]) -> None:
    assert Classification.from_body(body).block


def test_a_reply_body_round_trips() -> None:
    verdict = Classification(block=True, reason="why", stage=2)
    assert Classification.from_body(verdict.to_body()) == verdict
