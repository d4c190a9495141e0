"""A hypothesis strategy for JSON number texts (RFC 8259 section 6), shared by server and client
tests: any sign, integer part (up to 6,000 digits), fraction and exponent."""

from __future__ import annotations

from hypothesis import strategies as st

_DIGITS = "0123456789"

_INTEGER_PART = st.one_of(
    st.just("0"),
    st.builds(str.__add__, st.sampled_from("123456789"), st.text(_DIGITS, max_size=40)),
    st.integers(4290, 6000).map(lambda n: "7" * n),  # around Python's 4,300-digit limit
)
_FRACTION = st.one_of(st.just(""), st.text(_DIGITS, min_size=1, max_size=40).map(".".__add__))
_EXPONENT = st.one_of(
    st.just(""),
    st.builds(
        lambda e, sign, digits: e + sign + digits,
        st.sampled_from("eE"),
        st.sampled_from(["", "+", "-"]),
        st.text(_DIGITS, min_size=1, max_size=5),
    ),
)

#: Text of one JSON number: ``-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?``.
json_numbers = st.builds(
    lambda sign, whole, fraction, exponent: sign + whole + fraction + exponent,
    st.sampled_from(["", "-"]),
    _INTEGER_PART,
    _FRACTION,
    _EXPONENT,
)
