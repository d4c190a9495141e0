"""The client's version, sent as ``X-Loomsync-Version`` and in ``User-Agent``."""

__version__ = "0.1.0"
