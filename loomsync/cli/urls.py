"""``loomsync login --server URL``: the server's address as the person meant it (issue 16,
item 9). An API URL pasted from a curl example (``http://host:8080/api/threads``) would have
every request go to ``…/api/threads/api/threads``; it is cut back to the server's address,
and the command says so. A URL without ``http://`` or ``https://`` is refused with the fix, as
a usage mistake (exit code 2, issue 30 item 8): no scheme is assumed, not even for a loopback
address, so a token is never sent over a scheme the person did not choose.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from loomsync.errors import BadArgumentError

#: Paths that are pages or endpoints of a loomsync server, not where it is mounted.
_SERVER_PATHS = ("/api", "/health", "/login", "/t/", "/docs", "/openapi.json")


def server_address(value: str) -> tuple[str, str | None]:
    """``(address, note)``: the URL to store, and a note saying what was changed (None when
    nothing was).

    Raises:
        BadArgumentError: no ``http://``/``https://`` scheme, or no host (exit code 2).
    """
    given = value.strip()
    parts = urlsplit(given)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        hint = given.split("://", 1)[-1].strip("/") or "HOST:PORT"
        raise BadArgumentError(
            f"{given!r} is not a server URL: give it with http:// or https://, "
            f"e.g. `loomsync login --server http://{hint} --token TOKEN`"
        )
    path = parts.path
    cuts = [i for marker in _SERVER_PATHS if (i := path.find(marker)) >= 0]
    mounted = path[: min(cuts)] if cuts else path
    address = urlunsplit((parts.scheme.lower(), parts.netloc, mounted.rstrip("/"), "", ""))
    if address == given.rstrip("/"):
        return address, None
    dropped = given[len(address) :] if given.startswith(address) else given
    return address, f"Using {address}: the server's address, without {dropped}."


__all__ = ["server_address"]
