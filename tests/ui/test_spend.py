"""Each actor's share of a run: turns, the four kinds of tokens, dollars."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from coterie.events import Event
from coterie.models import Usage
from coterie.models.pricing import cost_usd
from coterie.ui.spend import spend_by_actor, spend_lines

TOKENS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")
MODELS = ("claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1")


def reply(actor: str, model: str | None, **usage: int) -> Event:
    data: dict[str, Any] = {"actor": actor, "content": [], "usage": usage}
    if model is not None:
        data["model"] = model
    return Event(seq=0, ts=0.0, type="agent.message", data=data)


replies = st.lists(
    st.builds(
        reply,
        st.sampled_from(["lead", "alice", "bob", "lead/sub-1"]),
        st.none() | st.sampled_from(MODELS),
        **{key: st.integers(0, 50_000) for key in TOKENS},
    ),
    max_size=30,
)


@given(replies)
def test_the_actors_shares_add_up_to_the_run(events: list[Event]) -> None:
    noise = [Event(seq=0, ts=0.0, type="agent.result", data={"actor": "lead"})]
    spent = spend_by_actor([*noise, *events], model=MODELS[0])
    assert list(spent) == list(dict.fromkeys(e.data["actor"] for e in events))
    assert sum(a.turns for a in spent.values()) == len(events)
    for key in TOKENS:
        assert sum(getattr(a.usage, key) for a in spent.values()) == sum(
            e.data["usage"][key] for e in events
        )
    priced = sum(
        cost_usd(e.data.get("model") or MODELS[0], Usage(**e.data["usage"])) for e in events
    )
    assert abs(sum(a.cost_usd for a in spent.values()) - priced) < 1e-9


def test_each_reply_is_priced_by_the_model_that_wrote_it() -> None:
    usage = {"input_tokens": 1_000_000}
    spent = spend_by_actor([reply("a", "claude-opus-4-1", **usage), reply("b", None, **usage)],
                           model="claude-haiku-4-5")  # fmt: skip
    assert spent["a"].cost_usd > spent["b"].cost_usd > 0
    line = spend_lines({"b": spent["b"]})[0]
    assert line.startswith("  b: 1 turns, 1,000,000 input, 0 cache write, 0 cache read, 0 output")
