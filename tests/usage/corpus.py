"""The real transcripts of ../shared/data imported as thread documents, and the usage totals
each agent's files hold, counted by hand.

:data:`EXPECTED` was computed by a separate script that reads the raw files without
loomsync's importers (json per line, several objects on a damaged line read one by one):
Claude Code, the final ``message.usage`` of each assistant message id (the last line of a
response carries it), ``cache_read_input_tokens`` / ``cache_creation_input_tokens`` as cache
read / write; Codex, ``last_token_usage`` of each ``token_count`` event whose
``total_token_usage`` moved (input = ``input_tokens - cached_input_tokens``); Gemini CLI,
``tokens`` of each message (input - cached, output + thoughts); Pi, ``message.usage`` of each
assistant message (``input``, ``output``, ``cacheRead``, ``cacheWrite``); Qwen Code,
``usageMetadata`` (prompt - cached, candidates + thoughts); opencode, ``tokens`` of each
assistant message file (output + reasoning); Copilot CLI, ``outputTokens`` of each
``assistant.message`` event. The sums were then compared with what the importers and
loomsync.core.usage.counting give (equal for every agent) and written here.
"""

from __future__ import annotations

from typing import Any

from loomsync.core.document.codec import normalized
from loomsync.importers import FORMATS
from tests.importers.corpus import corpus_files

#: agent → (input, output, cache read, cache write) tokens of the whole corpus.
EXPECTED: dict[str, tuple[int, int, int, int]] = {
    "claude-code": (15248, 193140, 27240370, 3253059),
    "codex": (3413445, 144971, 36808192, 0),
    "gemini-cli": (45092, 4227, 56538, 0),
    "pi": (2617, 130151, 68512968, 5278744),
    "qwen-code": (1050, 25, 50, 0),
    "opencode": (26, 1378, 54606, 25843),
    "copilot-cli": (0, 22185, 0, 0),
}
#: Reasoning tokens recorded (inside output): Codex's ``reasoning_output_tokens``, Gemini's
#: ``thoughts``.
REASONING = {"codex": 44747, "gemini-cli": 1493}
#: Pi records its own cost per message (``usage.cost.total``, Anthropic's list prices): the
#: sum over both files, by the same script.
PI_RECORDED_COST = 50.2954
#: Agents whose files record no usage at all: every session is one without usage.
WITHOUT_USAGE = ("aider", "crush", "openhands", "swe-agent", "opencode-go", "codex-tui")


def corpus_documents() -> list[dict[str, Any]]:
    """Every thread the corpus imports into, as API documents (agent in
    ``metadata.extra.source.agent``)."""
    docs: list[dict[str, Any]] = []
    for fmt, path in corpus_files():
        if fmt is None or fmt not in FORMATS:
            continue
        docs.extend(normalized(t) for t in FORMATS[fmt].parse(path).threads)
    return docs
