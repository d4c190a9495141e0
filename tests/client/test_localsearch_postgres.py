"""The local index matches a query unit exactly where PostgreSQL's ``@@`` does, and its term
frequency of one word is PostgreSQL's ``ts_rank`` (issue 14 item 3: same semantics as the
server). Every case is checked against a real PostgreSQL, on the vectors the server stores."""

from __future__ import annotations

import asyncpg
import pytest

from loomsync.core.textsearch.commits import with_hex_prefix
from loomsync.core.textsearch.fields import Field
from loomsync.core.textsearch.query import Unit, parse
from loomsync.core.textsearch.scoring import (
    MESSAGE_WEIGHTS,
    rank_order,
    round_score,
    unit_tf,
    weights_sql,
)
from loomsync.core.textsearch.vectors import tsvector
from loomsync.store.localsearch.vectors import (
    Vector,
    entries,
    match,
    pack,
    term_frequency,
    unpack,
    weights_of,
)
from tests.database import _asyncpg_dsn

TEXTS: list[list[Field]] = [
    [("The missing_colon.py script failed: missing colon on line 3", "A")],
    [("missingColon.py and missingcolon.py and missing colon.py", "B")],
    [("missingcolon.py", "A")],
    [("colon missing; missingcolon.py", "A")],  # the parts are there, not as a phrase
    [("missingcolon.py then missing_colon later", "A")],
    [("lead_memor_v2.txt", "C"), ("leadmemorv2.txt and leadmemorv2 txt", "D")],
    [("export env vars.sh; exportenvvars.sh", "A")],
    [("vars env export: exportenvvars.sh", "B")],
    [("exportEnvVars(env) calls export_env_vars; export env vars", "A"), ("exportEnvVars", "D")],
    [("Serving HTTP on 0.0.0.0 port 8000 (http://0.0.0.0:8000/)", "C")],
    [("messages_unique_session_uuid_index already exists", "A")],
    [("the index of messages, unique per session uuid", "B")],
    [("技術スタックの選定と最新の状態にアップデート", "A"), ("スタック", "D")],
    [("图片或者pdf 特有参数 参数", "B")],
    [("servers serving served server " * 40, "A")],  # many positions
    [("word " * 20_000 + "tail end", "C")],  # positions past 16383 are clamped
    [("JavaScript and Java Script", "A"), ("javascript", "D")],
    [("HTTPServer http server HTTP-Server", "B"), ("a b c", "A")],
    [("", "A"), ("only tool text here: grep -rn foo_bar src/", "D")],
]
QUERIES = [
    "missing_colon.py",
    "missingColon.py",
    "missingcolon.py",
    "missing colon",
    "missingColon",
    "lead_memor_v2.txt",
    "leadMemorV2.txt",
    "exportEnvVars.sh",
    "export_env_vars.sh",
    "exportEnvVars",
    "export_env_vars env",
    "0.0.0.0",
    "http://0.0.0.0:8000",
    "messages_unique_session_uuid_index",
    "session uuid",
    "技術",
    "スタック",
    "最新の状態",
    "術",
    "参数",
    "图片或者pdf",
    "servers",
    "server serving",
    "tail end",
    "word tail",
    "javascript",
    "Java-Script",
    "HTTPServer",
    "http-server",
    "foo_bar",
    "src/",
    # plain queries of several units: their phrase bonus (Query.phrase) is a unit too
    "missingColon py script",
    "the missing_colon.py script failed",
    "exportEnvVars calls export_env_vars",
    "HTTPServer http server",
    '"missing colon" on line',
    "最新の 状態",
    "grep -rn foo_bar src/",
]


def _lookup(vector: Vector):  # type: ignore[no-untyped-def]
    def lookup(lexeme: str) -> dict[int, int]:
        if not lexeme.endswith("*"):
            return vector.get(lexeme, {})
        merged: dict[int, int] = {}
        for key, found in vector.items():
            if key.startswith(lexeme[:-1]):
                for position, code in found.items():
                    merged[position] = max(code, merged.get(position, -1))
        return merged

    return lookup


def _scored(q: str) -> list[Unit]:
    """The units a plain query scores: its units and its phrase bonus."""
    query = parse(q)
    return [*query.units, *([query.phrase] if query.phrase else [])]


def _cases() -> list[tuple[list[Field], Unit]]:
    units = {unit for q in QUERIES for unit in _scored(q)}
    return [(fields, unit) for fields in TEXTS for unit in sorted(units, key=repr)]


@pytest.fixture(scope="module")
async def postgres(pg_server: str):  # type: ignore[no-untyped-def]
    connection = await asyncpg.connect(_asyncpg_dsn(pg_server))
    yield connection
    await connection.close()


async def test_units_match_where_postgresql_matches(postgres: asyncpg.Connection) -> None:
    cases = _cases()
    rows = await postgres.fetch(
        "SELECT CAST(v AS tsvector) @@ CAST(q AS tsquery) AS hit FROM unnest($1::text[], "
        "$2::text[]) WITH ORDINALITY AS c(v, q, n) ORDER BY n",
        [tsvector(fields) for fields, _ in cases],
        [unit.tsquery() for _, unit in cases],
    )
    mismatches = [
        (fields[0][0][:40], unit.tsquery(), row["hit"])
        for (fields, unit), row in zip(cases, rows, strict=True)
        if bool(match(unit, _lookup(entries(fields)))) != row["hit"]
    ]
    assert mismatches == []
    assert sum(row["hit"] for row in rows) > len(TEXTS)  # the cases do match, often


