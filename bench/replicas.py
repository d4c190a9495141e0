"""Read replicas, PgBouncer and a shared rate limit on this machine (issue 18 item 5)::

    .venv/bin/python -m bench.replicas [--quick] [--seconds N] [--record]

Starts a PostgreSQL primary and a streaming replica of its own (tests/infra/cluster.py, ports
18211 and 18212), PgBouncer in transaction mode in front of the primary (18213), Redis (18214)
for the shared rate limit, and two server instances. Each phase runs the same mix for
``--seconds``: clients that write (a new thread, then appends) through one instance and at once
list and search it back through the other (tests/replicas/load.py: every read must show the
write before it), beside clients that only list and search. Phases:

1. ``primary only``: the instances without ``LOOMSYNC_DATABASE_REPLICA_URLS`` (the floor);
2. ``with replica``: list and search routed to the replica;
3. ``replica stopped``: as 2, with the replica stopped (``pg_ctl stop -m immediate``) a third
   into the phase and started again at two thirds: no request may fail, and reads must go back
   to the replica;
4. the shared rate limit: a third pair of instances with a budget of ``RATE_BUDGET`` a minute
   in Redis; one user sends 1.5 times that through both: exactly the budget may pass.

Prints writes/s and reads/s of each phase and where the reads ran (the instances'
``loomsync_db_reads_total``); exits 0 only when read-your-writes held for every read, no
request failed (in phase 3 above all), the replica served reads and rejoined, and the shared
rate limit held. On 2 shared cores the primary, the replica, PgBouncer, Redis, both instances and
the clients all compete for the same CPU: the figures show the shape, not a speed-up.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from app.auth import create_token
from app.config import Settings
from app.database import SERVER_SETTINGS, migrate
from app.pooler import alter_database_sql, session_defaults
from bench.harness import Section, percentiles, record, uvicorn_process
from loomsync.core.document.ids import ThreadId
from tests.documents import thread_doc
from tests.infra.cluster import Cluster, MissingServer, start_cluster
from tests.infra.pgbouncer import start_pgbouncer
from tests.infra.process import MissingBinary
from tests.infra.redis import start_redis
from tests.replicas.load import Pair, Tally, keep_writing, rare_word, request
from tests.replicas.support import reads

PRIMARY_PORT, REPLICA_PORT, PGBOUNCER_PORT, REDIS_PORT = 18211, 18212, 18213, 18214
DATABASE = "loomsync"
WRITERS = 4
READERS = 4
SEED_USERS = READERS
SEED_THREADS = 25
#: PgBouncer's server connections to the primary (both instances' 2 x 10 pooled ones share them).
POOL = 8
#: The budget of phase 4, per user and minute, shared by both instances through Redis.
RATE_BUDGET = 40
#: The budget of phases 1-3: never reached, but every request is counted in Redis.
LOAD_BUDGET = "1000000/minute"


@dataclass
class Infra:
    """What the phases share: the cluster, the primary's URL the instances use (through
    PgBouncer when ``pooled``), Redis's URL (or None), the token settings, what is missing."""

    cluster: Cluster
    primary_url: str
    pooled: bool
    redis_url: str | None
    settings: Settings
    missing: list[str]

    def pair(self, urls: tuple[str, str]) -> Pair:
        """Clients' view of two instances."""
        return Pair(urls, self.headers)

    def headers(self, user: str) -> dict[str, str]:
        """Authorization headers of a fresh token of ``user``."""
        return {"Authorization": f"Bearer {create_token(self.settings, user)}"}


