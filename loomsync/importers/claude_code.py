"""Claude Code transcripts: ``~/.claude/projects/<project>/<session id>.jsonl``, subagents in
``<session id>/subagents/agent-<id>.jsonl`` (older versions: ``agent-<id>.jsonl`` beside the
session, or sidechain lines inside the session file itself).

Lines carry ``uuid`` and ``parentUuid`` and form a tree. The conversation is the path from
the last message back to the root (across ``compact_boundary`` lines by ``logicalParentUuid``,
and across gaps left by lines missing from the file, to the line before), plus the parts of
the same turns that hang off it: the other lines of an assistant message on the path and the
tool results answering its tool calls. Branches abandoned by a rewind or a regenerated
answer are left out. What comes out, in file order:

- assistant lines sharing one ``message.id`` → one assistant message (text blocks as
  content, ``tool_use`` blocks as tool calls; ``thinking`` is not content), split where a
  tool result was written between two of its lines; its ``message.usage`` becomes the
  message's ``usage`` (:mod:`loomsync.importers.usage`, :func:`_note_usage`);
- user lines → a user message, or a system message for harness-injected text (``isMeta``,
  ``isCompactSummary``); their ``tool_result`` blocks → tool messages;
- ``summary`` lines → the title; ``progress``, ``system``, ``file-history-snapshot`` and
  ``queue-operation`` lines are not content.

A subagent file, and each sidechain inside a session file, becomes a thread of its own with
``metadata.extra.parent_thread_id`` set to the session's thread. A session started by
``claude --resume`` (a new file under a new session id that opens with a copy of the history
it continues, the copied lines keeping their ``uuid`` s) is its own thread with
``metadata.extra.resumed_from`` naming the thread it continues, holding only what is new in
its file: the copied history stays in the first thread alone, so search finds it once (issue
27, item 9; why linking rather than folding: :func:`_without_copied_history`; how the copy is
recognised: :mod:`loomsync.importers.claude_resumed`). When the original file is not beside
it, the resumed file keeps the whole history (it is the only copy).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from loomsync.core.document.ids import ThreadId
from loomsync.core.document.model import Message, Role, Thread, ToolCall
from loomsync.importers import claude_resumed
from loomsync.importers.common import (
    Importer,
    ImportResult,
    as_dict,
    as_list,
    as_str,
    blocks_text,
    build_thread,
    clip_title,
    find_files,
    first_objects,
    head,
    home,
    name_thread_id,
    parse_time,
    read_jsonl,
    session_thread_id,
)
from loomsync.importers.usage import note, usage
from loomsync.importers.usage import of as usage_of

NAME = "claude-code"

Entry = dict[str, Any]

_COMMAND = re.compile(r"<command-name>\s*(.*?)\s*</command-name>", re.DOTALL)
_ARGS = re.compile(r"<command-args>\s*(.*?)\s*</command-args>", re.DOTALL)
_CONVERSATION = ("user", "assistant")


def _is_tool_results(entry: Entry) -> bool:
    """True for a user line that only carries tool results."""
    blocks = as_list(as_dict(entry.get("message")).get("content"))
    return bool(blocks) and all(as_dict(b).get("type") == "tool_result" for b in blocks)


def _message_id(entry: Entry) -> str:
    return as_str(as_dict(entry.get("message")).get("id")) or str(entry["uuid"])


def select(entries: list[Entry]) -> list[Entry]:
    """The lines of the conversation that ends with the last message line, in file order.

    ``entries`` are the lines with a ``uuid`` of one conversation (main or one sidechain), in
    file order. See the module docstring for which branches are kept.
    """
    conversation = [e for e in entries if e.get("type") in _CONVERSATION]
    if not conversation:
        return []
    by_uuid = {e["uuid"]: e for e in entries}
    position = {e["uuid"]: i for i, e in enumerate(entries)}
    chain: set[str] = set()
    current: str | None = conversation[-1]["uuid"]
    while current is not None and current not in chain:
        chain.add(current)
        entry = by_uuid[current]
        parent = as_str(entry.get("parentUuid")) or as_str(entry.get("logicalParentUuid"))
        if parent is None or parent not in by_uuid:
            index = position[current]
            parent = entries[index - 1]["uuid"] if index > 0 else None
        current = parent
    message_ids = {_message_id(by_uuid[u]) for u in chain if by_uuid[u].get("type") == "assistant"}
    kept = set(chain)
    for entry in entries:
        if entry["uuid"] in kept or as_str(entry.get("parentUuid")) not in kept:
            continue
        kind = entry.get("type")
        if (
            (kind == "assistant" and _message_id(entry) in message_ids)
            or (kind == "user" and _is_tool_results(entry))
            or kind not in _CONVERSATION
        ):
            kept.add(entry["uuid"])
    return [e for e in entries if e["uuid"] in kept]


def to_messages(entries: Iterable[Entry]) -> list[Message]:
    """Messages for selected lines (see the module docstring), in order.

    Assistant lines of one ``message.id`` are merged while nothing else was written between
    them; when a tool result arrives between two lines of the same response (Claude Code
    2.1 streams them that way), the rest of the response starts a new assistant message, so
    a message never changes once a later one exists (a growing file extends the import).
    """
    messages: list[Message] = []
    current: tuple[str, Message, list[str]] | None = None  # the open assistant message
    tool_names: dict[str, str] = {}
    parts: dict[str, list[Message]] = {}  # per response id, its messages (usage counted once)
    for entry in entries:
        kind, body = entry.get("type"), as_dict(entry.get("message"))
        if kind == "assistant":
            key = _message_id(entry)
            if current is None or current[0] != key:
                time = parse_time(entry.get("timestamp"))
                current = (key, Message(role="assistant", content="", created_at=time), [])
                messages.append(current[1])
            _, message, texts = current
            _note_usage(message, key, body, parts)
            content = body.get("content")
            for block in [content] if isinstance(content, str) else as_list(content):
                block = (
                    {"type": "text", "text": block} if isinstance(block, str) else as_dict(block)
                )
                text = block.get("text")
                if block.get("type") == "text" and isinstance(text, str) and text.strip():
                    texts.append(text.strip())
                elif block.get("type") == "tool_use":
                    call_id, name = as_str(block.get("id")), as_str(block.get("name"))
                    if call_id and name:
                        tool_names[call_id] = name
                    call = ToolCall(id=call_id, tool_name=name, arguments_json=block.get("input"))
                    message.tool_calls = [*(message.tool_calls or []), call]
            message.content = "\n\n".join(texts)
        elif kind == "user":
            added = _user_messages(entry, body, tool_names)
            messages.extend(added)
            current = None if added else current
    return messages


def _note_usage(
    message: Message, key: str, body: dict[str, Any], parts: dict[str, list[Message]]
) -> None:
    """Set ``message.usage`` (:mod:`loomsync.importers.usage`) from an assistant line's
    ``message.usage`` (the Anthropic API's ``input_tokens``, ``cache_read_input_tokens``,
    ``cache_creation_input_tokens``, ``output_tokens``) and ``message.model``.

    Every line of one response repeats it, ``output_tokens`` growing to the final count on the
    last line, so a later line of the open message replaces it. A response split in two
    messages by a tool result (``parts``: the messages of each response id so far) is
    counted once: its first message carries the input and cache counts and the output so
    far; a later one only the rest of the output. No earlier message changes."""
    raw = as_dict(body.get("usage"))
    model = as_str(body.get("model"))
    model = model if model and not model.startswith("<") else None
    seen = parts.setdefault(key, [])
    if not any(part is message for part in seen):
        seen.append(message)
    earlier = [usage_of(part) or {} for part in seen[:-1]]
    if not earlier:
        found = usage(
            input_tokens=raw.get("input_tokens"),
            output_tokens=raw.get("output_tokens"),
            cache_read_tokens=raw.get("cache_read_input_tokens"),
            cache_write_tokens=raw.get("cache_creation_input_tokens"),
            model=model,
            provider="anthropic",
        )
    else:
        before = sum(part.get("output_tokens", 0) for part in earlier)
        output = raw.get("output_tokens")
        rest = output - before if isinstance(output, int) and output >= before else None
        found = usage(output_tokens=rest, model=model, provider="anthropic")
    note(message, found)


def _user_messages(entry: Entry, body: dict[str, Any], tool_names: dict[str, str]) -> list[Message]:
    time = parse_time(entry.get("timestamp"))
    role: Role = "system" if entry.get("isMeta") or entry.get("isCompactSummary") else "user"
    content = body.get("content")
    if isinstance(content, str):
        return [Message(role=role, content=content, created_at=time)]
    out: list[Message] = []
    texts: list[Any] = []
    for block in as_list(content):
        block = as_dict(block)
        if block.get("type") == "tool_result":
            call_id = as_str(block.get("tool_use_id"))
            text = blocks_text(block.get("content"), image="[image]")
            name = tool_names.get(call_id) if call_id else None
            out.append(
                Message(
                    role="tool", content=text, tool_call_id=call_id, tool_name=name, created_at=time
                )
            )
        else:
            texts.append(block)
    if texts:
        out.append(Message(role=role, content=blocks_text(texts, image="[image]"), created_at=time))
    return out


def _title(messages: list[Message]) -> str | None:
    """The first user message that is the user's own words, else the first slash command."""
    users = [m.content for m in messages if m.role == "user"]
    for text in users:
        stripped = text.strip()
        if stripped and not stripped.startswith(("<", "[Request interrupted")):
            return clip_title(stripped)
    for text in users:
        if command := _COMMAND.search(text):
            args = _ARGS.search(text)
            return clip_title(f"{command.group(1)} {args.group(1) if args else ''}")
    return None


