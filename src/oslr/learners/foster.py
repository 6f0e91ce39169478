"""Hedge over all k-subsets with per-subset projected SGD ([FKK] Algorithm 1;
docs/algorithms.md L5.1).

Family F1 with a query budget k' >= k + 2, ||x||_2 <= 1, |y| <= 1; the comparator is the best
k-sparse w with ||w||_2 <= 1 (R1 with the norm bound). Static k: the (N, k) table of the
N = C(d, k) subsets is built once; every subset S keeps its weights w_S in subset coordinates.

Round t:
  1. S-hat ~ D_t = softmax(-eta_H L-hat) (Hedge, `oslr.primitives.hedge`) and, independently, R a
     uniform (k' - k)-subset; query S-hat u R (<= k' features).
  2. predict y-hat = <w_{S-hat}, x_{S-hat}>; receive y.
  3. x_R = x on R only (never S-hat): X = (1/q) x_R x_R^T + (1/p - 1/q) diag(x_R^2), z = y x_R / p,
     p = (k' - k) / d, q = (k' - k)(k' - k - 1) / (d (d - 1)); E[X] = x x^T, E[z] = y x (eq. (1)).
  4. for all S at once, without forming X (O(N k) per round): with a_S = <x_R, w_S>,
     cost_S = a_S^2 / q + (1/p - 1/q) sum_{i in S} x_{R,i}^2 w_{S,i}^2 - 2 y a_S / p + y^2
     (eq. (2));
     L-hat += cost (the Hedge update D_{t+1} ~ D_t exp(-eta_H cost), normalised in log space).
  5. for all S: w_S <- Pi(w_S - 2 eta_SGD (X w_S - z)_S), Pi the projection on the l2 ball, where
     (X w_S - z)_i = x_{R,i} a_S / q + (1/p - 1/q) x_{R,i}^2 w_{S,i} - y x_{R,i} / p for i in S.

Rates (line 1): eta_H = q sqrt(ln d / T), eta_SGD = q sqrt(1 / T), each times a scale (default 1),
computed inside the step from the traced k' and the T of the params. Theorem 1: expected regret
O(d^2 / (k' - k)^2 sqrt(k log(d) T)) (the constant is not printed: `theorem_1_order` is the
order term with constant 1).

Hedge keeps L-hat shifted to min 0 (the log weights -eta_H L-hat are normalised in log space by
the softmax), so they stay finite in float32 at T = 1e6; S-hat is drawn by inversion of the
cumulative law (one random number per round). Every per-subset quantity is elementwise along the
subset axis, the minor axis of the (k, N) weights (only the softmax and the draw reduce over it),
so `subset_update` runs unchanged with that axis sharded over devices.
"""

from __future__ import annotations

import math
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from oslr.primitives import hedge, random_subset_mask
from oslr.primitives.selectors import SelectorState
from oslr.primitives.subsets import check_subset_memory, subset_table
from oslr.spec import LearnerSpec, Option, param, register_params
from oslr.types import PREDICTION, Array, Learner, float_dtype


@register_params
class FosterParams:
    """Sweepable parameters of `foster-hedge`.

    Attributes:
      k_query: () int32, the query budget k' (k + 2 <= k' <= max_k_query <= d; traced).
      horizon: () float32, the T of the rates of line 1.
      eta_hedge_scale: () float32, multiplies eta_H = q sqrt(ln d / T).
      eta_sgd_scale: () float32, multiplies eta_SGD = q sqrt(1 / T).
      radius: () float32, radius of the l2 ball of every w_S (1 in [FKK]).
    """

    k_query: Array = param(jnp.int32, lambda c: c.options["k"] + 2, lo=lambda c: c.options["k"] + 2,
                           hi="max_k_query",
                           doc="query budget k' (k + 2 extra-feature estimators need k' - k >= 2)")
    horizon: Array = param(jnp.float32, lambda c: c.horizon, lo=1, doc="the T of line 1's rates")
    eta_hedge_scale: Array = param(jnp.float32, 1.0, lo=0.0, lo_open=True,
                                   doc="multiplies eta_HEDGE = q sqrt(ln d / T)")
    eta_sgd_scale: Array = param(jnp.float32, 1.0, lo=0.0, lo_open=True,
                                 doc="multiplies eta_SGD = q sqrt(1 / T)")
    radius: Array = param(jnp.float32, 1.0, lo=0.0, lo_open=True,
                          doc="radius of the l2 ball of each w_S ([FKK]: 1)")


