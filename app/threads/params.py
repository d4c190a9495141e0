"""Path and header parameters shared by the thread routes."""

from __future__ import annotations

from typing import Annotated

from fastapi import Header, Path
from starlette.convertors import Convertor, register_url_convertor

from app.openapi import THREAD_ID_PATTERN


class ThreadIdConvertor(Convertor[str]):
    """Path segments that are thread ids (``T-`` + a lowercase UUID). Other segments match no
    thread route, so ``PUT /api/threads/search`` is a 405 (only GET is served there), not an
    attempt to store a thread called ``search``; a malformed id is a 404."""

    regex = THREAD_ID_PATTERN.strip("^$")

    def convert(self, value: str) -> str:
        """The segment as it is."""
        return value

    def to_string(self, value: str) -> str:
        """The id as a path segment."""
        return value


register_url_convertor("thread_id", ThreadIdConvertor())
ThreadIdPath = Annotated[
    str, Path(description="T-<uuid>", json_schema_extra={"pattern": THREAD_ID_PATTERN})
]
IfMatch = Annotated[
    list[str] | None,
    Header(alias="If-Match", description='"<version>", a comma list of them, or *'),
]