def _last(entries: list[Entry], key: str) -> str | None:
    return next((v for e in reversed(entries) if (v := as_str(e.get(key)))), None)


def _first(entries: list[Entry], key: str) -> str | None:
    return next((v for e in entries if (v := as_str(e.get(key)))), None)


def _thread(
    path: Path,
    entries: list[Entry],
    thread_id: ThreadId,
    title: str | None,
    extra: dict[str, Any],
) -> Thread | None:
    selected = select(entries)
    messages = to_messages(selected)
    if not messages:
        return None
    models = [
        model
        for e in selected
        if e.get("type") == "assistant"
        and (model := as_str(as_dict(e.get("message")).get("model")))
        and not model.startswith("<")
    ]
    times = [
        time
        for e in selected
        if e.get("type") in _CONVERSATION and (time := parse_time(e.get("timestamp")))
    ]
    return build_thread(
        thread_id,
        messages,
        source={
            "agent": "claude-code",
            "version": _last(selected, "version"),
            "file": path.name,
            "session_id": _last(selected, "sessionId"),
            "agent_id": _first(selected, "agentId"),
        },
        title=title or _title(messages),
        created_at=times[0] if times else None,
        last_activity_at=times[-1] if times else None,
        extra=extra,
        workspace_root=_first(selected, "cwd"),
        cwd=_last(selected, "cwd"),
        git_branch=_last(selected, "gitBranch"),
        git_initial_branch=_first(selected, "gitBranch"),
        provider="anthropic",
        model=models[-1] if models else None,
    )


