"""What the real transcripts add up to (issue 33 "Done means"): for each agent that records
usage, the totals of loomsync.core.usage equal the sums counted by hand from the raw files
(tests/usage/corpus.py); sessions of agents that record none count as sessions without usage,
with no cost."""

from __future__ import annotations

from collections import defaultdict
from datetime import date

import pytest

from loomsync.core.usage.counting import Sums, day_sums, thread_facts
from loomsync.core.usage.prices import price_book
from tests.usage.corpus import (
    EXPECTED,
    PI_RECORDED_COST,
    REASONING,
    WITHOUT_USAGE,
    corpus_documents,
)

FALLBACK = date(2000, 1, 1)


@pytest.fixture(scope="module")
def by_agent() -> dict[str, list[dict[tuple[date, str, str], Sums]]]:
    out: dict[str, list[dict[tuple[date, str, str], Sums]]] = defaultdict(list)
    for doc in corpus_documents():
        found = day_sums(
            doc["conversation"]["messages"], FALLBACK, doc.get("model"), doc.get("provider")
        )
        out[thread_facts(doc).agent].append(found)
    return out


def _total(sessions: list[dict[tuple[date, str, str], Sums]]) -> Sums:
    total = Sums()
    for found in sessions:
        for sums in found.values():
            total.add(sums)
    return total


@pytest.mark.parametrize("agent", sorted(EXPECTED))
def test_totals_equal_the_hand_counted_sums(
    agent: str, by_agent: dict[str, list[dict[tuple[date, str, str], Sums]]]
) -> None:
    total = _total(by_agent[agent])
    got = (
        total.input_tokens,
        total.output_tokens,
        total.cache_read_tokens,
        total.cache_write_tokens,
    )
    assert got == EXPECTED[agent]
    assert total.reasoning_tokens == REASONING.get(agent, 0)
    assert total.turns > 0


@pytest.mark.parametrize("agent", WITHOUT_USAGE)
def test_sessions_without_usage_are_counted_as_such(
    agent: str, by_agent: dict[str, list[dict[tuple[date, str, str], Sums]]]
) -> None:
    sessions = by_agent[agent]
    assert sessions, agent
    total = _total(sessions)
    assert total.turns == 0
    assert total.tokens == 0
    assert total.without_usage > 0  # counted, not dropped
    book = price_book(date(2026, 12, 1), prices_file="")
    for found in sessions:
        for (_, model, provider), sums in found.items():
            assert book.cost(model, provider, sums) is None  # unknown, never 0


def test_pi_estimate_is_close_to_the_cost_pi_recorded(
    by_agent: dict[str, list[dict[tuple[date, str, str], Sums]]],
) -> None:
    # an independent check of the prices: Pi wrote what each call cost at Anthropic's list
    # prices; genai-prices' base prices give the same within rounding
    book = price_book(date(2026, 12, 1), prices_file="")
    cost = 0.0
    for found in by_agent["pi"]:
        for (_, model, provider), sums in found.items():
            priced = book.cost(model, provider, sums)
            assert priced is not None, model
            cost += priced
    assert cost == pytest.approx(PI_RECORDED_COST, rel=0.01)
