"""Provenance: which files a thread's tool calls read, edited or wrote (issue 32).

Shared by the server (the ``thread_files`` index, app/provenance/) and the client
(``loomsync blame`` offline, on the local store). :func:`touches` is the one entry point;
:mod:`.shapes` holds the table of every agent's tool shapes, :mod:`.shell` the shell
commands whose written files can be told reliably, :mod:`.patches` the patch formats.
"""

from loomsync.core.provenance.paths import relative_path
from loomsync.core.provenance.touches import (
    Touch,
    contains_line,
    touches,
    touches_indexed,
    touches_of_message,
)

__all__ = [
    "Touch",
    "contains_line",
    "relative_path",
    "touches",
    "touches_indexed",
    "touches_of_message",
]
