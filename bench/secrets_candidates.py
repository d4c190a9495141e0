"""The secret detectors bench.secrets_quality compares (issue 12 item 2: "compare candidates on
your labelled set before you choose").

Each :class:`Candidate` turns one text into :data:`Span` findings ``(start, end, kind)``;
loomsync's own redactor also redacts (``redact``), the others only report. A candidate whose
library is not installed is built with ``missing`` set to the reason, so the report can say so.

- ``loomsync``: :func:`loomsync.core.secrets.default_redactor` of whatever tree ``loomsync`` is
  imported from (``find`` and ``redact_text``).
- ``detect-secrets`` / ``detect-secrets-no-entropy``: detect-secrets 1.5.0 with every plugin
  and its default filters (what ``detect-secrets scan`` uses), or without the two high-entropy
  plugins. Each text is scanned as the lines of a file named ``message`` (no extension: file
  type "other") through ``detect_secrets.core.scan._process_line_based_plugins``, the loop
  ``scan_file`` runs on a file's lines. The public ``scan_line`` is not used: it is the
  ``scan --string`` debugging aid, whose eager mode reports every word with its entropy.
- ``trufflehog3`` / ``trufflehog3-no-entropy``: trufflehog3 3.0.10's default rules (its
  ``rules.yml``: two entropy rules and 29 patterns) through ``trufflehog3.search.search`` on a
  ``File`` holding the text. trufflehog3 pins ``attrs==20.3.0`` and ``PyYAML==6.0.1``, so it is
  not a project dependency: install it by hand (``pip install trufflehog3==3.0.10``) to measure it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

#: A finding: ``text[start:end]`` is what the detector reports, ``kind`` its name for it.
Span = tuple[int, int, str]


@dataclass
class Candidate:
    """A detector under test: ``find(text)`` → spans; ``redact(text)`` → redacted text for the
    ones that redact (None for report-only tools); ``session()`` holds library state (global
    settings) open around a run; ``missing`` says why it cannot run, if it cannot."""

    name: str
    find: Callable[[str], list[Span]]
    redact: Callable[[str], str] | None = None
    #: a JSON value redacted, and where each finding was: ``(path, kind)`` (issue 27 item 1:
    #: a tool call's arguments judged as structure, not as text); None: ``find`` on its text
    redact_json: Callable[[Any], tuple[Any, list[tuple[tuple[Any, ...], str]]]] | None = None
    session: Callable[[], contextlib.AbstractContextManager[Any]] = contextlib.nullcontext
    missing: str | None = None
    note: str = ""
    version: str = field(default="")


def _absent(name: str, reason: str) -> Candidate:
    def never(_text: str) -> list[Span]:
        raise RuntimeError(f"{name} is not available: {reason}")

    return Candidate(name, never, missing=reason)


def loomsync_candidate() -> Candidate:
    """loomsync's :func:`~loomsync.core.secrets.default_redactor` (find + redact_text)."""
    import loomsync.core.secrets

    redactor = loomsync.core.secrets.default_redactor()

    def find(text: str) -> list[Span]:
        return [(f.start, f.end, f.kind) for f in redactor.find(text)]

    def redact_json(value: Any) -> tuple[Any, list[tuple[tuple[Any, ...], str]]]:
        new, located = redactor.redact_value_located(value, ("tool_calls", 0, "arguments_json"))
        return new, [(f.path[3:], f.kind) for f in located]

    return Candidate(
        "loomsync",
        find,
        redact=redactor.redact_text,
        redact_json=redact_json,
        note=loomsync.core.secrets.__file__ or "",
    )


def _line_starts(text: str) -> Iterator[tuple[int, str]]:
    """(offset, line) for each line of ``text`` as ``str.splitlines`` cuts it, the end dropped."""
    at = 0
    for line in text.splitlines(keepends=True):
        yield at, line.splitlines()[0]
        at += len(line)


def _spans_in_line(offset: int, line: str, secret: str | None, kind: str) -> list[Span]:
    """Every occurrence of a reported ``secret`` in its line; the whole line when the tool
    reports a value that is not in it (or none)."""
    if not secret or secret not in line:
        return [(offset, offset + len(line), kind)]
    spans = []
    at = line.find(secret)
    while at >= 0:
        spans.append((offset + at, offset + at + len(secret), kind))
        at = line.find(secret, at + 1)
    return spans


_DS_ENTROPY = ("Base64HighEntropyString", "HexHighEntropyString")


def detect_secrets_candidate(*, entropy: bool = True) -> Candidate:
    """detect-secrets with all its plugins (``entropy=False``: without the two high-entropy
    ones) and its default filters."""
    name = "detect-secrets" if entropy else "detect-secrets-no-entropy"
    try:
        from detect_secrets.__version__ import VERSION
        from detect_secrets.core import scan
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.settings import get_filters, get_settings, transient_settings
    except ImportError as error:
        return _absent(name, f"not installed ({error}); pip install -e '.[dev]'")

    plugins: list[dict[str, Any]] = [
        {"name": plugin.__name__}
        for plugin in get_mapping_from_secret_type_to_class().values()
        if entropy or plugin.__name__ not in _DS_ENTROPY
    ]

    @contextlib.contextmanager
    def session() -> Iterator[None]:
        with transient_settings({"plugins_used": plugins}):
            # As scan_line does: the text is not a file on disk.
            get_settings().disable_filters("detect_secrets.filters.common.is_invalid_file")
            get_filters.cache_clear()
            yield

    def find(text: str) -> list[Span]:
        lines = list(_line_starts(text))
        numbered = [(n, line) for n, (_, line) in enumerate(lines, start=1)]
        spans: list[Span] = []
        for secret in scan._process_line_based_plugins(numbered, filename="message"):
            offset, line = lines[secret.line_number - 1]
            spans += _spans_in_line(offset, line, secret.secret_value, secret.type)
        return spans

    return Candidate(name, find, session=session, version=VERSION)


def trufflehog3_candidate(*, entropy: bool = True) -> Candidate:
    """trufflehog3's default rules (``entropy=False``: its pattern rules only)."""
    name = "trufflehog3" if entropy else "trufflehog3-no-entropy"
    try:
        from trufflehog3 import __VERSION__
        from trufflehog3.core import load_rules
        from trufflehog3.models import Entropy, File
        from trufflehog3.search import search
    except ImportError as error:
        return _absent(name, f"not installed ({error}); pip install trufflehog3==3.0.10")

    rules = [r for r in load_rules(None) if entropy or not isinstance(r, Entropy)]

    def find(text: str) -> list[Span]:
        lines = [(offset, line) for offset, line in _line_starts(text)]
        spans: list[Span] = []
        for issue in search(File("message", content=text), rules):
            offset, line = lines[int(issue.line) - 1]
            spans += _spans_in_line(offset, line, issue.secret, issue.rule.id)
        return spans

    return Candidate(name, find, version=__VERSION__)


#: Every candidate by name, in report order.
BUILDERS: dict[str, Callable[[], Candidate]] = {
    "loomsync": loomsync_candidate,
    "detect-secrets": detect_secrets_candidate,
    "detect-secrets-no-entropy": lambda: detect_secrets_candidate(entropy=False),
    "trufflehog3": trufflehog3_candidate,
    "trufflehog3-no-entropy": lambda: trufflehog3_candidate(entropy=False),
}
