"""The client fixtures (a real server, people running the real CLI) for these tests."""

from tests.client.conftest import account, live_server  # noqa: F401  (fixtures)
