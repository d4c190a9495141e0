"""Which text of a thread and of a message search indexes, and at which weight (issue 14).

The same fields, caps and weights on the server (``tsvector`` columns) and in the local
search, read from the JSON shape of API.md section 2 (plain dicts, as stored).

Message vectors (``thread_messages.search_vector``): the content of a ``user`` message is
weight ``A``, of an ``assistant`` message ``B``, of any other role (tool results, system
prompts) ``C``; tool names and tool-call arguments are ``D``. So the user's and the model's own
words rank above tool output (:mod:`loomsync.core.textsearch.scoring`). Thread vectors
(``threads.search_vector``): title and tags ``A``; branch, remote URL and its slug, workspace,
provider and model ``B``.

Caps, so that no field can push a ``tsvector`` past PostgreSQL's 1 MiB: a message contributes
its first :data:`MESSAGE_HEAD_CHARS` and last :data:`MESSAGE_TAIL_CHARS` characters and
:data:`TOOL_TEXT_CHARS` of tool-call text; a thread's title and tags, and its git metadata, at
most :data:`THREAD_TEXT_CHARS` each. Documents and messages are always stored whole.
"""

from __future__ import annotations

import re
from typing import Any

from loomsync.core.document import jsontext

MESSAGE_HEAD_CHARS = 100_000
MESSAGE_TAIL_CHARS = 20_000
TOOL_TEXT_CHARS = 20_000
THREAD_TEXT_CHARS = 100_000
#: Weight of a message's content by its role; other roles are ``C``, tool-call text ``D``.
ROLE_WEIGHTS = {"user": "A", "assistant": "B"}
OTHER_ROLE_WEIGHT = "C"
TOOL_WEIGHT = "D"

_SCP_REMOTE = re.compile(r"^[\w.-]+@([^:/]+):(.+)$")

Field = tuple[str, str]
"""Text to index and its weight (``A``-``D``)."""


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


def thread_fields(doc: dict[str, Any]) -> list[Field]:
    """The ``A`` field (title, tags) and ``B`` field (branches, remote URL and slug, workspace,
    provider, model) of a thread document (API.md section 2 shape; column fields included)."""
    metadata = doc.get("metadata") or {}
    title = metadata.get("title") or ""
    tags = " ".join(t for t in metadata.get("tags") or [] if isinstance(t, str))
    b_parts: list[str] = []
    for key in ("git_branch", "git_initial_branch"):
        branch = doc.get(key)
        if isinstance(branch, str) and branch:
            b_parts.append(branch)
    remote = doc.get("git_remote_url")
    if isinstance(remote, str) and remote:
        b_parts += [remote, remote_slug(remote)]
    for key in ("workspace_root", "provider", "model"):
        value = doc.get(key)
        if isinstance(value, str) and value:
            b_parts.append(value)
    a_text = cap(f"{title} {tags}" if tags else str(title), THREAD_TEXT_CHARS)
    return [(a_text, "A"), (cap(" ".join(b_parts), THREAD_TEXT_CHARS), "B")]


def tool_text(message: dict[str, Any]) -> str:
    """A message's tool name and its tool calls' names and arguments (JSON text), capped."""
    parts: list[str] = []
    name = message.get("tool_name")
    if isinstance(name, str):
        parts.append(name)
    for call in message.get("tool_calls") or []:
        if isinstance(call, dict):
            if isinstance(call.get("tool_name"), str):
                parts.append(call["tool_name"])
            args = call.get("arguments_json")
            parts.append(
                args if isinstance(args, str) else jsontext.dumps(args, separators=(", ", ": "))
            )
    return cap(" ".join(parts), TOOL_TEXT_CHARS)


def content_text(message: dict[str, Any]) -> str:
    """A message's content, capped (head and tail)."""
    content = message.get("content")
    return cap(content, MESSAGE_HEAD_CHARS, MESSAGE_TAIL_CHARS) if isinstance(content, str) else ""


def content_weight(role: object) -> str:
    """The weight of a message's content by its ``role`` (module docstring)."""
    return ROLE_WEIGHTS.get(role, OTHER_ROLE_WEIGHT) if isinstance(role, str) else OTHER_ROLE_WEIGHT


def message_fields(message: dict[str, Any]) -> list[Field]:
    """The content field (weight by role) and the tool-call field (``D``) of one message."""
    return [
        (content_text(message), content_weight(message.get("role"))),
        (tool_text(message), TOOL_WEIGHT),
    ]
