"""Speed of redaction (issue 12 item 2): a 10 MB thread under 1 s, one turn under 5 ms.

Everything is built from the real transcripts of ``../shared/data/transcripts`` (imported
with ``loomsync.importers``): their 2,540 messages, repeated in order until the thread's JSON
reaches ``--mb`` MB, make the big thread; ``--planted`` of its messages get an invented
credential (GitHub token, AWS key id, ``DB_PASSWORD=…``, a PEM block, a database URL), so
that the redacted run rebuilds those messages as a real save would. Timed, as medians of
``--runs`` runs after one warm-up (the machine is shared; medians are what to compare):

- *first use*: importing detect-secrets' plugins and compiling the rules, then the first
  pass over the big thread (RE2 builds its DFA states lazily), once per process;
- *thread*: ``redact_thread`` of the big thread with the planted secrets and of the same
  thread without them (the same object back), wall time and this process's CPU time (the
  target is judged on CPU time: the machine's 2 cores are shared with other sessions, and a
  wall median under a load average of 6 is mostly waiting for a core; both are printed and
  the load average is recorded), against two floors measured in the same run:
  one ``str.find`` of an absent needle in every string of the thread, and
  ``Thread.model_dump_json`` (what a save does anyway);
- *document*: ``redact_value_located`` of the same thread as a JSON document (dumped once,
  outside the timing), with and without the planted secrets: the walk the server's scan and
  the client's saves use (review P6-15: the save path, not only ``redact_thread``);
- *turn*: ``redact_messages`` of each real message whose content is 1.5-20 KB (one turn of
  the issue), p50/p95/max, against ``Message.model_dump_json`` of the same message;
- *design*: what the choice rests on: detect-secrets' own per-line scanner
  (``scan_line``, its default plugins) on ``--ds-kb`` KB of the same text, and the
  secret-assignment rule run by Python's ``re`` and by RE2 over all the text.
"""

from __future__ import annotations

import argparse
import base64
import os
import random
import re
import statistics
import string
import sys
import time
from collections.abc import Callable
from typing import Any

from bench.harness import ROOT, percentiles, record
from loomsync.core.document.model import Message, Thread
from loomsync.importers import import_path

TRANSCRIPTS = ROOT.parent / "shared" / "data" / "transcripts"
TARGET_THREAD_S = 1.0
TARGET_TURN_MS = 5.0


def planted_secrets(count: int) -> list[str]:
    """``count`` invented credentials of several kinds (fixed seed; none is real)."""
    rng = random.Random(12)
    alnum = string.ascii_letters + string.digits

    def fake(alphabet: str, n: int) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    pem = base64.b64encode(rng.randbytes(300)).decode()
    makers: list[Callable[[], str]] = [
        lambda: "export GITHUB_TOKEN=ghp_" + fake(alnum, 36),
        lambda: "aws_access_key_id = AKIA" + fake(string.ascii_uppercase + string.digits, 16),
        lambda: "DB_PASSWORD=" + fake(alnum, 10) + "7!",
        lambda: "-----BEGIN RSA PRIVATE KEY-----\n" + pem + "\n-----END RSA PRIVATE KEY-----",
        lambda: "postgres://app:" + fake(alnum, 12) + "@db.internal:5432/app",
    ]
    return [makers[n % len(makers)]() for n in range(count)]


def real_messages() -> tuple[Thread, list[Message]]:
    """A real thread (for its metadata) and every real message of the transcripts."""
    threads = import_path(TRANSCRIPTS).threads
    return threads[0], [m for t in threads for m in t.conversation.messages]


def big_thread(base: Thread, messages: list[Message], mb: float) -> Thread:
    """``base`` holding ``messages`` repeated in order until its JSON is about ``mb`` MB."""
    chosen: list[Message] = []
    size = 0
    while size < mb * 1_000_000:
        for message in messages:
            chosen.append(message.model_copy())
            size += len(message.model_dump_json())
            if size >= mb * 1_000_000:
                break
    conversation = base.conversation.model_copy(update={"messages": chosen})
    return base.model_copy(update={"conversation": conversation})


