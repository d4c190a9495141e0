"""The hot write statements built once (app/threads/hotsql.py) say what the expression
statements they stand for say: the same derived columns, and each claim's filter for its case
(the behaviour itself is tested through HTTP in test_writes.py and test_access.py)."""

from __future__ import annotations

import uuid

from app.auth import Principal
from app.threads import hotsql
from app.threads.documents import derived_columns
from app.threads.preconditions import Precondition


def test_the_create_writes_every_derived_column() -> None:
    assert set(hotsql.DERIVED_COLUMNS) == set(derived_columns({}))
    assert set(hotsql.DERIVED_COLUMNS) <= set(hotsql.INSERT_THREAD_PARAMS)
    count = len(hotsql.INSERT_THREAD_PARAMS)
    assert f"${count})" in hotsql.INSERT_THREAD
    assert f"${count + 1}" not in hotsql.INSERT_THREAD
    for name in hotsql.DERIVED_COLUMNS:
        assert name in hotsql.INSERT_THREAD.split("VALUES")[0]


def test_each_claim_filters_owner_and_version_as_its_case_needs() -> None:
    owner, admin = Principal("ann"), Principal("ada", roles=frozenset({"admin"}))
    tid = uuid.uuid4()
    statement, args = hotsql.claim_append_params(owner, tid, Precondition.exactly(3), 4, None)
    assert "owner_id = $4" in statement
    assert "version = ANY($5)" in statement
    assert args == (tid, 4, None, "ann", [3])
    anything = Precondition(frozenset(), any_version=True)
    statement, args = hotsql.claim_append_params(admin, tid, anything, 1, None)
    assert "owner_id" not in statement.split("WHERE")[1].split("RETURNING")[0]
    assert "ANY" not in statement
    assert args == (tid, 1, None)
    statement, args = hotsql.claim_append_params(admin, tid, Precondition.exactly(2), 1, None)
    assert "version = ANY($4)" in statement
    assert args == (tid, 1, None, [2])
    weak_only = Precondition(frozenset())  # W/"1": matches nothing, as an empty IN does
    _, args = hotsql.claim_append_params(owner, tid, weak_only, 1, None)
    assert args[-1] == []
