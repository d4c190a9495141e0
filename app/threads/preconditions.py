"""``If-Match`` parsing and base versions for optimistic locking (API.md section 5, RFC 9110 §13.1.1)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.errors import BadRequest

_MEMBER = re.compile(r'\s*(?:(W/)?"(\d{1,18})"|(\d{1,18}))\s*')


@dataclass(frozen=True, slots=True)
class Precondition:
    """The versions a write may apply to: ``any_version`` for ``If-Match: *``, else ``versions``.

    Weak tags (``W/"7"``) are parsed but never match (strong comparison); a list matches if any
    member does.
    """

    versions: frozenset[int]
    any_version: bool = False

    @classmethod
    def exactly(cls, version: int) -> Precondition:
        """A precondition on one version."""
        return cls(versions=frozenset({version}))

    @property
    def client_version(self) -> int | None:
        """The version to report as ``client_version`` in a 409 (the highest named)."""
        return max(self.versions) if self.versions else None


def parse_if_match(header: str | None) -> Precondition | None:
    """Parse an ``If-Match`` header; None when absent.

    Raises:
        BadRequest: the header is not ``*`` or a comma list of (possibly bare) entity tags.
    """
    if header is None:
        return None
    if header.strip() == "*":
        return Precondition(versions=frozenset(), any_version=True)
    versions: set[int] = set()
    members = header.split(",")
    for member in members:
        match = _MEMBER.fullmatch(member)
        if match is None:
            raise BadRequest('If-Match must be *, "<version>" or a list of them.')
        weak, quoted, bare = match.groups()
        if not weak:
            versions.add(int(quoted or bare))
    return Precondition(versions=frozenset(versions))


def etag(version: int) -> str:
    """The strong entity tag of a version: ``"7"``."""
    return f'"{version}"'
