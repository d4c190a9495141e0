"""Usage at scale (issue 33 "Done means"): ``GET /api/usage`` and the ``/usage`` page over a
month of an organization of 100,000 threads, p95 under 200 ms.

    .venv/bin/python -m bench.usage [--threads N] [--samples N] [--reuse]

Makes the database ``loomsync_bench_usage`` (dropped, made and migrated each run) and fills
it in SQL (the write path is measured by bench.writes): N threads (default 100,000) of 5
organizations, ``org0`` holding half of them (a large team), spread evenly over the 3
months up to November 2026 (so org0's November, the month measured, holds about 17,000
sessions and 33,000 rows; ``--orgs 1 --months 1`` puts every thread in it, the worst case),
200 people, visibility 60% organization, 30% private, 10% public, 50 repositories per
organization, 6 agents; each thread has ``usage_daily`` rows for 2 (day, model) pairs of 7
models (one without a known price), so 200,000 rows in all. Then a
real uvicorn answers, over HTTP on one kept-alive connection, as an admin of org0 with
``scope=organization``: the API grouped by day, model, agent, repository, person, session,
and the page (a signed-in browser session, through the sign-in form). The floor is
``GET /health`` on the same connection. Exit 1 when an API or page p95 is 200 ms or more.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import time
from html import unescape
from urllib.parse import urlsplit

import httpx
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from app.auth import create_token
from app.config import Settings, normalize_database_url
from app.database import migrate
from bench.harness import (
    database_dsn,
    machine,
    percentiles,
    recreate_database,
    server_dsn,
    uvicorn_process,
)

DATABASE = "loomsync_bench_usage"
TARGET_MS = 200.0
MONTH = "since=2026-11-01&until=2026-11-30&scope=organization"
MODELS = (
    "('claude-sonnet-4-5','anthropic'),('claude-opus-4-5','anthropic'),('gpt-5-codex','openai'),"
    "('gpt-5','openai'),('gemini-2.5-pro','google'),('claude-haiku-4-5','anthropic'),"
    "('local-llama','ollama')"
)
_THREADS = """
INSERT INTO threads (id, owner_id, org_id, version, visibility, created_at, updated_at,
    last_activity_at, title, workspace_root, git_remote_url, message_count, document,
    search_vector)
SELECT gen_random_uuid(), 'user' || (i % 200),
    CASE WHEN i % 2 = 0 OR :orgs = 1 THEN 'org0' ELSE 'org' || (1 + i % (:orgs - 1)) END, 1,
    CASE WHEN i % 10 < 6 THEN 'organization' WHEN i % 10 < 9 THEN 'private' ELSE 'public' END,
    timestamptz '2026-12-01' - make_interval(days => 30 * :months)
        + make_interval(secs => i * 2592000.0 * :months / :n), now(),
    timestamptz '2026-12-01' - make_interval(days => 30 * :months)
        + make_interval(secs => i * 2592000.0 * :months / :n),
    'session ' || i, '/work/repo' || (i % 50), 'github.com/org0/repo' || (i % 50), 40,
    '{}'::json, ''::tsvector
FROM generate_series(1, :n) AS i
"""
_ROWS = f"""
INSERT INTO usage_daily (thread_id, day, model, provider, org_id, owner_id, visibility, agent,
    repository, workspace, turns, without_usage, tool_calls, input_tokens, output_tokens,
    cache_read_tokens, cache_write_tokens, reasoning_tokens)
SELECT t.id, CAST(t.created_at AS date) + (k - 1) % 2 * (CASE WHEN t.created_at < timestamptz
    '2026-11-30' THEN 1 ELSE 0 END), m.model, m.provider, t.org_id, t.owner_id, t.visibility,
    (ARRAY['claude-code','codex','gemini-cli','pi','opencode','aider'])[1 + abs(hashtext(t.id::text)) % 6],
    'github.com/' || t.org_id || '/repo' || abs(hashtext(t.id::text)) % 50, t.workspace_root,
    10 + k, k - 1, 12, 20000 * k, 3000 * k, 400000 * k, 30000, 500
FROM threads t, generate_series(1, 2) AS k,
    LATERAL (SELECT * FROM (VALUES {MODELS}) AS v(model, provider)
             OFFSET (abs(hashtext(t.id::text || k)) % 7) LIMIT 1) AS m
