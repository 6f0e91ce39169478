"""Tables of all k-subsets of [d] (static k), shared by the learners that enumerate subsets
([FKK] Alg. 1, [ITO] Alg. 1) and by the exact comparator (`oslr.regret`, docs/algorithms.md R1).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

#: Bytes of one float32 / int32 entry.
_ITEM = 4


def n_subsets(d: int, k: int) -> int:
    """C(d, k), the number of k-subsets of [d]."""
    return math.comb(d, k)


def subset_table(d: int, k: int) -> np.ndarray:
    """All k-subsets of range(d) in lexicographic order, (C(d, k), k) int32, built once."""
    n = math.comb(d, k)
    flat = np.fromiter(itertools.chain.from_iterable(itertools.combinations(range(d), k)),
                       np.int32, count=n * k)
    return flat.reshape(n, k)


def subset_bytes(d: int, k: int, per_subset_floats: int) -> int:
    """Bytes of `per_subset_floats` float32 values per subset plus the (N, k) int32 table."""
    return n_subsets(d, k) * (per_subset_floats + k) * _ITEM


def check_subset_memory(name: str, d: int, k: int, per_subset_floats: int,
                        limit_gb: float) -> int:
    """Refuse a subset enumeration whose per-run state exceeds `limit_gb`; return C(d, k).

    The message says how many subsets there are and how many bytes one run needs, so a user can
    lower d or k, or raise the limit on a device with the memory.
    """
    n = n_subsets(d, k)
    need = subset_bytes(d, k, per_subset_floats)
    if need > limit_gb * 1e9:
        raise ValueError(
            f"{name} enumerates all C(d={d}, k={k}) = {n:,} subsets: one run needs "
            f"{need / 1e9:,.2f} GB ({per_subset_floats} float32 per subset plus the (N, k) int32 "
            f"table), above memory_limit_gb={limit_gb:g}. Lower d or k, or raise "
            "memory_limit_gb on a device that has the memory (runs multiply it).")
    return n


__all__ = ["check_subset_memory", "n_subsets", "subset_bytes", "subset_table"]
