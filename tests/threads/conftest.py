"""Fixtures of tests/threads: the secret-scan servers and users (tests/threads/scan_support.py)."""

from tests.threads.scan_support import admin, alice, scan_http, scan_servers

__all__ = ["admin", "alice", "scan_http", "scan_servers"]
