"""Redacting JSON values: every string of a thread, its field rules, and what was found.

Field rules (issue 12 items 1 and 2, API.md section 9):

- Structural fields (timestamps, roles, SHAs, visibility: :data:`STRUCTURAL`, and the
  thread's own ``T-<uuid>`` ``id``) of a thread, a message and a tool call are never
  touched, at their absolute paths only (the root, ``conversation.messages[n]``,
  ``….tool_calls[m]``; review P3-12); commit SHAs only while they are hex. A message's or a
  tool call's ``id`` and ``tool_call_id`` are scanned like any string. Everywhere else (tool-call ``arguments_json``, ``metadata.extra``,
  unknown fields, a ``messages`` list inside ``extra``) every string is redacted.
- A dict key that holds a token (any kind but the name-based ones, :data:`CONTEXT_KINDS`)
  becomes its marker, ``#2``, ``#3``… when that key is taken (review P1-6); paths name the
  new key, never the token.
- ``{"name": "DB_PASSWORD", "value": X}`` (k8s/ECS env lists, tags): X is judged as if under
  the key ``DB_PASSWORD`` (review P1-4).
- A string that is a whole URL (``git_remote_url``, a URL field) loses its userinfo when the
  userinfo holds a password or a token: ``https://user:pass@host/x`` → ``https://host/x``.
  In free text only the password is replaced: ``https://user:[REDACTED:url-password]@host``.
- A string value under a JSON key that names a secret (``"password"``, ``"apiKey"``, not
  ``"max_tokens"``: :func:`~loomsync.core.secrets.shapes.is_secret_name`) is replaced whole when
  it looks like a credential (``secret-assignment``), unless a token rule found more.

Unchanged values come back as the same objects (callers test ``new is old``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from loomsync.core.redactionmark import MARKER_PREFIX
from loomsync.core.secrets.engine import Engine, Span
from loomsync.core.secrets.kinds import preview
from loomsync.core.secrets.shapes import (
    is_literal_secret,
    is_placeholder,
    is_secret_name,
    is_token_like,
)

#: Fields of a thread, a message or a tool call that are structure, never credentials. Ids
#: are not among them: a message's or a tool call's ``id`` and ``tool_call_id`` are free-form
#: strings a client chooses, so they are scanned (an ordinary ``toolu_…``, ``call_…`` or UUID
#: is no finding and stays the same object; a token there is redacted like anywhere else).
STRUCTURAL = frozenset(
    {
        "version",
        "created_at",
        "updated_at",
        "last_activity_at",
        "archived_at",
        "role",
        "visibility",
        "git_initial_commit_sha",
        "git_current_commit_sha",
        "git_commits",
        "is_private",
        "is_shared_with_support",
        "is_pinned",
    }
)

#: Kept at the root only, and only while it is ``T-<lowercase uuid>`` (the thread's own
#: validated id; a message redacted alone also sits at the root, its ``id`` is scanned).
ROOT_STRUCTURAL = STRUCTURAL | {"id"}
_THREAD_ID_RE = re.compile(r"T-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

#: Structural fields kept only while they are hex (a commit SHA); anything else is scanned.
SHA_FIELDS = frozenset({"git_initial_commit_sha", "git_current_commit_sha", "git_commits"})
_HEX_RE = re.compile(r"[0-9a-fA-F]{4,64}")

#: Kinds found by a name or a header rather than by the token's own shape: a dict key is
#: scanned for the others only (a key has no name of its own; review P1-6).
CONTEXT_KINDS = frozenset({"secret-assignment", "password", "cookie", "authorization-header"})

#: Keys of a ``{"name": NAME, "value": X}`` pair (k8s and ECS env lists, AWS tags, HAR).
_PAIR_NAMES = ("name", "Name", "key", "Key")
_PAIR_VALUES = ("value", "Value")

_MARKER_RE = re.compile(r"\[REDACTED:[a-z0-9\-]+\](?:#[0-9]+)?")

_URL_RE = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://)([^/?#\s]*)@([^\s]*)")

Path = tuple[str | int, ...]
Found = tuple[str, Path, str]  # (kind, path, preview)


def marker(kind: str) -> str:
    """``[REDACTED:<kind>]`` for a finding of ``kind`` (e.g. ``aws-access-key``)."""
    return f"{MARKER_PREFIX}{kind}]"


def splice(text: str, spans: list[Span]) -> str:
    """``text`` with each span (in order, not overlapping) replaced by its marker."""
    parts: list[str] = []
    at = 0
    for span in spans:
        parts.append(text[at : span.start])
        parts.append(marker(span.kind))
        at = span.end
    parts.append(text[at:])
    return "".join(parts)


#: Passes of :func:`redact_string` at most. Each pass turns at least one character outside
#: the markers into a marker (markers are never findings), so the passes always end; a second
#: pass is rare and more only for tokens glued together (five glued tokens need five).
MAX_PASSES = 64


def redact_string(
    engine: Engine, text: str, allowed: Callable[[str], bool] | None
) -> tuple[str, list[tuple[str, str]]]:
    """``text`` redacted until no rule finds anything more, and the ``(kind, value)`` of each
    finding. A second pass is needed when a marker gives a neighbour the boundary its rule
    asks for (two tokens written without a space between them), so that redacting the
    result again changes nothing."""
    found: list[tuple[str, str]] = []
    for _ in range(MAX_PASSES):
        spans = engine.scan(text, allowed)
        if not spans:
            break
        found.extend((span.kind, text[span.start : span.end]) for span in spans)
        text = splice(text, spans)
    return text, found


def _structural_level(path: Path) -> bool:
    """Whether a dict at ``path`` is a thread, a message or a tool call (whose structural
    fields are kept), by its absolute path (review P3-12): the root (a thread, or a message
    redacted alone, whose ``tool_calls[m]`` are then at ``("tool_calls", m)``),
    ``conversation.messages[n]`` and ``conversation.messages[n].tool_calls[m]``; a
    ``messages`` list anywhere else (``metadata.extra.messages``) is data."""
    size = len(path)
    if size == 0:
        return True
    if size == 2:
        return path[0] == "tool_calls" and isinstance(path[1], int)
    if size not in (3, 5) or path[:2] != ("conversation", "messages"):
        return False
    if not isinstance(path[2], int):
        return False
    return size == 3 or (path[3] == "tool_calls" and isinstance(path[4], int))


def _kept(name: str, item: Any) -> bool:
    """Whether a structural field's value is kept: SHA fields only while hex, ``id`` (the
    root's only) only while a thread id."""
    if name == "id":
        return isinstance(item, str) and _THREAD_ID_RE.fullmatch(item) is not None
    if name not in SHA_FIELDS:
        return True
    if isinstance(item, str):
        return _HEX_RE.fullmatch(item) is not None
    return isinstance(item, list) and all(
        isinstance(x, str) and _HEX_RE.fullmatch(x) is not None for x in item
    )


