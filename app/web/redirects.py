"""Where a page may send the browser next: only a path of this server.

``/login?code=…&next=/t/T-…`` returns the browser to ``next`` once signed in; a ``next`` that
could leave the site (``//evil.example``, ``/\\evil.example``, ``https://…``, control
characters a browser strips) is replaced by ``/`` (OWASP "Unvalidated Redirects").
"""

from __future__ import annotations

import re

MAX_NEXT_CHARS = 2048
#: A path-absolute reference (RFC 3986 section 4.2) of visible ASCII without ``\\``, whose
#: second character is not ``/`` (browsers read both ``//host`` and ``/\\host`` as another
#: host). No look-ahead: pydantic's regex engine has none.
NEXT_PATTERN = r"^/(?:[!-.0-\[\]-~][!-\[\]-~]*)?$"
_NEXT = re.compile(NEXT_PATTERN)
HOME = "/"


def safe_next(value: str | None) -> str:
    """``value`` when it is a local path (see :data:`NEXT_PATTERN`, at most
    :data:`MAX_NEXT_CHARS` characters), else ``/``."""
    if not value or len(value) > MAX_NEXT_CHARS:
        return HOME
    return value if _NEXT.fullmatch(value) else HOME
