"""Dantzig selector for realizable POSLR ([KKLP] Algorithm 1, Theorem 2; docs/algorithms.md L4.1).

Family F1, proper: the learner commits to a k-sparse w_t, predicts <x_t, w_t>, and explores a
uniform k0-subset S_t each round; the query is S_t u supp(w_t) (budget k0 + k).

Round t (1-based):
  1. t <= t0: w_t = 0. Else, when t is a power of 2, with n = t - 1 rounds seen:
     D = (1 - k0/d) diag(G_sum) ([KKLP] (5)); G = (G_sum - D) / n, in "unbiased" mode after
     multiplying the off-diagonal entries of G_sum by k0 (d - 1) / (d (k0 - 1)) (sampling without
     replacement makes them biased by d (k0 - 1) / (k0 (d - 1)); the paper's "paper" mode keeps
     them); c = c_sum / n; lam_n = C sqrt(d log(n d / delta) / (n k0)) (sigma + d / k0);
     w-hat = Dantzig selector (B10, `oslr.primitives.dantzig`, lam doubled while infeasible),
     w_t = w-hat on its top-k |entries| ((4); ties to the lower index). Otherwise w_t = w_{t-1}.
     A solve that does not converge (PDHG's iteration limit) is not used: w_t = w_{t-1}, and
     the diagnostics `lp_unconverged` (and `lp_loosened`, solves whose lam was doubled) count it;
     `simulate` warns when either is non-zero.
  2. query S_t u supp(w_t); predict <x_t, w_t>; receive y_t.
  3. x-hat = (d / k0) x_t(S_t) from S_t only (coordinates seen only through supp(w_t) must not
     enter it); G_sum += x-hat x-hat^T (a dense outer product: on XLA:CPU it runs 1.7x faster
     than a k0 x k0 scatter at d = 100, k0 = 10), c_sum += y_t x-hat.

The LP is solved only at powers of two after t0 (ceil(log2 T) times), inside the compiled scan
and batched over runs (the branch is taken on the round counter, which every run shares).
Theorem 2: Regret_T = O(k^2 log(d/delta) (d/k0)^3 log T) w.h.p. (constants not printed).
GAPs (docs/algorithms.md L4.1): the constant C (calibrate it: w* feasible in >= 95% of draws) and
t0 = ceil(k ln d ln T) (OURS).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np
from jax import lax

from oslr.primitives import random_subset_mask, top_k_mask
from oslr.primitives.dantzig import dantzig_lp
from oslr.spec import Ctx, LearnerSpec, Option, param, register_params
from oslr.types import PREDICTION, Array, Learner, float_dtype

GRAM_MODES = ("unbiased", "paper")


@register_params
class DantzigParams:
    """Sweepable parameters of `dantzig-poslr`.

    Attributes:
      k0: () int32, exploration features per round (traced, 1 <= k0 <= max_k0; >= 2 in
        "unbiased" mode).
      sigma: () float32, the noise level (or an upper bound) in lam_n.
      delta: () float32, the confidence level in lam_n.
      c_lambda: () float32, the universal constant C of lam_n (a GAP). Default 0.3: w* is
        feasible at every solve after t0 in 95% of E4 draws (d = 100, k = 5, Rademacher x,
        sigma = 0.1, k0 in {10, 20, 50}, T = 2^14; `oslr.experiments.kale.calibrate_c`).
    """

    k0: Array = param(jnp.int32, lambda c: min(c.d, max(2, 2 * c.options["k"])), lo=1, hi="max_k0",
                      doc="exploration features per round (uniform k0-subset)")
    sigma: Array = param(jnp.float32, 0.1, lo=0.0, doc="noise level sigma in lam_n")
    delta: Array = param(jnp.float32, 0.1, lo=0.0, hi=1.0, lo_open=True, hi_open=True,
                         doc="confidence delta in lam_n")
    c_lambda: Array = param(jnp.float32, 0.3, lo=0.0, lo_open=True,
                            doc="constant C of lam_n = C sqrt(d log(nd/delta)/(n k0)) (sigma+d/k0)"
                                " (0.3: calibrated, `oslr experiment kale-calibrate`)")


class DantzigState(NamedTuple):
    """Attributes:
    gram: (d, d) float32 sum of x-hat x-hat^T; xy: (d,) sum of y x-hat.
    w: (d,) the k-sparse predictor in use.
    lam: () the lam of the last converged solve (after doublings); doublings: () int32 total
    doublings; loosened: () int32 solves whose lam was doubled (the LP was infeasible).
    solves: () int32 LPs solved; unconverged: () int32 of them that did not converge (the
    iteration limit or a numerical error: w and lam were kept as they were).
    """

    gram: Array
    xy: Array
    w: Array
    lam: Array
    doublings: Array
    solves: Array
    loosened: Array
    unconverged: Array


def lambda_n(params: DantzigParams, d: int, n: Array) -> Array:
    """lam_n = C sqrt(d log(n d / delta) / (n k0)) (sigma + d / k0) (natural log)."""
    k0 = params.k0.astype(float_dtype())
    n = jnp.maximum(n, 1.0)
    return params.c_lambda * jnp.sqrt(d * jnp.log(n * d / params.delta) / (n * k0)) * (
        params.sigma + d / k0)


def gram_estimate(gram_sum: Array, n: Array, k0: Array, d: int, mode: str) -> Array:
    """The bias-corrected Gram estimate G of step 1 from the running sum of x-hat x-hat^T."""
    k0 = k0.astype(gram_sum.dtype)
    diag = jnp.diagonal(gram_sum)
    off = gram_sum - jnp.diag(diag)
    if mode == "unbiased":
        off = off * (k0 * (d - 1.0) / (d * jnp.maximum(k0 - 1.0, 1.0)))
    return (off + jnp.diag(diag - (1.0 - k0 / d) * diag)) / jnp.maximum(n, 1.0)


def dantzig_poslr(d: int, k: int = 2, max_k0: int | None = None, gram_mode: str = "unbiased",
                  t0: int = 1, lp_eps: float = 1e-4, lp_iterations: int = 20_000) -> Learner:
    """[KKLP] Algorithm 1.

    Args:
      d: number of features (static).
      k: sparsity of the committed predictor (static; top-k truncation (4)).
      max_k0: static bound on the traced k0 (default d).
      gram_mode: "unbiased" (the off-diagonal correction) or "paper" (as printed).
      t0: rounds with w = 0 before the first solve (static: the solve schedule is shared).
      lp_eps, lp_iterations: the PDHG tolerance and iteration limit of each LP.
    """
    max_k0 = d if max_k0 is None else int(max_k0)
    if gram_mode not in GRAM_MODES:
        raise ValueError(f"dantzig-poslr: gram_mode={gram_mode!r}; choose one of {GRAM_MODES}.")
    if not (isinstance(k, (int, np.integer)) and 1 <= k <= d):
        raise ValueError(f"dantzig-poslr: k={k!r} must be an integer in [1, d={d}].")
    if not 1 <= max_k0 <= d:
        raise ValueError(f"dantzig-poslr: max_k0={max_k0} must lie in [1, d={d}].")
    if not (isinstance(t0, (int, np.integer)) and t0 >= 1):
        raise ValueError(f"dantzig-poslr: t0={t0!r} must be an integer >= 1.")

    def init(key: Array, params: DantzigParams) -> DantzigState:
        del key, params
        zero = jnp.zeros((), jnp.int32)
        return DantzigState(gram=jnp.zeros((d, d)), xy=jnp.zeros(d), w=jnp.zeros(d),
                            lam=jnp.zeros(()), doublings=zero, solves=zero, loosened=zero,
                            unconverged=zero)

    def solve(state: DantzigState, n: Array, params: DantzigParams) -> DantzigState:
        g = gram_estimate(state.gram, n, params.k0, d, gram_mode)
        sol = dantzig_lp(g, state.xy / jnp.maximum(n, 1.0), lambda_n(params, d, n),
                         eps=lp_eps, iteration_limit=lp_iterations)
        w = jnp.where(top_k_mask(jnp.abs(sol.w), jnp.int32(k), k), sol.w, 0.0)
        ok = sol.converged  # a solve cut off by the iteration limit is not used
        return state._replace(w=jnp.where(ok, w.astype(state.w.dtype), state.w),
                              lam=jnp.where(ok, sol.lam.astype(state.lam.dtype), state.lam),
                              doublings=state.doublings + sol.doublings,
                              solves=state.solves + 1,
                              loosened=state.loosened + (sol.doublings > 0),
                              unconverged=state.unconverged + ~ok)

    def step(key: Array, state: DantzigState, rnd, params: DantzigParams) -> DantzigState:
        t1 = rnd.t + 1  # the paper's 1-based round
        refresh = (t1 > t0) & ((t1 & (t1 - 1)) == 0)
        n = (t1 - 1).astype(float_dtype())
        state = lax.cond(refresh, lambda s: solve(s, n, params), lambda s: s, state)
        explore = random_subset_mask(key, d, params.k0, max_k0)
        x = rnd.observe(explore | (state.w != 0))
        y = rnd.commit(jnp.dot(state.w, x))
        x_hat = jnp.where(explore, x, 0.0) * (d / params.k0.astype(float_dtype()))
        return state._replace(gram=state.gram + jnp.outer(x_hat, x_hat),
                              xy=state.xy + y * x_hat)

    def budget(params: DantzigParams) -> Array:
        return params.k0 + k

    def check(params: DantzigParams, d_problem: int) -> None:
        if gram_mode == "unbiased" and np.any(np.asarray(params.k0) < 2):
            raise ValueError("dantzig-poslr: gram_mode='unbiased' needs k0 >= 2 (its off-diagonal "
                             "correction divides by k0 - 1); use k0 >= 2 or gram_mode='paper'.")

    def diagnostics(state: DantzigState, params: DantzigParams) -> dict:
        f = float_dtype()
        # support: entries above the solver's tolerance (PDHG leaves dust of order lp_eps)
        return {"lambda": state.lam, "lp_doublings": state.doublings.astype(f),
                "lp_loosened": state.loosened.astype(f),
                "lp_unconverged": state.unconverged.astype(f),
                "support": jnp.sum(jnp.abs(state.w) > lp_eps).astype(f), "w": state.w}

    return Learner(init=init, step=step, family=PREDICTION, budget=budget, name="dantzig-poslr",
                   check=check, diagnostics=diagnostics,
                   info={"k": int(k), "gram_mode": gram_mode, "t0": int(t0)},
                   warn_if_nonzero={
                       "lp_unconverged": "LP solves did not converge (iteration limit or "
                                         "numerical error; the previous w was kept): raise "
                                         "lp_iterations or lp_eps",
                       "lp_loosened": "LP solves were infeasible and lam was doubled"})


def default_t0(c: Ctx) -> int:
    """ceil(k ln d ln T) (OURS; [KKLP] states t0 = O(k log d log T))."""
    return max(1, math.ceil(c.options["k"] * math.log(max(c.d, 2)) * math.log(max(c.horizon, 2))))


DANTZIG_POSLR = LearnerSpec(
    name="dantzig-poslr",
    family=PREDICTION,
    description="Dantzig selector on a uniform k0-subset estimate, re-solved at powers of two "
                "(realizable POSLR, budget k0 + k)",
    factory=dantzig_poslr,
    params=DantzigParams,
    options=(
        Option("k", lambda c: max(1, min(5, c.d // 4)), "sparsity of the committed predictor",
               type=int, fill="k"),
        Option("max_k0", lambda c: c.d, "static bound on the traced k0"),
        Option("gram_mode", "unbiased", "off-diagonal correction of the Gram estimate",
               choices=GRAM_MODES),
        Option("t0", default_t0, "rounds with w = 0 before the first LP (ceil(k ln d ln T))"),
        Option("lp_eps", 1e-4, "PDHG tolerance of each LP"),
        Option("lp_iterations", 20_000, "PDHG iteration limit of each LP"),
    ),
    alt={"c_lambda": 1.0, "sigma": 0.2, "k0": lambda c: min(c.d, max(2, 2 * c.options["k"]) + 1)},
    reference="[KKLP] Algorithm 1, Theorem 2",
)