def _pair_names(value: dict[str, Any]) -> dict[str, str]:
    """``{"value": NAME}`` for a ``{"name": NAME, "value": X}`` pair whose NAME is a
    secret's (review P1-4) or a credential header's (``Authorization``, ``Cookie``: the HAR
    and Postman shape, issue 27 item 1), else empty: the value is judged as if under the key
    NAME."""
    for key in _PAIR_NAMES:
        name = value.get(key)
        if isinstance(name, str) and (is_secret_name(name) or named_scan(name)):
            return {v: name for v in _PAIR_VALUES if isinstance(value.get(v), str)}
    return {}


#: A key (or a pair's name) whose value is judged as the line ``NAME: value`` (issue 27 item
#: 1): a header or variable name of at most 64 characters that says what a credential is
#: (``Authorization``, ``Proxy-Authorization``, ``Cookie``, ``Set-Cookie``, ``X-Api-Key``,
#: ``PRIVATE-TOKEN``, ``Ocp-Apim-Subscription-Key``…); the rules then decide, by the name and
#: the value, exactly as they do for the same header on a command line.
_NAMED = re.compile(r"(?i)auth|cookie|token|key|secret|pass|pwd|credential")
_NAME_SHAPE = re.compile(r"[A-Za-z0-9_.\-]{1,64}")


@functools.lru_cache(maxsize=4096)
def named_scan(name: str) -> bool:
    """Whether a value under the key ``name`` is also judged as the line ``name: value``."""
    return _NAME_SHAPE.fullmatch(name) is not None and _NAMED.search(name) is not None


