"""loomsync.core.document.ids and loomsync.core.document.model."""

from __future__ import annotations

import uuid

import pytest

from loomsync.core.document.ids import InvalidThreadId, ThreadId
from loomsync.core.document.model import Thread, format_utc


def test_new_ids_are_uuidv7_and_sort_by_creation() -> None:
    ids = [ThreadId.new() for _ in range(50)]
    assert all(ThreadId.parse(i).uuid.version == 7 for i in ids)
    assert ids == sorted(ids)


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "T-",
        "T-xyz",
        "t-" + str(uuid.uuid4()),
        "T-" + str(uuid.uuid4()).upper(),
        str(uuid.uuid4()),
        "T-" + uuid.uuid4().hex,
    ],
)
def test_parse_rejects_non_canonical_ids(bad: str) -> None:
    with pytest.raises(InvalidThreadId):
        ThreadId.parse(bad)


def test_unknown_fields_are_kept_at_every_level() -> None:
    raw = {
        "id": str(ThreadId.new()),
        "future": {"x": 1},
        "conversation": {
            "messages": [{"role": "user", "content": "c", "extra_m": [1]}],
            "c_extra": True,
        },
        "metadata": {"m_extra": "y", "extra": {"deep": {"deeper": None}}},
        "agent_state": {"kind": "brand_new_kind", "s_extra": 2},
    }
    dumped = Thread.model_validate(raw).model_dump(mode="json", exclude_unset=True)
    assert dumped["future"] == {"x": 1}
    assert dumped["conversation"]["c_extra"] is True
    assert dumped["conversation"]["messages"][0]["extra_m"] == [1]
    assert dumped["metadata"]["m_extra"] == "y"
    assert dumped["agent_state"] == {"kind": "brand_new_kind", "s_extra": 2}


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("2026-01-02T16:39:45.349Z", "2026-01-02T16:39:45.349Z"),
        ("2026-01-02T18:39:45.349+02:00", "2026-01-02T16:39:45.349Z"),
        ("2026-01-02T16:39:45", "2026-01-02T16:39:45Z"),
        ("2026-01-02T16:39:45.123456Z", "2026-01-02T16:39:45.123456Z"),
    ],
)
def test_thread_timestamps_normalise_to_utc_z(given: str, expected: str) -> None:
    thread = Thread.model_validate({"created_at": given})
    assert thread.created_at is not None
    assert format_utc(thread.created_at) == expected
