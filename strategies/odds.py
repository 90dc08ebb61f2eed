"""Weighted yes/no choices for the strategies: what a strategy draws mostly, and what only now and
then, with the mostly-drawn case the one shrinking goes towards."""

from __future__ import annotations

from hypothesis import strategies as st

from .reuse import reused


@reused
def mostly(times: int = 4) -> st.SearchStrategy:
    """True ``times - 1`` times in ``times``, else False; shrinks towards True.

    ``times`` is at most 100: Hypothesis draws the integers the project's code names from 100 up
    (127 and 128, say) several times as often as others, and False is index ``times - 1``.
    """
    if not 2 <= times <= 100:
        raise ValueError(f"mostly({times}): times must be 2..100")
    return st.sampled_from((True,) * (times - 1) + (False,))
