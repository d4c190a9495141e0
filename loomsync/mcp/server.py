"""``loomsync mcp``: a Model Context Protocol server over stdio (issue 17 item 3) with which
Claude Code, Codex and other MCP clients let their model recall the user's past sessions.

Three tools, built with the official SDK's :class:`~mcp.server.mcpserver.MCPServer` (their input
schemas come from the signatures below; arguments that do not fit, such as a missing query or
``limit=0``, are refused by the SDK as a tool error, and the server goes on answering):

- ``search_threads``: the search of ``loomsync search`` (the server's, merged with the threads
  only this machine holds: :mod:`loomsync.sync.onlinesearch`; this machine's index when there is
  no server, it cannot be reached, or it refuses the token, which the answer's ``note`` says);
- ``read_thread``: a range of a thread's messages as text within a character budget
  (:mod:`loomsync.mcp.text`); short ids resolve as the CLI's do (:mod:`loomsync.store.shortids`);
- ``list_threads``: this machine's threads, newest activity first.

Every call opens the store as the CLI does (the configuration, login and folders of
:func:`loomsync.http.connect.open_store`, so a ``loomsync login`` made meanwhile is used) and
closes it. What is returned is redacted with the store's :class:`~loomsync.store.redaction.Redaction`
as ``loomsync show`` and ``loomsync search`` print it (a server may hold a thread raw). An error of
the SDK becomes a tool error worded by :func:`loomsync.cli.messages.for_agent`.

Every answer is printable and bounded (issue 27 item 3): ``read_thread`` within its
``max_chars`` (:mod:`loomsync.mcp.text`); ``search_threads`` and ``list_threads`` with every
string field made printable and cut to its limit, and the whole answer within
:data:`~loomsync.mcp.bounds.ANSWER_BUDGET` characters (:mod:`loomsync.mcp.bounds`), their
``truncated`` note saying what was cut. A thread whose summary had to be changed to be shown
(a lone surrogate, issue 27 item 4) is listed, and named in ``warnings``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from loomsync.cli.messages import for_agent
from loomsync.core.textsearch.commits import NOTHING_TO_SEARCH, searchable
from loomsync.core.version import __version__
from loomsync.errors import LoomsyncError
from loomsync.http.connect import syncing_store
from loomsync.mcp import bounds, text
from loomsync.store import shortids, shown
from loomsync.store.summary import SearchHit, ThreadSummary, unencodable_warnings
from loomsync.terminal import printable

if TYPE_CHECKING:
    pass

INSTRUCTIONS = (
    "loomsync keeps the user's past coding-agent sessions (threads of messages: Codex, Claude "
    "Code, Gemini CLI, Aider, ...). Before redoing work, search_threads for what was tried "
    "before; read_thread the hits' messages around their message_index; list_threads shows "
    "the most recent sessions, optionally of one workspace or repository."
)


TRUNCATED = (
    "What was cut to keep the answer within its budget (fields cut, naming their threads; "
    "rows left out); None when nothing was."
)
WARNINGS = "Threads listed with what could be shown, each named with why (usually empty)."


class Hit(BaseModel):
    """One search hit (a thread), best first."""

    thread_id: str = Field(description="Pass it to read_thread.")
    title: str
    message_index: int | None = Field(
        description="The message that matched best (None: the title or git metadata matched)."
    )
    score: float = Field(description="Relevance; higher is better.")
    snippet: str = Field(description="The matching passage, matched words between « and ».")
    origin: Literal["server", "local"] | None = Field(
        description="server: found by the server; local: a thread only this machine holds."
    )
    workspace: str | None
    branch: str | None
    last_activity: str | None = Field(description="ISO 8601, UTC.")


class SearchAnswer(BaseModel):
    """What ``search_threads`` returns."""

    source: Literal["server", "local"] = Field(
        description="server: the server answered; local: this machine's copies were searched."
    )
    note: str | None = Field(
        description="Why this machine's copies were searched instead of the server, or why "
        "nothing was searched; None when the server answered."
    )
    hits: list[Hit]
    truncated: str | None = Field(description=TRUNCATED)
    warnings: list[str] = Field(description=WARNINGS)


class ThreadRow(BaseModel):
    """One thread of ``list_threads``."""

    thread_id: str
    title: str
    workspace: str | None
    branch: str | None
    repo: str | None = Field(description="The git remote URL.")
    last_activity: str | None = Field(description="ISO 8601, UTC.")
    message_count: int


class ThreadList(BaseModel):
    """What ``list_threads`` returns: threads, newest activity first."""

    threads: list[ThreadRow]
    more: bool = Field(description="True when more threads match than were listed.")
    truncated: str | None = Field(description=TRUNCATED)
    warnings: list[str] = Field(description=WARNINGS)


Query = Annotated[
    str,
    Field(
        min_length=1,
        max_length=1000,
        description='Words to find, e.g. "flaky test retry postgres". With syntax=web: '
        '"quoted phrases", -word to leave out, or.',
    ),
]
SearchLimit = Annotated[int, Field(ge=1, le=100, description="Most hits to return (1-100).")]
ListLimit = Annotated[int, Field(ge=1, le=200, description="Most threads to return (1-200).")]
Workspace = Annotated[
    str | None,
    Field(
        max_length=4096,
        description="Only threads of this workspace root (an absolute folder path, as the "
        "threads' workspace field shows).",
    ),
]
Scope = Annotated[
    Literal["mine", "visible"],
    Field(
        description="mine: the user's own threads; visible: also those others in the user's "
        "organization share (on the server only; this machine holds the user's own)."
    ),
]
ThreadRef = Annotated[
    str,
    Field(
        min_length=1,
        max_length=200,
        description="A thread id (T-…) as search_threads or list_threads give it, or its "
        "first 4+ hex digits.",
    ),
]
Index = Annotated[int, Field(ge=0, le=10_000_000)]


_store = syncing_store  # one tool call's store


def _iso(row: ThreadSummary) -> str | None:
    when = row.last_activity_at or row.created_at
    return when.isoformat().replace("+00:00", "Z") if when else None


def _hit(found: SearchHit, cuts: bounds.Cuts) -> Hit:
    row = found.thread
    tid = cuts.field("thread_id", row.id) or ""
    return Hit(
        thread_id=tid,
        title=cuts.field("title", row.title or "(untitled)", tid) or "",
        message_index=found.message_index,
        score=round(found.score, 4),
        snippet=cuts.field("snippet", text.plain_snippet(found.snippet or ""), tid) or "",
        origin=found.origin,
        workspace=cuts.field("workspace", row.workspace_root, tid),
        branch=cuts.field("branch", row.git_branch, tid),
        last_activity=_iso(row),
    )


def _warnings(cuts: bounds.Cuts, rows: Iterable[ThreadSummary]) -> list[str]:
    """The warnings naming the threads listed with what could be shown (issue 27 item 4)."""
    return [cuts.field("warning", line) or "" for line in unencodable_warnings(rows)]


def search_threads(
    query: Query,
    limit: SearchLimit = 10,
    scope: Scope = "mine",
    workspace: Workspace = None,
    syntax: Literal["plain", "web"] = "plain",
) -> SearchAnswer:
    """Search the user's past coding-agent sessions (threads) for words, best first: on the
    loomsync server when it is reachable (with the threads only this machine holds merged in),
    else on this machine's copies (then `note` says why). Each hit names the thread and the
    message that matched best: pass them to read_thread (e.g. from=message_index-2) to read
    what was said and done."""
    if not searchable(query, syntax):
        return SearchAnswer(
            source="local", note=NOTHING_TO_SEARCH, hits=[], truncated=None, warnings=[]
        )
    with _store() as store:
        found = store.search(query, limit=limit, syntax=syntax, scope=scope, workspace=workspace)
        found = shown.results(store.local.redaction, found)  # a server may hold them raw
    note = found.fallback_reason
    if found.skipped:
        note = "; ".join([*([note] if note else []), *found.skipped])
    cuts = bounds.Cuts()
    hits = [_hit(h, cuts) for h in found.hits]
    warnings = _warnings(cuts, (h.thread for h in found.hits))
    shown_note = cuts.field("note", note)

    def answer(kept: Sequence[Hit]) -> SearchAnswer:
        ids = {hit.thread_id for hit in kept}
        return SearchAnswer(
            source=found.source,
            note=shown_note,
            hits=list(kept),
            truncated=cuts.note(ids, len(hits) - len(kept)),
            warnings=[w for w in warnings if any(i in w for i in ids)],
        )

    return answer(hits[: bounds.fitted(hits, answer)])


def read_thread(
    ref: str, first: int = 0, last: int | None = None, max_chars: int = text.DEFAULT_BUDGET
) -> str:
    """Read messages ``first`` to ``last`` (inclusive) of a thread as text; registered with
    the argument names ``id``, ``from``, ``to`` and ``max_chars`` (:func:`_read_thread_tool`).

    Raises:
        ToolError: the id names no thread here or on the server (what to do instead), or
            ``to`` is before ``from``.
    """
    if last is not None and last < first:
        raise ToolError(f"to={last} is before from={first}: give to >= from, or leave it out.")
    with _store() as store:
        thread_id = shortids.resolve(store.local, ref)
        thread = store.local.redaction.thread(store.load(thread_id))  # older clients' files
    return text.page(thread, first, last, max_chars).text


_READ_DOC = (
    "Read a past session (thread) as text: its title and facts, then messages `from` to `to` "
    "(inclusive; 0 is the first message) with each one's role, its text and its tool calls "
    "summarised. The answer is at most max_chars characters: when messages are left out, it "
    "ends saying which and the read_thread call that reads on. Tool output is shortened."
)


def _read_thread_tool() -> Callable[..., str]:
    """``read_thread`` with the argument names of the issue (``from`` is a Python keyword):
    a function of keyword arguments whose signature the SDK reads declares them by alias."""

    def tool(**arguments: Any) -> str:
        return read_thread(
            arguments["id"], arguments["from"], arguments["to"], arguments["max_chars"]
        )

    budget = Field(
        ge=1000,
        le=text.MAX_BUDGET,
        description=f"Most characters to return ({1000}-{text.MAX_BUDGET}).",
    )
    params = [
        ("id", ThreadRef, inspect.Parameter.empty),
        ("from_", Annotated[Index, Field(alias="from", description="First message.")], 0),
        (
            "to",
            Annotated[Index | None, Field(description="Last message (None: to the end).")],
            None,
        ),
        ("max_chars", Annotated[int, budget], text.DEFAULT_BUDGET),
    ]
    kind = inspect.Parameter.KEYWORD_ONLY
    tool.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, kind, annotation=a, default=d) for n, a, d in params],
        return_annotation=str,
    )
    tool.__name__ = "read_thread"
    return tool


def _repo_key(url: str) -> str:
    return url.strip().lower().removesuffix("/").removesuffix(".git")


def list_threads(
    limit: ListLimit = 20,
    workspace: Workspace = None,
    repo: Annotated[
        str | None,
        Field(
            max_length=2048,
            description="Only threads of a git repository: its remote URL or a part of it, e.g. "
            '"github.com/acme/api" or "acme/api".',
        ),
    ] = None,
) -> ThreadList:
    """List the user's recent coding-agent sessions (threads) on this machine, newest activity
    first, with their id (for read_thread), title, workspace, git branch and remote, last
    activity and message count; optionally only those of one workspace or repository."""
    with _store() as store:
        rows = store.list(workspace=workspace, limit=None if repo else limit + 1)
        if repo:
            key = _repo_key(repo)
            rows = [r for r in rows if r.git_remote_url and key in _repo_key(r.git_remote_url)]
        rows = shown.summaries(store.local.redaction, rows[: limit + 1])
    cuts = bounds.Cuts()
    listed = [_row(row, cuts) for row in rows[:limit]]
    warnings = _warnings(cuts, rows[:limit])

    def answer(kept: Sequence[ThreadRow]) -> ThreadList:
        ids = {row.thread_id for row in kept}
        return ThreadList(
            threads=list(kept),
            more=len(rows) > len(kept),
            truncated=cuts.note(ids, len(listed) - len(kept)),
            warnings=[w for w in warnings if any(i in w for i in ids)],
        )

    return answer(listed[: bounds.fitted(listed, answer)])


def _row(row: ThreadSummary, cuts: bounds.Cuts) -> ThreadRow:
    tid = cuts.field("thread_id", row.id) or ""
    return ThreadRow(
        thread_id=tid,
        title=cuts.field("title", row.title or "(untitled)", tid) or "",
        workspace=cuts.field("workspace", row.workspace_root, tid),
        branch=cuts.field("branch", row.git_branch, tid),
        repo=cuts.field("repo", row.git_remote_url, tid),
        last_activity=_iso(row),
        message_count=row.message_count,
    )


def _guarded(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with the SDK's errors turned into tool errors a model can act on."""

    def call(**arguments: Any) -> Any:
        try:
            return fn(**arguments)
        except LoomsyncError as exc:
            raise ToolError(printable(for_agent(exc))) from exc
        except OSError as exc:
            raise ToolError(printable(for_agent(exc))) from exc

    call.__signature__ = inspect.signature(fn, eval_str=True)  # type: ignore[attr-defined]
    call.__name__ = fn.__name__
    call.__doc__ = fn.__doc__
    return call


def build() -> MCPServer[Any]:
    """The server with its three tools (nothing is opened until a tool is called)."""
    server: MCPServer[Any] = MCPServer(
        "loomsync", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
    )
    server.add_tool(
        _guarded(search_threads), description=inspect.cleandoc(search_threads.__doc__ or "")
    )
    read = _guarded(_read_thread_tool())
    server.add_tool(read, name="read_thread", description=_READ_DOC, structured_output=False)
    server.add_tool(
        _guarded(list_threads), description=inspect.cleandoc(list_threads.__doc__ or "")
    )
    return server


def serve() -> None:
    """Serve the tools over stdio until the client closes the connection."""
    build().run("stdio")


__all__ = [
    "INSTRUCTIONS",
    "Hit",
    "SearchAnswer",
    "ThreadList",
    "ThreadRow",
    "build",
    "list_threads",
    "read_thread",
    "search_threads",
    "serve",
]
