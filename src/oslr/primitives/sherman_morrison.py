"""Sherman-Morrison rank-one inverse updates (docs/algorithms.md B11)."""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from oslr.types import Array


def sherman_morrison_update(a_inv: Array, x: Array) -> Array:
    """Return (A + x x^T)^{-1} from A^{-1}.

        A^{-1} - (A^{-1} x)(A^{-1} x)^T / (1 + x^T A^{-1} x)

    The result is symmetrised, and the denominator floored at 1 (A^{-1} is positive definite, so
    x^T A^{-1} x >= 0 in exact arithmetic), the float32 guards of B11.

    Args:
      a_inv: (d, d) symmetric positive definite inverse.
      x: (d,) rank-one direction.

    Returns:
      (d, d) updated inverse.
    """
    # HIGHEST: a GPU's default float32 product (TF32) would break the float32 accuracy of A^-1
    u = jnp.matmul(a_inv, x, precision=lax.Precision.HIGHEST)
    denom = 1.0 + jnp.maximum(jnp.dot(x, u, precision=lax.Precision.HIGHEST), 0.0)
    out = a_inv - jnp.outer(u, u) / denom
    return 0.5 * (out + out.T)
