"""ASGI factory for uvicorn workers: ``uvicorn app.asgi:create --factory``.

Reads the configuration from the environment (``loomsync-server serve`` exports the embedded
database URL and secret there before starting workers).
"""

from __future__ import annotations

from fastapi import FastAPI

from app.config import Settings
from app.logs import configure_logging
from app.main import create_app


def create() -> FastAPI:
    """Build the app from ``LOOMSYNC_*`` settings."""
    settings = Settings()
    configure_logging(settings)
    return create_app(settings)