def with_planted(thread: Thread, secrets: list[str]) -> Thread:
    """A copy of ``thread`` with each secret appended to a message spread over the thread."""
    messages = list(thread.conversation.messages)
    step = max(1, len(messages) // (len(secrets) + 1))
    for n, secret in enumerate(secrets):
        at = (n + 1) * step
        messages[at] = messages[at].model_copy(
            update={"content": messages[at].content + "\n" + secret}
        )
    conversation = thread.conversation.model_copy(update={"messages": messages})
    return thread.model_copy(update={"conversation": conversation})


def strings_of(value: Any) -> list[str]:
    """Every string of a JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in strings_of(item)]
    if isinstance(value, list):
        return [s for item in value for s in strings_of(item)]
    return []


def median_s(run: Callable[[], object], runs: int) -> float:
    """Median wall time of ``runs`` calls after one warm-up, in seconds."""
    return timed(run, runs)[0]


def timed(run: Callable[[], object], runs: int) -> tuple[float, float]:
    """Median wall time and median CPU time of this process over ``runs`` calls after one
    warm-up, in seconds."""
    run()
    wall, cpu = [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        run()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def measure(mb: float, runs: int, planted: int, ds_kb: int) -> list[str]:
    """Build the threads, time everything, and return the printed lines."""
    start = time.perf_counter()
    from loomsync.core.secrets import default_redactor

    redactor = default_redactor()
    redactor.find("warm-up: compile the rules")
    first_use = time.perf_counter() - start
    base, messages = real_messages()
    clean = big_thread(base, messages, mb)
    dirty = with_planted(clean, planted_secrets(planted))
    size = len(dirty.model_dump_json()) / 1e6
    texts = strings_of(clean.model_dump(mode="json"))

    start = time.perf_counter()
    _, found = redactor.redact_thread(dirty)
    first_pass = time.perf_counter() - start
    assert len(found) >= planted, (len(found), planted)
    assert redactor.redact_thread(clean)[0] is clean, "the real transcripts were altered"

    t_dirty, c_dirty = timed(lambda: redactor.redact_thread(dirty), runs)
    t_clean, c_clean = timed(lambda: redactor.redact_thread(clean), runs)
    dirty_doc = dirty.model_dump(mode="json", exclude_unset=True)
    clean_doc = clean.model_dump(mode="json", exclude_unset=True)
    located = redactor.redact_value_located(dirty_doc)[1]
    assert len(located) >= planted, (len(located), planted)
    assert redactor.redact_value_located(clean_doc)[0] is clean_doc, "real transcripts altered"
    t_doc_dirty, c_doc_dirty = timed(lambda: redactor.redact_value_located(dirty_doc), runs)
    t_doc_clean, c_doc_clean = timed(lambda: redactor.redact_value_located(clean_doc), runs)
    t_find, c_find = timed(lambda: [t.find("\x00never\x00") for t in texts], runs)
    t_dump, c_dump = timed(clean.model_dump_json, runs)

    turns = [m for m in messages if 1_500 <= len(m.content) <= 20_000]
    turn_ms, floor_ms = [], []
    for message in turns:
        turn_ms.append(median_s(lambda m=message: redactor.redact_messages([m]), 5) * 1e3)  # type: ignore[misc]
        floor_ms.append(median_s(message.model_dump_json, 5) * 1e3)
    turn_p50, turn_p95 = percentiles(turn_ms)
    floor_p50, _ = percentiles(floor_ms)

    all_text = "\n".join(texts)
    sample = all_text[: ds_kb * 1000]
    ds_mb_s = _detect_secrets_mb_s(sample)
    py_mb_s, re2_mb_s = _assignment_rule_mb_s(all_text)

    lines = [
        f"thread: {len(clean.conversation.messages)} real messages, {size:.1f} MB of JSON, "
        f"{planted} planted secrets ({len(found)} findings)",
        f"first use: rules compiled {first_use * 1e3:.0f} ms; first pass {first_pass:.2f} s",
        "",
        f"{'case':34} {'wall':>8} {'cpu':>8} {'vs str.find':>12} {'vs dump_json':>13}",
        f"{'redact_thread, planted secrets':34} {t_dirty:7.3f}s {c_dirty:7.3f}s "
        f"{c_dirty / c_find:11.1f}x {c_dirty / c_dump:12.2f}x",
        f"{'redact_thread, no secret':34} {t_clean:7.3f}s {c_clean:7.3f}s "
        f"{c_clean / c_find:11.1f}x {c_clean / c_dump:12.2f}x",
        f"{'redact_value_located, planted':34} {t_doc_dirty:7.3f}s {c_doc_dirty:7.3f}s "
        f"{c_doc_dirty / c_find:11.1f}x {c_doc_dirty / c_dump:12.2f}x",
        f"{'redact_value_located, no secret':34} {t_doc_clean:7.3f}s {c_doc_clean:7.3f}s "
        f"{c_doc_clean / c_find:11.1f}x {c_doc_clean / c_dump:12.2f}x",
        f"{'floor: str.find in every string':34} {t_find:7.3f}s {c_find:7.3f}s",
        f"{'floor: Thread.model_dump_json':34} {t_dump:7.3f}s {c_dump:7.3f}s",
        "",
        f"turn ({len(turns)} real messages of 1.5-20 KB): redact_messages p50 {turn_p50:.3f} ms, "
        f"p95 {turn_p95:.3f} ms, max {max(turn_ms):.3f} ms; "
        f"Message.model_dump_json p50 {floor_p50:.3f} ms",
        "",
        f"design: detect-secrets scan_line {ds_mb_s:.2f} MB/s ({ds_kb} KB sample; 10 MB would "
        f"take {10 / ds_mb_s:.0f} s); secret-assignment rule Python re {py_mb_s:.1f} MB/s, "
        f"RE2 {re2_mb_s:.1f} MB/s",
        "",
        _verdict(f"{mb:g} MB thread under {TARGET_THREAD_S:g} s", c_dirty * 10 / size,
                 TARGET_THREAD_S, f"s of CPU (wall {t_dirty * 10 / size:.3f} s; scaled to 10 MB)"),
        _verdict(f"{mb:g} MB document under {TARGET_THREAD_S:g} s", c_doc_dirty * 10 / size,
                 TARGET_THREAD_S, f"s of CPU (redact_value_located, wall "
                 f"{t_doc_dirty * 10 / size:.3f} s; scaled to 10 MB)"),
        _verdict(f"one turn under {TARGET_TURN_MS:g} ms (p95)", turn_p95, TARGET_TURN_MS, "ms"),
    ]  # fmt: skip
    return lines


def _verdict(name: str, value: float, target: float, unit: str) -> str:
    return f"[{'met' if value < target else 'MISSED'}] {name}: {value:.3f} {unit}"


def _detect_secrets_mb_s(sample: str) -> float:
    """detect-secrets' own scanner, line by line, with its default plugins."""
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings

    with default_settings():
        start = time.perf_counter()
        for line in sample.splitlines():
            for _ in scan_line(line):
                pass
        elapsed = time.perf_counter() - start
    return len(sample) / elapsed / 1e6


def _assignment_rule_mb_s(text: str) -> tuple[float, float]:
    """The secret-assignment rule's pattern over ``text`` with Python ``re`` and with RE2."""
    import re2

    from loomsync.core.secrets.rules import all_rules

    pattern = next(r.pattern for r in all_rules() if r.kind == "secret-assignment")
    rates = []
    for compiled in (re.compile(pattern), re2.compile(pattern)):
        start = time.perf_counter()
        sum(1 for _ in compiled.finditer(text))
        rates.append(len(text) / (time.perf_counter() - start) / 1e6)
    return rates[0], rates[1]


def main() -> None:
    """Measure, print, and append to RESULTS.md."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=float, default=10.0, help="size of the big thread (MB)")
    parser.add_argument("--runs", type=int, default=7, help="timed runs per case (median)")
    parser.add_argument("--planted", type=int, default=12, help="secrets planted in it")
    parser.add_argument("--ds-kb", type=int, default=200, help="detect-secrets sample (KB)")
    parser.add_argument("--no-record", action="store_true", help="do not append to RESULTS.md")
    args = parser.parse_args()
    lines = measure(args.mb, args.runs, args.planted, args.ds_kb)
    print("\n".join(lines))
    if not args.no_record:
        record(
            "Redaction speed (issue 12 item 2): 10 MB thread, one turn",
            "python -m bench.redaction " + " ".join(sys.argv[1:]),
            lines,
            {"Load average": " ".join(f"{x:.1f}" for x in os.getloadavg())},
        )
    if any(line.startswith("[MISSED]") for line in lines):
        sys.exit(1)


if __name__ == "__main__":
    main()
