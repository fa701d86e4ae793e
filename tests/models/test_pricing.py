"""Prices per model family, the documented default, and the per-actor ledger."""

from __future__ import annotations

import pytest

from coterie.models import DEFAULT_MODEL_PRICE, Usage, UsageLedger, cost_usd, price_for
from coterie.models.pricing import is_known_model

MILLION = 1_000_000


@pytest.mark.parametrize(
    ("model", "rates"),
    [
        ("claude-opus-5-5", (4.0, 20.0, 5.0, 0.20)),
        ("claude-opus-5", (5.0, 25.0, 6.25, 0.50)),
        ("claude-opus-4-5-20251101", (5.0, 25.0, 6.25, 0.50)),
        ("claude-opus-4-1", (15.0, 75.0, 18.75, 1.50)),
        ("claude-opus-4-20250514", (15.0, 75.0, 18.75, 1.50)),
        ("claude-sonnet-5-5", (2.0, 10.0, 2.5, 0.10)),
        ("claude-sonnet-5", (2.0, 10.0, 2.5, 0.20)),
        ("claude-sonnet-4-5-20250929", (3.0, 15.0, 3.75, 0.30)),
        ("claude-haiku-4-5-20251001", (1.0, 5.0, 1.25, 0.10)),
        ("claude-haiku-5-5", (0.10, 0.50, 0.125, 0.01)),
        ("claude-fable-5-1", (10.0, 50.0, 12.5, 0.25)),
        ("claude-3-5-haiku-20241022", (0.80, 4.0, 1.0, 0.08)),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", (3.0, 15.0, 3.75, 0.30)),
        ("claude-opus-4-5@20251101", (5.0, 25.0, 6.25, 0.50)),
        ("claude-sonnet-5-5[1m]", (2.0, 10.0, 2.5, 0.10)),
    ],
)
def test_model_ids_find_their_price(model: str, rates: tuple[float, ...]) -> None:
    price = price_for(model)
    assert (price.input, price.output, price.cache_write, price.cache_read) == rates


def test_an_unlisted_claude_model_falls_back_to_its_family() -> None:
    assert price_for("claude-opus-9") == price_for("claude-opus-5-5")
    assert is_known_model("claude-opus-9")


@pytest.mark.parametrize("model", ["scripted", "gpt-oss", ""])
def test_unknown_models_cost_the_documented_default(model: str) -> None:
    assert not is_known_model(model)
    assert price_for(model) == DEFAULT_MODEL_PRICE == price_for("claude-sonnet-5-5")


def test_cost_counts_every_kind_of_token() -> None:
    usage = Usage(
        input_tokens=MILLION,
        output_tokens=MILLION,
        cache_creation_input_tokens=MILLION,
        cache_read_input_tokens=MILLION,
    )
    assert cost_usd("claude-opus-5", usage) == pytest.approx(5 + 25 + 6.25 + 0.5)


def test_long_haiku_5_5_prompts_pay_five_times_on_everything() -> None:
    short = Usage(input_tokens=100_000, output_tokens=1000)
    long = Usage(input_tokens=50_001, cache_read_input_tokens=50_000, output_tokens=1000)
    assert cost_usd("claude-haiku-5-5", short) == pytest.approx(
        (100_000 * 0.1 + 1000 * 0.5) / MILLION
    )
    assert cost_usd("claude-haiku-5-5", long) == pytest.approx(
        5 * (50_001 * 0.1 + 50_000 * 0.01 + 1000 * 0.5) / MILLION
    )


def test_ledger_sums_per_actor_and_overall() -> None:
    ledger = UsageLedger()
    one = ledger.record("lead", "claude-sonnet-5", Usage(1000, 100))
    ledger.record("lead", "claude-sonnet-5", Usage(1000, 100))
    ledger.record("alice", "claude-opus-5", Usage(10, 1))
    assert one == pytest.approx(cost_usd("claude-sonnet-5", Usage(1000, 100)))
    assert ledger.actors == ["lead", "alice"]
    assert ledger.usage("lead") == Usage(2000, 200)
    assert ledger.usage() == Usage(2010, 201)
    assert ledger.cost_usd() == pytest.approx(ledger.cost_usd("lead") + ledger.cost_usd("alice"))
    assert (ledger.calls("lead"), ledger.calls(), ledger.calls("nobody")) == (2, 3, 0)
    assert ledger.usage("nobody") == Usage()
