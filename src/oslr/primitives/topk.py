"""Top-k masks with a traced k over a static `max_k` axis (ALGORITHMS.md section 0)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from oslr.types import Array


def top_k_mask(score: Array, k: Array, max_k: int) -> Array:
    """Boolean mask of the `k` largest entries of `score`, with `k` traced.

    One `lax.top_k` on the static `max_k`, then the first k of its indices are marked (a one-hot
    comparison for small max_k * d, a scatter otherwise). No full sort (unless max_k = d), no
    double argsort. Ties go to the lower index (the `lax.top_k` rule, as [KKLP] asks). Keep max_k as
    small as the study allows: top_k with max_k = d is a full sort, several times slower on
    XLA:CPU. (A threshold on the k-th value, or a cumsum over d, measured 10x slower here.)

    Args:
      score: (d,) scores.
      k: () int, 0 <= k <= max_k (traced).
      max_k: static upper bound on k, max_k <= d.

    Returns:
      (d,) bool with exactly min(k, max_k) True entries.
    """
    d = score.shape[-1]
    _, idx = lax.top_k(score, max_k)
    keep = jnp.arange(max_k) < k
    if max_k * d <= _ONE_HOT_LIMIT:
        return jnp.any((idx[:, None] == jnp.arange(d)[None, :]) & keep[:, None], axis=0)
    return jnp.zeros(d, bool).at[idx].set(keep)


_ONE_HOT_LIMIT = 1 << 15


def random_subset_mask(key: Array, d: int, k: Array, max_k: int) -> Array:
    """Uniformly random k-subset of [d] as a (d,) bool mask, k traced (top-k of U(0,1)^d)."""
    return top_k_mask(jax.random.uniform(key, (d,)), k, max_k)
