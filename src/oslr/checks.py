"""Input checks on concrete params, run before any tracing, with messages that say what to do."""

from __future__ import annotations

import numpy as np


def check_range(learner: str, name: str, value, lo=None, hi=None, lo_open: bool = False,
                hint: str = "", hi_open: bool = False) -> None:
    """Raise ValueError naming the learner, the parameter and the offending value(s).

    Args:
      learner: learner name (for the message).
      name: parameter name.
      value: scalar or array of values (a grid).
      lo, hi: inclusive bounds (exclusive when `lo_open` / `hi_open`); None = unbounded.
      hint: what the user should do instead.
    """
    a = np.asarray(value)
    bad = np.zeros(a.shape, bool)
    if lo is not None:
        bad |= (a <= lo) if lo_open else (a < lo)
    if hi is not None:
        bad |= (a >= hi) if hi_open else (a > hi)
    if bad.any():
        shown = np.unique(a[bad]).tolist()[:5]
        lo_s = "-inf" if lo is None else f"{lo}"
        hi_s = "inf" if hi is None else f"{hi}"
        bracket = "(" if lo_open or lo is None else "["
        close = ")" if hi_open or hi is None else "]"
        raise ValueError(
            f"{learner}: parameter {name}={shown} is out of range {bracket}{lo_s}, {hi_s}{close}."
            + (f" {hint}" if hint else "")
        )


def check_positive_int(name: str, value) -> int:
    """`value` as an int; ValueError if it is not an integer >= 1 (bools refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}.")
    return int(value)


def check_seed(seed) -> int:
    """`seed` as an int; ValueError unless it is an integer in [0, 2^32) (bools refused)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not (
            0 <= seed < 2**32):
        raise ValueError(f"seed must be an integer in [0, 2^32), got {seed!r}.")
    return int(seed)