#: An argv array's first element: a command (``curl``, ``/usr/bin/docker``), not a word of
#: prose; the array is then judged as one command line (issue 27 item 1).
_COMMAND = re.compile(r"[A-Za-z0-9_./+\-]{1,128}")
MAX_ARGV = 1_000
#: Longest value judged as ``NAME: value``: a header's value, not a file's content.
MAX_NAMED = 8_192


class Walker:
    """Redacts JSON values with ``engine``; ``allowed(value)`` True keeps a value."""

    def __init__(self, engine: Engine, allowed: Callable[[str], bool] | None) -> None:
        self.engine = engine
        self.allowed = allowed

    def walk(self, value: Any, path: Path, out: list[Found], key: str | None = None) -> Any:
        """``value`` redacted (the same object if nothing changed); findings go to ``out``."""
        if isinstance(value, str):
            return self.string(value, path, out, key)
        if isinstance(value, dict):
            return self._dict(value, path, out)
        if isinstance(value, list):
            value = self._argv(value, path, out)
            items = [self.walk(item, (*path, n), out) for n, item in enumerate(value)]
            return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
        return value

    def _argv(self, value: list[Any], path: Path, out: list[Found]) -> list[Any]:
        """An argv array (strings, the first a command) judged as one command line, the
        words joined by spaces (``["sshpass", "-p", pw]`` as ``sshpass -p pw``): each finding
        is replaced in the words it covers. The list itself when it is no argv or nothing
        was found (each word is then walked alone as well)."""
        if not 2 <= len(value) <= MAX_ARGV or not all(isinstance(w, str) for w in value):
            return value
        if _COMMAND.fullmatch(value[0]) is None or value[0].startswith("-"):
            return value
        line = " ".join(value)
        if self.engine.clean(line):
            return value
        spans = self.engine.scan(line, self.allowed)
        if not spans:
            return value
        words = list(value)
        at = 0
        for n, word in enumerate(value):
            inside = [
                Span(s.kind, max(s.start, at) - at, min(s.end, at + len(word)) - at)
                for s in spans
                if s.start < at + len(word) and at < s.end
            ]
            if inside:
                words[n] = splice(word, inside)
                found = (s for s in inside if s.end > s.start)
                out.extend(
                    (s.kind, (*path, n), preview(s.kind, word[s.start : s.end])) for s in found
                )
            at += len(word) + 1
        return words

    def _dict(self, value: dict[str, Any], path: Path, out: list[Found]) -> dict[str, Any]:
        """A dict: keys that hold a token become markers, structural fields are kept, the
        value of a secret-named ``name``/``value`` pair is judged under its name."""
        keep = (
            ROOT_STRUCTURAL if not path else STRUCTURAL if _structural_level(path) else frozenset()
        )
        renamed = self._keys(value)
        pairs = _pair_names(value) if len(value) <= 8 else {}
        changed = False
        result: dict[str, Any] = {}
        for name, item in value.items():
            key = name
            named: str | None = pairs.get(name, name)
            if renamed and name in renamed:
                key, kind, secret = renamed[name]
                out.append((kind, (*path, key), preview(kind, secret)))
                changed, named = True, None  # a token or a marker names nothing
            if isinstance(item, bool | int | float) or item is None:
                new = item
            elif name in keep and _kept(name, item):
                new = item
            else:
                new = self.walk(item, (*path, key), out, named)
            changed = changed or new is not item
            result[key] = new
        return result if changed else value

    def _keys(self, value: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
        """``{key: (new key, kind, secret)}`` for the keys that hold a token (review P1-6):
        each becomes its kind's marker, numbered ``#2``, ``#3``… when that key is taken.
        Markers are never findings, so a second walk renames nothing."""
        hits: dict[str, tuple[str, str]] = {}
        for name in value:
            if len(name) < 8 or self.engine.clean(name):
                continue
            for span in self.engine.scan(name, self.allowed):
                if span.kind not in CONTEXT_KINDS:
                    hits[name] = (span.kind, name[span.start : span.end])
                    break
        if not hits:
            return {}
        taken = {name for name in value if name not in hits}
        renamed: dict[str, tuple[str, str, str]] = {}
        for name, (kind, secret) in hits.items():
            base = candidate = marker(kind)
            number = 2
            while candidate in taken:
                candidate = f"{base}#{number}"
                number += 1
            taken.add(candidate)
            renamed[name] = (candidate, kind, secret)
        return renamed

    def clean_model(self, model: BaseModel) -> bool:
        """Whether a message or tool call (a pydantic model of loomsync.core.document.model) holds no
        finding, judged on its fields without dumping it: every non-structural field that
        (and every extra field) walked as :meth:`walk` would walk its JSON; fields left at
        their defaults hold None or empty strings."""
        scratch: list[Found] = []
        extra = model.__pydantic_extra__ or {}
        for fields in (model.__dict__, extra):
            for name, value in fields.items():
                if fields is extra and self._keys({name: value}):
                    return False
                if value is None or name in STRUCTURAL:
                    continue
                kind = type(value)
                if kind is str:
                    if value and self.string(value, (name,), scratch, name) is not value:
                        return False
                elif kind is list and value and isinstance(value[0], BaseModel):
                    if not all(self.clean_model(item) for item in value):
                        return False
                elif isinstance(value, BaseModel):
                    if not self.clean_model(value):
                        return False
                elif kind is list or kind is dict:
                    if self.walk(value, (name,), scratch, name) is not value:
                        return False
        return True

    def string(self, text: str, path: Path, out: list[Found], key: str | None) -> str:
        """One string: URL userinfo, a secret-named key's value, then the rules."""
        if "://" in text and "@" in text:
            text = self._userinfo(text, path, out)
        found = None if self.engine.clean(text) else redact_string(self.engine, text, self.allowed)
        if key is not None and named_scan(key):
            # judged by its name as well, after the token rules: a password beside a token
            # (``hunter2 AKIA…``) is found now, not on a second redaction (idempotence)
            base = found[0] if found else text
            named = self._named(key, base) if len(base) <= MAX_NAMED else None
            if named is not None:
                found = (named[0], (found[1] if found else []) + named[1])
        if not found or not found[1]:
            if key is not None and self._secret_field(key, text):
                out.append(("secret-assignment", path, preview("secret-assignment", text)))
                return marker("secret-assignment")
            return text
        out.extend((kind, path, preview(kind, value)) for kind, value in found[1])
        return found[0]

    def _named(self, key: str, text: str) -> tuple[str, list[tuple[str, str]]] | None:
        """``text`` judged as the value of the line ``key: text`` (a header held as JSON):
        the findings of that line within ``text``, replaced, until the line holds no more
        (a marker can give a neighbour the edge its rule asks for); None when there are none."""
        found: list[tuple[str, str]] = []
        for _ in range(MAX_PASSES):
            more = self._named_once(key, text)
            if more is None:
                break
            text, found = more[0], found + more[1]
        return (text, found) if found else None

    def _named_once(self, key: str, text: str) -> tuple[str, list[tuple[str, str]]] | None:
        head = f"{key}: "
        line = head + text
        if self.engine.clean(line):
            return None
        spans = [
            Span(s.kind, max(s.start, len(head)) - len(head), s.end - len(head))
            for s in self.engine.scan(line, self.allowed)
            if s.end > len(head)
        ]
        if not spans:
            return None
        found = [(s.kind, text[s.start : s.end]) for s in spans]
        again, more = redact_string(self.engine, splice(text, spans), self.allowed)
        return again, found + more

    def _secret_field(self, key: str, text: str) -> bool:
        if MARKER_PREFIX in key or not is_secret_name(key):
            return False
        if not is_literal_secret(text):
            return False
        return self.allowed is None or not self.allowed(text)

    def _userinfo(self, text: str, path: Path, out: list[Found]) -> str:
        """A whole-URL string without its userinfo, if that holds a password or token."""
        match = _URL_RE.fullmatch(text)
        if match is None:
            return text
        userinfo = match.group(2)
        if _MARKER_RE.fullmatch(userinfo):
            return text  # a marker is never rewritten (review P2-8)
        user, _, password = userinfo.partition(":")
        spans = self.engine.scan(userinfo, self.allowed)
        if spans:
            kind, secret = spans[0].kind, userinfo[spans[0].start : spans[0].end]
        elif password and (MARKER_PREFIX in password or not is_placeholder(password)):
            if self.allowed is not None and self.allowed(password):
                return text
            kind, secret = "url-password", password
        elif not password and is_token_like(user, match.group(3)):
            # a token as the whole userinfo (review P5)
            if self.allowed is not None and self.allowed(user):
                return text
            kind, secret = "url-password", user
        else:
            return text
        out.append((kind, path, preview(kind, secret)))
        return match.group(1) + match.group(3)
