"""``If-Match`` parsing and base versions for optimistic locking (API.md section 5, RFC 9110 §13.1.1)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.errors import BadRequest

#: Versions are PostgreSQL ``integer``s; a larger base can match no stored version.
MAX_VERSION = 2**31 - 1

#: One list member; HTTP's optional whitespace is spaces and tabs only (RFC 9110 §5.6.3).
_MEMBER = re.compile(r'[ \t]*(?:(W/)?"([0-9]+)"|([0-9]+))[ \t]*')
#: Digits past this many are a version no thread reaches (MAX_VERSION has 10): such a tag is
#: well formed and never matches, and is never converted (``int`` of a 30,000-digit string
#: costs, and past 4,300 digits raises).
_MAX_DIGITS = 18


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
        """The version to report as ``client_version`` in a 409 (the highest strong version
        named; None when only weak or out-of-range tags were given)."""
        return max(self.versions) if self.versions else None

    def describe(self) -> str:
        """How a 409's detail names the base: ``version 5``, ``any version`` or a reason."""
        if self.any_version:
            return "any version"
        if not self.versions:
            return "no matchable version (weak or out-of-range entity tags never match)"
        return "version " + " or ".join(str(v) for v in sorted(self.versions))


def parse_if_match(header: str | list[str] | None) -> Precondition | None:
    """Parse ``If-Match`` (one header or several lines, which RFC 9110 §5.3 joins into one
    list); None when absent.

    Raises:
        BadRequest: the header is not ``*`` or a comma list of (possibly bare) entity tags.
    """
    if header is None:
        return None
    if isinstance(header, list):
        if not header:
            return None
        header = ", ".join(header)
    if header.strip(" \t") == "*":
        return Precondition(versions=frozenset(), any_version=True)
    versions: set[int] = set()
    members = header.split(",")
    for member in members:
        match = _MEMBER.fullmatch(member)
        if match is None:
            raise BadRequest('If-Match must be *, "<version>" or a list of them.')
        weak, quoted, bare = match.groups()
        digits = quoted or bare
        if weak or len(digits) > _MAX_DIGITS:
            continue
        version = int(digits)
        if version <= MAX_VERSION:
            versions.add(version)
    return Precondition(versions=frozenset(versions))


def etag(version: int) -> str:
    """The strong entity tag of a version: ``"7"``."""
    return f'"{version}"'
