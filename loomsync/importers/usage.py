"""Token usage per message: one shape for every agent (issue 28 item 5).

An assistant message whose agent recorded what the model call consumed carries a ``usage``
member (a message field the document keeps as an unknown field, API.md section 2)::

    {"usage": {"input_tokens": 1200, "output_tokens": 310, "cache_read_tokens": 40000,
               "cache_write_tokens": 0, "reasoning_tokens": 128,
               "model": "claude-sonnet-4-5", "provider": "anthropic"}}

Meaning of each count (so that usage can be added up across agents, issue 33):

- ``input_tokens``: prompt tokens billed at the full input price, **not** counting cache
  reads or cache writes (Anthropic's ``input_tokens``; OpenAI's ``input_tokens`` minus
  ``cached_input_tokens``).
- ``cache_read_tokens``: prompt tokens served from the provider's prompt cache.
- ``cache_write_tokens``: prompt tokens written to the cache (Anthropic's
  ``cache_creation_input_tokens``); 0 or absent where the provider has no such charge.
- ``output_tokens``: completion tokens as billed, reasoning tokens **included** (OpenAI's
  ``output_tokens``; Anthropic's ``output_tokens``).
- ``reasoning_tokens``: the part of ``output_tokens`` spent on reasoning, where recorded.
- ``model`` / ``provider``: the model that answered this turn, as the agent names them.

A count the agent did not record is absent, never 0: a session without usage is told apart
from a free one. Where an agent records running totals (Codex's ``total_token_usage``) the
importer stores per-turn figures (Codex's ``last_token_usage``), never the totals.
"""

from __future__ import annotations

from typing import Any

from loomsync.core.document.model import Message
from loomsync.core.usage.counting import COUNTS, count_of


def usage(
    *,
    input_tokens: Any = None,
    output_tokens: Any = None,
    cache_read_tokens: Any = None,
    cache_write_tokens: Any = None,
    reasoning_tokens: Any = None,
    model: Any = None,
    provider: Any = None,
) -> dict[str, Any] | None:
    """The ``usage`` object of one message from what an agent recorded, or None when it
    recorded no count at all.

    Counts that are not whole numbers from 0 to
    :data:`loomsync.core.usage.counting.MAX_COUNT` (missing, negative, text, booleans,
    absurdly large) are left out rather than guessed, as the usage figures count them; ``model`` and ``provider`` are kept when they are non-empty
    strings. See the module docstring for what each count means.
    """
    given = {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_read_tokens": cache_read_tokens,
        "cache_write_tokens": cache_write_tokens,
        "reasoning_tokens": reasoning_tokens,
    }
    out: dict[str, Any] = {}
    for name in COUNTS:
        count = count_of(given[name])
        if count is not None:
            out[name] = count
    if not out:
        return None
    for name, value in (("model", model), ("provider", provider)):
        if isinstance(value, str) and value.strip():
            out[name] = value
    return out


def note(message: Message, found: dict[str, Any] | None) -> None:
    """Set ``message.usage`` to ``found`` (a :func:`usage` object); None leaves the message
    without one (the agent recorded nothing for it)."""
    if found is not None:
        setattr(message, "usage", found)  # noqa: B010  (an extra member of the open model)


def of(message: Message) -> dict[str, Any] | None:
    """The ``usage`` object of ``message``, or None (a message without usage, or one whose
    ``usage`` member is not a JSON object)."""
    value = (message.model_extra or {}).get("usage")
    return value if isinstance(value, dict) else None


__all__ = ["COUNTS", "note", "of", "usage"]