class FosterState(NamedTuple):
    """Attributes:
    hedge: Hedge state over the N subsets (L-hat (N,) float32 shifted to min 0, count n).
    w: (k, N) float32, w_S in subset coordinates (w[j, S] is the weight of feature table[S, j]);
      the subset axis is the minor one, so every per-subset operation is a contiguous vector op.
    """

    hedge: SelectorState
    w: Array


class Rates(NamedTuple):
    """p, q and the two step sizes of line 1 (all () float32)."""

    p: Array
    q: Array
    eta_hedge: Array
    eta_sgd: Array


def rates(params: FosterParams, d: int, k: int) -> Rates:
    """Line 1 of [FKK] Alg. 1 from the traced k' and T (natural log)."""
    m = (params.k_query - k).astype(float_dtype())
    p = m / d
    q = m * (m - 1.0) / (d * (d - 1.0))
    root_t = jnp.sqrt(params.horizon)
    return Rates(p, q, params.eta_hedge_scale * q * math.sqrt(math.log(d)) / root_t,
                 params.eta_sgd_scale * q / root_t)


def subset_update(xs: Array, w: Array, y: Array, r: Rates,
                  radius: Array) -> tuple[Array, Array]:
    """Every subset's cost (2) and its projected SGD step, in O(N k), without forming X.

    Args:
      xs: (k, N) x_R on each subset (x on R, 0 off R: `xs[j, S] = x_R[table[S, j]]`);
      w: (k, N) the subsets' weights; y: () label; r: `Rates`; radius: () l2 radius of each w_S.

    Returns:
      cost (N,) float32 (eq. (2)) and the new (k, N) weights.
    """
    # the k rows are summed one by one (k is static and small): XLA:CPU runs this about twice
    # as fast as reductions over the short leading axis (benchmarks/)
    inv_q, inv_p = 1.0 / r.q, 1.0 / r.p
    diag = inv_p - inv_q
    xw = [xs[j] * w[j] for j in range(w.shape[0])]
    a = _row_sum(xw)  # (N,) <x_R, w_S>
    cost = a * (a * inv_q - 2.0 * y * inv_p) + diag * _row_sum([v * v for v in xw]) + y * y
    coef = a * inv_q - y * inv_p
    # (X w_S - z)_i = x_{R,i} (a_S / q - y / p) + (1/p - 1/q) x_{R,i}^2 w_{S,i} on S
    new = [w[j] - 2.0 * r.eta_sgd * xs[j] * (coef + diag * xw[j]) for j in range(w.shape[0])]
    scale = jnp.minimum(1.0, radius * lax.rsqrt(jnp.maximum(_row_sum([v * v for v in new]),
                                                              1e-30)))
    return cost, jnp.stack([v * scale for v in new])


def _row_sum(rows: list[Array]) -> Array:
    total = rows[0]
    for v in rows[1:]:
        total = total + v
    return total


#: Subset gathers run as a matmul with a one-hot (k N, d) table when d is at most this (a GEMM
#: over the runs beats a gather on a CPU; the one-hot costs d flops per element).
ONE_HOT_UP_TO = 32


def subset_gather(table: Array, d: int) -> Callable[[Array], Array]:
    """`gather(v) -> (k, N)`, v[table.T] for a (d,) vector v: a one-hot matmul for small d, an
    indexed gather otherwise (the same values)."""
    table_t = table.T
    k, n = table_t.shape
    if d <= ONE_HOT_UP_TO and k * n * d * 4 <= 64 * 2**20:
        one_hot = jax.nn.one_hot(table_t.reshape(-1), d, dtype=float_dtype())  # (k N, d)
        return lambda v: (one_hot @ v).reshape(k, n)
    return lambda v: v[table_t]


