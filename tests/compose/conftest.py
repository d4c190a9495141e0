"""Fixtures of tests/compose: a Docker engine that answers and the stand-in images, once per
run. Select these tests with ``-m compose`` (or leave them out with ``-m 'not compose'``);
``make test`` runs them. They never skip: a missing tool fails the run, naming what to install
(scripts/test-setup.sh installs it all)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.compose.engine import running_engine
from tests.compose.standins import ensure_standins

TIMINGS = pytest.StashKey[dict[str, float]]()


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``compose`` marker."""
    config.addinivalue_line(
        "markers", "compose: runs the published docker-compose.yml for real (Docker engine)"
    )
    config.stash[TIMINGS] = {}


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line with the seconds the stand-in images took (0 = cached) and the stacks ran."""
    timings = terminalreporter.config.stash.get(TIMINGS, {})
    if timings:
        parts = ", ".join(f"{name} {seconds:.0f} s" for name, seconds in timings.items())
        terminalreporter.write_line(f"tests/compose timings: {parts}")


@pytest.fixture(scope="session")
def docker_engine(pytestconfig: pytest.Config) -> Iterator[None]:
    """A Docker engine (started here when none answers, stopped after) with the stand-in
    images built (tests/compose/standins.py)."""
    with running_engine():
        start = time.monotonic()
        steps = ensure_standins()
        timings = pytestconfig.stash[TIMINGS]
        timings.update({f"stand-in {name}": seconds for name, seconds in steps.items()})
        timings["stand-ins total"] = time.monotonic() - start
        yield
