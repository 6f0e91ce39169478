"""The Dantzig selector as a linear program, solved in JAX by mpax's PDHG (docs/algorithms.md B10;
[CT07]; [KKLP] eq. (3)).

    min ||w||_1  s.t.  ||c - G w||_inf <= lam

with G symmetric (possibly indefinite: a bias-corrected Gram estimate), split w = u - v, u, v >= 0:

    min 1^T u + 1^T v  s.t.  [G, -G; -G, G] [u; v] <= [c + lam 1; lam 1 - c].

mpax (`r2HPDHG`, restarted Halpern PDHG, dense matrices) solves it with `jit` and `vmap`, so a
study solves the LPs of all its runs at once inside the compiled scan. Each solve ends in one of
three ways, told apart (a solver that merely stopped never loosens the LP):

* converged: mpax says OPTIMAL and the point breaks no constraint by more than `100 eps lam`
  (a tolerance relative to lam, not to ||c||: a small lam is held to its own scale);
* infeasible: mpax certifies primal infeasibility (G indefinite or singular), or a zero row of G
  has |c_j| > lam (no w can help; PDHG only stalls there, e.g. on G = 0): lam is doubled, up to
  `max_doublings` times, and the count is returned;
* not converged: anything else (the iteration limit, a numerical error, an OPTIMAL point that
  breaks the constraints beyond the tolerance). `converged` is False; callers keep their
  previous answer and count it (`dantzig-poslr`'s `lp_unconverged`).
Tests compare objective values and constraint residuals with `scipy.optimize.linprog(method=
"highs")` (scipy only in tests).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from oslr.types import Array

#: mpax's TerminationStatus codes (mpax.utils.TerminationStatus) used here.
OPTIMAL, PRIMAL_INFEASIBLE, ITERATION_LIMIT, NUMERICAL_ERROR = 2, 3, 6, 7


class DantzigSolution(NamedTuple):
    """Attributes:
    w: (d,) the solution u - v.
    lam: () the lam of the feasible LP (the input times 2^doublings).
    doublings: () int32 how many times lam was doubled.
    status: () int32 mpax's termination status of the last solve (2: optimal, 6: iteration
      limit).
    iterations: () int32 PDHG iterations of the last solve.
    converged: () bool, the last solve converged (see the module docstring); when False, `w` is
      the solver's last iterate and should not be used.
    """

    w: Array
    lam: Array
    doublings: Array
    status: Array
    iterations: Array
    converged: Array


def dantzig_lp(g: Array, c: Array, lam: Array, eps: float = 1e-4, iteration_limit: int = 20_000,
               max_doublings: int = 10) -> DantzigSolution:
    """Solve the Dantzig selector LP for one (G, c, lam); `vmap` it over runs.

    Args:
      g: (d, d) symmetric; c: (d,); lam: () > 0.
      eps: mpax's absolute and relative tolerance (1e-4 suits float32; use 1e-9 under x64).
      iteration_limit: PDHG iterations per solve.
      max_doublings: the most times lam is doubled when the LP is infeasible.
    """
    from mpax import create_lp, r2HPDHG  # loaded only by the learners that solve LPs

    d = g.shape[-1]
    a_ub = jnp.block([[g, -g], [-g, g]])
    solver = r2HPDHG(eps_abs=eps, eps_rel=eps, iteration_limit=iteration_limit,
                     verbose=False)
    ones = jnp.ones(2 * d, g.dtype)

    def solve(lam_now):
        b_ub = jnp.concatenate([c + lam_now, lam_now - c])
        # mpax's form is G x >= h: -A_ub x >= -b_ub, 0 <= x
        with jax.numpy_rank_promotion("allow"):  # mpax relies on implicit rank promotion
            lp = create_lp(ones, jnp.zeros((0, 2 * d), g.dtype), jnp.zeros(0, g.dtype), -a_ub,
                           -b_ub, jnp.zeros(2 * d, g.dtype),
                           jnp.full(2 * d, jnp.inf, g.dtype), use_sparse_matrix=False)
            res = solver.optimize(lp)
        # ||c||_inf <= lam: w = 0 is optimal (and the only answer when G = 0, where the
        # solver's scaling breaks down)
        trivial = jnp.max(jnp.abs(c)) <= lam_now
        return (jnp.where(trivial, 0.0, res.primal_solution),
                jnp.where(trivial, OPTIMAL, res.termination_status).astype(jnp.int32),
                jnp.asarray(res.iteration_count, jnp.int32))

    # rows of G that are all zero: |c_j| <= lam is a constraint no w can meet or break
    zero_row = jnp.all(g == 0, axis=-1)

    def violation(res, lam_now) -> Array:
        x = res[0]
        w = x[:d] - x[d:]
        return jnp.max(jnp.abs(c - g @ w)) - lam_now

    def infeasible(res, lam_now) -> Array:
        stuck = jnp.any(zero_row & (jnp.abs(c) > lam_now))
        return (res[1] == PRIMAL_INFEASIBLE) | stuck

    def converged(res, lam_now) -> Array:
        return ((res[1] == OPTIMAL) & jnp.all(jnp.isfinite(res[0]))
                & (violation(res, lam_now) <= 100.0 * eps * lam_now))

    def body(carry):
        lam_now, n, _ = carry
        lam_now = 2.0 * lam_now
        return lam_now, n + 1, solve(lam_now)

    def cond(carry):
        lam_now, n, res = carry
        return infeasible(res, lam_now) & (n < max_doublings)

    lam = jnp.asarray(lam, g.dtype)
    lam, n, res = lax.while_loop(cond, body, (lam, jnp.zeros((), jnp.int32), solve(lam)))
    x, status, iterations = res
    w = x[:d] - x[d:]
    return DantzigSolution(w=jnp.where(jnp.isfinite(w).all(), w, 0.0), lam=lam, doublings=n,
                           status=status, iterations=iterations, converged=converged(res, lam))


def batched_dantzig_lp(g: Array, c: Array, lam: Array, **kw) -> DantzigSolution:
    """`dantzig_lp` over a leading batch axis of (g, c, lam)."""
    return jax.vmap(lambda gg, cc, ll: dantzig_lp(gg, cc, ll, **kw))(g, c, lam)


__all__ = ["DantzigSolution", "batched_dantzig_lp", "dantzig_lp"]
