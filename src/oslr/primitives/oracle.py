"""The sparse linear oracle of [WLL] Lemma 1 (docs/algorithms.md B1).

    argmin_{w : ||w||_0 <= k, ||w||_b <= 1} <w, v>  =  -||top_k(|v|)||_a,   a = b / (b - 1).
"""

from __future__ import annotations

import math

import jax.numpy as jnp

from oslr.primitives.topk import top_k_mask
from oslr.types import Array


def _support(v: Array, k: Array, max_k: int, b: float) -> Array:
    if b == 1.0:  # the l1 ball's minimiser sits on one coordinate
        return top_k_mask(jnp.abs(v), jnp.minimum(k, 1), max_k)
    return top_k_mask(jnp.abs(v), k, max_k)


def oracle_weights(v: Array, q: Array, b: float) -> Array:
    """The Lemma 1 minimiser of <w, v> over ||w||_b <= 1 with support in the selected set q.

    b = inf: -sign(v) on q; b = 1: -sign(v) on q (q must hold one index); otherwise
    -sign(v_i) |v_i|^(a-1) / (sum_q |v_j|^a)^(1/b), a = b/(b-1). Zero when v_q = 0.

    Args:
      v: (d,) loss vector; q: (d,) bool selected set; b: static exponent.

    Returns:
      (d,) weights, same dtype as v.
    """
    sign = -jnp.sign(v)
    if math.isinf(b) or b == 1.0:
        return jnp.where(q, sign, 0.0).astype(v.dtype)
    a = b / (b - 1.0)
    mag = jnp.where(q, jnp.abs(v), 0.0)
    scale = jnp.max(mag)
    safe = jnp.where(scale > 0, scale, 1.0)
    r = mag / safe  # scale-invariant form: a / b = a - 1
    num = r ** (a - 1.0)
    den = jnp.sum(r**a) ** (1.0 / b)
    w = jnp.where(q & (scale > 0), sign * num / jnp.where(den > 0, den, 1.0), 0.0)
    return w.astype(v.dtype)


def sparse_oracle(v: Array, k: Array, max_k: int, b: float) -> tuple[Array, Array]:
    """Minimise <w, v> over K_{k,b} = {||w||_0 <= k, ||w||_b <= 1} ([WLL] Lemma 1).

    On Q = top_k(|v|): b = inf gives w_i = -sign(v_i); b = 1 gives -sign(v_i) e_i at argmax |v_i|;
    otherwise w_i = -sign(v_i) |v_i|^(a-1) / (sum_Q |v_j|^a)^(1/b). (The paper prints the exponent
    as "ab"; a - 1 is the correct one, see docs/algorithms.md B1.) If v_Q = 0 then w = 0.

    Args:
      v: (d,) linear loss vector.
      k: () int, traced sparsity.
      max_k: static bound on k.
      b: static norm exponent in [1, inf].

    Returns:
      w: (d,) the minimiser; q: (d,) bool, the selected index set Q (top-k indices).
    """
    q = _support(v, k, max_k, b)
    return oracle_weights(v, q, b), q


def sparse_oracle_value(v: Array, k: Array, max_k: int, b: float) -> Array:
    """||top_k(|v|)||_a with a = b/(b-1): minus the optimal value of `sparse_oracle` (() array)."""
    q = _support(v, k, max_k, b)
    mag = jnp.where(q, jnp.abs(v), 0.0)
    if b == 1.0:
        return jnp.max(mag)
    if math.isinf(b):
        return jnp.sum(mag)
    a = b / (b - 1.0)
    scale = jnp.max(mag)
    safe = jnp.where(scale > 0, scale, 1.0)
    return scale * jnp.sum((mag / safe) ** a) ** (1.0 / a)