async def test_one_word_term_frequency_is_ts_rank(postgres: asyncpg.Connection) -> None:
    cases = [(f, u) for f, u in _cases() if not u.is_phrase and "*" not in u.tsquery()]
    rows = await postgres.fetch(
        f"SELECT ts_rank({weights_sql(MESSAGE_WEIGHTS)}, CAST(v AS tsvector), CAST(q AS tsquery))"
        " AS rank, CAST(v AS tsvector) @@ CAST(q AS tsquery) AS hit FROM unnest($1::text[], "
        "$2::text[]) WITH ORDINALITY AS c(v, q, n) ORDER BY n",
        [tsvector(fields) for fields, _ in cases],
        [unit.tsquery() for _, unit in cases],
    )
    checked = 0
    for (fields, unit), row in zip(cases, rows, strict=True):
        if not row["hit"]:
            continue
        ours = term_frequency(match(unit, _lookup(entries(fields))), MESSAGE_WEIGHTS)
        assert ours == pytest.approx(row["rank"], rel=1e-5), (fields[0][0][:40], unit.tsquery())
        checked += 1
    assert checked >= 15


def _tf(fields: list[Field], unit: Unit) -> float:
    """The local search's ``tf`` of ``unit`` in the vector of ``fields`` by its rule
    (``_Postings.tf``): per lexeme in :func:`rank_order`, the packed entries a posting holds
    (a prefix: every lexeme it starts, in byte order), :func:`unit_tf` of their weights."""
    vector = entries(fields)
    items = []
    for lexeme in rank_order(unit.lexemes):
        if lexeme.endswith("*"):
            found = [vector[k] for k in sorted(vector, key=str.encode) if k.startswith(lexeme[:-1])]
        else:
            found = [vector[lexeme]] if lexeme in vector else []
        items.append([weights_of(unpack(pack(o)), MESSAGE_WEIGHTS) for o in found])
    return unit_tf(items)


async def test_unit_term_frequency_is_the_servers_for_phrases_and_prefixes(
    postgres: asyncpg.Connection,
) -> None:
    """Multi-lexeme units (identifiers, phrases, CJK bigrams) and prefixes (a lone CJK character,
    a hex word searched as ``'26a7a89b':*``): the local ``tf`` is, to the bit, the float4 that
    the server's ``ts_rank`` over :meth:`Unit.rank_tsquery` returns."""
    units = [u for _, u in _cases()] + [
        with_hex_prefix(parse("26a7a89b"), "26a7a89b").units[0],
        Unit(slots=((("serv*",),),)),
    ]
    texts = [*TEXTS, [("commit 26a7a89b0c1d then 26A7A89B and 26a7a89bff", "C"), ("26a7", "A")]]
    cases = [(f, u) for f in texts for u in dict.fromkeys(units)]
    rows = await postgres.fetch(
        f"SELECT ts_rank({weights_sql(MESSAGE_WEIGHTS)}, CAST(v AS tsvector), CAST(r AS tsquery))"
        " AS rank, CAST(v AS tsvector) @@ CAST(q AS tsquery) AS hit FROM unnest($1::text[], "
        "$2::text[], $3::text[]) WITH ORDINALITY AS c(v, q, r, n) ORDER BY n",
        [tsvector(fields) for fields, _ in cases],
        [unit.tsquery() for _, unit in cases],
        [unit.rank_tsquery() for _, unit in cases],
    )
    checked = phrases = prefixes = 0
    for (fields, unit), row in zip(cases, rows, strict=True):
        if not row["hit"]:
            continue
        assert bool(match(unit, _lookup(entries(fields))))
        assert _tf(fields, unit) == row["rank"], (fields[0][0][:40], unit.rank_tsquery())
        checked += 1
        phrases += len(unit.lexemes) > 1
        prefixes += "*" in unit.rank_tsquery()
    assert checked >= 40
    assert phrases >= 15
    assert prefixes >= 3


async def test_thread_scores_round_as_the_server_rounds(postgres: asyncpg.Connection) -> None:
    """``round(CAST(x AS numeric), 6)`` of a float8, halves included, as the local search
    rounds its scores (the same ties, the same cursor keys)."""
    values = [0.1 + 0.2, 2.0000005, 1.2345675, 7.5e-7, 12.3456785, 3.0000004999999996, 1 / 3]
    rows = await postgres.fetch(
        "SELECT round(CAST(x AS numeric), 6)::float8 AS r FROM unnest($1::float8[]) "
        "WITH ORDINALITY AS c(x, n) ORDER BY n",
        values,
    )
    assert [round_score(v) for v in values] == [row["r"] for row in rows]


async def test_vectors_read_back_as_postgresql_stores_them(postgres: asyncpg.Connection) -> None:
    """Repeated positions, the 256-position cap and the 16383 clamp, as ``tsvector_in``."""
    for fields in TEXTS:
        stored = await postgres.fetchval(
            "SELECT array_agg(lexeme || ':' || array_to_string(positions, ',') || ':' || "
            "array_to_string(weights, ',') ORDER BY lexeme) FROM unnest(CAST($1 AS tsvector))",
            tsvector(fields),
        )
        codes = "DCBA"
        ours = sorted(
            f"{lex}:{','.join(map(str, found))}:{','.join(codes[c] for c in found.values())}"
            for lex, found in entries(fields).items()
        )
        assert ours == sorted(stored or []), fields[0][0][:40]
