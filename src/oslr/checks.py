"""Input checks on concrete params, run before any tracing, with messages that say what to do."""

from __future__ import annotations

import re

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


def check_integral(name: str, value, dtype, where: str = "") -> None:
    """ValueError when `value` is for an integer leaf of `dtype` but holds a non-integer
    (k=2.5 would otherwise be cast to 2 while every label says 2.5)."""
    if not np.issubdtype(np.dtype(dtype), np.integer):
        return
    a = np.atleast_1d(np.asarray(value))
    if a.dtype.kind != "f":
        return
    bad = a[~(np.isfinite(a) & (a == np.round(a)))]
    if bad.size:
        x = float(bad.flat[0])
        hint = (f"give e.g. {name}={int(np.floor(x))} or {name}={int(np.ceil(x))}"
                if np.isfinite(x) else "give a whole number")
        raise ValueError(f"{where}parameter {name}={value!r} must be a whole number (it "
                         f"counts something); {hint}.")


def unknown_name(kind: str, name: str, names) -> str:
    """"unknown KIND 'nmae'; did you mean 'name'? available: ..." (the closest names first)."""
    import difflib

    names = sorted(names)
    close = difflib.get_close_matches(str(name), names, n=3, cutoff=0.6)
    guess = f" did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return f"unknown {kind} {name!r};{guess} available: {', '.join(names)}."


def check_seed(seed) -> int:
    """`seed` as an int; ValueError unless it is an integer in [0, 2^32) (bools refused)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not (
            0 <= seed < 2**32):
        raise ValueError(f"seed must be an integer in [0, 2^32), got {seed!r}.")
    return int(seed)


_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def parse_bytes(name: str, value) -> int | None:
    """A memory size in bytes from a positive integer or a string "N[K|M|G|T][iB|B]" (binary
    units: "4G" and "4GiB" are 4 x 2^30, "1.5G" is allowed); None stays None. ValueError in one
    line for anything else."""
    if value is None:
        return None
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        number, unit = float(value), ""
    else:
        m = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([KMGT]?)(?:i?B)?\s*", str(value),
                         re.IGNORECASE)
        if m is None:
            raise ValueError(f"{name}={value!r} is not a memory size; give bytes or a number "
                             "with a unit, e.g. 512M, 4G or 1.5GiB.")
        number, unit = float(m.group(1)), m.group(2).upper()
    size = int(number * _UNITS[unit])
    if size < 1:
        raise ValueError(f"{name}={value!r} must be at least one byte, e.g. 512M or 4G.")
    return size
