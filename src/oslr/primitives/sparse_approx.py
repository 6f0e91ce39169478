"""Sparse approximation of a target in a dictionary: OMP and IHT (ALGORITHMS.md B8, B9; used by
[ITO] Alg. 3, eq. (11): u_t = an s-sparse u with A u close to A u-tilde).

Both take a traced sparsity s over a static bound s_max, so a study can sweep k' without
recompiling, and both are pure functions of (A, b) that `vmap` over runs.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from oslr.primitives.topk import top_k_mask
from oslr.types import Array


def omp(a: Array, b: Array, s: Array, s_max: int, gram: Array | None = None) -> Array:
    """Orthogonal matching pursuit ([PRK93], [TG07]).

    r = b, S = {}; s times: j = argmax_{j not in S} |a_j^T r| / ||a_j|| (ties to the lower
    index), S += {j}, u_S = argmin ||b - A_S u_S||, r = b - A u. The least-squares step solves
    (M G M + (I - M)) u = M A^T b with M the selection mask and G = A^T A.

    Args:
      a: (d, m) dictionary (columns a_j; zero columns are never chosen).
      b: (d,) target.
      s: () int, sparsity, 0 <= s <= s_max (traced).
      s_max: static bound on s (min(s, s_max) iterations run, in a while loop).
      gram: optional precomputed (m, m) A^T A.

    Returns:
      (m,) u with at most s nonzero entries.
    """
    m = a.shape[-1]
    g = a.T @ a if gram is None else gram
    norms = jnp.sqrt(jnp.maximum(jnp.diagonal(g), 0.0))
    atb = a.T @ b
    dtype = jnp.result_type(g, atb)  # float32 data with a float64 target: float64 throughout
    eye = jnp.eye(m, dtype=dtype)

    def body(carry):
        i, sel, u = carry
        corr = atb - g @ u  # A^T r
        score = jnp.where(sel | (norms == 0), -jnp.inf,
                          jnp.abs(corr) / jnp.where(norms > 0, norms, 1.0))
        j = jnp.argmax(score)
        active = (i < s) & jnp.isfinite(score[j])
        sel = sel | (active & (jnp.arange(m) == j))
        msk = sel.astype(dtype)
        lhs = msk[:, None] * g * msk[None, :] + eye * (1.0 - msk)[:, None]
        u = jnp.linalg.solve(lhs, msk * atb)
        return i + 1, sel, u

    # only the s active iterations run (an inactive one would re-solve the same system)
    n_iter = jnp.minimum(s, s_max)
    _, _, u = lax.while_loop(lambda c: c[0] < n_iter, body,
                             (jnp.zeros((), jnp.int32), jnp.zeros(m, bool),
                              jnp.zeros(m, dtype)))
    return u


def iht(a: Array, b: Array, s: Array, s_max: int, n_iter: int = 30,
        step: Array | None = None) -> Array:
    """Iterative hard thresholding ([BD09]): u^0 = 0, u^{j+1} = H_s(u^j + mu A^T (b - A u^j)).

    Args:
      a: (d, m); b: (d,); s: () int traced sparsity, <= s_max (static).
      n_iter: iterations (OURS: 30).
      step: mu (default 0.99 / ||A||_2^2).

    Returns:
      (m,) u with at most s nonzero entries (H_s keeps the s largest |.|, ties to the lower
      index).
    """
    if step is None:
        step = 0.99 / jnp.maximum(jnp.linalg.norm(a, 2) ** 2, 1e-30)
    atb = a.T @ b
    g = a.T @ a

    def body(_, u):
        v = u + step * (atb - g @ u)
        return jnp.where(top_k_mask(jnp.abs(v), s, s_max), v, 0.0)

    return lax.fori_loop(0, n_iter, body, jnp.zeros(a.shape[-1], jnp.result_type(a, b)))


__all__ = ["iht", "omp"]
