"""Thread logic that is neither HTTP nor SQL: validating documents, appends, merge patches, forks."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from app.errors import ValidationFailed, validation_errors
from app.threads.schemas import AppendRequest, ThreadPatch
from loomsync.core.document import jsontext
from loomsync.core.document.ids import InvalidThreadId, ThreadId
from loomsync.core.document.model import Metadata, Thread
from loomsync.core.document.patch import merge_patch

M = TypeVar("M", bound=BaseModel)


def validate(model: type[M], raw: Any, at: tuple[str, ...] = ("body",)) -> M:
    """Validate ``raw`` JSON against ``model``; ``at`` is where ``raw`` sits in the request
    (``("body", "metadata")`` for a patched ``metadata``), the start of each error's ``loc``.

    Raises:
        ValidationFailed: 422 listing at most 20 ``{loc, msg}`` (input never echoed).
    """
    try:
        return model.model_validate(_integral_numbers(raw))
    except ValidationError as exc:
        errors = validation_errors(exc.errors(include_url=False, include_input=False))
        for err in errors:
            err["loc"] = [*at, *err["loc"]]
        raise ValidationFailed("The body is not a valid document.", errors=errors) from None


#: Integer fields of the documents (JSON Schema "integer"): ``5.0`` is the integer 5 there.
_INTEGER_FIELDS = ("version", "up_to")
#: Integral numbers written with an exponent or a fraction (``1E2``, ``-0``) below 10**19 are
#: read as ints in those fields; any larger one is left alone, to be refused (422) unconverted.
_MAX_INTEGRAL_DIGITS = 19


def _integral_numbers(raw: Any) -> Any:
    """``raw`` with integral numbers (``5.0``, ``1E2``, ``-0``) in the known integer fields made
    ints, since JSON (and so the OpenAPI schema) does not tell 5.0 from 5. Unknown fields are
    left alone. A number too long for an int there (a 5,000-digit ``version``) stays a
    :class:`~loomsync.core.document.jsontext.JsonNumber`, which the model refuses: 422 naming the field."""
    if not isinstance(raw, dict):
        return raw
    out = dict(raw)
    for key in _INTEGER_FIELDS:
        if key in out:
            out[key] = _as_int(out[key])
    state = out.get("agent_state")
    if isinstance(state, dict) and "retries" in state:
        out["agent_state"] = {**state, "retries": _as_int(state["retries"])}
    return out


def _as_int(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, jsontext.JsonNumber):
        exact = value.to_decimal()
        if exact.adjusted() < _MAX_INTEGRAL_DIGITS and exact == exact.to_integral_value():
            return int(exact)
    return value


def _refuse(loc: list[str | int], msg: str) -> ValidationFailed:
    return ValidationFailed("The body is not a valid document.", errors=[{"loc": loc, "msg": msg}])


def parse_thread(raw: Any, url_id: ThreadId | None) -> tuple[Thread, list[dict[str, Any]]]:
    """Validate a thread body; return the model and the raw message dicts (stored verbatim).

    Raises:
        ValidationFailed: invalid document, ``id`` different from the URL's, or
            ``is_private: true`` (private threads never reach the server, API.md §1).
    """
    thread = validate(Thread, raw)
    if url_id is not None and thread.id is not None and thread.id != url_id:
        raise _refuse(["body", "id"], "must equal the id in the URL")
    if thread.is_private:
        raise _refuse(
            ["body", "is_private"], "private threads stay on the client; the server refuses them"
        )
    messages = (
        raw.get("conversation", {}).get("messages", [])
        if isinstance(raw.get("conversation"), dict)
        else []
    )
    return thread, messages


def fork_origin(thread: Thread) -> ThreadId | None:
    """The thread a document says it was forked from: ``metadata.extra.forked_from.id``, as
    the server's fork and the client's local fork (``loomsync.edits.forked``) write it. None
    when the document names no source, or no valid thread id."""
    origin = thread.metadata.extra.get("forked_from")
    source = origin.get("id") if isinstance(origin, dict) else None
    if not isinstance(source, str):
        return None
    try:
        return ThreadId.parse(source)
    except InvalidThreadId:
        return None


def apply_append(doc: dict[str, Any], request: AppendRequest) -> tuple[dict[str, Any], bool]:
    """The document after an append's state fields; returns (document, commits changed?)."""
    # Python mode: pydantic's JSON mode fails on dict keys holding lone surrogates.
    fields = request.model_dump(exclude_unset=True, exclude={"messages", "last_activity_at"})
    if not fields:
        return doc, False
    doc = dict(doc)
    commits_changed = False
    for key, value in fields.items():
        if key == "git_commits":
            if value is None:  # null: no new commits
                continue
            known = list(doc.get("git_commits") or [])
            seen = set(known)
            doc["git_commits"] = known + [sha for sha in dict.fromkeys(value) if sha not in seen]
            commits_changed = True
        else:
            doc[key] = value
            commits_changed = commits_changed or key.endswith("_commit_sha")
    return doc, commits_changed


def apply_patch(
    doc: dict[str, Any], raw_patch: dict[str, Any], patch: ThreadPatch
) -> dict[str, Any]:
    """The document after a PATCH (``archived`` is handled by the caller, it is a column).

    Raises:
        ValidationFailed: a ``null`` for a field that cannot be cleared, or patched metadata
            that is not valid metadata.
    """
    doc = dict(doc)
    for key in ("visibility", "is_shared_with_support", "archived"):
        if key in raw_patch and raw_patch[key] is None:
            raise _refuse(["body", key], "cannot be null")
    if "metadata" in raw_patch:
        if raw_patch["metadata"] is None:
            raise _refuse(["body", "metadata"], "cannot be null; patch its members instead")
        merged = merge_patch(doc.get("metadata") or {}, raw_patch["metadata"])
        doc["metadata"] = validate(Metadata, merged, ("body", "metadata")).model_dump()
    if patch.visibility is not None:
        doc["visibility"] = patch.visibility
    if patch.is_shared_with_support is not None:
        doc["is_shared_with_support"] = patch.is_shared_with_support
    return doc


def fork_document(
    source_document_text: str, source_id: ThreadId, source_version: int
) -> dict[str, Any]:
    """The stored document of a fork: private, not shared, ``metadata.extra.forked_from`` set."""
    doc: dict[str, Any] = jsontext.loads(source_document_text)
    metadata = dict(doc.get("metadata") or {})
    extra = dict(metadata.get("extra") or {})
    extra["forked_from"] = {"id": str(source_id), "version": source_version}
    metadata["extra"] = extra
    doc["metadata"] = metadata
    doc["visibility"] = "private"
    doc["is_shared_with_support"] = False
    return doc
