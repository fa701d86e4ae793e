"""The mock server's prompt cache: reads, writes and input as the API splits them."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from coterie.models.promptcache import PromptCache, prompt_blocks

CC = {"type": "ephemeral"}
TOOLS = [
    {"name": f"T{i}", "description": "d" * 400, "input_schema": {"type": "object"}}
    for i in range(10)
]
SYSTEM = "You are a careful agent. " * 200  # about 1,250 tokens


def body(
    system_parts: list[str], messages: list[dict[str, Any]], *, breakpoints: bool = True
) -> dict[str, Any]:
    tools = [dict(t) for t in TOOLS]
    system = [{"type": "text", "text": s} for s in system_parts]
    if breakpoints:
        tools[-1]["cache_control"] = CC
        system[0]["cache_control"] = CC
        system[-1]["cache_control"] = CC
        last = messages[-1]
        blocks = list(last["content"])
        blocks[-1] = {**blocks[-1], "cache_control": CC}
        messages = [*messages[:-1], {**last, "content": blocks}]
    return {"tools": tools, "system": system, "messages": messages}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def test_the_first_request_writes_and_the_same_request_reads() -> None:
    cache = PromptCache()
    first = cache.usage(body([SYSTEM], [user("hello " * 50)]))
    assert first.cache_read_input_tokens == 0
    assert first.cache_creation_input_tokens > 2000
    again = cache.usage(body([SYSTEM], [user("hello " * 50)]))
    assert again.cache_read_input_tokens == first.cache_creation_input_tokens
    assert again.cache_creation_input_tokens == 0


def test_the_next_turn_reads_the_last_turn_through_the_lookback() -> None:
    cache = PromptCache()
    turn1 = [user("task " * 100)]
    one = cache.usage(body([SYSTEM], turn1))
    two = cache.usage(body([SYSTEM], [*turn1, assistant("did it " * 20), user("result " * 20)]))
    assert two.cache_read_input_tokens == one.cache_creation_input_tokens
    assert two.cache_creation_input_tokens > 0
    assert two.input_tokens == 0  # everything up to the last breakpoint is cached


def test_agents_sharing_tools_and_a_system_part_share_its_cache() -> None:
    """Two teammates: the same tools and shared system block, their own names after it."""
    cache = PromptCache()
    alice = cache.usage(body([SYSTEM, "You are alice."], [user("task a")]))
    bob = cache.usage(body([SYSTEM, "You are bob."], [user("task b")]))
    assert alice.cache_read_input_tokens == 0
    shared = bob.cache_read_input_tokens
    assert shared > 0
    assert shared + bob.cache_creation_input_tokens < alice.cache_creation_input_tokens + 50
    # With the name inside the one system block, nothing after the tools is shared.
    cache = PromptCache()
    cache.usage(body([SYSTEM + "You are alice."], [user("task a")]))
    apart = cache.usage(body([SYSTEM + "You are bob."], [user("task b")]))
    assert apart.cache_read_input_tokens < shared


def test_a_prefix_under_the_minimum_is_not_cached() -> None:
    cache = PromptCache(min_tokens=10**6)
    cache.usage(body([SYSTEM], [user("x")]))
    again = cache.usage(body([SYSTEM], [user("x")]))
    assert again.cache_read_input_tokens == again.cache_creation_input_tokens == 0


def test_without_breakpoints_nothing_is_cached() -> None:
    cache = PromptCache()
    cache.usage(body([SYSTEM], [user("x")], breakpoints=False))
    again = cache.usage(body([SYSTEM], [user("x")], breakpoints=False))
    assert again.cache_read_input_tokens == 0
    assert again.cache_creation_input_tokens == 0


def test_cache_control_does_not_change_what_a_block_is() -> None:
    assert [t for t, _ in prompt_blocks(body([SYSTEM], [user("x")]))] == [
        t for t, _ in prompt_blocks(body([SYSTEM], [user("x")], breakpoints=False))
    ]


_texts = st.lists(st.text(alphabet="abc ", min_size=1, max_size=600), min_size=1, max_size=6)


@given(st.lists(_texts, min_size=1, max_size=5), st.integers(0, 3000))
def test_the_split_always_adds_up_to_the_prompt(requests: list[list[str]], minimum: int) -> None:
    cache = PromptCache(min_tokens=minimum)
    for texts in requests:
        messages = [user(t) if i % 2 == 0 else assistant(t) for i, t in enumerate(texts)]
        if messages[-1]["role"] == "assistant":
            messages.append(user("go"))
        request = body([SYSTEM, texts[0]], messages)
        plain = PromptCache(min_tokens=10**9).usage(request)  # nothing cached: all input
        split = cache.usage(request)
        total = (
            split.input_tokens + split.cache_read_input_tokens + split.cache_creation_input_tokens
        )
        assert total == plain.input_tokens
        assert (
            min(
                split.input_tokens, split.cache_read_input_tokens, split.cache_creation_input_tokens
            )
            >= 0
        )