@contextmanager
def infrastructure(folder: Path) -> Iterator[Infra]:
    """Cluster, migrated database, PgBouncer and Redis when this checkout and machine have
    them (what is not is named in ``Infra.missing``)."""
    with ExitStack() as stack:
        cluster = stack.enter_context(start_cluster(folder / "pg", PRIMARY_PORT, [REPLICA_PORT]))
        cluster.primary.sql(f"CREATE DATABASE {DATABASE}")
        migrate(cluster.primary.url(DATABASE))
        # behind PgBouncer only application_name is sent at connect: the rest are the
        # database's defaults (docs/operations.md, "Behind PgBouncer")
        cluster.primary.sql(alter_database_sql(DATABASE, session_defaults(SERVER_SETTINGS)))
        missing: list[str] = []
        primary_url, pooled = cluster.primary.url(DATABASE), False
        try:
            bouncer = start_pgbouncer(
                "127.0.0.1", PRIMARY_PORT, PGBOUNCER_PORT, folder / "pgbouncer", pool_size=POOL
            )
            stack.callback(bouncer.stop)
            primary_url, pooled = bouncer.url_for(DATABASE), True
        except MissingBinary as exc:
            missing.append(str(exc))
        redis_url = None
        try:
            redis = start_redis(REDIS_PORT, folder / "redis")
            stack.callback(redis.stop)
            redis_url = redis.url
        except MissingBinary as exc:
            missing.append(str(exc))
        settings = Settings(jwt_secret=secrets.token_urlsafe(48), _env_file=None)  # type: ignore[call-arg]
        yield Infra(cluster, primary_url, pooled, redis_url, settings, missing)


def instance_env(infra: Infra, *, replica: bool, budget: str) -> dict[str, str]:
    """``LOOMSYNC_*`` of an instance: the primary (through PgBouncer), the replica when
    ``replica``, the rate limit ``budget`` (in Redis when there is one)."""
    assert infra.settings.jwt_secret is not None
    env = {
        "LOOMSYNC_JWT_SECRET": infra.settings.jwt_secret.get_secret_value(),
        "LOOMSYNC_RATE_LIMIT": budget,
        "LOOMSYNC_DB_POOL_SIZE": "10",
    }
    if infra.pooled:
        env["LOOMSYNC_DB_POOLER"] = "pgbouncer"
    if infra.redis_url:
        env["LOOMSYNC_RATE_LIMIT_STORAGE"] = infra.redis_url
    if replica:
        env["LOOMSYNC_DATABASE_REPLICA_URLS"] = infra.cluster.replicas[0].url(DATABASE)
    return env


@contextmanager
def instances(infra: Infra, env: dict[str, str]) -> Iterator[tuple[str, str]]:
    """Two uvicorn instances of the primary URL with ``env``; their base URLs."""
    with ExitStack() as stack:
        urls = [
            stack.enter_context(uvicorn_process(infra.primary_url, env=env))[0] for _ in range(2)
        ]
        yield urls[0], urls[1]


async def seed(infra: Infra, urls: tuple[str, str]) -> list[tuple[str, str]]:
    """:data:`SEED_THREADS` threads for each of :data:`SEED_USERS` readers, every one holding
    the reader's word; the (user, word) pairs."""
    users = [(f"reader-{uuid.uuid4().hex[:6]}-{i}", rare_word()) for i in range(SEED_USERS)]
    tally = Tally()

    async def put(user: str, word: str) -> None:
        async with httpx.AsyncClient(base_url=urls[0], headers=infra.headers(user)) as client:
            for n in range(SEED_THREADS):
                tid = ThreadId.new()
                body = thread_doc(tid, f"{word} number {n}", title=f"seeded {n}")
                await request(tally, client, "PUT", f"/api/threads/{tid}", json=body)

    await asyncio.gather(*(put(user, word) for user, word in users))
    if tally.failed:
        raise RuntimeError(f"seeding failed: {tally.failed[:3]}")
    return users


async def reader(pair: Pair, user: str, word: str, tally: Tally, stop: asyncio.Event) -> None:
    """List and search (by turns, through each instance in turn) until ``stop``."""
    clients = [httpx.AsyncClient(base_url=u, headers=pair.headers(user), timeout=60)
               for u in pair.urls]  # fmt: skip
    try:
        turn = 0
        while not stop.is_set():
            client = clients[turn % 2]
            if turn % 4 < 2:
                got = await request(tally, client, "GET", "/api/threads", params={"limit": 20})
            else:
                got = await request(tally, client, "GET", "/api/threads/search",
                                    params={"q": word})  # fmt: skip
            tally.reads += got is not None
            turn += 1
    finally:
        for client in clients:
            await client.aclose()