def _sidechains(entries: list[Entry]) -> dict[str, list[Entry]]:
    """Sidechain lines grouped by the uuid of their root line, in order of appearance."""
    by_uuid = {e["uuid"]: e for e in entries}
    roots: dict[str, str] = {}

    def root_of(uuid: str) -> str:
        """The first line of the chain ``uuid`` belongs to (memoised; cycles stop)."""
        trail: list[str] = []
        while uuid not in roots:
            trail.append(uuid)
            parent = as_str(by_uuid[uuid].get("parentUuid"))
            if parent is None or parent not in by_uuid or parent in trail:
                roots[uuid] = uuid
                break
            uuid = parent
        for step in trail:
            roots[step] = roots[uuid]
        return roots[uuid]

    groups: dict[str, list[Entry]] = {}
    for entry in entries:
        groups.setdefault(root_of(entry["uuid"]), []).append(entry)
    return groups


def _session_of(entries: list[Entry], fallback: str) -> tuple[str, str | None]:
    """``(session id, id of the session it resumes or None)`` of a transcript.

    ``claude --resume`` starts a new session whose file begins with a copy of the history it
    continues, the copied lines keeping the old ``sessionId`` (issue 15, item 5): such a file
    is the session of its file name (a UUID among its ids), else of its last ``sessionId``,
    and it resumes the first one. A file with one ``sessionId`` is that session."""
    ids = list(dict.fromkeys(v for e in entries if (v := as_str(e.get("sessionId")))))
    if not ids:
        return fallback, None
    own = fallback if fallback in ids else ids[-1]
    return own, (ids[0] if ids[0] != own else None)


