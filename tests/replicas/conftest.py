"""The replica cluster and two server instances, started once for tests/replicas/."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.replicas.support import Setup, replica_setup


@pytest.fixture(scope="package")
def setup() -> Iterator[Setup]:
    """Primary, replica and instances ``a`` and ``b`` (tests/replicas/support.py)."""
    with replica_setup() as started:
        yield started