def foster_hedge(d: int, k: int = 2, max_k_query: int | None = None,
                 memory_limit_gb: float = 4.0) -> Learner:
    """[FKK] Algorithm 1: Hedge over the C(d, k) subsets, projected SGD inside each.

    Args:
      d: number of features (static).
      k: sparsity of the comparator (static: the subset table has C(d, k) rows).
      max_k_query: static bound on the traced k' (default d); the extra set R is drawn over
        max_k_query - k slots, so a smaller bound draws fewer random numbers.
      memory_limit_gb: refuse tables whose per-run state exceeds this many GB.
    """
    if not (isinstance(k, (int, np.integer)) and 1 <= k <= d - 2):
        raise ValueError(f"foster-hedge needs a static sparsity 1 <= k <= d - 2 = {d - 2} (its "
                         f"query budget k' >= k + 2 must fit in d={d}); got k={k!r}.")
    max_k_query = d if max_k_query is None else int(max_k_query)
    if not k + 2 <= max_k_query <= d:
        raise ValueError(f"foster-hedge: max_k_query={max_k_query} must lie in [k + 2, d] = "
                         f"[{k + 2}, {d}].")
    n = check_subset_memory("foster-hedge", d, k, per_subset_floats=k + 1,
                            limit_gb=memory_limit_gb)
    table = jnp.asarray(subset_table(d, k))
    gather = subset_gather(table, d)
    sel = hedge(n)
    max_extra = max_k_query - k

    def init(key: Array, params: FosterParams) -> FosterState:
        return FosterState(hedge=sel.init(key), w=jnp.zeros((k, n), float_dtype()))

    def step(key: Array, state: FosterState, rnd, params: FosterParams) -> FosterState:
        k_sel, k_r = jax.random.split(key)
        r = rates(params, d, k)
        draw = sel.draw(k_sel, state.hedge, r.eta_hedge)
        chosen = table[draw.arm]  # (k,) the features of S-hat
        s_mask = jnp.zeros(d, bool).at[chosen].set(True)
        r_mask = random_subset_mask(k_r, d, params.k_query - k, max_extra)
        x = rnd.observe(s_mask | r_mask)
        y_hat = jnp.dot(state.w[:, draw.arm], x[chosen])
        y = rnd.commit(y_hat)
        x_r = jnp.where(r_mask, x, 0.0)  # the estimators read R only, never S-hat
        cost, w = subset_update(gather(x_r), state.w, y, r, params.radius)
        return FosterState(hedge=sel.update(state.hedge, draw, cost, r.eta_hedge), w=w)

    def budget(params: FosterParams) -> Array:
        return params.k_query

    def diagnostics(state: FosterState, params: FosterParams) -> dict:
        p = jax.nn.softmax(-rates(params, d, k).eta_hedge * state.hedge.cum_loss)
        return {"max_subset_prob": jnp.max(p)}

    return Learner(init=init, step=step, family=PREDICTION, budget=budget, name="foster-hedge",
                   info={"k": int(k), "n_subsets": int(n)}, diagnostics=diagnostics)


def theorem_1_order(d: int, k: int, k_query: int, horizon) -> np.ndarray:
    """The order term of [FKK] Theorem 1, d^2 / (k' - k)^2 sqrt(k ln(d) T) (constant 1: the
    theorem states O(.) only)."""
    return d**2 / (k_query - k) ** 2 * np.sqrt(k * math.log(d) * np.asarray(horizon, float))


FOSTER_HEDGE = LearnerSpec(
    name="foster-hedge",
    family=PREDICTION,
    description="Hedge over all C(d,k) subsets with per-subset projected SGD, budget k' >= k+2",
    factory=foster_hedge,
    params=FosterParams,
    options=(
        Option("k", lambda c: 2 if c.d >= 4 else 1,
               "sparsity of the comparator (static: C(d, k) subsets are enumerated)", type=int,
               fill="k"),
        Option("max_k_query", lambda c: c.d,
               "static bound on the traced k' (smaller draws fewer random numbers)"),
        Option("memory_limit_gb", 4.0, "refuse subset tables whose per-run state exceeds this"),
    ),
    alt={"eta_hedge_scale": 30.0, "eta_sgd_scale": 10.0, "radius": 0.5,
         "k_query": lambda c: min(c.d, c.options["k"] + 3)},
    reference="[FKK] Algorithm 1, Theorem 1",
)