def _without_copied_history(
    path: Path, entries: list[Entry], resumed_from: str | None
) -> tuple[list[Entry], str | None, bool]:
    """``(entries, resumed session id, trimmed)`` of a transcript once the history a
    resumed session copied from a sibling file is left out (issue 27, item 9; how Claude Code
    writes the copy and how it is found: :mod:`loomsync.importers.claude_resumed`).

    The resumed thread keeps only what is new in its file and links to the thread it
    continues, rather than being folded into that thread: the first thread stays what its own
    file says (a re-import of either file, in any order, on any machine, gives the same two
    documents; nothing is appended to a thread from a file that is not its own, which the
    append-only sync and the watch rely on), and search finds each message once. When the
    sibling is gone the file is the only copy of the history and keeps it all. ``trimmed`` is
    True when copied lines were left out (a file holding only the copy so far then gives no
    thread, and no "no conversation" warning: the new turn is still to come)."""
    resumed = claude_resumed.find(path, entries, lambda lines, stem: _session_of(lines, stem)[0])
    if resumed is None:
        return entries, resumed_from, False
    original, _ = _session_of(resumed.records, resumed.path.stem)
    kept = [e for e in entries if e["uuid"] not in resumed.copied]
    return kept, original, True


def parse(path: Path) -> ImportResult:
    """Read one transcript: the session thread plus one thread per sidechain in it, or one
    subagent thread for an ``agent-*.jsonl`` file. Damaged lines are skipped and counted; an
    unreadable file gives a warning and no thread."""
    result = ImportResult()
    records = read_jsonl(path, result)
    if records is not None:
        from_records(path, records, result)
    return result