@dataclass
class Phase:
    """One phase's figures."""

    name: str
    seconds: float
    tally: Tally
    routed: dict[tuple[str, str], float]

    def line(self) -> str:
        """A table row."""
        on_replica = self.routed.get(("replica", "caught-up"), 0)
        on_primary = sum(v for (target, _), v in self.routed.items() if target == "primary")
        why = ", ".join(f"{r} {int(v)}" for (t, r), v in sorted(self.routed.items())
                        if t == "primary")  # fmt: skip
        p50, p95 = percentiles(self.tally.read_ms) if self.tally.read_ms else (0.0, 0.0)
        return (
            f"  {self.name:<17} writes/s {self.tally.writes / self.seconds:7.1f}   reads/s "
            f"{self.tally.reads / self.seconds:7.1f} (p50 {p50:5.0f} ms, p95 {p95:5.0f} ms)"
            f"   reads on replica {int(on_replica):5d}"
            f" / primary {int(on_primary):5d}{f' ({why})' if why else ''}   failed "
            f"{len(self.tally.failed)}   stale {len(self.tally.stale)}"
        )


def _routed(urls: tuple[str, str]) -> dict[tuple[str, str], float]:
    total: dict[tuple[str, str], float] = {}
    for url in urls:
        for key, value in reads(url).items():
            total[key] = total.get(key, 0) + value
    return total


async def run_phase(
    name: str,
    infra: Infra,
    urls: tuple[str, str],
    users: list[tuple[str, str]],
    seconds: float,
    stop_replica: bool = False,
) -> Phase:
    """The mix for ``seconds`` on ``urls``; with ``stop_replica`` the replica is stopped at a
    third and started again at two thirds, and the phase goes on until reads reach it again."""
    pair = infra.pair(urls)
    before = await asyncio.to_thread(_routed, urls)
    tally, stop = Tally(), asyncio.Event()
    started = time.monotonic()
    tasks = [asyncio.create_task(keep_writing(pair, tally, stop, WRITERS))]
    tasks += [asyncio.create_task(reader(pair, u, w, tally, stop)) for u, w in users]
    replica = infra.cluster.replicas[0]
    if stop_replica:
        await asyncio.sleep(seconds / 3)
        await asyncio.to_thread(replica.stop, "immediate")
        await asyncio.sleep(seconds / 3)
        await asyncio.to_thread(replica.start)
        back = (await asyncio.to_thread(_routed, urls)).get(("replica", "caught-up"), 0)
        deadline = time.monotonic() + max(seconds / 3, 30)
        while time.monotonic() < deadline:
            await asyncio.sleep(0.5)
            now = (await asyncio.to_thread(_routed, urls)).get(("replica", "caught-up"), 0)
            if now > back + 10:
                break
    else:
        await asyncio.sleep(seconds)
    stop.set()
    await asyncio.gather(*tasks)
    elapsed = time.monotonic() - started
    after = await asyncio.to_thread(_routed, urls)
    routed = {k: v - before.get(k, 0) for k, v in after.items() if v - before.get(k, 0)}
    return Phase(name, elapsed, tally, routed)


