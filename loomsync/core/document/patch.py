"""RFC 7396 JSON merge patch: how a metadata patch applies, the same on the server and the client.

The server applies a client's ``PATCH`` with it (app/threads/service.py); the client's edits
(:mod:`loomsync.edits`) and its sync engine apply the same patch to their copy.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396 JSON merge patch of ``patch`` onto ``target`` (neither is modified)."""
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


__all__ = ["merge_patch"]
