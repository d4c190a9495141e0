"""The OpenAPI document (``/openapi.json``), made to describe what the server really does.

FastAPI's generated document is completed here (schemathesis, run in CI by
tests/test_schema_fuzz.py, checks every answer against it):

- body and problem models that routes parse or render themselves are registered;
- FastAPI's 422 schema is replaced by problem JSON (API.md §7);
- answers that middleware or shared dependencies give on any route are listed on every route
  they can reach: 408 and 431 (slow or oversized request head, app/protocol.py, and a slow
  body) everywhere, 401 (bad token) and 429 (rate limit) on ``/api``, 413 wherever a body is
  read, 503 (database down, request timed out) everywhere but ``/health``; 429 and 503 with
  ``Retry-After``;
- inputs are described as strictly as the server checks them: optional headers are strings
  (never null), the ``If-Match`` grammar (required on append), the ``Idempotency-Key`` grammar, a non-blank ``q`` of at most ``LOOMSYNC_MAX_QUERY_CHARS`` characters,
  non-blank commit SHAs, ``is_private`` only ``false``;
- security is declared per operation (:func:`security_of`), never globally: a bearer token
  where one is required, none for ``/health*`` and ``GET /api/shared/{secret}``, either for
  ``GET /api/threads/{id}`` (public threads read anonymously).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import TypeAdapter

from app.config import Settings
from app.problems import problem_response
from app.sharing.schemas import ShareLinkRequest
from app.threads.schemas import AppendRequest, ConflictProblem, ForkRequest, Problem, ThreadPatch
from loomsync.core.document.model import Thread

_EXTRA_MODELS: tuple[type[Any], ...] = (
    Thread,
    AppendRequest,
    ThreadPatch,
    ForkRequest,
    Problem,
    ConflictProblem,
    ShareLinkRequest,
)

#: What Python's ``str.strip()`` removes: a "blank" string holds only these.
PYTHON_WHITESPACE = (
    "\\t\\n\\u000b\\u000c\\r\\u001c-\\u001f \\u0085\\u00a0\\u1680\\u2000-\\u200a"
    "\\u2028\\u2029\\u202f\\u205f\\u3000"
)
#: A string holding at least one character that is not whitespace.
NON_BLANK_PATTERN = f"[^{PYTHON_WHITESPACE}]"
#: ``T-`` and a canonical lowercase UUID (loomsync.core.document.ids.ThreadId); anything else is a 400.
THREAD_ID_PATTERN = "^T-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
#: ``*``, or a comma list of strong, weak or bare version tags (app/threads/preconditions.py).
_TAG = '(W/)?"[0-9]+"|[0-9]+'
IF_MATCH_PATTERN = f"^[ \\t]*(\\*|({_TAG})[ \\t]*(,[ \\t]*({_TAG})[ \\t]*)*)[ \\t]*$"

_UNGUARDED = frozenset({"/health"})

#: Who may call an operation, as OpenAPI security requirements (OpenAPI 3.1 section 4.8.10):
#: a bearer token, or nothing. Each operation gets its own, so Swagger UI at /docs shows the
#: lock where a token is needed (and sends one there), and none where it is not.
BEARER: list[dict[str, list[str]]] = [{"bearer": []}]
ANYONE: list[dict[str, list[str]]] = []
BEARER_OR_ANONYMOUS: list[dict[str, list[str]]] = [{"bearer": []}, {}]
#: Operations that need no token (a token sent anyway is checked, and recorded in the audit
#: trail of a share link's use). Every other ``/api`` operation answers 401 without one.
_NO_TOKEN = frozenset({("get", "/api/shared/{secret}")})
#: Operations open to anonymous callers for some resources: a public thread reads without a
#: token, any other needs one (404 without).
_TOKEN_OPTIONAL = frozenset({("get", "/api/threads/{thread_id}")})


def security_of(path: str, method: str) -> list[dict[str, list[str]]]:
    """The security requirement of one operation: none outside ``/api`` (``/health``,
    ``/health/ready``, ``/metrics``) and for a share link's read, bearer-or-anonymous for
    reading one thread (public threads), a bearer token for the rest."""
    if not path.startswith("/api/") or (method, path) in _NO_TOKEN:
        return ANYONE
    if (method, path) in _TOKEN_OPTIONAL:
        return BEARER_OR_ANONYMOUS
    return BEARER


def _problem_422() -> dict[str, Any]:
    return {
        "description": "Validation error",
        "content": {
            "application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}
        },
    }


def _register_models(components: dict[str, Any]) -> None:
    for model in _EXTRA_MODELS:
        model_schema = TypeAdapter(model).json_schema(ref_template="#/components/schemas/{model}")
        # Validation-mode definitions replace FastAPI's serialization-mode ones: they describe
        # input (timestamps as date-time, not any string), and output satisfies them too.
        for name, definition in model_schema.pop("$defs", {}).items():
            components[name] = definition
        components[model.__name__] = model_schema
    components.pop("HTTPValidationError", None)
    components.pop("ValidationError", None)
    thread = components["Thread"]["properties"]
    thread["git_commits"]["items"]["pattern"] = NON_BLANK_PATTERN
    thread["is_private"] = {
        **thread["is_private"],
        "enum": [False],
        "description": "Must be false: private threads never reach the server (API.md §1)",
    }
    thread["visibility"]["description"] = (
        "Absent on a new thread: private (API.md §2); absent on a PUT that replaces a thread: "
        "the stored visibility is kept"
    )


def _not_null(parameter: dict[str, Any]) -> None:
    """An optional header is absent or a string, never JSON null: drop FastAPI's ``null``
    branch (keeping the pattern, length and description beside it)."""
    schema = parameter["schema"]
    others = [s for s in schema.get("anyOf", []) if s != {"type": "null"}]
    if parameter["in"] == "header" and len(others) == 1 and len(schema["anyOf"]) == 2:
        parameter["schema"] = {**{k: v for k, v in schema.items() if k != "anyOf"}, **others[0]}


def _describe_parameters(
    path: str, method: str, operation: dict[str, Any], settings: Settings
) -> None:
    for parameter in operation.get("parameters", []):
        _not_null(parameter)
        name, schema = parameter["name"], parameter["schema"]
        if name == "If-Match":
            parameter["schema"] = {
                "type": "string",
                "pattern": IF_MATCH_PATTERN,
                "description": schema.get("description", ""),
            }
            if path.endswith("/messages") and method == "post":
                parameter["required"] = True
        elif name == "q" and path.endswith("/search"):
            parameter["schema"] = {
                **schema,
                "minLength": 1,
                "maxLength": settings.max_query_chars,
                "pattern": NON_BLANK_PATTERN,
            }


def _add_shared_responses(path: str, operation: dict[str, Any]) -> None:
    responses = operation.setdefault("responses", {})
    if "422" in responses:
        responses["422"] = _problem_422()
    shared: list[int] = [408, 431]  # app/protocol.py answers them before any route is chosen
    if path.startswith("/api/"):
        shared += [401, 429]
    if "requestBody" in operation:
        shared.append(413)
    if path not in _UNGUARDED:
        shared.append(503)
    for status in shared:
        responses.setdefault(str(status), problem_response(status))


def build_openapi(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document of ``app`` (built once, then cached on the app)."""
    if app.openapi_schema:
        return app.openapi_schema
    settings: Settings = app.state.settings
    schema = get_openapi(
        title=app.title, version=app.version, description=app.description, routes=app.routes
    )
    _register_models(schema.setdefault("components", {}).setdefault("schemas", {}))
    for path, operations in schema.get("paths", {}).items():
        for method, operation in operations.items():
            _describe_parameters(path, method, operation, settings)
            _add_shared_responses(path, operation)
            operation["security"] = security_of(path, method)
    schema["components"]["securitySchemes"] = {
        "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}
    }
    app.openapi_schema = schema
    return schema
