"""Every Hypothesis strategy the tests share."""

from __future__ import annotations

from hypothesis import strategies as st

actor_names = st.from_regex(r"\A[a-z0-9][a-z0-9_-]{0,63}\Z")

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)

payloads = st.binary(min_size=0, max_size=300)
