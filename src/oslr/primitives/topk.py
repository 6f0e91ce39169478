"""Top-k masks with a traced k over a static `max_k` axis (ALGORITHMS.md section 0)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from oslr.types import Array


def top_k_mask(score: Array, k: Array, max_k: int) -> Array:
    """Boolean mask of the `k` largest entries of `score`, with `k` traced.

    One `lax.top_k` on the static `max_k` gives the k-th largest value v_k; the mask is
    score > v_k plus the lowest-index entries equal to v_k, up to k in all. No full sort (unless
    max_k = d), no double argsort, no scatter. Ties go to the lower index (the `lax.top_k` rule, as
    [KKLP] asks). Keep max_k as small as the study allows: top_k with max_k = d is a full sort,
    several times slower on XLA:CPU.

    Args:
      score: (d,) scores.
      k: () int, 0 <= k <= max_k (traced).
      max_k: static upper bound on k, max_k <= d.

    Returns:
      (d,) bool with exactly min(k, max_k) True entries.
    """
    vals, _ = lax.top_k(score, max_k)
    k = jnp.clip(k, 0, max_k)
    kth = vals[jnp.maximum(k - 1, 0)]
    above = score > kth
    tie = score == kth
    room = k - jnp.sum(above, dtype=jnp.int32)
    take_tie = tie & (jnp.cumsum(tie, dtype=jnp.int32) <= room)
    return (above | take_tie) & (k > 0)


def random_subset_mask(key: Array, d: int, k: Array, max_k: int) -> Array:
    """Uniformly random k-subset of [d] as a (d,) bool mask, k traced (top-k of U(0,1)^d)."""
    return top_k_mask(jax.random.uniform(key, (d,)), k, max_k)
