"""Unit prices of models and the estimated cost of usage (issue 33 item 2).

Prices come from the ``genai-prices`` package (pydantic/genai-prices, a maintained data file of
the ecosystem's model prices), never from a table typed here. Its public :func:`calc_price`
prices one request; this module asks it for 1,000 tokens of each kind alone, at the price
date, and scales that to a price per million tokens, so a month's sum is priced at the base
rate (a tier for very long prompts, which applies per request, is not applied to sums: the
figure is an estimate, labelled so).

``LOOMSYNC_PRICES_FILE`` names a JSON file that overrides (or adds) models::

    {"date": "2026-12-01", "source": "our contract",
     "models": {"claude-sonnet-4-5": {"input": 3, "output": 15,
                                      "cache_read": 0.3, "cache_write": 3.75},
                "openai/gpt-5": {"input": 1.25, "output": 10, "cache_read": 0.125}}}

prices in US dollars per million tokens; a key ``provider/model`` applies to that provider
only, a bare ``model`` to any; a missing ``cache_read``/``cache_write`` costs as ``input``.
Models of the file win over genai-prices; the others are still priced by genai-prices.

A model neither knows has an unknown price (:meth:`PriceBook.unit` is None): its cost is
reported as unknown, never as 0.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Any

from loomsync.core.usage.counting import NOT_RECORDED, Sums

#: The environment variable naming a prices file (module docstring).
PRICES_FILE_ENV = "LOOMSYNC_PRICES_FILE"
_SAMPLE = 1000
_KINDS = ("input", "output", "cache_read", "cache_write")


class PricesFileError(ValueError):
    """The prices file cannot be read or is not the documented shape (the message says why)."""


@dataclass(frozen=True, slots=True)
class UnitPrice:
    """US dollars per million tokens of each kind."""

    input: float
    output: float
    cache_read: float
    cache_write: float

    def cost(self, sums: Sums) -> float:
        """The cost in US dollars of ``sums``' tokens (reasoning is inside output)."""
        return (
            sums.input_tokens * self.input
            + sums.output_tokens * self.output
            + sums.cache_read_tokens * self.cache_read
            + sums.cache_write_tokens * self.cache_write
        ) / 1_000_000


@dataclass
class PriceBook:
    """Prices at one date: ``source`` says where they come from (for the label), ``date`` the
    day whose prices apply, ``overrides`` the prices file's models (``provider/model`` or
    ``model`` → :class:`UnitPrice`)."""

    source: str
    date: date
    overrides: dict[str, UnitPrice] = field(default_factory=dict)
    _cache: dict[tuple[str, str], UnitPrice | None] = field(default_factory=dict, repr=False)

    @property
    def label(self) -> str:
        """``estimate at <source> prices of <date>``, the words shown beside every cost."""
        return f"estimate at {self.source} prices of {self.date.isoformat()}"

    def unit(self, model: str, provider: str) -> UnitPrice | None:
        """The unit price of ``model`` served by ``provider`` (``""``: unknown provider), or
        None when no source knows the model (and for usage that named no model)."""
        if model == NOT_RECORDED:
            return None
        key = (model, provider)
        if key not in self._cache:
            self._cache[key] = (
                self.overrides.get(f"{provider}/{model}")
                or self.overrides.get(model)
                or _genai_unit(model, provider, self.date)
            )
        return self._cache[key]

    def cost(self, model: str, provider: str, sums: Sums) -> float | None:
        """The estimated cost of ``sums`` (US dollars), None when the price is unknown."""
        unit = self.unit(model, provider)
        return None if unit is None else unit.cost(sums)


def _genai_unit(model: str, provider: str, day: date) -> UnitPrice | None:
    """genai-prices' base price of ``model`` on ``day`` per million tokens, or None."""
    from genai_prices import Usage, calc_price  # 1.5 MB of data: loaded on first use

    when = datetime.combine(day, time(12), tzinfo=UTC)
    samples = {
        "input": Usage(input_tokens=_SAMPLE),
        "output": Usage(input_tokens=0, output_tokens=_SAMPLE),
        "cache_read": Usage(input_tokens=_SAMPLE, cache_read_tokens=_SAMPLE),
        "cache_write": Usage(input_tokens=_SAMPLE, cache_write_tokens=_SAMPLE),
    }
    prices: dict[str, float] = {}
    for provider_id in [provider, None] if provider else [None]:
        try:
            for kind, usage in samples.items():
                price = calc_price(
                    usage, model, provider_id=provider_id, genai_request_timestamp=when
                )
                prices[kind] = float(price.total_price) * (1_000_000 / _SAMPLE)
        except (LookupError, ValueError):
            prices.clear()
            continue
        return UnitPrice(**prices)
    return None


def genai_prices_version() -> str:
    """The installed genai-prices version (package metadata; importing it is not needed)."""
    from importlib.metadata import version

    return version("genai-prices")


#: The highest price a prices file may give (dollars per million tokens): far above any
#: model's, low enough that a month of tokens stays a finite cost.
MAX_PRICE = 1_000_000.0


def _unit_of(name: str, value: Any) -> UnitPrice:
    if not isinstance(value, dict) or not _is_price(value.get("input")):
        raise PricesFileError(
            f"models.{name} needs a number 'input' (dollars per million, 0 to {MAX_PRICE:,.0f})."
        )
    got: dict[str, float] = {}
    for kind in _KINDS:
        price = value.get(kind, value["input"] if kind.startswith("cache") else None)
        if price is None or not _is_price(price):
            raise PricesFileError(
                f"models.{name}.{kind} must be a number from 0 to {MAX_PRICE:,.0f}."
            )
        got[kind] = float(price)
    return UnitPrice(**got)


def _is_price(value: Any) -> bool:
    """A finite number from 0 to :data:`MAX_PRICE` (JSON's Infinity and NaN are refused)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    return math.isfinite(value) and 0 <= value <= MAX_PRICE


def read_prices_file(path: Path) -> tuple[str, date, dict[str, UnitPrice]]:
    """(source, date, models) of a prices file (module docstring). Raises PricesFileError."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PricesFileError(f"{path}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        raise PricesFileError(f"{path}: needs an object with 'models' and 'date'.")
    try:
        day = date.fromisoformat(str(data.get("date")))
    except ValueError:
        raise PricesFileError(f"{path}: 'date' must be YYYY-MM-DD.") from None
    given = data.get("source")
    source = given if isinstance(given, str) and given.strip() else path.name
    try:
        models = {str(k): _unit_of(str(k), v) for k, v in data["models"].items()}
    except PricesFileError as exc:
        raise PricesFileError(f"{path}: {exc}") from None
    return source, day, models


def price_book(today: date | None = None, prices_file: str | None = None) -> PriceBook:
    """The prices of ``today`` (UTC today by default): genai-prices', overridden by the file
    named by ``prices_file`` or ``LOOMSYNC_PRICES_FILE`` when set. With a file, the label
    names both sources and the file's date. Raises PricesFileError for a bad file."""
    day = today or datetime.now(UTC).date()
    source = f"genai-prices {genai_prices_version()}"
    path = prices_file if prices_file is not None else os.environ.get(PRICES_FILE_ENV)
    if not path:
        return PriceBook(source=source, date=day)
    file_source, file_day, models = read_prices_file(Path(path))
    return PriceBook(
        source=f"{file_source} ({file_day.isoformat()}) and {source}", date=day, overrides=models
    )


__all__ = [
    "PRICES_FILE_ENV",
    "PriceBook",
    "PricesFileError",
    "UnitPrice",
    "genai_prices_version",
    "price_book",
    "read_prices_file",
]
