"""Quantized shares and IDFs (loomsync.core.textsearch.frequency; issue 14 review)."""

from __future__ import annotations

import math

import pytest

from loomsync.core.textsearch.frequency import BUCKET_RATIO, RARE_SHARE, idf, quantize


@pytest.mark.parametrize("share", [0.0, 1e-9, 2e-6, 0.0004, RARE_SHARE * 0.999, -1.0, math.nan])
def test_every_share_under_the_floor_is_one_rare_value(share: float) -> None:
    assert quantize(share) == quantize(0.0)
    assert idf(share) == idf(0.0)


def test_buckets_above_the_floor_are_coarse_and_idempotent() -> None:
    values = {quantize(RARE_SHARE * BUCKET_RATIO**k * f) for k in range(10) for f in (1, 1.3, 1.9)}
    assert len(values) == 10
    for value in values:
        assert quantize(value) == value
    assert quantize(RARE_SHARE * 1.01) == quantize(RARE_SHARE * 1.99) != quantize(RARE_SHARE * 2)
    assert quantize(1.0) <= 1.0
    assert quantize(5.0) == quantize(1.0)


def test_idf_falls_with_the_share_and_never_goes_negative() -> None:
    shares = [0.0, 0.0015, 0.003, 0.01, 0.1, 0.6, 1.0]
    idfs = [idf(s) for s in shares]
    assert idfs == sorted(idfs, reverse=True)
    assert idfs[-1] >= 0.0
    assert idf(0.0) == round(-math.log(RARE_SHARE / math.sqrt(BUCKET_RATIO)), 4)
