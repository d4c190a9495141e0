"""The detector over every real transcript of ../shared/data/transcripts (issue 27, "Done
means": no new false positives there), judged finding by finding.

Each file is read twice: as the threads its importer makes (every field the client's
redaction walks, tool-call arguments as structure: header objects, argv arrays), and, whatever
its format, as raw JSON values (each line of a JSON Lines file, or the whole document), walked
by the server's scan, so files no importer recognises (SQLite stores aside) are judged too.

Every finding is listed in :data:`JUDGED` with the verdict; a finding not in it (a new false
positive, or a credential nobody looked at) fails, and so does a judged one that is gone.
Main's detector (before issue 27) made one more: an ``azure-storage-key`` on line 11617 of
``codex-tui-session-log/binary-size-log.jsonl``, an 86-character base64 chunk of a command's
output (``dGVzdCBzdGF0dXNf…``: "test status_indicator_widget::tests::spinner…") with no key
name anywhere near it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from loomsync.core.secrets import default_redactor
from loomsync.importers import detect_format, import_path
from tests.conftest import SHARED_DATA

TRANSCRIPTS = SHARED_DATA / "transcripts"

#: (file, "thread n" or "line n", kind): every finding, judged.
JUDGED = {
    # pi's PDF skill documents `qpdf --password=mypassword --decrypt …`: a documentation
    # example, not a credential, but a password given on a command line is redacted whatever
    # its value (no value list can tell an example from a real one); main found it too.
    ("pi/session.jsonl", "line 99", "password"),
    # the same example, as the Pi importer (issue 28) makes it a thread
    ("pi/session.jsonl", "thread 0", "password"),
    # Crush sessions (issue 28) read the dbos repository's config: DSNs with a password in
    # their userinfo (postgres://postgres:dbos@…, postgres://admin:pwd@…), test values of
    # that repository, but a password in a URL is redacted whatever its value
    ("crush/dbos-inc__dbos-transact-golang/.crush/crush.db", "thread 0", "url-password"),
    ("crush/dbos-inc__dbos-transact-golang/.crush/crush.db", "thread 1", "url-password"),
    # and its CI workflow's `POSTGRES_PASSWORD: a!b@c$d()e*_,/:;=?@ff[]22`: a password
    # assigned to a password's name (Go's `--- PASS: TestX` verdict line is no longer one)
    ("crush/dbos-inc__dbos-transact-golang/.crush/crush.db", "thread 0", "secret-assignment"),
}


def _files() -> list[Path]:
    return sorted(p for p in TRANSCRIPTS.rglob("*") if p.is_file())


def _raw_values(path: Path) -> list[tuple[str, Any]]:
    """The file's JSON values (the whole document, else each line), its text lines otherwise;
    nothing for a binary file (SQLite)."""
    data = path.read_bytes()
    if b"\0" in data[:4096]:
        return []
    text = data.decode("utf-8", "replace")
    try:
        return [("document", json.loads(text))]
    except ValueError:
        pass
    values: list[tuple[str, Any]] = []
    for n, line in enumerate(text.splitlines()):
        try:
            values.append((f"line {n}", json.loads(line)))
        except ValueError:
            values.append((f"line {n}", line))
    return values


def _findings(path: Path) -> set[tuple[str, str, str]]:
    name = str(path.relative_to(TRANSCRIPTS))
    redactor = default_redactor()
    found: set[tuple[str, str, str]] = set()
    for where, value in _raw_values(path):
        found |= {(name, where, f.kind) for f in redactor.redact_value_located(value)[1]}
    if detect_format(path) is not None:
        for n, thread in enumerate(import_path(path).threads):
            found |= {(name, f"thread {n}", f.kind) for f in redactor.redact_thread(thread)[1]}
    return found


def test_every_finding_in_the_real_transcripts_is_judged() -> None:
    files = _files()
    assert len(files) > 100  # the whole corpus, not a part of it
    found: set[tuple[str, str, str]] = set()
    for path in files:
        found |= _findings(path)
    assert found - JUDGED == set(), "unjudged findings (new false positives?)"
    assert JUDGED - found == set(), "judged findings that are gone: update JUDGED"
