"""Sparse approximation of a target in a dictionary: OMP and IHT (docs/algorithms.md B8, B9; used by
[ITO] Alg. 3, eq. (11): u_t = an s-sparse u with A u close to A u-tilde).

Both take a traced sparsity s over a static bound s_max, so a study can sweep k' without
recompiling, and both are pure functions of (A, b) that `vmap` over runs.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
from jax import lax

from oslr.primitives.topk import top_k_mask
from oslr.types import Array


#: Slot counts up to this use the unrolled Cholesky `spd_solve`; above it the graph of an
#: unrolled factorisation per iteration grows as s_max^4 (61 slots: a compile that took over
#: 20 GB), so OMP calls LAPACK's solve instead.
UNROLL_MAX = 8


def omp(a: Array, b: Array, s: Array, s_max: int, gram: Array | None = None) -> Array:
    """Orthogonal matching pursuit ([PRK93], [TG07]).

    r = b, S = {}; s times: j = argmax_{j not in S} |a_j^T r| / ||a_j|| (ties to the lower
    index), S += {j}, u_S = argmin ||b - A_S u_S||, r = b - A u. The chosen columns sit in
    min(s_max, m) slots; the least-squares step solves the slots' Gram block G_SS u_S =
    (A^T b)_S (inactive slots padded with the identity) by an unrolled Cholesky factorisation:
    elementwise work that batches across runs, where a masked m x m solve cost 7x more
    (ito-projection, m = 20, s_max = 3); above UNROLL_MAX slots by LAPACK's solve.

    Args:
      a: (d, m) dictionary (columns a_j; zero columns are never chosen).
      b: (d,) target.
      s: () int, sparsity, 0 <= s <= s_max (traced).
      s_max: static bound on s (min(s_max, m) iterations, those past s inactive).
      gram: optional precomputed (m, m) A^T A.

    Returns:
      (m,) u with at most s nonzero entries.
    """
    m = a.shape[-1]
    g = a.T @ a if gram is None else gram
    norms = jnp.sqrt(jnp.maximum(jnp.diagonal(g), 0.0))
    atb = a.T @ b
    dtype = jnp.result_type(g, atb)  # float32 data with a float64 target: float64 throughout
    g, atb = g.astype(dtype), atb.astype(dtype)
    n_slots = max(1, min(int(s_max), m))
    idx = jnp.zeros(n_slots, jnp.int32)  # the chosen columns, in order
    on = jnp.zeros(n_slots, bool)  # which slots hold a chosen column
    sel = jnp.zeros(m, bool)
    u = jnp.zeros(m, dtype)
    for i in range(n_slots):
        corr = atb - g @ u  # A^T r
        score = jnp.where(sel | (norms == 0), -jnp.inf,
                          jnp.abs(corr) / jnp.where(norms > 0, norms, 1.0))
        j = jnp.argmax(score).astype(jnp.int32)
        active = (i < s) & jnp.isfinite(score[j])
        idx = idx.at[i].set(jnp.where(active, j, 0))
        on = on.at[i].set(active)
        sel = sel | (active & (jnp.arange(m) == j))
        mask = on.astype(dtype)
        block = g[idx[:, None], idx[None, :]] * mask[:, None] * mask[None, :]
        block = block + jnp.diag(1.0 - mask)
        coef = (spd_solve(block, atb[idx] * mask) if n_slots <= UNROLL_MAX
                else jnp.linalg.solve(block, atb[idx] * mask))
        u = jnp.zeros(m, dtype).at[idx].add(coef * mask)
    return u


def spd_solve(lhs: Array, rhs: Array) -> Array:
    """x with lhs x = rhs for a small symmetric positive definite (n, n) lhs (n static), by a
    Cholesky factorisation written out elementwise (no LAPACK call: under vmap it is plain
    vector work, fast for n up to about 8)."""
    n = lhs.shape[-1]
    low: list[list[Any]] = [[None] * n for _ in range(n)]
    for j in range(n):
        diag = lhs[j, j] - sum((low[j][p] * low[j][p] for p in range(j)), 0.0)
        low[j][j] = jnp.sqrt(jnp.maximum(diag, jnp.finfo(lhs.dtype).tiny))
        for i in range(j + 1, n):
            low[i][j] = (lhs[i, j] - sum((low[i][p] * low[j][p] for p in range(j)), 0.0)
                         ) / low[j][j]
    z: list[Any] = []
    for i in range(n):  # L z = rhs
        z.append((rhs[i] - sum((low[i][p] * z[p] for p in range(i)), 0.0)) / low[i][i])
    x: list[Any] = [None] * n
    for i in reversed(range(n)):  # L^T x = z
        x[i] = (z[i] - sum((low[p][i] * x[p] for p in range(i + 1, n)), 0.0)) / low[i][i]
    return jnp.stack(x)


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


__all__ = ["UNROLL_MAX", "iht", "omp", "spd_solve"]
