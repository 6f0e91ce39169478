"""Online regression with partial information ([ITO] Ito, Hatano, Sumita, Yabe, Fukunaga,
Kakimura, Kawarabayashi 2018; docs/algorithms.md L3.1-L3.3), family F1 with observation maps.

* `ito-block-bandit` (Alg. 1, Cor. 2): blocks of tau rounds; per block an adversarial bandit
  (Exp3, or Tsallis-INF) picks one observation function of a finite family F = {f_1..f_K}, an
  online regressor (VAW; OGD or ONS) restarted at the block start predicts from the k observed
  values, and the block's mean normalised loss (clip(y-hat, -1, 1) - y)^2 / 4 is the arm's loss.
  F is "all k-subsets of the coordinates" (K = C(d, k), static k) or a user table (K, k, d) of
  observation rows (each row a_j reveals a_j^T x; e.g. k of m projections).
* `ito-dual-averaging` (Alg. 2, Thm 4): observe [w_t^T x, x_S] with S a uniform (k-1)-subset,
  predict w_t^T x; the unbiased gradient (3) g = (2 d / (k-1)) (y-hat - y) sum_{i in S} x_i e_i;
  dual averaging (4): w_t = -h / max(lam_t, ||h|| / D), lam_t = sqrt(8 d t / (k-1)).
* `ito-projection` (Alg. 3, Thm 8): a given A (d x m, ||A||_2 <= 1); u-tilde = -eta / max(lam_t,
  ||eta|| / D) in R^m (9), lam_t = sqrt(8 m t / (k-k')); u_t = a k'-sparse approximation of A
  u-tilde (11) by OMP (IHT option); observe a_i^T x for i in supp(u_t) u S, S a uniform
  (k-k')-subset of [m] (Alg. 3 prints "[d]", a typo); predict sum_i u_i a_i^T x; the estimator
  (12) gamma = (2 m / (k-k')) (y-hat - y) sum_{i in S} (a_i^T x) e_i.

Every observation of a linear form goes through `rnd.observe(mask, forms)` and counts as one.
Scales `lam_scale` (Algs 2, 3) and `eta_scale` (Alg. 1) multiply the printed rates (1 = as
printed) so that studies give every method the same tuning budget.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np
from jax import lax

from oslr.primitives import exp3, ogd, random_subset_mask, tsallis_inf, vaw
from oslr.primitives.projections import resolve_projection
from oslr.primitives.regressors import OgdStepParams, OnsParams, VawParams, ons
from oslr.primitives.selectors import Draw, SelectorState
from oslr.primitives.sparse_approx import iht, omp
from oslr.primitives.subsets import check_subset_memory, subset_table
from oslr.spec import Ctx, LearnerSpec, Option, param, register_params
from oslr.types import PREDICTION, Array, Learner, float_dtype


def dual_averaging_point(h: Array, lam: Array, radius: Array) -> Array:
    """argmin_{||w|| <= D} h^T w + (lam / 2) ||w||^2 = -h / max(lam, ||h|| / D) (eqs. (4), (9))."""
    return -h / jnp.maximum(lam, jnp.linalg.norm(h) / radius)


def sampled_gradient(values: Array, sample: Array, y_hat: Array, y: Array,
                     n_sample: Array, n: int) -> Array:
    """The unbiased estimate (3) / (12): (2 n / |S|) (y-hat - y) sum_{i in S} v_i e_i, with S a
    uniform |S|-subset of the n coordinates (Alg. 2: v = x, n = d, |S| = k - 1; Alg. 3:
    v_i = a_i^T x, n = m, |S| = k - k'); E_S = 2 (y-hat - y) v."""
    return (2.0 * n / n_sample.astype(float_dtype())) * (y_hat - y) * jnp.where(sample, values,
                                                                               0.0)


# --------------------------------------------------------------------------- Alg. 2


@register_params
class DualAveragingParams:
    """Sweepable parameters of `ito-dual-averaging`.

    Attributes:
      k: () int32, observations per round (one form w^T x and k - 1 coordinates; 2 <= k <= d).
      radius: () float32, D, the radius of the ball of w ([ITO] E3: not given, OURS 1).
      lam_scale: () float32, multiplies lam_t = sqrt(8 d t / (k - 1)).
    """

    k: Array = param(jnp.int32, lambda c: min(c.d, 4), lo=2, hi="max_k",
                     doc="observations per round: w^T x and k - 1 coordinates")
    radius: Array = param(jnp.float32, 1.0, lo=0.0, lo_open=True, doc="radius D of the w ball")
    lam_scale: Array = param(jnp.float32, 1.0, lo=0.0, lo_open=True,
                             doc="multiplies lam_t = sqrt(8 d t / (k - 1))")


class DualAveragingState(NamedTuple):
    """Attributes: h: (d,) float32, the sum of the gradient estimates."""

    h: Array


def da_lambda(params: DualAveragingParams, d: int, t: Array) -> Array:
    """lam_t = lam_scale sqrt(8 d t / (k - 1)) (Thm 4), t 1-based."""
    return params.lam_scale * jnp.sqrt(8.0 * d * jnp.asarray(t, float_dtype())
                                       / (params.k - 1).astype(float_dtype()))


def ito_dual_averaging(d: int, max_k: int | None = None) -> Learner:
    """[ITO] Algorithm 2 (all linear observation maps, dual averaging).

    Args:
      d: number of features.
      max_k: static bound on the traced k (default d).
    """
    max_k = d if max_k is None else int(max_k)
    if not 2 <= max_k <= d:
        raise ValueError(f"ito-dual-averaging: max_k={max_k} must lie in [2, d={d}].")

    def init(key: Array, params: DualAveragingParams) -> DualAveragingState:
        del key, params
        return DualAveragingState(jnp.zeros(d))

    def step(key: Array, state: DualAveragingState, rnd,
             params: DualAveragingParams) -> DualAveragingState:
        lam = da_lambda(params, d, rnd.t + 1)
        w = dual_averaging_point(state.h, lam, params.radius)
        sample = random_subset_mask(key, d, params.k - 1, max_k - 1)
        x, value = rnd.observe(sample, w[None, :])
        y_hat = value[0]
        y = rnd.commit(y_hat)
        return DualAveragingState(state.h + sampled_gradient(x, sample, y_hat, y, params.k - 1,
                                                             d))

    def budget(params: DualAveragingParams) -> Array:
        return params.k

    return Learner(init=init, step=step, family=PREDICTION, budget=budget,
                   name="ito-dual-averaging")


ITO_DUAL_AVERAGING = LearnerSpec(
    name="ito-dual-averaging",
    family=PREDICTION,
    description="observe w^T x and k - 1 uniform coordinates, dual averaging on the unbiased "
                "gradient ([ITO] Alg. 2, budget k)",
    factory=ito_dual_averaging,
    params=DualAveragingParams,
    options=(Option("max_k", lambda c: c.d, "static bound on the traced k", type=int,
                    fill="max_k"),),
    alt={"k": lambda c: min(c.d, 3), "radius": 2.0, "lam_scale": 0.5},
    reference="[ITO] Algorithm 2, Theorem 4",
)


# --------------------------------------------------------------------------- Alg. 3

APPROX = ("omp", "iht")


@register_params
class ProjectionParams:
    """Sweepable parameters of `ito-projection`.

    Attributes:
      k: () int32, observations per round (k' for the prediction, k - k' explored;
        <= max_observed).
      k_prime: () int32, sparsity k' of u_t (1 <= k' <= k - 1).
      radius: () float32, D ([ITO] E3: not given, OURS 1).
      lam_scale: () float32, multiplies lam_t = sqrt(8 m t / (k - k')).
    """

    k: Array = param(jnp.int32, lambda c: min(c.options["max_observed"], 4), lo=2,
                     hi="max_observed", doc="observations per round (k' predict, k - k' explore)")
    k_prime: Array = param(jnp.int32, lambda c: max(1, min(c.options["max_observed"], 4) // 2),
                           lo=1,
                           doc="sparsity k' of the prediction u_t (k' <= k - 1)")
    radius: Array = param(jnp.float32, 1.0, lo=0.0, lo_open=True, doc="radius D of the u ball")
    lam_scale: Array = param(jnp.float32, 1.0, lo=0.0, lo_open=True,
                             doc="multiplies lam_t = sqrt(8 m t / (k - k'))")


class ProjectionState(NamedTuple):
    """Attributes: eta: (m,) float32, the sum of the estimates gamma; approx_error: () float32,
    ||A (u-tilde - u_t)|| of the last round (the harness records it at the checkpoints)."""

    eta: Array
    approx_error: Array


def projection_lambda(params: ProjectionParams, m: int, t: Array) -> Array:
    """lam_t = lam_scale sqrt(8 m t / (k - k')) (Thm 8), t 1-based."""
    return params.lam_scale * jnp.sqrt(8.0 * m * jnp.asarray(t, float_dtype())
                                       / (params.k - params.k_prime).astype(float_dtype()))


def ito_projection(d: int, projection="gaussian", max_observed: int | None = None,
                   approx: str = "omp", max_k_prime: int | None = None) -> Learner:
    """[ITO] Algorithm 3 (k of m given projections).

    Args:
      d: number of features.
      projection: A (d, m) with ||A||_2 <= 1, or "gaussian" (m = 2 d, rescaled to ||A||_2 = 1,
        seed 0) or "identity" (`oslr.primitives.projections`).
      max_observed: static bound on the traced k (default min(m, 8)); OMP / IHT run
        max_observed - 1 iterations (those past k' are inactive).
      approx: "omp" (B8, default) or "iht" (B9, 30 iterations).
      max_k_prime: static bound on the traced k' (default max_observed - 1): OMP runs this
        many iterations, so a large budget with a small k' (the arena: k' = 2 of 62) does not
        unroll 61 of them.
    """
    a_mat = resolve_projection(projection, d)
    if a_mat is None:
        raise ValueError("ito-projection needs a projection A: 'gaussian', 'identity' or a "
                         "(d, m) matrix.")
    m = a_mat.shape[1]
    norm = float(np.linalg.norm(a_mat.astype(np.float64), 2))
    if norm > 1.0 + 1e-5:
        raise ValueError(f"ito-projection: ||A||_2 = {norm:.4g} > 1 ([ITO] assume <= 1); divide "
                         "A by its spectral norm.")
    max_k = min(m, 8) if max_observed is None else int(max_observed)
    if not 2 <= max_k <= m:
        raise ValueError(f"ito-projection: max_observed={max_k} must lie in [2, m={m}].")
    if approx not in APPROX:
        raise ValueError(f"ito-projection: approx={approx!r}; choose one of {APPROX}.")
    max_kp = max_k - 1 if max_k_prime is None else int(max_k_prime)
    if not 1 <= max_kp <= max_k - 1:
        raise ValueError(f"ito-projection: max_k_prime={max_kp} must lie in [1, "
                         f"max_observed - 1 = {max_k - 1}].")
    a = jnp.asarray(a_mat)
    gram = a.T @ a
    rows = a.T  # (m, d): row i is a_i^T

    def sparse(target: Array, s: Array) -> Array:
        if approx == "omp":
            return omp(a, target, s, max_kp, gram=gram)
        return iht(a, target, s, max_kp)

    def init(key: Array, params: ProjectionParams) -> ProjectionState:
        del key, params
        return ProjectionState(jnp.zeros(m), jnp.zeros(()))

    def step(key: Array, state: ProjectionState, rnd, params: ProjectionParams):
        n_explore = params.k - params.k_prime
        lam = projection_lambda(params, m, rnd.t + 1)
        u_tilde = dual_averaging_point(state.eta, lam, params.radius)
        target = a @ u_tilde
        u = sparse(target, params.k_prime)
        explore = random_subset_mask(key, m, n_explore, max_k - 1)
        use = (u != 0) | explore
        _, values = rnd.observe(jnp.zeros(d, bool), jnp.where(use[:, None], rows, 0.0))
        y_hat = jnp.dot(u, values)
        y = rnd.commit(y_hat)
        gamma = sampled_gradient(values, explore, y_hat, y, n_explore, m)
        err = jnp.linalg.norm(target - a @ u)
        return ProjectionState(state.eta + gamma, err)

    def budget(params: ProjectionParams) -> Array:
        return params.k

    def check(params: ProjectionParams, d_problem: int) -> None:
        k, kp = np.asarray(params.k), np.asarray(params.k_prime)
        if np.any(kp >= k):
            raise ValueError(f"ito-projection: k_prime={kp.tolist()} must be < k={k.tolist()} "
                             "(k - k' observations explore); lower k_prime or raise k.")
        if np.any(kp > max_kp):
            raise ValueError(f"ito-projection: k_prime={kp.tolist()} exceeds max_k_prime="
                             f"{max_kp} (the static bound OMP is built for); raise max_k_prime.")

    def diagnostics(state: ProjectionState, params: ProjectionParams) -> dict:
        return {"approx_error": state.approx_error}

    return Learner(init=init, step=step, family=PREDICTION, budget=budget, check=check,
                   diagnostics=diagnostics, name="ito-projection",
                   info={"m": int(m), "approx": approx, "max_k_prime": max_kp})


def _n_forms(c: Ctx) -> int:
    """m, the number of columns of the projection option."""
    a = resolve_projection(c.options.get("projection", "gaussian"), c.d)
    return c.d if a is None else int(a.shape[1])


ITO_PROJECTION = LearnerSpec(
    name="ito-projection",
    family=PREDICTION,
    description="observe k of m projections a_i^T x: OMP-sparsified dual averaging plus uniform "
                "exploration ([ITO] Alg. 3, budget k)",
    factory=ito_projection,
    params=ProjectionParams,
    options=(
        Option("projection", "gaussian", "A: 'gaussian' (m = 2d, ||A|| = 1), 'identity' or a "
               "(d, m) matrix"),
        Option("max_observed", lambda c: min(8, _n_forms(c)), "static bound on the traced k "
               "(default min(8, m))"),
        Option("approx", "omp", "k'-sparse approximation of A u-tilde", choices=APPROX),
        Option("max_k_prime", None, "static bound on the traced k' (default max_observed - 1; "
               "OMP runs this many iterations)"),
    ),
    alt={"k": lambda c: min(c.options["max_observed"], 3), "k_prime": 1, "radius": 2.0,
         "lam_scale": 0.5},
    reference="[ITO] Algorithm 3, Theorem 8",
)


# --------------------------------------------------------------------------- Alg. 1

REGRESSORS = ("vaw", "ogd", "ons")
BANDITS = ("exp3", "tsallis")


@register_params
class BlockParams(VawParams, OgdStepParams, OnsParams):
    """Sweepable parameters of `ito-block-bandit`: VAW's ridge `a` (regressor "vaw"), OGD's `eta`
    (regressor "ogd"), ONS's `beta` and `eps` (regressor "ons"), the ball radius of OGD / ONS, and

    Attributes:
      horizon: () float32, the T of the bandit rate (n_b = ceil(T / tau) blocks).
      eta_scale: () float32, multiplies Exp3's eta = sqrt(2 ln K / (n_b K)) (Tsallis-INF: its
        rate 2 / sqrt(n)).
    """

    horizon: Array = param(jnp.float32, lambda c: c.horizon, lo=1,
                           doc="the T of the bandit rate")
    eta_scale: Array = param(jnp.float32, 1.0, lo=0.0, lo_open=True,
                             doc="multiplies the bandit rate (Exp3 sqrt(2 ln K/(n_b K)))")


class BlockState(NamedTuple):
    """Attributes:
    bandit: the selector over the K observation functions (L-hat (K,), count).
    arm: () int32, this block's observation function; prob: () float32, its probability.
    reg: the inner regressor's state on the (k,) observed values (restarted each block).
    block_loss: () float32, the running mean of the normalised losses of this block.
    """

    bandit: SelectorState
    arm: Array
    prob: Array
    reg: object
    block_loss: Array


def bandit_rate(params: BlockParams, n_funcs: int, block: int, bandit: str = "exp3") -> Array:
    """Exp3: eta = eta_scale sqrt(2 ln K / (n_b K)), n_b = ceil(T / tau) (B4); Tsallis-INF: its
    rate 2 eta_scale (eta_n = rate / sqrt(n))."""
    if bandit == "tsallis":
        return 2.0 * params.eta_scale
    n_blocks = jnp.ceil(params.horizon / block)
    return params.eta_scale * jnp.sqrt(2.0 * math.log(n_funcs) / (n_blocks * n_funcs))


def default_block(c: Ctx) -> int:
    """Cor. 2: tau = ceil((T / K)^(1 / (3 - 2 q))), q = 0 for VAW and ONS (logarithmic), 1/2 for
    OGD."""
    n_funcs = (math.comb(c.d, c.options["k"]) if c.options.get("family") is None
               else int(np.shape(c.options["family"])[0]))
    q = 0.5 if c.options.get("regressor") == "ogd" else 0.0
    return max(1, math.ceil((c.horizon / n_funcs) ** (1.0 / (3.0 - 2.0 * q))))


def ito_block_bandit(d: int, k: int = 2, block: int = 1, family=None, regressor: str = "vaw",
                     bandit: str = "exp3", memory_limit_gb: float = 4.0) -> Learner:
    """[ITO] Algorithm 1 with Corollary 2's block length.

    Args:
      d: number of features.
      k: observations per round (static: the size of every observation function).
      block: tau, rounds per block (static; default from Cor. 2, `default_block`).
      family: None (all C(d, k) coordinate subsets) or a (K, k, d) table of observation rows.
      regressor: "vaw" (default), "ogd" or "ons", the inner learner on the k observed values.
      bandit: "exp3" (default) or "tsallis" (Tsallis-INF).
      memory_limit_gb: refuse families whose table and per-run state pass this.
    """
    if regressor not in REGRESSORS:
        raise ValueError(f"ito-block-bandit: regressor={regressor!r}; choose one of "
                         f"{REGRESSORS}.")
    if bandit not in BANDITS:
        raise ValueError(f"ito-block-bandit: bandit={bandit!r}; choose one of {BANDITS}.")
    if not (isinstance(block, (int, np.integer)) and block >= 1):
        raise ValueError(f"ito-block-bandit: block={block!r} must be an integer >= 1.")
    if family is None:
        if not (isinstance(k, (int, np.integer)) and 1 <= k <= d):
            raise ValueError(f"ito-block-bandit: k={k!r} must be an integer in [1, d={d}].")
        n_funcs = check_subset_memory("ito-block-bandit", d, k, per_subset_floats=1,
                                      limit_gb=memory_limit_gb)
        table = jnp.asarray(subset_table(d, k))
        rows = None
    else:
        rows_np = np.asarray(family, np.float32)
        if rows_np.ndim != 3 or rows_np.shape[2] != d or rows_np.shape[1] < 1:
            raise ValueError(f"ito-block-bandit: family must be a (K, k, d={d}) table of "
                             f"observation rows; got shape {rows_np.shape}.")
        need = rows_np.size * 4 + rows_np.shape[0] * 4
        if need > memory_limit_gb * 1e9:
            raise ValueError(f"ito-block-bandit: the family table needs {need / 1e9:,.2f} GB, "
                             f"above memory_limit_gb={memory_limit_gb:g}.")
        n_funcs, k = rows_np.shape[0], rows_np.shape[1]
        rows, table = jnp.asarray(rows_np), None
    sel = exp3(n_funcs) if bandit == "exp3" else tsallis_inf(n_funcs)
    reg = {"vaw": vaw, "ogd": ogd, "ons": ons}[regressor](k)

    def rate(params: BlockParams) -> Array:
        return bandit_rate(params, n_funcs, block, bandit)

    def init(key: Array, params: BlockParams) -> BlockState:
        return BlockState(sel.init(key), jnp.zeros((), jnp.int32), jnp.ones(()),
                          reg.init(params), jnp.zeros(()))

    def begin(key: Array, state: BlockState, params: BlockParams) -> BlockState:
        draw = sel.draw(key, state.bandit, rate(params))
        return state._replace(arm=draw.arm, prob=draw.prob, reg=reg.init(params),
                              block_loss=jnp.zeros(()))

    def finish(state: BlockState, params: BlockParams) -> BlockState:
        observed = jnp.arange(n_funcs) == state.arm
        losses = jnp.where(observed, state.block_loss, 0.0)
        bandit_state = sel.update(state.bandit, Draw(state.arm, observed, state.prob), losses,
                                  rate(params))
        return state._replace(bandit=bandit_state)

    def step(key: Array, state: BlockState, rnd, params: BlockParams) -> BlockState:
        t = rnd.t
        state = lax.cond(t % block == 0, lambda s: begin(key, s, params), lambda s: s, state)
        if rows is None:
            assert table is not None  # every k-subset: the table of them
            idx = table[state.arm]
            x = rnd.observe(jnp.zeros(d, bool).at[idx].set(True))
            z = x[idx]
        else:
            _, z = rnd.observe(jnp.zeros(d, bool), rows[state.arm])
        y_hat = reg.predict(state.reg, z, params)
        y = rnd.commit(y_hat)
        loss = (jnp.clip(y_hat, -1.0, 1.0) - y) ** 2 / 4.0
        state = state._replace(reg=reg.update(state.reg, z, y, params),
                               block_loss=state.block_loss + loss / block)
        return lax.cond(t % block == block - 1, lambda s: finish(s, params), lambda s: s, state)

    def budget(params: BlockParams) -> Array:
        return jnp.asarray(k, jnp.int32)

    return Learner(init=init, step=step, family=PREDICTION, budget=budget,
                   name="ito-block-bandit",
                   info={"k": int(k), "block": int(block), "n_functions": int(n_funcs),
                         "regressor": regressor, "bandit": bandit})


ITO_BLOCK_BANDIT = LearnerSpec(
    name="ito-block-bandit",
    family=PREDICTION,
    description="a bandit over observation functions per block of tau rounds, VAW restarted "
                "each block on the observed values ([ITO] Alg. 1, budget k)",
    factory=ito_block_bandit,
    params=BlockParams,
    options=(
        Option("k", lambda c: max(1, min(2, c.d)), "observations per round (size of each f)",
               type=int, fill="k"),
        Option("family", None, "None (all k-subsets) or a (K, k, d) table of observation rows"),
        Option("regressor", "vaw", "inner learner on the observed values", choices=REGRESSORS),
        Option("bandit", "exp3", "bandit over the observation functions", choices=BANDITS),
        Option("block", default_block, "tau, rounds per block (Cor. 2)"),
        Option("memory_limit_gb", 4.0, "refuse families whose tables pass this"),
    ),
    alt={"eta_scale": 3.0, "a": 0.5, "eta": 0.3},
    reference="[ITO] Algorithm 1, Corollary 2",
)
