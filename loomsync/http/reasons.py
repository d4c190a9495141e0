"""Why a request got no answer, in the user's words (newcomer finding 11; issue 16 item 9):
never an exception class name (``ConnectError``), a raw errno (``[Errno 111]``) or OpenSSL's
source position (``(_ssl.c:1006)``). :func:`transport_reason` is what
:class:`~loomsync.errors.NetworkError` carries as its ``detail``, so every command, the sync
outcomes and ``loomsync status`` word it the same way.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import httpx

_ERRNO = re.compile(r"\[Errno -?\d+\]\s*")
_SSL_TAG = re.compile(r"\[SSL(?:: [A-Z_]+)?\]\s*")
_SSL_PLACE = re.compile(r"\s*\(_ssl\.c:\d+\)")

#: Lower-cased fragments of the OS's / OpenSSL's text, and what to say for each.
_KNOWN = (
    ("connection refused", "connection refused"),
    ("name or service not known", "no such host name"),
    ("nodename nor servname", "no such host name"),
    ("temporary failure in name resolution", "the host name could not be looked up"),
    ("network is unreachable", "the network is unreachable"),
    ("no route to host", "no route to the host"),
    ("connection reset", "the connection was reset"),
    ("certificate verify failed", "its TLS certificate is not trusted"),
)


def _https_on_plain_port(text: str, url: str | None) -> str | None:
    if "wrong_version_number" not in text and "wrong version number" not in text:
        return None
    parts = urlsplit(url or "")
    plain = f"http://{parts.netloc}" if parts.scheme == "https" and parts.netloc else "http://…"
    return f"it does not speak https on that port: is it {plain}?"


def transport_reason(exc: httpx.TransportError | Exception, url: str | None = None) -> str:
    """``exc`` (an ``httpx`` transport error, or any error met while connecting) as a short
    reason: ``connection refused``, ``no answer within 10 s``, ``it does not speak https on
    that port: is it http://127.0.0.1:8194?`` (``url``: the address asked, to suggest the
    ``http://`` one). Raw text."""
    text = str(exc)
    lowered = text.lower()
    if (said := _https_on_plain_port(lowered, url)) is not None:
        return said
    if isinstance(exc, httpx.TimeoutException) or "timed out" in lowered:
        return "no answer in time"
    for fragment, said in _KNOWN:
        if fragment in lowered:
            return said
    cleaned = _SSL_PLACE.sub("", _SSL_TAG.sub("", _ERRNO.sub("", text))).strip()
    return cleaned or "the connection failed"


__all__ = ["transport_reason"]
