"""What text of a thread is indexed for full-text search, and at which weight.

Weights (``ts_rank`` over weighted vectors, API.md section 6): title and tags ``A``, git
metadata and workspace ``B``, message content ``C``, tool-call names and arguments ``D``.

Indexed text is cleaned of what PostgreSQL ``text`` cannot hold (NUL characters, lone
surrogates), has ``<``/``>`` blanked (see :func:`index_text`) and is capped: a message
contributes at most its first ``MESSAGE_HEAD_CHARS`` (100,000) and last ``MESSAGE_TAIL_CHARS``
(20,000) characters and 20,000 characters of tool-call text; a thread's title+tags and its git
metadata at most ``THREAD_TEXT_CHARS`` (100,000) each. So no single field can push a
``tsvector`` past PostgreSQL's 1 MiB limit. Documents and messages are always stored whole.
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import ColumnElement, func, literal_column

from loomsync import jsontext

TEXT_SEARCH_CONFIG = "english"
MESSAGE_HEAD_CHARS = 100_000
MESSAGE_TAIL_CHARS = 20_000
TOOL_TEXT_CHARS = 20_000
THREAD_TEXT_CHARS = 100_000

#: SQL for a message's vector from ``u.content_text`` and ``u.tool_text`` (weights C and D).
MESSAGE_VECTOR_SQL = (
    f"setweight(to_tsvector('{TEXT_SEARCH_CONFIG}'::regconfig, u.content_text), 'C')"
    f" || setweight(to_tsvector('{TEXT_SEARCH_CONFIG}'::regconfig, u.tool_text), 'D')"
)
#: SQL for a thread's vector from ``u.a_text`` (title, tags) and ``u.b_text`` (git metadata).
THREAD_VECTOR_SQL = (
    f"setweight(to_tsvector('{TEXT_SEARCH_CONFIG}'::regconfig, u.a_text), 'A')"
    f" || setweight(to_tsvector('{TEXT_SEARCH_CONFIG}'::regconfig, u.b_text), 'B')"
)

_SURROGATES = re.compile("[\ud800-\udfff]")
_SCP_REMOTE = re.compile(r"^[\w.-]+@([^:/]+):(.+)$")


def clean(text: str) -> str:
    """Return ``text`` without NUL characters and lone surrogates (each becomes a space)."""
    if "\x00" in text:
        text = text.replace("\x00", " ")
    return _SURROGATES.sub(" ", text)


# Tool outputs are often JSON text inside a string (Codex: {"output":"a\\nb"}): a literal
# backslash-n is a line break there, not the start of the word "nb".
_ESCAPED_WHITESPACE = re.compile(r"\\[nrt]")
_SEPARATORS = str.maketrans(dict.fromkeys("<>/\\.:@", " "))


def index_text(text: str) -> str:
    """Text as it is handed to ``to_tsvector`` (and every query to ``*_to_tsquery``):
    :func:`clean`, with ``< > / \\ . : @`` as spaces.

    PostgreSQL's parser reads ``<script>…</script>`` as tags and indexes nothing inside them,
    and reads ``README.md``, ``src/app/main.py`` or ``github.com/o/r`` as single file, host or
    URL tokens, so ``readme``, ``main`` or ``o/r`` would never match them. Blanking these
    separators in documents and queries alike makes every part a word of its own. Escaped
    line breaks and tabs (a literal backslash and ``n``, ``r`` or ``t``) count as spaces.
    """
    return _ESCAPED_WHITESPACE.sub(" ", clean(text)).translate(_SEPARATORS)


def cap(text: str, head: int, tail: int = 0) -> str:
    """The first ``head`` and last ``tail`` characters of ``text`` (all of it when short)."""
    if len(text) <= head + tail:
        return text
    return text[:head] + (" " + text[-tail:] if tail else "")


def remote_slug(url: str) -> str:
    """``host/owner/repo`` for a git remote URL (``git@github.com:o/r.git`` → ``github.com/o/r``)."""
    url = url.strip()
    scp = _SCP_REMOTE.match(url)
    if scp:
        host, path = scp.group(1), scp.group(2)
    else:
        without_scheme = re.sub(r"^[a-z+]+://", "", url)
        without_user = without_scheme.split("@", 1)[-1]
        host, _, path = without_user.partition("/")
        host = host.split(":", 1)[0]
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    return f"{host}/{path}" if path else host


def thread_texts(doc: dict[str, Any]) -> tuple[str, str]:
    """The ``A`` text (title, tags) and ``B`` text (branch, remote, workspace, model) of a document."""
    metadata = doc.get("metadata") or {}
    title = metadata.get("title") or ""
    tags = " ".join(t for t in metadata.get("tags") or [] if isinstance(t, str))
    b_parts: list[str] = []
    for key in ("git_branch", "git_initial_branch"):
        branch = doc.get(key)
        if isinstance(branch, str) and branch:
            b_parts += [branch, re.sub(r"[/_.-]+", " ", branch)]
    remote = doc.get("git_remote_url")
    if isinstance(remote, str) and remote:
        slug = remote_slug(remote)
        b_parts += [remote, slug, slug.split("/", 1)[-1], re.sub(r"[/.:_-]+", " ", slug)]
    for key in ("workspace_root", "provider", "model"):
        value = doc.get(key)
        if isinstance(value, str) and value:
            b_parts.append(value)
    a_text = cap(f"{title} {tags}", THREAD_TEXT_CHARS)
    b_text = cap(" ".join(b_parts), THREAD_TEXT_CHARS)
    return index_text(a_text), index_text(b_text)


def message_texts(message: dict[str, Any]) -> tuple[str, str]:
    """The ``C`` text (content) and ``D`` text (tool names and arguments) of one message."""
    content = message.get("content")
    content_text = (
        cap(content, MESSAGE_HEAD_CHARS, MESSAGE_TAIL_CHARS) if isinstance(content, str) else ""
    )
    tool_parts: list[str] = []
    name = message.get("tool_name")
    if isinstance(name, str):
        tool_parts.append(name)
    for call in message.get("tool_calls") or []:
        if isinstance(call, dict):
            if isinstance(call.get("tool_name"), str):
                tool_parts.append(call["tool_name"])
            args = call.get("arguments_json")
            tool_parts.append(
                args if isinstance(args, str) else jsontext.dumps(args, separators=(", ", ": "))
            )
    tool_text = cap(" ".join(tool_parts), TOOL_TEXT_CHARS)
    return index_text(content_text), index_text(tool_text)


def regconfig() -> ColumnElement[Any]:
    """The text search configuration as an SQL literal (``'english'::regconfig``)."""
    return literal_column(f"'{TEXT_SEARCH_CONFIG}'::regconfig")


def weighted(text_value: Any, weight: str) -> ColumnElement[Any]:
    """SQL ``setweight(to_tsvector('english', text), weight)``."""
    if weight not in ("A", "B", "C", "D"):
        raise ValueError(f"tsvector weights are A-D, not {weight!r}")
    return func.setweight(func.to_tsvector(regconfig(), text_value), literal_column(f"'{weight}'"))