ON CONFLICT DO NOTHING
"""
FORM_TOKEN = re.compile(r'name="form_token" value="([^"]+)"')


async def build(dsn: str, count: int, orgs: int, months: int) -> None:
    """Fill the bench database (module docstring)."""
    engine = create_async_engine(normalize_database_url(dsn))
    try:
        async with engine.begin() as conn:
            await conn.execute(text("SET LOCAL synchronous_commit = off"))
            for label, sql in (("threads", _THREADS), ("usage_daily", _ROWS)):
                started = time.perf_counter()
                await conn.execute(text(sql), {"n": count, "orgs": orgs, "months": months})
                print(f"  {label}: {time.perf_counter() - started:.1f} s", flush=True)
        async with engine.connect() as conn:
            auto = await conn.execution_options(isolation_level="AUTOCOMMIT")
            for table in ("threads", "usage_daily"):
                await auto.execute(text(f"VACUUM ANALYZE {table}"))
            rows = (await auto.execute(text("SELECT count(*) FROM usage_daily"))).scalar()
            print(f"  {rows:,} usage_daily rows", flush=True)
    finally:
        await engine.dispose()


def sign_in(client: httpx.Client, bearer: dict[str, str]) -> None:
    """Sign ``client`` in through the sign-in form, as ``loomsync open`` and a browser do."""
    made = client.post("/api/login-codes", headers=bearer)
    made.raise_for_status()
    url = urlsplit(made.json()["url"])
    form = client.get(f"{url.path}?{url.query}")
    found = FORM_TOKEN.search(form.text)
    assert found is not None, form.text[:300]
    origin = {"Origin": str(client.base_url).rstrip("/"), "Sec-Fetch-Site": "same-origin"}
    data = {"code": made.json()["code"], "form_token": unescape(found.group(1)), "next": "/"}
    done = client.post("/login", data=data, headers=origin)
    assert done.status_code == 303, done.text[:300]


def timed(client: httpx.Client, path: str, samples: int, headers: dict[str, str]) -> list[float]:
    """Milliseconds of ``samples`` GETs of ``path`` after 3 warm-up ones (each must be 200)."""
    out = []
    for i in range(samples + 3):
        started = time.perf_counter()
        answer = client.get(path, headers=headers)
        took = (time.perf_counter() - started) * 1000
        if answer.status_code != 200:
            raise RuntimeError(f"GET {path}: {answer.status_code} {answer.text[:200]}")
        if i >= 3:
            out.append(took)
    return out


def measure(dsn: str, samples: int) -> bool:
    """Print the latencies; True when every target is met."""
    ok = True
    with uvicorn_process(dsn) as (base, secret, _):
        settings = Settings(jwt_secret=secret, _env_file=None)
        bearer = {
            "Authorization": f"Bearer {create_token(settings, 'user0', org='org0', roles=['admin'])}"
        }
        with httpx.Client(base_url=base, timeout=60) as client:
            sign_in(client, bearer)
            month = client.get(f"/api/usage?{MONTH}&group_by=model", headers=bearer).json()
            total = month["total"]
            print(
                f"  org0's November: {total['sessions']:,} sessions, {total['turns']:,} turns,"
                f" {len(month['groups'])} models",
                flush=True,
            )
            cases = [("floor: GET /health", "/health", {}, False)]
            for group in ("day", "model", "agent", "repository", "person", "session"):
                cases.append(
                    (f"API group_by={group}", f"/api/usage?{MONTH}&group_by={group}", bearer, True)
                )
            cases.append(
                (
                    "API group_by=day&stack=model, CSV",
                    f"/api/usage?{MONTH}&stack=model&format=csv",
                    bearer,
                    True,
                )
            )
            cases.append(("page /usage (stacked by model)", f"/usage?{MONTH}", {}, True))
            cases.append(
                ("page /usage (stacked by agent)", f"/usage?{MONTH}&stack=agent", {}, True)
            )
            floor = 0.0
            for label, path, headers, gated in cases:
                p50, p95 = percentiles(timed(client, path, samples, headers))
                floor = floor or p50
                verdict = ""
                if gated:
                    verdict = "ok" if p95 < TARGET_MS else f"OVER {TARGET_MS:.0f} ms"
                    ok = ok and p95 < TARGET_MS
                print(
                    f"  {label:<38} p50 {p50:7.1f} ms  p95 {p95:7.1f} ms"
                    f"  ({p50 / floor:5.1f}x floor)  {verdict}",
                    flush=True,
                )
    return ok


def main() -> None:
    """Build, measure, exit 1 when a target is missed."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--threads", type=int, default=100_000)
    parser.add_argument("--samples", type=int, default=60)
    parser.add_argument("--orgs", type=int, default=5, help="Organizations (org0 holds half).")
    parser.add_argument("--months", type=int, default=3, help="Months the threads span.")
    parser.add_argument("--reuse", action="store_true", help="Measure the last run's data.")
    args = parser.parse_args()
    server = server_dsn()
    dsn = database_dsn(server, DATABASE)
    if not args.reuse:
        asyncio.run(recreate_database(server, DATABASE))
        migrate(dsn)
        print(f"building {args.threads:,} threads …", flush=True)
        asyncio.run(build(dsn, args.threads, args.orgs, args.months))
    print(f"{machine()}; {args.samples} samples each, as an admin of org0, November 2026:")
    sys.exit(0 if measure(dsn, args.samples) else 1)


if __name__ == "__main__":
    main()