def from_records(path: Path, records: list[dict[str, Any]], result: ImportResult) -> None:
    """:func:`parse` of the records of ``path`` already read (``loomsync watch`` keeps a
    growing transcript's records and adds the new lines): threads and warnings go to
    ``result``."""
    entries: list[Entry] = []
    summaries: list[tuple[str, str | None]] = []
    seen: set[str] = set()
    for record in records:
        kind, uuid = record.get("type"), as_str(record.get("uuid"))
        if kind == "summary" and isinstance(record.get("summary"), str):
            summaries.append((record["summary"], as_str(record.get("leafUuid"))))
        elif kind in _CONVERSATION and not isinstance(record.get("message"), dict):
            result.skipped["bad_record"] += 1
        elif uuid in seen:
            result.skipped["duplicate_uuid"] += 1
        elif isinstance(kind, str) and uuid:
            seen.add(uuid)
            entries.append(record)
    folder = path.parent.parent.name if path.parent.name == "subagents" else None
    session_id, resumed_from = _session_of(entries, folder or path.stem)
    entries, resumed_from, trimmed = _without_copied_history(path, entries, resumed_from)
    conversation = [e for e in entries if e.get("type") in _CONVERSATION]
    if trimmed:  # the copied summary titles the thread it copied, not this one
        summaries = [s for s in summaries if s[1] in {e["uuid"] for e in entries}]
    session = session_thread_id(NAME, session_id)
    threads: list[Thread | None] = []
    if path.name.startswith("agent-") or (
        not trimmed and conversation and all(e.get("isSidechain") for e in conversation)
    ):
        agent_id = _first(entries, "agentId") or path.stem.removeprefix("agent-")
        thread_id = name_thread_id(NAME, "subagent", session_id, agent_id)
        threads.append(_thread(path, entries, thread_id, None, {"parent_thread_id": session}))
    else:
        main = [e for e in entries if not e.get("isSidechain")]
        uuids = {e["uuid"] for e in main}
        leaf_titles = [s for s, leaf in summaries if leaf in uuids]
        title = leaf_titles[-1] if leaf_titles else (summaries[0][0] if summaries else None)
        link = {"resumed_from": session_thread_id(NAME, resumed_from)} if resumed_from else {}
        threads.append(_thread(path, main, session, clip_title(title), link))
        sidechains = _sidechains([e for e in entries if e.get("isSidechain")])
        for root, group in sidechains.items():
            # a sidechain copied into a resumed session keeps the sessionId it ran in: it is
            # the thread the original session's file gives, not a second copy (issue 15, item 5)
            own = _first(group, "sessionId") or session_id
            thread_id = name_thread_id(NAME, "sidechain", own, root)
            parent = session_thread_id(NAME, own)
            threads.append(_thread(path, group, thread_id, None, {"parent_thread_id": parent}))
    found = [t for t in threads if t is not None]
    result.threads.extend(found)
    if not found and not (trimmed and not conversation):
        result.warnings.append(f"{path}: no Claude Code conversation in this file")


def _looks_like_a_line(record: dict[str, Any]) -> bool:
    """A Claude Code line; not a Qwen Code one, whose lines carry the same ``parentUuid`` and
    ``sessionId`` around a Gemini-style ``message.parts`` or a ``systemPayload``."""
    if "parts" in as_dict(record.get("message")) or "systemPayload" in record:
        return False
    return ("parentUuid" in record and "sessionId" in record) or (
        record.get("type") == "summary" and "leafUuid" in record
    )


def detect(path: Path) -> bool:
    """A ``.jsonl`` file whose first lines are Claude Code transcript lines (a line too long
    to parse from the first bytes is judged by the keys it starts with)."""
    if path.suffix != ".jsonl":
        return False
    records = first_objects(path)
    if records:
        return any(_looks_like_a_line(r) for r in records)
    first = head(path).split(b"\n", 1)[0]
    return b'"parentUuid"' in first and b'"sessionId"' in first and b'"parts":[' not in first


def discover(path: Path) -> list[Path]:
    """Transcripts under ``path`` (sessions and their subagent files), or the file itself."""
    return find_files(path, ["*.jsonl"], detect)


def default_paths() -> list[Path]:
    """``~/.claude/projects`` and, when set, ``$CLAUDE_CONFIG_DIR/projects``."""
    paths = [home() / ".claude" / "projects"]
    if config := os.environ.get("CLAUDE_CONFIG_DIR"):
        paths.append(Path(config).expanduser() / "projects")
    return paths


IMPORTER = Importer(
    name=NAME,
    default_paths=default_paths,
    detect=detect,
    discover=discover,
    parse=parse,
    from_records=from_records,
    agent="Claude Code",
    what="transcript",
    expects="expected JSON Lines with parentUuid and sessionId in each record, in a .jsonl file",
    order=20,
    suffixes=(".jsonl",),
    live="append",
    watch_by_default=True,
    records=("messages", "tool calls", "usage", "git", "subagents", "lineage"),
)