def shared_limit(infra: Infra) -> tuple[int, int, int]:
    """Phase 4: (accepted, refused with 429, other) of 1.5 x :data:`RATE_BUDGET` list requests
    of one user, alternating between two fresh instances that share the budget."""
    env = instance_env(infra, replica=True, budget=f"{RATE_BUDGET}/minute")
    with instances(infra, env) as urls:
        headers = infra.headers(f"limited-{uuid.uuid4().hex[:6]}")
        counts = {200: 0, 429: 0}
        other = 0
        for n in range(RATE_BUDGET * 3 // 2):
            status = httpx.get(f"{urls[n % 2]}/api/threads", headers=headers, timeout=30)
            if status.status_code in counts:
                counts[status.status_code] += 1
            else:
                other += 1
        return counts[200], counts[429], other


async def measure(infra: Infra, seconds: float) -> list[Phase]:
    """Phases 1-3 (module docstring)."""
    phases = []
    for name, replica in (("primary only", False), ("with replica", True)):
        env = instance_env(infra, replica=replica, budget=LOAD_BUDGET)
        with instances(infra, env) as urls:
            if not phases:
                users = await seed(infra, urls)
                await asyncio.to_thread(infra.cluster.primary.sql, "ANALYZE", DATABASE)
                await asyncio.to_thread(infra.cluster.wait_replayed)
            phases.append(await run_phase(name, infra, urls, users, seconds))
            if replica:
                phases.append(await run_phase("replica stopped", infra, urls, users, seconds, True))
    return phases


def _ratio(what: str, routed: int, floor: int, phases: list[Phase]) -> str:
    per_second = [
        count / phase.seconds for count, phase in ((routed, phases[1]), (floor, phases[0]))
    ]
    return f"{what} {per_second[0] / per_second[1]:.2f}x" if per_second[1] else f"{what} -"


def run(seconds: float) -> Section:
    """All four phases on infrastructure of their own; the report."""
    section = Section("Read replicas, PgBouncer, shared rate limit (bench.replicas, issue 18)")
    folder = Path(tempfile.mkdtemp(prefix="loomsync-bench-replicas-"))
    folder.chmod(0o711)  # PostgreSQL, PgBouncer and Redis run as postgres inside it
    try:
        with infrastructure(folder) as infra:
            phases = asyncio.run(measure(infra, seconds))
            accepted, refused, other = shared_limit(infra)
            missing = list(infra.missing)
            pooled, redis = infra.pooled, infra.redis_url is not None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    section.lines += [
        f"  {WRITERS} writers (write through one instance, list + search it back through the"
        f" other) + {READERS} readers (list, search), {seconds:.0f} s a phase,"
        " 2 instances, PostgreSQL primary + streaming replica"
        + (f", PgBouncer (transaction mode, {POOL} server connections)" if pooled else "")
        + (", rate limit in Redis" if redis else ""),
        *[p.line() for p in phases],
        "  with replica / primary only (the floor, same run): "
        + _ratio("writes/s", phases[1].tally.writes, phases[0].tally.writes, phases)
        + ", "
        + _ratio("reads/s", phases[1].tally.reads, phases[0].tally.reads, phases),
        f"  shared rate limit {RATE_BUDGET}/minute, {RATE_BUDGET * 3 // 2} requests of one user"
        f" across 2 instances: {accepted} accepted, {refused} refused (429), {other} other",
        *[f"  not available: {m}" for m in missing],
        "  (2 cores: the servers, PostgreSQL, PgBouncer, Redis and this load generator share them)",
    ]
    floor, routed, down = phases
    stale = sum(len(p.tally.stale) for p in phases)
    reads_checked = sum(p.tally.reads for p in phases)
    section.target(f"read-your-writes held: {stale} stale of {reads_checked} reads", stale == 0)
    section.target(
        f"no request failed while the replica was down: {len(down.tally.failed)} failed",
        not down.tally.failed,
    )
    failed = len(floor.tally.failed) + len(routed.tally.failed)
    section.target(f"no request failed in the other phases: {failed} failed", failed == 0)
    served = routed.routed.get(("replica", "caught-up"), 0)
    section.target(f"the replica served reads: {int(served)}", served > 0)
    section.target(
        "the replica rejoined after its restart",
        down.routed.get(("replica", "caught-up"), 0) > 0
        and down.routed.get(("primary", "replica-down"), 0) > 0,
    )
    section.target(
        f"shared rate limit held: {accepted} of {RATE_BUDGET * 3 // 2} accepted,"
        f" budget {RATE_BUDGET}",
        accepted == RATE_BUDGET and refused == RATE_BUDGET // 2 and not other,
    )
    section.target("PgBouncer and Redis in the run", not missing)
    for name, phase in (("floor", floor), ("replica", routed)):
        for problem in (phase.tally.failed + phase.tally.stale)[:3]:
            section.lines.append(f"  {name}: {problem}")
    for problem in (down.tally.failed + down.tally.stale)[:3]:
        section.lines.append(f"  replica stopped: {problem}")
    return section


def main() -> None:
    """Parse the arguments, run, print (and with ``--record`` append to bench/RESULTS.md);
    exit 1 when a target was missed, 2 when the PostgreSQL server binaries are missing."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="5 s phases (a smoke test)")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of a phase")
    parser.add_argument("--record", action="store_true", help="append to bench/RESULTS.md")
    args = parser.parse_args()
    os.environ.setdefault("LOOMSYNC_LOG_LEVEL", "warning")
    try:
        section = run(5.0 if args.quick else args.seconds)
    except MissingServer as exc:
        print(f"bench.replicas: {exc} (apt-get install postgresql-15)", file=sys.stderr)
        sys.exit(2)
    lines = section.render()
    print("\n".join(lines))
    if args.record:
        command = ".venv/bin/python -m bench.replicas" + (" --quick" if args.quick else "")
        record(section.title, command, lines[1:])
    sys.exit(1 if any(not met for _, met in section.targets) else 0)


if __name__ == "__main__":
    main()
