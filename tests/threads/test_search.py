"""GET /api/threads/search: what it must find, how it ranks, what it never shows (API.md §6)."""

from __future__ import annotations

import secrets
from typing import Any

import httpx
import pytest

from loomsync.core.document.ids import ThreadId
from tests.conftest import TokenFactory


def word() -> str:
    """A unique, searchable, unstemmable word (letters only)."""
    return "zq" + "".join(secrets.choice("bcdfghjklmnpqrstvwxz") for _ in range(10))


def messages(*texts: str, role: str = "user") -> dict[str, Any]:
    return {"messages": [{"role": role, "content": t} for t in texts]}


async def put(client: httpx.AsyncClient, headers: dict[str, str], **fields: Any) -> str:
    tid = ThreadId.new()
    response = await client.put(f"/api/threads/{tid}", json={"id": tid, **fields}, headers=headers)
    assert response.status_code == 201, response.text
    return str(tid)


async def search(
    client: httpx.AsyncClient, headers: dict[str, str], q: str, **params: Any
) -> list[dict[str, Any]]:
    response = await client.get("/api/threads/search", params={"q": q, **params}, headers=headers)
    assert response.status_code == 200, response.text
    hits: list[dict[str, Any]] = response.json()["hits"]
    return hits


def ids(hits: list[dict[str, Any]]) -> list[str]:
    return [h["thread"]["id"] for h in hits]


@pytest.fixture
def me(auth: TokenFactory, new_user, new_org) -> dict[str, str]:
    return auth(new_user("searcher"), org=new_org("acme"))


