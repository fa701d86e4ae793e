"""A model tells a :class:`~coterie.models.StreamSink` its reply's raw streaming events."""

from __future__ import annotations

from typing import Any

from coterie.models import ModelRequest, ScriptedModel, StreamSink, parse_scenario


def model(*turns: dict[str, Any]) -> ScriptedModel:
    return ScriptedModel(parse_scenario({"name": "t", "tracks": {"lead": list(turns)}}))


def ask() -> ModelRequest:
    return ModelRequest(system="", messages=[{"role": "user", "content": "go"}])


async def test_the_scripted_model_streams_the_events_the_mock_server_would() -> None:
    call = {"name": "Bash", "input": {"command": "ls"}}
    texts: list[str] = []
    raw: list[dict[str, Any]] = []
    reply = await model({"text": "Looking.", "tool_uses": [call]}).complete(
        ask(), on_text=StreamSink(texts.append, raw.append)
    )
    kinds = [e["type"] for e in raw]
    assert kinds[0] == "message_start"
    assert kinds[-2:] == ["message_delta", "message_stop"]
    assert "ping" not in kinds
    starts = [e["content_block"]["type"] for e in raw if e["type"] == "content_block_start"]
    assert starts == ["text", "tool_use"]
    assert raw[-2]["delta"]["stop_reason"] == reply.stop_reason == "tool_use"
    assert "".join(texts) == "Looking."


async def test_a_plain_text_sink_gets_the_text_only() -> None:
    texts: list[str] = []
    reply = await model({"text": "Hello there."}).complete(ask(), on_text=texts.append)
    assert "".join(texts) == reply.text
