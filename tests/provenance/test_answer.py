"""Hits of ``blame``/``why`` merged per thread (loomsync.blame.answer.merged): the best
match kind wins, and a trailer's hit (which names only the thread id) takes the title, time,
message and files the server's or this machine's hit knew (a newcomer saw an empty title)."""

from __future__ import annotations

from datetime import UTC, datetime

from loomsync.blame.answer import Hit, merged

WHEN = datetime(2026, 12, 1, tzinfo=UTC)


def _hits() -> tuple[Hit, Hit, Hit]:
    trailer = Hit("T-1", "trailer", None, ["abc"])
    server = Hit("T-1", "commit", 4, ["abc"], "Fix the cart", WHEN, ["src/cart.py"])
    other = Hit("T-2", "line", 2, [], "Other", WHEN)
    return trailer, server, other


def test_a_trailer_hit_keeps_its_rank_and_gains_what_the_server_knew() -> None:
    for order in ((0, 1, 2), (1, 2, 0)):
        made = _hits()
        hits = merged([made[n] for n in order])
        assert [h.thread_id for h in hits] == ["T-1", "T-2"]
        first = hits[0]
        assert (first.match, first.title, first.files, first.message_index) == (
            "trailer",
            "Fix the cart",
            ["src/cart.py"],
            4,
        )
        assert first.last_activity_at == WHEN
