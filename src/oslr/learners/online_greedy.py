"""Online greedy for agnostic POSLR: k1 budgeted-experts (BEXP) instances choose features, VAW
predicts on them ([KKLP] Algorithm 2, Theorem 9; docs/algorithms.md L4.2, L3.4).

Family F1, proper: the prediction is <w_t, x_t> with w_t supported on V_b (|V_b| <= k1) and the
query S_b (|S_b| <= k0) is fixed within each mini-batch of B rounds.

Batch b:
  1. each BEXP^(i), i = 1..k1, over the d coordinates with budget m_i (k0 // k1, the remainder
     one each to the first instances; bins drawn at init), follows j^(i) ~ softmax(-eta L-hat^(i))
     and observes the bin U^(i) of j^(i); V^(i) = {j^(1..i)} (duplicates collapse);
  2. S = U^(1) u ... u U^(k1) is queried every round of the batch; VAW (restarted) predicts on the
     coordinates of V = V^(k1);
  3. at the end of the batch, with the batch statistics G_S, c_S, yy of the observed columns,
     BEXP^(i) receives for each j in U^(i) the loss g_b(V^(i-1) u {j}) = min_w (1/B) sum_t
     (y_t - <x_t, w>)^2 over w supported on V^(i-1) u {j} (eq. (6)), in [0, max y^2], with its
     importance weight 1 / P(U^(i)).

Defaults (Thm 9 with kappa = 1, OURS for the gaps): k1 = min(k0, ceil(k ln T / 3)),
B = ceil((k0 T / (d k))^(1/3)), each BEXP's eta = sqrt(ln d / (n_bins_i ceil(T / B))), VAW a = 1.
k, k0, k1 and B are static (they fix shapes and the batch schedule); the eta scale and the VAW
ridge are params. Work: O(k0^2 + k1^2) per round, k0 least-squares solves of size k0 per batch.

With `projection` A (d x m) the "features" are the m forms a_i^T x (Ito et al.'s KKLP_A
baseline, docs/algorithms.md L3.4): BEXP chooses among the m columns, the round reveals a_i^T x
for i in S (each one observation) and VAW predicts <w, (a_i^T x)_{i in V}>, i.e. with the
d-vector A_V w.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from oslr.primitives.projections import resolve_projection
from oslr.primitives.regressors import LsState, VawParams, masked_ls_loss, vaw
from oslr.primitives.selectors import Draw, SelectorState, bexp, bexp_bins
from oslr.spec import Ctx, LearnerSpec, Option, param, register_params
from oslr.types import PREDICTION, Array, Learner


def budgets(k0: int, k1: int) -> np.ndarray:
    """(k1,) per-BEXP budgets m_i: k0 // k1 each, the remainder one each to the first (sum k0)."""
    return np.array([k0 // k1 + (i < k0 % k1) for i in range(k1)], np.int32)


@register_params
class GreedyParams(VawParams):
    """Sweepable parameters of `online-greedy`: VAW's ridge `a` and

    Attributes:
      horizon: () float32, the T of the BEXP rates (number of batches ceil(T / B)).
      eta_scale: () float32, multiplies every BEXP's eta = sqrt(ln d / (n_bins ceil(T / B))).
    """

    horizon: Array = param(jnp.float32, lambda c: c.horizon, lo=1,
                           doc="the T of the BEXP rates")
    eta_scale: Array = param(jnp.float32, 1.0, lo=0.0, lo_open=True,
                             doc="multiplies each BEXP's eta = sqrt(ln d / (n_bins ceil(T/B)))")


class GreedyState(NamedTuple):
    """Attributes:
    bexp: the k1 BEXP states stacked: cum_loss (k1, d), n (k1,), bin_of (k1, d).
    draws: this batch's draws stacked: arm (k1,), observed (k1, d) bool (U^(i)), prob (k1,).
    s_mask: (d,) bool, the queried set S; s_idx, s_ok: (k0,) int32 / bool, S as padded indices.
    v_idx, v_ok: (k1,) int32 / bool, the prediction support V as padded indices.
    vaw: VAW state on the (k1,) coordinates of V.
    gram, xy, yy: (k0, k0), (k0,), () batch statistics of the S columns.
    n: () float32 rounds in the batch so far.
    """

    bexp: SelectorState
    draws: Draw
    s_mask: Array
    s_idx: Array
    s_ok: Array
    v_idx: Array
    v_ok: Array
    vaw: LsState
    gram: Array
    xy: Array
    yy: Array
    n: Array


def bexp_rates(params: GreedyParams, d: int, m: np.ndarray, batch: int) -> Array:
    """(k1,) eta_i = eta_scale sqrt(ln d / (ceil(d / m_i) ceil(T / B)))."""
    n_bins = np.ceil(d / m).astype(np.float32)
    n_batches = jnp.ceil(params.horizon / batch)
    return params.eta_scale * jnp.sqrt(math.log(d) / (n_bins * n_batches))


def online_greedy(d: int, k0: int = 4, k1: int = 2, batch: int = 10, k: int = 2,
                  projection=None) -> Learner:
    """[KKLP] Algorithm 2.

    Args:
      d: number of features (static).
      k0: features queried per round (the union of the BEXP bins), 1 <= k0 <= n (n = d, or m
        with a projection).
      k1: BEXP instances, hence the most features a prediction uses, 1 <= k1 <= k0.
      batch: mini-batch length B (static: the batch schedule is the same for every run).
      k: the comparator's sparsity (only the defaults of k1 and B use it).
      projection: None (observe coordinates), or A (d, m) / "gaussian" / "identity"
        (`oslr.primitives.projections`): observe the forms a_i^T x instead (KKLP_A).
    """
    a_mat = resolve_projection(projection, d)
    d_obs = d
    d = d if a_mat is None else a_mat.shape[1]  # the learner works over n = m "features"
    forms_all = None if a_mat is None else jnp.asarray(a_mat.T)  # (m, d_obs) rows a_i^T
    for name, value, lo, hi in (("k0", k0, 1, d), ("k1", k1, 1, k0), ("batch", batch, 1, None)):
        if not isinstance(value, (int, np.integer)) or value < lo or (hi is not None
                                                                     and value > hi):
            raise ValueError(f"online-greedy: {name}={value!r} must be an integer in "
                             f"[{lo}, {hi if hi is not None else 'inf'}].")
    m = budgets(k0, k1)
    m_max = int(m.max())
    sel = bexp(d, m_max)  # probs / observe / update read the bins from the state
    reg = vaw(k1)
    m_arr = jnp.asarray(m)

    def init(key: Array, params: GreedyParams) -> GreedyState:
        keys = jax.random.split(key, k1)
        bins = jax.vmap(lambda kk, mi: bexp_bins(kk, d, mi))(keys, m_arr)
        states = jax.vmap(sel.init)(keys)._replace(bin_of=bins)
        zeros_d = jnp.zeros((k1, d), bool)
        return GreedyState(
            bexp=states, draws=Draw(jnp.zeros(k1, jnp.int32), zeros_d, jnp.ones(k1)),
            s_mask=jnp.zeros(d, bool), s_idx=jnp.zeros(k0, jnp.int32), s_ok=jnp.zeros(k0, bool),
            v_idx=jnp.zeros(k1, jnp.int32), v_ok=jnp.zeros(k1, bool),
            vaw=reg.init(params), gram=jnp.zeros((k0, k0)), xy=jnp.zeros(k0),
            yy=jnp.zeros(()), n=jnp.zeros(()))

    def begin(key: Array, state: GreedyState, params: GreedyParams) -> GreedyState:
        etas = bexp_rates(params, d, m, batch)
        draws = jax.vmap(sel.draw)(jax.random.split(key, k1), state.bexp, etas)
        s_mask = jnp.any(draws.observed, axis=0)
        v_mask = jnp.zeros(d, bool).at[draws.arm].set(True)
        s_idx = jnp.nonzero(s_mask, size=k0, fill_value=0)[0].astype(jnp.int32)
        v_idx = jnp.nonzero(v_mask, size=k1, fill_value=0)[0].astype(jnp.int32)
        return state._replace(
            draws=draws, s_mask=s_mask, s_idx=s_idx, s_ok=jnp.arange(k0) < jnp.sum(s_mask),
            v_idx=v_idx, v_ok=jnp.arange(k1) < jnp.sum(v_mask), vaw=reg.init(params),
            gram=jnp.zeros((k0, k0)), xy=jnp.zeros(k0), yy=jnp.zeros(()), n=jnp.zeros(()))

    def finish(state: GreedyState, params: GreedyParams) -> GreedyState:
        draws = state.draws
        one_hot = jax.nn.one_hot(draws.arm, d, dtype=jnp.int32)  # (k1, d)
        before = (jnp.cumsum(one_hot, axis=0) - one_hot) > 0  # V^(i-1), (k1, d)
        cand = jax.vmap(lambda u: jnp.nonzero(u, size=m_max, fill_value=0)[0])(
            draws.observed)  # (k1, m_max): the members of U^(i)
        cand_ok = jnp.arange(m_max)[None, :] < jnp.sum(draws.observed, axis=1)[:, None]
        in_set = before[:, None, :] | (jnp.arange(d)[None, None, :] == cand[:, :, None])
        masks = in_set[:, :, state.s_idx] & state.s_ok[None, None, :]  # (k1, m_max, k0)
        n = jnp.maximum(state.n, 1.0)
        loss = jax.vmap(jax.vmap(lambda r: masked_ls_loss(state.gram, state.xy, state.yy, r)))(
            masks) / n
        per_arm = jax.vmap(lambda c, v: jnp.zeros(d).at[c].add(v))(
            cand, jnp.where(cand_ok, loss, 0.0))
        etas = bexp_rates(params, d, m, batch)
        states = jax.vmap(sel.update)(state.bexp, draws, per_arm, etas)
        return state._replace(bexp=states)

    def step(key: Array, state: GreedyState, rnd, params: GreedyParams) -> GreedyState:
        t = rnd.t
        state = lax.cond(t % batch == 0, lambda s: begin(key, s, params), lambda s: s, state)
        if forms_all is None:
            x = rnd.observe(state.s_mask)
        else:  # the queried forms a_i^T x, i in S, in place of coordinates
            _, x = rnd.observe(jnp.zeros(d_obs, bool),
                               jnp.where(state.s_mask[:, None], forms_all, 0.0))
        x_s = jnp.where(state.s_ok, x[state.s_idx], 0.0)
        x_v = jnp.where(state.v_ok, x[state.v_idx], 0.0)
        y = rnd.commit(reg.predict(state.vaw, x_v, params))
        state = state._replace(
            vaw=reg.update(state.vaw, x_v, y, params),
            gram=state.gram + jnp.outer(x_s, x_s), xy=state.xy + y * x_s,
            yy=state.yy + y * y, n=state.n + 1.0)
        return lax.cond(t % batch == batch - 1, lambda s: finish(s, params), lambda s: s, state)

    def budget(params: GreedyParams) -> Array:
        return jnp.asarray(k0, jnp.int32)

    return Learner(init=init, step=step, family=PREDICTION, budget=budget, name="online-greedy",
                   info={"k0": int(k0), "k1": int(k1), "batch": int(batch),
                         "projection_m": 0 if a_mat is None else int(d)})


def default_k1(c: Ctx) -> int:
    """min(k0, ceil(k ln T / 3)) (Thm 9 with kappa = 1)."""
    k1 = math.ceil(c.options["k"] * math.log(max(c.horizon, 2)) / 3)
    return int(min(c.options["k0"], max(1, k1)))


def default_batch(c: Ctx) -> int:
    """ceil((k0 T / (d k))^(1/3)) (Thm 9 with kappa = 1)."""
    return max(1, math.ceil((c.options["k0"] * c.horizon / (c.d * c.options["k"])) ** (1 / 3)))


ONLINE_GREEDY = LearnerSpec(
    name="online-greedy",
    family=PREDICTION,
    description="k1 budgeted-experts (BEXP) pick features per mini-batch, VAW predicts on them "
                "(budget k0)",
    factory=online_greedy,
    params=GreedyParams,
    options=(
        Option("k", lambda c: max(1, min(5, c.d // 4)),
               "comparator sparsity (sets the defaults of k1 and batch)", type=int, fill="k"),
        Option("k0", lambda c: min(c.d, 2 * c.options["k"]), "features queried per round"),
        Option("k1", default_k1, "BEXP instances (most features a prediction uses)"),
        Option("batch", default_batch, "mini-batch length B"),
        Option("projection", None, "None (coordinates), 'gaussian' (m = 2d, ||A|| = 1), "
               "'identity' or a (d, m) A: observe a_i^T x instead (KKLP_A)"),
    ),
    alt={"eta_scale": 5.0, "a": 0.5},
    reference="[KKLP] Algorithm 2, Theorem 9",
)
