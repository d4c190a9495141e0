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
    for name in hotsql.DERIVED_COLUMNS:
        assert f":{name}" in str(hotsql.INSERT_THREAD)


def test_each_claim_filters_owner_and_version_as_its_case_needs() -> None:
    owner, admin = Principal("ann"), Principal("ada", roles=frozenset({"admin"}))
    tid = uuid.uuid4()
    statement, params = hotsql.claim_append_params(owner, tid, Precondition.exactly(3), 4, None)
    assert "owner_id = :owner_id" in str(statement)
    assert "version = ANY(:versions)" in str(statement)
    assert params == {
        "id": tid,
        "added": 4,
        "last_activity_at": None,
        "owner_id": "ann",
        "versions": [3],
    }
    anything = Precondition(frozenset(), any_version=True)
    statement, params = hotsql.claim_append_params(admin, tid, anything, 1, None)
    assert "owner_id" not in str(statement).split("WHERE")[1].split("RETURNING")[0]
    assert "versions" not in str(statement)
    assert "owner_id" not in params
    assert "versions" not in params
    weak_only = Precondition(frozenset())  # W/"1": matches nothing, as an empty IN does
    _, params = hotsql.claim_append_params(owner, tid, weak_only, 1, None)
    assert params["versions"] == []