async def test_word_in_last_message_of_3000_message_thread(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    needle = word()
    texts = [f"ordinary message number {i}" for i in range(2999)] + [f"the end holds {needle}"]
    tid = await put(client, me, conversation=messages(*texts))
    hits = await search(client, me, needle)
    assert ids(hits) == [tid]
    assert hits[0]["message_index"] == 2999
    assert f"<b>{needle}</b>" in hits[0]["snippet"]


async def test_word_in_tool_output_and_tool_arguments(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    output, argument = word(), word()
    conversation = {
        "messages": [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "c1",
                        "tool_name": "shell",
                        "arguments_json": {"cmd": f"grep {argument}"},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "c1",
                "tool_name": "shell",
                "content": f"stdout: {output} found",
            },
        ]
    }
    tid = await put(client, me, conversation=conversation)
    out_hits = await search(client, me, output)
    assert ids(out_hits) == [tid]
    assert out_hits[0]["message_index"] == 1
    assert ids(await search(client, me, argument)) == [tid]


async def test_english_stems_running_threads_finds_run_thread(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    marker = word()
    tid = await put(client, me, conversation=messages(f"{marker}: run thread"))
    assert tid in ids(await search(client, me, f"running threads {marker}"))


async def test_title_and_tags_are_found(client: httpx.AsyncClient, me: dict[str, str]) -> None:
    in_title, in_tag = word(), word()
    tid = await put(client, me, metadata={"title": f"About {in_title}", "tags": [in_tag]})
    assert ids(await search(client, me, in_title)) == [tid]
    assert ids(await search(client, me, in_tag)) == [tid]


@pytest.mark.parametrize("query", ["feature/{w}", "{w}"])
async def test_branch_by_whole_name_and_part_after_slash(
    client: httpx.AsyncClient, me: dict[str, str], query: str
) -> None:
    w = word()
    tid = await put(client, me, git_branch=f"feature/{w}")
    assert ids(await search(client, me, query.format(w=w))) == [tid]


@pytest.mark.parametrize(
    ("remote", "query"),
    [
        ("git@github.com:{o}/{r}.git", "github.com/{o}/{r}"),
        ("git@github.com:{o}/{r}.git", "{o}/{r}"),
        ("https://github.com/{o}/{r}.git", "https://github.com/{o}/{r}"),
        ("https://github.com/{o}/{r}", "{o}/{r}"),
        ("ssh://git@gitlab.example.com:2222/{o}/{r}.git", "gitlab.example.com/{o}/{r}"),
    ],
)
async def test_remote_by_url_and_slug(
    client: httpx.AsyncClient, me: dict[str, str], remote: str, query: str
) -> None:
    o, r = word(), word()
    tid = await put(client, me, git_remote_url=remote.format(o=o, r=r))
    assert ids(await search(client, me, query.format(o=o, r=r))) == [tid]


@pytest.mark.parametrize(
    "field", ["git_commits", "git_initial_commit_sha", "git_current_commit_sha"]
)
async def test_commit_by_hex_prefix_of_7_or_more(
    client: httpx.AsyncClient, me: dict[str, str], field: str
) -> None:
    sha = secrets.token_hex(20)
    value: Any = [sha] if field == "git_commits" else sha
    tid = await put(client, me, **{field: value})
    for length in (7, 12, 40):
        assert ids(await search(client, me, sha[:length])) == [tid]
    assert ids(await search(client, me, sha[:7].upper())) == [tid]
    wrong = sha[:6] + ("0" if sha[6] != "0" else "1")
    assert tid not in ids(await search(client, me, wrong))
    assert tid not in ids(await search(client, me, sha[:6]))  # 6 characters is not a SHA prefix


async def test_title_hits_rank_above_body_only_hits(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    """The same word once in a title, in a branch, in a user's message: weights order them
    (API.md section 6). Repeats in a message count (BM25, issue 14), so a message saying it
    many times may outrank a title that says it once."""
    w = word()
    body_only = await put(
        client,
        me,
        conversation=messages(f"about {w}", *["other words"] * 19),
        last_activity_at="2030-01-01T00:00:00Z",
    )
    in_title = await put(client, me, metadata={"title": w}, last_activity_at="2020-01-01T00:00:00Z")
    in_branch = await put(
        client, me, git_branch=f"fix/{w}", last_activity_at="2021-01-01T00:00:00Z"
    )
    ranked = ids(await search(client, me, w))
    assert ranked == [in_title, in_branch, body_only]


async def test_ties_are_newest_first(client: httpx.AsyncClient, me: dict[str, str]) -> None:
    w = word()
    older = await put(client, me, conversation=messages(w), last_activity_at="2025-01-01T00:00:00Z")
    newer = await put(client, me, conversation=messages(w), last_activity_at="2026-01-01T00:00:00Z")
    hits = await search(client, me, w)
    assert hits[0]["score"] == hits[1]["score"]
    assert ids(hits) == [newer, older]


async def test_huge_tool_output_never_fails_a_write(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    """Over a megabyte of distinct tokens: stored whole, read back exactly, the rest stays findable.
    Indexed: the first 100,000 and last 20,000 characters of each message (app/threads/indexing.py)."""
    title_word, other_word, head_word = word(), word(), word()
    noise = " ".join(secrets.token_hex(8) for _ in range(90_000))  # 1.5 MB of distinct hex tokens
    huge = f"{head_word} {noise}"
    conversation = {"messages": [
        {"role": "user", "content": f"please look at {other_word}"},
        {"role": "tool", "content": huge},
    ]}  # fmt: skip
    tid = await put(client, me, metadata={"title": title_word}, conversation=conversation)
    got = (await client.get(f"/api/threads/{tid}", headers=me)).json()
    assert got["conversation"]["messages"][1]["content"] == huge
    assert ids(await search(client, me, title_word)) == [tid]
    assert ids(await search(client, me, other_word)) == [tid]
    assert ids(await search(client, me, head_word)) == [tid]


@pytest.mark.parametrize(
    "query",
    [
        "the and of",
        "!!! ??? ...",
        "& | ! ( ) : * < > ' \\",
        "C++",
        '"unclosed quote',
        "a:*",
        "'",
        "<->",
        "\\x00",
        "x" * 1000,
    ],
)
@pytest.mark.parametrize("syntax", ["plain", "web"])
async def test_odd_queries_answer_200(
    client: httpx.AsyncClient, me: dict[str, str], query: str, syntax: str
) -> None:
    await search(client, me, query, syntax=syntax)


@pytest.mark.parametrize("query", ["", "   ", "\t\n"])
async def test_blank_q_is_400(client: httpx.AsyncClient, me: dict[str, str], query: str) -> None:
    response = await client.get("/api/threads/search", params={"q": query}, headers=me)
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_request"


async def test_missing_q_is_422_and_too_long_q_is_400(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    missing = await client.get("/api/threads/search", headers=me)
    assert missing.status_code == 422
    assert missing.json()["errors"][0]["loc"] == ["query", "q"]
    too_long = await client.get("/api/threads/search", params={"q": "x" * 1001}, headers=me)
    assert too_long.status_code == 400


async def test_web_syntax_phrases_negation_and_or(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    a, b, c = word(), word(), word()
    both = await put(client, me, conversation=messages(f"{a} {b}"))
    only_a = await put(client, me, conversation=messages(f"{a} then {c}"))
    assert ids(await search(client, me, f'"{a} {b}"', syntax="web")) == [both]
    assert ids(await search(client, me, f"{a} -{c}", syntax="web")) == [both]
    assert set(ids(await search(client, me, f"{b} or {c}", syntax="web"))) == {both, only_a}


async def test_snippets_escape_html_around_marks(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    w = word()
    await put(
        client,
        me,
        conversation=messages(f"<script>alert(1)</script> & {w} <img src=x>"),
        metadata={"title": f"<b>{w}</b>"},
    )
    hits = await search(client, me, w)
    snippet = hits[0]["snippet"]
    assert f"<b>{w}</b>" in snippet
    markup = snippet.replace("<b>", "").replace("</b>", "")
    assert "<" not in markup
    assert ">" not in markup
    assert "&lt;/script&gt;" in snippet
    assert "&amp;" in snippet


async def test_title_only_hit_snippet_comes_from_title(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    w = word()
    await put(client, me, metadata={"title": f"<i>notes</i> on {w}"})
    hit = (await search(client, me, w))[0]
    assert hit["message_index"] is None
    assert hit["snippet"].endswith(f"notes&lt;/i&gt; on <b>{w}</b>")


async def test_nul_and_surrogates_in_matching_message_do_not_break_snippets(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    w = word()
    body = '{"id": "%s", "conversation": {"messages": [{"role": "tool", "content": "a\\u0000b \\ud800 %s \\\\u0000"}]}}'
    tid = ThreadId.new()
    response = await client.put(
        f"/api/threads/{tid}",
        content=body % (tid, w),
        headers={**me, "content-type": "application/json"},
    )
    assert response.status_code == 201, response.text
    hit = (await search(client, me, w))[0]
    assert f"<b>{w}</b>" in hit["snippet"]


async def test_access_is_enforced_for_every_scope(
    client: httpx.AsyncClient, auth: TokenFactory, new_user, new_org
) -> None:
    w = word()
    org, other_org = new_org("acme"), new_org("other")
    me, colleague, stranger = (
        auth(new_user("me"), org=org),
        auth(new_user("colleague"), org=org),
        auth(new_user("x"), org=other_org),
    )
    mine = await put(client, me, visibility="private", conversation=messages(w))
    shared = await put(client, colleague, visibility="organization", conversation=messages(w))
    await put(client, colleague, visibility="private", conversation=messages(w))
    public = await put(client, stranger, visibility="public", conversation=messages(w))
    await put(client, stranger, visibility="organization", conversation=messages(w))
    deleted = await put(client, me, conversation=messages(w))
    await client.delete(f"/api/threads/{deleted}", headers=me)
    archived = await put(client, me, conversation=messages(w))
    await client.patch(f"/api/threads/{archived}", json={"archived": True}, headers=me)

    assert set(ids(await search(client, me, w))) == {mine}
    assert set(ids(await search(client, me, w, scope="visible"))) == {mine, shared, public}
    assert set(ids(await search(client, me, w, archived="true"))) == {archived}
    assert set(ids(await search(client, me, w, archived="any", scope="visible"))) == {
        mine,
        shared,
        public,
        archived,
    }
    for scope in ("visible", "mine"):  # public threads are read by id, not searched (API.md §1)
        anonymous = await client.get("/api/threads/search", params={"q": w, "scope": scope})
        assert anonymous.status_code == 401, anonymous.text


async def test_pagination_over_hits_neither_repeats_nor_skips(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    w = word()
    expected = set()
    for i in range(9):
        repeats = " ".join([w] * (1 + i % 3))  # three distinct scores, ties within each
        expected.add(
            await put(
                client,
                me,
                conversation=messages(repeats),
                last_activity_at=f"2026-01-0{1 + i % 4}T00:00:00Z",
            )
        )
    seen: list[str] = []
    cursor = None
    while True:
        params = {"q": w, "limit": 2, **({"cursor": cursor} if cursor else {})}
        page = (await client.get("/api/threads/search", params=params, headers=me)).json()
        seen += ids(page["hits"])
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert len(seen) == len(set(seen)) == 9
    assert set(seen) == expected
    whole = ids(await search(client, me, w, limit=100))
    assert seen == whole


async def test_workspace_filter(client: httpx.AsyncClient, me: dict[str, str]) -> None:
    w = word()
    inside = await put(client, me, workspace_root="/src/a", conversation=messages(w))
    await put(client, me, workspace_root="/src/b", conversation=messages(w))
    assert ids(await search(client, me, w, workspace="/src/a")) == [inside]


async def test_bad_cursor_is_400(client: httpx.AsyncClient, me: dict[str, str]) -> None:
    response = await client.get(
        "/api/threads/search", params={"q": "x", "cursor": "nope"}, headers=me
    )
    assert response.status_code == 400


async def test_common_word_strategy_ranks_recent_matching_threads(settings, auth, new_user) -> None:
    """With the "common word" threshold at 0 every query takes the bounded path (walk threads
    newest first, rank their messages); results, access rules and snippets stay the same."""
    from app.main import create_app

    app = create_app(settings.model_copy(update={"search_common_messages": 0}))
    me = auth(new_user("common"), org="acme")
    w = word()
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://t"
        ) as c:
            old = await put(
                c, me, conversation=messages(w), last_activity_at="2024-01-01T00:00:00Z"
            )
            new = await put(
                c, me, conversation=messages(f"{w} {w}"), last_activity_at="2025-01-01T00:00:00Z"
            )
            titled = await put(
                c, me, metadata={"title": w}, last_activity_at="2020-01-01T00:00:00Z"
            )
            hidden = await put(
                c, auth(new_user("other"), org="elsewhere"), conversation=messages(w)
            )
            hits = await search(c, me, w, scope="visible")
            assert ids(hits)[0] == titled
            assert set(ids(hits)) == {titled, new, old}
            assert hidden not in ids(hits)
            assert f"<b>{w}</b>" in hits[1]["snippet"]
    finally:
        await app.state.engine.dispose()


@pytest.mark.parametrize(
    ("stored", "query"),
    [
        ("ls -> {w}.config.cjs README.md", "{w}"),
        ("edited src/{w}/main.py", "{w}"),
        ("edited src/{w}/main.py", "src/{w}/main.py"),
        ("see https://{w}.example.com/docs", "{w}"),
        ("mail me at {w}@example.com", "{w}"),
        ("C:\\Users\\{w}\\file.txt", "{w}"),
    ],
)
async def test_parts_of_file_names_paths_and_urls_are_words(
    client: httpx.AsyncClient, me: dict[str, str], stored: str, query: str
) -> None:
    w = word()
    tid = await put(client, me, conversation=messages(stored.format(w=w), role="tool"))
    assert ids(await search(client, me, query.format(w=w))) == [tid]


async def test_words_after_escaped_line_breaks_in_json_tool_output(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    w = word()
    output = '{"output":"assets\\nbin\\n' + w + '.config.cjs\\n","metadata":{"exit_code":0}}'
    tid = await put(client, me, conversation=messages(output, role="tool"))
    assert ids(await search(client, me, w)) == [tid]
