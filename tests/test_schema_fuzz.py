"""Schema fuzzing: schemathesis against the server's own ``/openapi.json`` over real HTTP.

Every operation is driven with generated requests (examples, coverage and fuzzing phases), then
multi-step workflows follow the document's links (stateful phase), all as an admin (so the
admin-only audit trail is exercised too) on a database of its own. Every answer is checked: no
5xx, status code, content type, headers and body as documented, schema-invalid input refused,
schema-valid input accepted.

Generation is derandomized, so a CI run is reproducible; ``LOOMSYNC_FUZZ_EXAMPLES`` raises the
number of examples for a longer local hunt. What the fuzzer found is kept as regular tests in
tests/test_schema_findings.py.

Accepted, with reasons (``UNEXPRESSIBLE``): a schema-valid request refused for what OpenAPI cannot
express: a cursor the server never issued (400), a thread deleted earlier in a workflow (410),
``up_to`` past the end of the thread being forked, a PUT body whose ``id`` is not the URL's,
an ``Idempotency-Key`` the generator used before for another request (422), a query whose
percent-encoded head passes the 32 KiB header limit (431; refused as negative data too). A
schema-violating body sent to a thread deleted earlier in a workflow gets 410 (negative data).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import hypothesis
import pytest
import schemathesis
from schemathesis.config import SchemathesisConfig
from schemathesis.engine import Status
from schemathesis.engine.events import FatalError, NonFatalError, ScenarioFinished
from schemathesis.engine.run import PhaseName
from schemathesis.openapi.checks import RejectedPositiveData

from app.auth import create_token
from app.config import Settings
from app.database import migrate_async
from app.main import create_app
from tests.database import create_database, drop_database
from tests.servers import Server, uvicorn_server

EXAMPLES = int(os.environ.get("LOOMSYNC_FUZZ_EXAMPLES", "25"))
STATEFUL_EXAMPLES = max(1, EXAMPLES // 3)
STATEFUL_SECONDS = int(os.environ.get("LOOMSYNC_FUZZ_STATEFUL_SECONDS", "30"))

#: Refusals of schema-valid requests that OpenAPI cannot express, by status: each predicate
#: reads the problem body.
UNEXPRESSIBLE: dict[int, Any] = {
    # an opaque cursor the server never issued
    400: lambda p: p.get("detail") == "The cursor is not one this server issued.",
    # a schema-valid query (a 4,096-character ``workspace`` of 4-byte characters) whose
    # percent-encoded head passes LOOMSYNC_MAX_HEADER_BYTES (app/protocol.py)
    431: lambda p: p.get("code") == "headers_too_large",
    # a thread deleted earlier in the same workflow
    410: lambda p: p.get("code") == "gone",
    # fork past the thread's end; a body id other than the URL's (PUT); an Idempotency-Key
    # generated again for another request
    422: lambda p: (
        p.get("detail") == "up_to is past the end of the thread."
        or p.get("errors") == [{"loc": ["body", "id"], "msg": "must equal the id in the URL"}]
        or p.get("code") == "idempotency_key_reused"
    ),
}


#: The fuzzed server's signing secret and configuration. The document is built from the same
#: settings at import time (pytest collects one test per operation from it);
#: test_served_document_is_the_fuzzed_one proves the server serves exactly this document.
FUZZ_SECRET = secrets.token_urlsafe(48)
FUZZ_ENV = {
    "LOOMSYNC_JWT_SECRET": FUZZ_SECRET,
    "LOOMSYNC_RATE_LIMIT": "off",
    "LOOMSYNC_LOG_LEVEL": "warning",
    "LOOMSYNC_MAX_BODY_BYTES": str(4 * 1024 * 1024),
}
FUZZ_SETTINGS = Settings(
    database_url="postgresql://unused@127.0.0.1:1/unused",
    jwt_secret=FUZZ_SECRET,
    rate_limit="off",
    max_body_bytes=4 * 1024 * 1024,
    _env_file=None,
)
ADMIN_TOKEN = create_token(FUZZ_SETTINGS, "fuzzer", org="fuzz-org", roles=["admin"])


def _document() -> dict[str, Any]:
    app = create_app(FUZZ_SETTINGS)
    return app.openapi()


@pytest.fixture(scope="module")
async def fuzz_database(pg_server: str) -> AsyncIterator[str]:
    """A database of its own: the fuzzer writes as an admin, which may touch any thread."""
    url = await create_database(pg_server)
    await migrate_async(url)
    yield url
    await drop_database(pg_server, url)


@pytest.fixture(scope="module")
def fuzz_server(fuzz_database: str) -> Iterator[Server]:
    """A uvicorn process on the fuzz database, rate limits off (429 is documented anyway)."""
    with uvicorn_server({**FUZZ_ENV, "LOOMSYNC_DATABASE_URL": fuzz_database}) as server:
        yield server


def _expected_failure(_: Any, failure: Exception, case: Any, response: Any) -> bool:
    """``filter_failure`` hook: False drops the refusals listed in ``UNEXPRESSIBLE``."""
    accept = UNEXPRESSIBLE.get(response.status_code)
    if not isinstance(failure, RejectedPositiveData) or accept is None:
        return True
    try:
        body = response.json()
    except ValueError:
        return True
    return not (isinstance(body, dict) and accept(body))


CONFIG: dict[str, Any] = {
    "headers": {"Authorization": f"Bearer {ADMIN_TOKEN}"},
    "checks": {
        # Off: it re-sends a request "without auth" and expects 401, but the Authorization
        # header above goes with every request, so a valid token makes it a false failure
        # since operations declare their security (app/openapi.py). What it would check,
        # that every bearer-only operation answers 401 without a token, is checked against
        # each operation of the document by tests/test_openapi_security.py.
        "ignored_auth": {"enabled": False},
        # API.md §6: an append without If-Match is 428 Precondition Required.
        "missing_required_header": {
            "expected-statuses": ["400", "401", "403", "406", "415", "422", "428"]
        },
        # schemathesis's defaults plus 410, 413 and 431: a workflow may send a schema-violating
        # body to a thread it deleted earlier (gone is answered before the body is judged), and
        # a request can be refused for its size (a too long ``workspace`` percent-encoded past
        # the 32 KiB head limit).
        "negative_data_rejection": {
            "expected-statuses": [
                "400",
                "401",
                "403",
                "404",
                "405",
                "406",
                "409",
                "410",
                "413",
                "415",
                "422",
                "428",
                "429",
                "431",
                "5xx",
            ]
        },
    },
}
schema = schemathesis.openapi.from_dict(
    _document(),
    config=SchemathesisConfig.from_dict(
        {**CONFIG, "generation": {"max-examples": EXAMPLES, "deterministic": True}}
    ),
)
schema.hook("filter_failure")(_expected_failure)
HYPOTHESIS = {
    "deadline": None,
    "derandomize": True,
    "database": None,
    "suppress_health_check": list(hypothesis.HealthCheck),
}


def test_served_document_is_the_fuzzed_one(fuzz_server: Server) -> None:
    served = httpx.get(f"{fuzz_server.base_url}/openapi.json", timeout=10)
    assert served.status_code == 200
    assert served.json() == _document()


@schema.parametrize()
@hypothesis.settings(**HYPOTHESIS)
def test_operation_conforms_to_its_schema(case: Any, fuzz_server: Server) -> None:
    case.call_and_validate(base_url=fuzz_server.base_url)


def test_workflows_conform_to_the_schema(fuzz_server: Server) -> None:
    """Multi-step workflows (create, then read, patch, fork, delete what was created, ...),
    through schemathesis's engine: its stateful runner copes with a server whose state carries
    over between scenarios, which a Hypothesis state machine replayed by pytest cannot."""
    config = SchemathesisConfig.from_dict(
        {
            **CONFIG,
            "base-url": fuzz_server.base_url,
            "seed": 20261129,
            "max-time": STATEFUL_SECONDS,
            "generation": {"max-examples": STATEFUL_EXAMPLES},
            "phases": {
                "examples": {"enabled": False},
                "coverage": {"enabled": False},
                "fuzzing": {"enabled": False},
                "stateful": {"enabled": True, "max-steps": 8},
            },
        }
    )
    workflows = schemathesis.openapi.from_dict(_document(), config=config)
    workflows.hook("filter_failure")(_expected_failure)
    problems: list[str] = []
    stateful_scenarios = 0
    for event in schemathesis.engine.from_schema(workflows).execute():
        if isinstance(event, ScenarioFinished) and event.phase is PhaseName.STATEFUL_TESTING:
            stateful_scenarios += 1
            for check in (c for checks in event.recorder.checks.values() for c in checks):
                if check.status is Status.FAILURE and check.failure_info is not None:
                    problems.append(
                        f"{check.name}: {check.failure_info.failure}\n{check.failure_info.code_sample}"
                    )
        elif isinstance(event, (NonFatalError, FatalError)):
            problems.append(f"engine error: {event!r}")
    assert stateful_scenarios, "the stateful phase did not run"
    assert problems == []


def test_server_logged_no_error(fuzz_server: Server) -> None:
    """After the fuzzing above: not one unhandled error in the server's output."""
    output = fuzz_server.output()
    assert "Traceback" not in output, output[-5000:]
    assert "unhandled error" not in output
