"""Follow the Perturbed Sparse Leader and its FTPL baselines ([WLL]; docs/algorithms.md L1, L1c).

Family F2: play w_t in K_{k,b} = {||w||_0 <= k, ||w||_b <= 1}, suffer <theta_t, w_t> with
theta_t = -y_t x_t, observe theta_{t,i} on the selected set Q_t only.

FTPSL round t ([WLL] Algorithm 1):
  1. draw(key): z ~ Laplace(0, 1)^d, coin ~ Bernoulli(gamma);
     coin = 1: Q = uniform k-subset (top_k(z)), w = k^(-1/b) 1_Q (the exploration set K-bar);
     coin = 0: w = argmin_{w in K} <w, eta S - z> (Lemma 1 oracle), Q = its top-k index set.
  2. play w_t, observe theta_t on Q_t;
  3. h = geometric resampling of draw (Algorithm 2) with M resamples from the same law;
  4. S <- S + theta_t * h * 1_{Q_t} (estimator (3)).

Parameters, eq. (1), with e_b = (b-1)/b (e_inf = 1, e_1 = 0) and T the horizon:
  eta = eta_scale * sqrt(k^e_b log d / (d^2 T log T)),  gamma = min(c0 d eta log T, gamma_max),
  M = ceil(d ln T / (k gamma)) in theory; the paper's experiments use M = 10 (our default).
eta and gamma are computed inside the step from the traced k, so a k/d grid keeps eq. (1) at every
point; sweep `eta_scale` and `c0` for eta / gamma grids. OURS (GAP in the paper): c0 = 1 and
gamma clipped to gamma_max = 0.5.

Baselines ([WLL] App. B, L1c): FTPL restricted to a fixed k-subset Q (random, drawn at init; or
the offline oracle subset, given as a params mask), all of Q observed every round, no exploration
and no resampling: w = argmin_{w in K, supp w in Q} <w, eta S - z>, S_Q += theta_Q. Same eta as
FTPSL (OURS: the paper does not state it).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from oslr.primitives import (
    TopK,
    batched_draw,
    counts_in_one_pass,
    geometric_resampling,
    knapsack_exact,
    knapsack_fptas,
    oracle_weights,
    random_subset_mask,
    sparse_oracle,
    top_k_mask,
)
from oslr.prng import paired_bits
from oslr.spec import Ctx, LearnerSpec, Option, param, register_params
from oslr.types import LINEAR, Array, Learner, Requirements, float_dtype


def norm_exponent(b: float) -> float:
    """e_b = (b - 1) / b, with e_inf = 1 ([WLL] eq. (1) convention)."""
    return 1.0 if math.isinf(b) else (b - 1.0) / b


def _default_k(c: Ctx) -> int:
    return max(1, c.d // 4)


@register_params
class EtaParams:
    """The inputs of eq. (1)'s learning rate besides k (shared by FTPSL and its baselines).

    Attributes:
      horizon: () float32, the T used in eq. (1).
      eta_scale: () float32, multiplies the eq. (1) learning rate.
    """

    horizon: Array = param(jnp.float32, lambda c: c.horizon, lo=2, doc="the T of eq. (1)")
    eta_scale: Array = param(jnp.float32, 1.0, lo=0.0, lo_open=True,
                             doc="multiplies the eq. (1) learning rate")


@register_params
class FtpslParams(EtaParams):
    """Sweepable FTPSL parameters (eq. (1) is evaluated inside the step): `EtaParams` and

    Attributes:
      k: () int32, sparsity (traced).
      c0: () float32, exploration constant of eq. (1).
      gamma_max: () float32, cap on gamma (OURS 0.5).
    """

    k: Array = param(jnp.int32, _default_k, lo=1, hi="max_k", doc="sparsity of the play")
    c0: Array = param(jnp.float32, 1.0, lo=0.0,
                      doc="exploration constant, gamma = min(c0 d eta log T, gamma_max)")
    gamma_max: Array = param(jnp.float32, 0.5, lo=0.0, hi=1.0, doc="cap on gamma (OURS)")

def learning_rate(params, d: int, b: float) -> Array:
    """eta of eq. (1) from params with fields k, horizon, eta_scale (natural logs)."""
    k = jnp.maximum(params.k, 1).astype(float_dtype())
    log_t = jnp.maximum(jnp.log(params.horizon), 1.0)
    return params.eta_scale * jnp.sqrt(
        k ** norm_exponent(b) * math.log(max(d, 2)) / (d**2 * params.horizon * log_t)
    )


def rates(params: FtpslParams, d: int, b: float) -> tuple[Array, Array]:
    """(eta, gamma) of eq. (1) for traced k and T (natural logs; log T floored at 1)."""
    eta = learning_rate(params, d, b)
    log_t = jnp.maximum(jnp.log(params.horizon), 1.0)
    gamma = jnp.minimum(params.c0 * d * eta * log_t, params.gamma_max)
    return eta, gamma


def theory_resamples(d: int, horizon: int, k: int, gamma: float) -> int:
    """M = ceil(d ln T / (k gamma)) of eq. (1) (often thousands; the experiments use 10)."""
    return int(math.ceil(d * math.log(horizon) / (k * gamma)))


class FtpslState(NamedTuple):
    """Attributes:
    cum_theta_hat: (d,) float32, S = sum of the estimates theta-hat (eta-free).
    t: () int32, rounds played.
    """

    cum_theta_hat: Array
    t: Array


def _estimator(draw, sets, n_resamples: int, gr_mode: str, max_k: int):
    """`estimate(key, s, rnd, params)`: play round t from `draw` on S = s (eq. (2)), receive theta
    on Q_t and return theta-hat_t (estimator (3) with the geometric resampling of Algorithm 2,
    whose fresh selected sets come from `sets`)."""
    if n_resamples < 1:
        raise ValueError(f"n_resamples={n_resamples} must be >= 1.")

    def estimate(key: Array, s: Array, rnd, params) -> Array:
        k_play, k_gr = jax.random.split(key)
        w, q = draw(k_play, s, params)
        theta = rnd.play(w, support=q)
        h = geometric_resampling(lambda kk, shape: sets(kk, s, params, shape), k_gr,
                                 n_resamples, selected=q, mode=gr_mode, max_k=max_k)
        return jnp.where(q, theta * h.astype(float_dtype()), 0.0)

    return estimate


def perturbation_noise(d: int):
    """`noise(key, shape)`: perturbations z ~ Laplace(0, 1)^d and exploration uniforms u
    (coin = u < gamma) for a batch `shape` of plays, from one call for d + 1 random 32-bit words
    a play, two words per threefry hash (`oslr.prng.paired_bits`: half the hashing of
    `jax.random.bits`, a third of FTPSL's round on a CPU): z (*shape, d) float32, u (*shape,)
    float32.

    z_j = +-E_j with the sign from word j's top bit and E_j = -log(1 - U_j), U_j uniform on the
    multiples of 2^-23 in [0, 1) from its low 23 bits (independent of the top bit): E_j ~
    Exp(1), so z_j ~ Laplace(0, 1) up to that discretisation (as `jax.random.laplace`'s).
    u is the last word's U."""

    def noise(key: Array, shape: tuple = ()) -> tuple[Array, Array]:
        words = paired_bits(key, shape + (d + 1,))
        mantissa = (words & jnp.uint32(0x7FFFFF)) | jnp.uint32(0x3F800000)  # 1 + U in [1, 2)
        u = lax.bitcast_convert_type(mantissa, jnp.float32) - 1.0
        e = -jnp.log(1.0 - u[..., :d])
        return jnp.where(words[..., :d] >> 31 == 1, e, -e), u[..., d]

    return noise


def _perturbed_draw(play, d: int, b: float, select=None) -> tuple[Callable, Callable]:
    """`(draw, sets)` for eq. (2) on S = s, each `f(key, s, params, shape=())` with leading dims
    `shape`, from `play(z, coin, v = eta s - z, params) -> (w (d,), q (d,) bool)` for one draw:
    `draw` gives (w, q); `sets` the selected sets of the same draws (for the resampling): as
    `TopK` when `select(z, coin, v, params) -> (score, k)` says Q = top-k of score (tested then
    by rank, no selection), else the masks q."""

    def batch(one, key, s, params, shape):
        eta, gamma = rates(params, d, b)
        return batched_draw(lambda z, u: one(z, u < gamma, eta * s - z, params),
                            perturbation_noise(d))(key, shape)

    def draw(key: Array, s: Array, params, shape: tuple = ()):
        return batch(play, key, s, params, shape)

    def sets(key: Array, s: Array, params, shape: tuple = ()):
        if select is None:
            return draw(key, s, params, shape)[1]
        return batch(lambda *a: TopK(*select(*a)), key, s, params, shape)

    return draw, sets


#: Largest static max_k at which FTPSL tests its resampled draws by rank (`in_top_k`, max_k d
#: comparisons a draw) instead of selecting them (`top_k_mask`), by how `in_top_k` counts here
#: (`counts_in_one_pass`: True on one CPU core): the rank test's cost grows with max_k, the
#: selection's does not; each set below where the two cross on a9a (d = 123), as measured in
#: benchmarks/HISTORY.md (2026-12-05).
RANK_TEST_UP_TO = {True: 96, False: 32}


def _ftpsl_parts(d: int, max_k: int, b: float, n_resamples: int, gr_mode: str):
    """The per-round pieces shared by `ftpsl` and `ftpsl_delayed`: (estimate, budget)."""
    if not b >= 1.0:
        raise ValueError(f"norm exponent b={b} must lie in [1, inf].")

    def select(z: Array, coin: Array, v: Array, params: FtpslParams) -> tuple[Array, Array]:
        # One top-k serves both branches of eq. (2): exploring, Q = top_k(z) is a uniform k-subset
        # (z is i.i.d. and continuous, hence exchangeable); leading, Q = top_k(|v|) (Lemma 1).
        # The coin is independent of z and only one branch is used, so the law is exactly eq. (2).
        k_sel = params.k if b > 1.0 else jnp.where(coin, params.k, jnp.minimum(params.k, 1))
        return jnp.where(coin, z, jnp.abs(v)), jnp.minimum(k_sel, max_k)

    def play(z: Array, coin: Array, v: Array, params: FtpslParams) -> tuple[Array, Array]:
        q = top_k_mask(*select(z, coin, v, params), max_k)
        scale = 1.0 if math.isinf(b) else jnp.maximum(params.k, 1).astype(float_dtype()) ** (-1 / b)
        w_lead = oracle_weights(v, q, b)
        w = jnp.where(coin, jnp.where(q, scale, 0.0), w_lead)
        return w.astype(float_dtype()), q

    # the resamples' sets: tested by rank at the k slots of Q_t up to RANK_TEST_UP_TO (max_k d
    # comparisons a draw), else selected like the play (radix select, about 40 d a draw)
    by_rank = max_k <= RANK_TEST_UP_TO[counts_in_one_pass()]
    draw, sets = _perturbed_draw(play, d, b, select if by_rank else None)

    def budget(params: FtpslParams) -> Array:
        return params.k

    return _estimator(draw, sets, n_resamples, gr_mode, max_k), budget


def ftpsl(d: int, max_k: int | None = None, b: float = 2.0, n_resamples: int = 10,
          gr_mode: str = "shared") -> Learner:
    """Follow the Perturbed Sparse Leader ([WLL] Algorithms 1 and 2).

    Args:
      d: dimension (static).
      max_k: static bound on the traced k (default d; smaller is faster).
      b: norm exponent of K_{k,b}, in [1, inf] (static).
      n_resamples: M, geometric-resampling cap (static; the paper's experiments use 10).
      gr_mode: "shared" or "independent" resampling (see `geometric_resampling`).
    """
    max_k = d if max_k is None else max_k
    estimate, budget = _ftpsl_parts(d, max_k, b, n_resamples, gr_mode)
    return _leader_learner(d, estimate, budget, "ftpsl",
                           {"b": b, "n_resamples": n_resamples, "gr_mode": gr_mode})


def _leader_learner(d: int, estimate, budget, name: str, info: dict) -> Learner:
    """A learner whose state is S = sum of its estimates, added as soon as they are formed."""

    def init(key: Array, params) -> FtpslState:
        del key, params
        return FtpslState(cum_theta_hat=jnp.zeros(d, float_dtype()), t=jnp.zeros((), jnp.int32))

    def step(key: Array, state: FtpslState, rnd, params) -> FtpslState:
        theta_hat = estimate(key, state.cum_theta_hat, rnd, params)
        return FtpslState(cum_theta_hat=state.cum_theta_hat + theta_hat, t=state.t + 1)

    return Learner(init=init, step=step, family=LINEAR, budget=budget, name=name, info=info)


class DelayedFtpslState(NamedTuple):
    """Attributes:
    cum_theta_hat: (d,) float32, S = sum of the estimates that have arrived.
    pending: (max_delay, d) float32 ring buffer; slot j holds what arrives at the end of a round
      t with t = j (mod max_delay).
    t: () int32, rounds played.
    """

    cum_theta_hat: Array
    pending: Array
    t: Array


def ftpsl_delayed(d: int, max_delay: int, max_k: int | None = None, b: float = 2.0,
                  n_resamples: int = 10, gr_mode: str = "shared") -> Learner:
    """FTPSL with delayed feedback ([WLL] section 4.1; docs/algorithms.md L1a).

    The feedback of round t arrives at the end of round t + D_t - 1 (D_t from the problem, read as
    `round.delay`, 1 <= D_t <= max_delay); the leader uses only the estimates that have arrived.
    theta-hat_t is formed at round t (its resampling needs only the round-t law) and parked in a
    ring buffer until it arrives. With D_t = 1 this is `ftpsl` bit for bit. Theorem 7 rates: use
    the same params with `horizon` = D = sum_t D_t and c0 = 2.

    Note: the delay is enforced by this learner's buffer, not by the harness (the round hands
    theta over at play time, as for every F2 learner).

    Args:
      d: dimension; max_delay: static ring-buffer length (>= every D_t of the problem); the rest
        as `ftpsl`.
    """
    if max_delay < 1:
        raise ValueError(f"max_delay={max_delay} must be >= 1.")
    max_k = d if max_k is None else max_k
    estimate, budget = _ftpsl_parts(d, max_k, b, n_resamples, gr_mode)

    def init(key: Array, params: FtpslParams) -> DelayedFtpslState:
        del key, params
        return DelayedFtpslState(cum_theta_hat=jnp.zeros(d, float_dtype()),
                                 pending=jnp.zeros((max_delay, d), float_dtype()),
                                 t=jnp.zeros((), jnp.int32))

    def step(key: Array, state: DelayedFtpslState, rnd, params: FtpslParams):
        theta_hat = estimate(key, state.cum_theta_hat, rnd, params)
        delay = jnp.clip(rnd.delay, 1, max_delay)
        due = jnp.mod(state.t + delay - 1, max_delay)
        pending = state.pending.at[due].add(theta_hat)
        now = jnp.mod(state.t, max_delay)
        arrived = pending[now]
        return DelayedFtpslState(cum_theta_hat=state.cum_theta_hat + arrived,
                                 pending=pending.at[now].set(0.0), t=state.t + 1)

    return Learner(init=init, step=step, family=LINEAR, budget=budget, name="ftpsl-delayed",
                   info={"b": b, "n_resamples": n_resamples, "gr_mode": gr_mode,
                                      "max_delay": max_delay},
                   requires=Requirements(max_delay=max_delay))


def _afforded_k(c: Ctx) -> int:
    """OURS: the most coordinates the budget affords, budget // min cost (at most d)."""
    return max(1, min(c.d, int(c["budget"]) // max(int(np.min(c["costs"])), 1)))


@register_params
class KnapsackParams(FtpslParams):
    """Parameters of `ftpsl_knapsack` ([WLL] section 4.2): `FtpslParams` and

    Attributes:
      k: () int32, the k of eq. (1) (OURS: the most coordinates the budget affords,
        budget // min cost; the paper only says the Theorem 3 bound carries over).
      costs: (d,) int32 observation costs c_i >= 1.
      budget: () int32 per-round budget B (<= the learner's static max_budget).
    """

    k: Array = param(jnp.int32, _afforded_k, sweepable=False, lo=1, hi="d",
                     doc="the k of eq. (1); default budget // min(costs)")
    costs: Array = param(jnp.int32, lambda c: np.ones(c.d, np.int32), sweepable=False, lo=1,
                         shape="d", doc="integer observation costs c_i >= 1")
    budget: Array = param(jnp.int32, _default_k, lo=1, hi="max_budget",
                          doc="per-round budget B")

def greedy_fill(order_score: Array, costs: Array, budget: Array) -> Array:
    """Random-order greedy fill: visit coordinates by decreasing `order_score` and take each one
    that still fits the budget. With i.i.d. continuous scores the order is a uniform permutation.
    (docs/algorithms.md L1b exploration law, OURS: the paper leaves it open.)"""
    d = order_score.shape[-1]
    order = jnp.argsort(-order_score)

    def visit(used, i):
        take = used + costs[i] <= budget
        return used + jnp.where(take, costs[i], 0), take

    _, taken = lax.scan(visit, jnp.zeros((), costs.dtype), order)
    return jnp.zeros(d, bool).at[order].set(taken)


def knapsack_leader_set(v: Array, costs: Array, budget: Array, b: float, max_budget: int,
                        solver: str = "exact", eps: float = 0.1) -> Array:
    """The support J of the knapsack leader for Theta = v ([WLL] section 4.2), (d,) bool.

    b = 1: the affordable i maximising |v_i| (none when nothing fits); b > 1: the set maximising
    sum_J (|v_i| / max |v|)^a, a = b / (b - 1) (a = 1 for b = inf), under sum_J c_i <= budget, by
    the exact DP (`solver="exact"`, integer costs up to the static `max_budget`) or the FPTAS.
    """
    mag = jnp.abs(v)
    fits = costs <= budget
    if b == 1.0:
        best = jnp.argmax(jnp.where(fits, mag, -1.0))
        return (jnp.arange(v.shape[-1]) == best) & fits[best]
    a = 1.0 if math.isinf(b) else b / (b - 1.0)
    values = (mag / jnp.maximum(jnp.max(mag), 1e-30)) ** a
    if solver == "exact":
        return knapsack_exact(values, costs, budget, max_budget)
    return knapsack_fptas(values, costs.astype(float_dtype()), budget.astype(float_dtype()), eps)


def ftpsl_knapsack(d: int, max_budget: int, b: float = 2.0, n_resamples: int = 10,
                   solver: str = "exact", eps: float = 0.1, gr_mode: str = "shared") -> Learner:
    """FTPSL with per-coordinate observation costs and a per-round budget ([WLL] section 4.2).

    Feasible set V = {||w||_b <= 1, sum_{i in supp w} c_i <= B}. Leader for Theta = eta S - z:
    b = 1: the affordable i maximising |Theta_i|, w = -sign(Theta_i) e_i; b > 1: J = knapsack
    (values |Theta_i|^a, a = b/(b-1), a = 1 for b = inf; costs c; budget B), then the Lemma 1
    weights on J. Exploration (probability gamma): random-order greedy fill J, w = |J|^(-1/b) 1_J.

    Args:
      d: dimension; max_budget: static bound on B (DP table size); b: norm exponent;
      n_resamples: M; solver: "exact" (DP, integer costs) or "fptas" (value rounding, accuracy
      `eps`; the paper's eps = 1/T^2 is impractical, docs/algorithms.md B3); gr_mode: as `ftpsl`.
    """
    if solver not in ("exact", "fptas"):
        raise ValueError(f"unknown knapsack solver {solver!r}; choose 'exact' or 'fptas'.")
    if not b >= 1.0:
        raise ValueError(f"norm exponent b={b} must lie in [1, inf].")
    max_items = min(d, max_budget)

    def leader_set(v: Array, params: KnapsackParams) -> Array:
        return knapsack_leader_set(v, params.costs, params.budget, b, max_budget, solver, eps)

    def play(z: Array, coin: Array, v: Array, params: KnapsackParams) -> tuple[Array, Array]:
        # as in `ftpsl`, the exploring branch reuses z (i.i.d.: a uniform random order)
        q = jnp.where(coin, greedy_fill(z, params.costs, params.budget), leader_set(v, params))
        size = jnp.maximum(jnp.sum(q), 1).astype(float_dtype())
        scale = 1.0 if math.isinf(b) else size ** (-1.0 / b)
        w = jnp.where(coin, jnp.where(q, scale, 0.0), oracle_weights(v, q, b))
        return w.astype(float_dtype()), q

    estimate = _estimator(*_perturbed_draw(play, d, b), n_resamples, gr_mode, max_items)

    def budget(params: KnapsackParams) -> Array:
        cheapest = jnp.maximum(jnp.min(params.costs), 1)
        return jnp.minimum(d, params.budget // cheapest).astype(jnp.int32)

    return _leader_learner(d, estimate, budget, "ftpsl-knapsack",
                           {"b": b, "n_resamples": n_resamples, "solver": solver, "eps": eps,
                            "max_budget": max_budget})


@register_params
class SubsetFtplParams(EtaParams):
    """Parameters of the fixed-subset FTPL baselines: `EtaParams` (the same eq. (1) eta) and

    Attributes:
      k: () int32, subset size (traced).
      subset: (d,) bool, the oracle subset (`ftpl-oracle-subset`; ignored by the random one).
    """

    k: Array = param(jnp.int32, _default_k, lo=1, hi="max_k", doc="subset size")
    subset: Array = param(jnp.bool_, lambda c: np.arange(c.d) < c["k"], sweepable=False,
                          shape="d", doc="the fixed subset (set offline for the oracle)")

def oracle_subset(x: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    """Offline oracle subset: top_k(|sum_t y_t x_t|) (Lemma 1 on the whole stream), (d,) bool.

    For a one-pass replay (T = n) the sum does not depend on the shuffle.
    """
    theta = np.abs(np.asarray(y, np.float64) @ np.asarray(x, np.float64))
    mask = np.zeros(theta.shape[0], bool)
    mask[np.argsort(-theta, kind="stable")[:k]] = True
    return mask


class SubsetFtplState(NamedTuple):
    """Attributes:
    cum_theta: (d,) float32, exact sum of theta on the subset.
    subset: (d,) bool, the fixed subset Q.
    index: (max_k,) int32, the indices of Q in increasing order (first k entries valid): each
      round perturbs and solves on these max_k slots only, not on all d coordinates.
    """

    cum_theta: Array
    subset: Array
    index: Array  # type: ignore[assignment]  # shadows tuple.index, as a field


def _subset_ftpl(d: int, max_k: int, b: float, oracle: bool) -> Learner:
    name = "ftpl-oracle-subset" if oracle else "ftpl-random-subset"

    def init(key: Array, params: SubsetFtplParams) -> SubsetFtplState:
        subset = params.subset if oracle else random_subset_mask(key, d, params.k, max_k)
        (index,) = jnp.nonzero(subset, size=max_k, fill_value=0)
        return SubsetFtplState(cum_theta=jnp.zeros(d, float_dtype()), subset=subset,
                               index=index.astype(jnp.int32))

    def step(key: Array, state: SubsetFtplState, rnd, params: SubsetFtplParams):
        eta = learning_rate(params, d, b)
        valid = jnp.arange(max_k) < params.k
        # perturb the |Q| = k slots only: z_j is the perturbation of coordinate index[j]
        z = jax.random.laplace(key, (max_k,), jnp.float32)
        v = jnp.where(valid, eta * state.cum_theta[state.index] - z, 0.0)
        # the oracle restricted to Q: top-k of |v| within Q (all of Q for b > 1)
        w_q, _ = sparse_oracle(v, params.k, max_k, b)
        w = jnp.zeros(d, float_dtype()).at[state.index].add(jnp.where(valid, w_q, 0.0))
        theta = rnd.play(w, support=state.subset)
        return state._replace(cum_theta=state.cum_theta + theta)

    def budget(params: SubsetFtplParams) -> Array:
        return params.k

    def check(params: SubsetFtplParams, d_problem: int) -> None:
        if oracle:
            sizes = np.asarray(params.subset).sum(axis=-1)
            if np.any(sizes != np.asarray(params.k)):
                raise ValueError(
                    f"{name}: the subset mask must hold exactly k entries (got {sizes.tolist()} "
                    f"for k={np.asarray(params.k).tolist()}); build it with "
                    "oslr.learners.ftpsl.oracle_subset(x, y, k)."
                )

    return Learner(init=init, step=step, family=LINEAR, budget=budget, name=name, check=check,
                   info={"b": b}, requires=Requirements(dataset=oracle))


def ftpl_random_subset(
d: int, max_k: int | None = None, b: float = 2.0) -> Learner:
    """FTPL on a uniformly random k-subset drawn before round 1 ([WLL] App. B baseline)."""
    return _subset_ftpl(d, d if max_k is None else max_k, b, oracle=False)


def ftpl_oracle_subset(d: int, max_k: int | None = None, b: float = 2.0) -> Learner:
    """FTPL on the offline best k-subset, given as `params.subset` ([WLL] App. B "oracle")."""
    return _subset_ftpl(d, d if max_k is None else max_k, b, oracle=True)


# --------------------------------------------------------------------------- specs

_MAX_K = Option("max_k", lambda c: c.d, "static bound on the traced k (smaller is faster)",
                type=int, fill="max_k")
_B = Option("b", 2.0, "norm exponent of K_{k,b}, in [1, inf]")
_M = Option("n_resamples", 10, "M, the geometric-resampling cap (the paper's experiments: 10)")
_GR = Option("gr_mode", "shared", "geometric resampling: shared or independent draws",
             ("shared", "independent"))


def _half(c: Ctx) -> int:
    return max(1, c.d // 2)


FTPSL = LearnerSpec(
    name="ftpsl",
    family=LINEAR,
    description="Follow the Perturbed Sparse Leader, b = 2, M = 10 geometric resampling",
    factory=ftpsl,
    params=FtpslParams,
    options=(_MAX_K, _B, _M, _GR),
    alt={"k": _half, "horizon": 500.0, "eta_scale": 3.0, "c0": 0.5},
    reference="[WLL] Algorithms 1-2, eq. (1)",
)


def _ftpsl_delayed_factory(d: int, max_delay: int = 64, max_k: int | None = None,
                           b: float = 2.0, n_resamples: int = 10, gr_mode: str = "shared"):
    return ftpsl_delayed(d, max_delay, max_k=max_k, b=b, n_resamples=n_resamples,
                         gr_mode=gr_mode)


FTPSL_DELAYED = LearnerSpec(
    name="ftpsl-delayed",
    family=LINEAR,
    description="FTPSL with delayed feedback (ring buffer of estimates); Theorem 7 rates when "
                "horizon = D, the total delay",
    factory=_ftpsl_delayed_factory,
    params=FtpslParams,
    options=(Option("max_delay", 64, "ring-buffer length (>= every delay D_t of the problem)",
                    type=int, fill="max_delay"),
             _MAX_K, _B, _M, _GR),
    defaults={"c0": 2.0},
    alt={"k": _half, "horizon": 900.0, "eta_scale": 3.0, "c0": 1.0},
    # the default horizon is the study's T, as for ftpsl: Theorem 7 needs T -> D = sum_t D_t,
    # which a study sets with horizon=expected_total_delay(schedule, max_delay, T)
    reference="[WLL] section 4.1, Theorem 7 (set horizon = D = sum of delays)",
)


def _knapsack_factory(d: int, max_budget: int | None = None, b: float = 2.0,
                      n_resamples: int = 10, solver: str = "exact", eps: float = 0.1,
                      gr_mode: str = "shared"):
    return ftpsl_knapsack(d, d if max_budget is None else max_budget, b=b,
                          n_resamples=n_resamples, solver=solver, eps=eps, gr_mode=gr_mode)


FTPSL_KNAPSACK = LearnerSpec(
    name="ftpsl-knapsack",
    family=LINEAR,
    description="FTPSL with observation costs and a per-round budget (exact DP or FPTAS leader)",
    factory=_knapsack_factory,
    params=KnapsackParams,
    options=(Option("max_budget", lambda c: c.d, "static bound on the budget B (DP table size)"),
             _B, _M, Option("solver", "exact", "knapsack leader: exact DP or FPTAS",
                            ("exact", "fptas")),
             Option("eps", 0.1, "FPTAS accuracy"), _GR),
    alt={"costs": lambda c: 1 + np.arange(c.d) % 3, "budget": lambda c: max(2, c.d // 2),
         "horizon": 500.0, "eta_scale": 3.0},
    reference="[WLL] section 4.2",
)

FTPL_RANDOM_SUBSET = LearnerSpec(
    name="ftpl-random-subset",
    family=LINEAR,
    description="FTPL on a random k-subset fixed before round 1 ([WLL] App. B baseline)",
    factory=ftpl_random_subset,
    params=SubsetFtplParams,
    options=(_MAX_K, _B),
    alt={"k": _half, "horizon": 500.0, "eta_scale": 3.0},
    reference="[WLL] App. B",
)


def _oracle_prepare(params, problem, problem_params):
    """Replace the subset by the offline best k-subset of the replayed dataset."""
    if not hasattr(problem_params, "x"):
        raise ValueError(
            "ftpl-oracle-subset needs a dataset problem (its oracle subset is computed offline "
            f"from the whole stream); problem {problem.name!r} is synthetic."
        )
    k = int(np.asarray(params.k))
    mask = oracle_subset(np.asarray(problem_params.x), np.asarray(problem_params.y), k)
    if problem.d > mask.shape[0]:  # redundant features appended: never in the oracle subset
        mask = np.concatenate([mask, np.zeros(problem.d - mask.shape[0], bool)])
    return dataclasses.replace(params, subset=jnp.asarray(mask))


FTPL_ORACLE_SUBSET = LearnerSpec(
    name="ftpl-oracle-subset",
    family=LINEAR,
    description="FTPL on the offline best k-subset of the stream ([WLL] App. B 'oracle')",
    factory=ftpl_oracle_subset,
    params=SubsetFtplParams,
    options=(_MAX_K, _B),
    alt={"k": _half, "horizon": 500.0, "eta_scale": 3.0,
         "subset": lambda c: np.arange(c.d) >= c.d - _half(c)},
    reference="[WLL] App. B",
    prepare=_oracle_prepare,
)


__all__ = [
    "EtaParams",
    "FtpslParams",
    "FtpslState",
    "KnapsackParams",
    "SubsetFtplParams",
    "ftpl_oracle_subset",
    "ftpl_random_subset",
    "ftpsl",
    "ftpsl_delayed",
    "ftpsl_knapsack",
    "greedy_fill",
    "knapsack_leader_set",
    "oracle_subset",
    "rates",
    "theory_resamples",
]
