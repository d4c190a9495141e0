"""What the analyzer writes, PostgreSQL reads as meant (issue 14): every ``tsvector`` input text
and every query's ``tsquery`` text is accepted, lexemes come back unchanged, and a text holding
a query matches it (phrases, joined identifiers and bigrams line up on both sides)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import asyncpg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loomsync.core.textsearch.analyzer import tokens
from loomsync.core.textsearch.normalize import normalize
from loomsync.core.textsearch.query import PLAIN, WEB, parse
from loomsync.core.textsearch.vectors import tsvector
from tests.database import _asyncpg_dsn

#: Text like what agents write: identifiers, paths, CJK, marks, invisible characters, operators.
PIECES = st.sampled_from(
    [
        "exportEnvVars", "missing_colon.py", "HTTPServer", "the", "a-b", "__init__", "分析",
        "最新の状態", "图片或者pdf", "caf\u00e9", "cafe\u0301", "pass\u00adword", "0.0.0.0",
        "x'y", "'", ":*", "&", "|", "!", "<->", "(", ")", "\\", '"', "-", "or", "OR", "run",
        "running", "\ufb01le", "\uff54\uff45\uff53\uff54", "\u200b", "\x00", "日", "字", "e999", "SyntaxError:",
    ]
)  # fmt: skip
TEXTS = st.lists(st.one_of(PIECES, st.text(max_size=12)), max_size=12).map(" ".join)


class Db:
    """A connection of its own, driven from synchronous hypothesis tests."""

    def __init__(self, dsn: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.conn: asyncpg.Connection = self.loop.run_until_complete(asyncpg.connect(dsn))

    def value(self, sql: str, *args: object) -> object:
        return self.loop.run_until_complete(self.conn.fetchval(sql, *args))

    def close(self) -> None:
        self.loop.run_until_complete(self.conn.close())
        self.loop.close()


@pytest.fixture(scope="module")
def db(pg_server: str) -> Iterator[Db]:
    connection = Db(_asyncpg_dsn(pg_server))
    yield connection
    connection.close()


@given(TEXTS)
@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_postgres_reads_every_vector_with_the_lexemes_and_positions_written(
    db: Db, text: str
) -> None:
    vector = tsvector([(text, "A"), (text, "D")])
    stored = db.value("SELECT CAST(CAST($1 AS tsvector) AS text)", vector)
    assert stored == db.value("SELECT CAST(CAST($1 AS tsvector) AS text)", stored)
    expected = sorted({t.lexeme for t in tokens(normalize(text))})
    assert sorted(db.value("SELECT tsvector_to_array(CAST($1 AS tsvector))", vector)) == expected


@given(TEXTS, st.sampled_from([PLAIN, WEB]))
@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_every_query_is_a_valid_tsquery_that_its_own_text_matches(
    db: Db, text: str, syntax: str
) -> None:
    query = parse(text, syntax)
    if not query.searchable:
        return
    vector = tsvector([(text, "B")])
    for unit in query.units:
        assert db.value(
            "SELECT CAST($1 AS tsvector) @@ CAST($2 AS tsquery)", vector, unit.tsquery()
        )
    assert db.value(
        "SELECT CAST($1 AS tsvector) @@ CAST($2 AS tsquery)", vector, query.every_tsquery()
    )
    for group in query.groups:
        db.value("SELECT CAST($1 AS tsquery)", " | ".join(u.tsquery() for u in group))
    for unit in (*query.excluded, *filter(None, [query.phrase])):
        db.value("SELECT CAST($1 AS tsquery)", unit.tsquery())
        db.value("SELECT CAST($1 AS tsquery)", unit.rank_tsquery())


@pytest.mark.parametrize(
    ("document", "q", "found"),
    [
        ("see messages_unique_session_uuid_index here", "messages_unique_session_uuid_index", True),
        ("index uuid session unique messages", "messages_unique_session_uuid_index", False),
        ("the missing_colon.py file", "missingColon", True),
        ("the missingcolon file", "missingColon", True),
        ("call exportEnvVars()", "export env vars", True),
        ("JavaScript and TypeScript", "javascript", True),
        ("最新の状態にアップデートしました", "状態にアップ", True),
        ("最新の状態にアップデートしました", "ア", True),
        ("最新の状態にアップデートしました", "状アップ", False),
        ("serving on 0.0.0.0 port 8000", "0.0.0.0", True),
        ("the caf\u00e9 menu", "cafe\u0301", True),
        ("the value is valid here", "is_valid", False),  # an identifier is not a bare word
        ("if is_valid(x)", "is_valid", True),
        ("ข้อความภาษาไทยไม่มีช่องว่าง", "ไม่มีช่อง", True),  # Thai: no spaces either
        ("-".join(["x"] * 40), "-".join(["x"] * 40), True),  # past the budget: a prefix phrase
        ("_".join("abcdefghijklmnopqrstuvw"), "_".join("abcdefghijklmnopqrstuvw"), True),
    ],
)
def test_phrases_identifiers_and_substrings(db: Db, document: str, q: str, found: bool) -> None:
    query = parse(q)
    matched = db.value(
        "SELECT CAST($1 AS tsvector) @@ CAST($2 AS tsquery)",
        tsvector([(document, "A")]),
        query.every_tsquery(),
    )
    assert matched is found
