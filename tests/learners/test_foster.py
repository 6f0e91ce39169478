"""Hedge over k-subsets ([FKK] Alg. 1): estimators, rates, float64 reference, refusals."""

import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import oslr
from oslr.learners.foster import Rates, rates, subset_gather, subset_update, theorem_1_order
from oslr.primitives import random_subset_mask
from oslr.primitives.subsets import subset_table
from oslr.testing import episode_fn
from tests.helpers import learner_keys, run_on_host_devices, stream, users_build
from tests.reference.foster import estimators, foster_reference


def _params(d, **kw):
    return oslr.make("foster-hedge", d=d, **kw)


def test_rates__line_1_golden_values():
    # d = 8, k = 2, k' = 4, T = 1e4: p = 2/8, q = 2 * 1 / (8 * 7) = 1/28,
    # eta_H = (1/28) sqrt(ln 8 / 1e4) = 5.1500961e-4, eta_SGD = (1/28) / 100 = 3.5714286e-4
    _, params = _params(8, k=2, horizon=10_000)
    r = rates(params, 8, 2)
    np.testing.assert_allclose([r.p, r.q, r.eta_hedge, r.eta_sgd],
                               [0.25, 1 / 28, 5.1500961e-4, 3.5714286e-4], rtol=1e-6)
    # d = 10, k = 3, k' = 7, T = 400, scales 2 and 3: p = 0.4, q = 12/90,
    # eta_H = 2 (2/15) sqrt(ln 10 / 400) = 0.020232361, eta_SGD = 3 (2/15) / 20 = 0.02
    _, params = _params(10, k=3, k_query=7, horizon=400, eta_hedge_scale=2.0, eta_sgd_scale=3.0)
    r = rates(params, 10, 3)
    np.testing.assert_allclose([r.p, r.q, r.eta_hedge, r.eta_sgd],
                               [0.4, 2 / 15, 0.020232361, 0.02], rtol=1e-6)


@pytest.mark.parametrize("m", [2, 3])
def test_estimators__unbiased_by_enumerating_every_extra_set(m):
    # eq. (1): E[X_t] = x x^T and E[z_t] = y x over the C(d, m) equally likely R
    d = 6
    rng = np.random.default_rng(m)
    x, y = rng.normal(size=d), rng.normal()
    p, q = m / d, m * (m - 1) / (d * (d - 1))
    sets = list(itertools.combinations(range(d), m))
    mean_x, mean_z = np.zeros((d, d)), np.zeros(d)
    for r in sets:
        big_x, z = estimators(x, y, np.isin(np.arange(d), r), p, q)
        mean_x += big_x / len(sets)
        mean_z += z / len(sets)
    np.testing.assert_allclose(mean_x, np.outer(x, x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mean_z, y * x, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("m", [2, 3])
def test_subset_update__expected_cost_and_step_by_enumerating_every_extra_set(m):
    # The learner's O(N k) formulas, averaged over all R: E[cost_S] = (w_S . x - y)^2 and
    # E[w_S'] = w_S - 2 eta (x x^T w_S - y x)_S (no projection at this radius).
    d, k, eta = 6, 2, 0.05
    rng = np.random.default_rng(10 + m)
    table = subset_table(d, k)
    w = rng.normal(size=(len(table), k)) * 0.3
    x, y = rng.normal(size=d) / 2, 0.7
    p, q = m / d, m * (m - 1) / (d * (d - 1))
    r = Rates(jnp.float32(p), jnp.float32(q), jnp.float32(0.0), jnp.float32(eta))
    sets = list(itertools.combinations(range(d), m))
    mean_cost, mean_w = 0.0, 0.0
    gather = subset_gather(jnp.asarray(table), d)
    for rs in sets:
        x_r = np.where(np.isin(np.arange(d), rs), x, 0.0)
        cost, new = subset_update(gather(jnp.asarray(x_r, jnp.float32)),
                                  jnp.asarray(w.T, jnp.float32), jnp.float32(y), r,
                                  jnp.float32(100.0))
        mean_cost = mean_cost + np.asarray(cost, np.float64) / len(sets)
        mean_w = mean_w + np.asarray(new, np.float64).T / len(sets)
    xs = x[table]
    pred = np.sum(w * xs, axis=1)
    np.testing.assert_allclose(mean_cost, (pred - y) ** 2, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(mean_w, w - 2 * eta * (xs * pred[:, None] - y * xs),
                               rtol=2e-5, atol=2e-6)


def _draws(keys, d, k, k_query):
    """The subset draw's uniform and the extra sets R of each round, from the learner's keys."""

    def one(key):
        k_sel, k_r = jax.random.split(key)
        k_arm, _ = jax.random.split(k_sel)
        return (jax.random.uniform(k_arm, ()),
                random_subset_mask(k_r, d, jnp.int32(k_query - k), d - k))

    g, r = jax.jit(jax.vmap(one))(keys)
    return np.asarray(g, np.float64), np.asarray(r)


@pytest.mark.parametrize("k,k_query,build", [
    pytest.param(2, 4, jax.jit, marks=pytest.mark.slow),  # the default run: the users' build
    pytest.param(1, 4, jax.jit, marks=pytest.mark.slow),
    (2, 4, users_build)])  # the drawn subset is a discrete choice: as users compile too
def test_foster__matches_float64_reference_round_by_round(k, k_query, build):
    d, T, horizon = 6, 200, 50.0
    problem, pp = oslr.make_problem("sparse-linear", d=d, k=2, design="sphere", clip_y=True,
                                    w_norm="l2")
    # lively rates (scales 3 and 20 at T = 50) so that the law and the weights move
    learner, params = _params(d, k=k, k_query=k_query, horizon=horizon, eta_hedge_scale=3.0,
                              eta_sgd_scale=20.0, radius=0.6)
    (state, recs) = build(episode_fn(learner, problem, T))(jnp.uint32(4), 2, params, pp)
    exs = stream(problem, pp, 4, 2, T)
    uniforms, r_masks = _draws(learner_keys(4, 2, T), d, k, k_query)
    preds, arms, w, log_d = foster_reference(exs.x, exs.y, uniforms, r_masks, k, k_query,
                                             horizon, 3.0, 20.0, 0.6)
    table = subset_table(d, k)
    s_masks = np.zeros((T, d), bool)
    s_masks[np.arange(T)[:, None], table[arms]] = True
    np.testing.assert_array_equal(np.asarray(recs.query), s_masks | r_masks)
    np.testing.assert_allclose(np.asarray(recs.prediction), preds, rtol=1e-4, atol=1e-5)
    assert len(set(arms.tolist())) > 3  # the draws moved between subsets
    w_dense = np.zeros_like(w)
    np.put_along_axis(w_dense, table, np.asarray(state.w, np.float64).T, axis=1)
    np.testing.assert_allclose(w_dense, w, rtol=1e-4, atol=1e-5)
    log_p = np.asarray(jax.nn.log_softmax(-rates(params, d, k).eta_hedge * state.hedge.cum_loss))
    np.testing.assert_allclose(log_p, log_d, rtol=1e-4, atol=1e-4)
    assert np.linalg.norm(w, axis=1).max() == pytest.approx(0.6, rel=1e-6)  # projection active


def test_foster__weights_stay_in_the_ball_and_queries_within_budget():
    d, T = 7, 300
    problem, pp = oslr.make_problem("sparse-linear", d=d, k=2, design="sphere", clip_y=True)
    learner, params = _params(d, k=2, k_query=5, horizon=100.0, eta_sgd_scale=50.0, radius=0.3)
    state, recs = jax.jit(episode_fn(learner, problem, T))(jnp.uint32(0), 0, params, pp)
    norms = np.linalg.norm(np.asarray(state.w), axis=0)
    assert norms.max() <= 0.3 * (1 + 1e-6) and (norms > 0.29).mean() > 0.5
    sizes = np.asarray(recs.query).sum(1)
    assert sizes.max() <= 5 and sizes.min() >= 3  # |S-hat u R| in [k' - k, k']
    assert not np.asarray(recs.over_budget).any()


@pytest.mark.slow
def test_foster__hedge_law_sums_to_one_and_stays_finite_over_a_long_run():
    # T = 1e6 rounds with a 100x Hedge rate: L-hat spreads over many orders of magnitude; the
    # stored L-hat is shifted to min 0 and the law is normalised in log space.
    d, T = 6, 1_000_000
    problem, pp = oslr.make_problem("sparse-linear", d=d, k=2, design="sphere", clip_y=True)
    learner, params = _params(d, k=2, horizon=1e6, eta_hedge_scale=100.0)
    state, recs = jax.jit(episode_fn(learner, problem, T))(jnp.uint32(1), 0, params, pp)
    cum = np.asarray(state.hedge.cum_loss)
    assert np.isfinite(cum).all() and cum.min() == 0.0 and cum.max() > 100.0
    probs = np.asarray(jax.nn.softmax(-rates(params, d, 2).eta_hedge * state.hedge.cum_loss))
    assert np.isfinite(probs).all() and probs.sum() == pytest.approx(1.0, abs=1e-5)
    assert np.isfinite(np.asarray(recs.prediction)).all()


def test_foster__refuses_a_budget_below_k_plus_2_before_tracing():
    problem, pp = oslr.make_problem("sparse-linear", d=8, k=2)
    learner, params = _params(8, k=2, k_query=3)
    with pytest.raises(ValueError, match=r"k_query.*\[4, 8\]"):
        oslr.simulate(learner, problem, params, pp, horizon=10, n_runs=1)
    learner, params = _params(8, k=2, max_k_query=5, k_query=6)
    with pytest.raises(ValueError, match=r"k_query.*\[4, 5\]"):
        oslr.simulate(learner, problem, params, pp, horizon=10, n_runs=1)
    with pytest.raises(ValueError, match="k <= d - 2"):
        _params(5, k=4)
    with pytest.raises(ValueError, match="max_k_query=3"):
        _params(8, k=2, max_k_query=3)


def test_subset_gather__one_hot_and_indexed_paths_agree():
    table = jnp.asarray(subset_table(12, 3))
    v = jax.random.normal(jax.random.key(2), (12,))
    expected = np.asarray(v)[np.asarray(table).T]
    np.testing.assert_allclose(np.asarray(subset_gather(table, 12)(v)), expected, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(subset_gather(table, 40)(v)), expected)


def test_foster__refuses_a_subset_table_too_large_and_says_how_large():
    # C(40, 10) = 847,660,528 subsets x (k + 1 floats + k ints) x 4 bytes = 71.2 GB
    with pytest.raises(ValueError, match=r"847,660,528 subsets.*71\.20 GB"):
        _params(40, k=10)
    learner, _ = _params(40, k=3, memory_limit_gb=1.0)  # 9,880 subsets fit
    assert learner.info["n_subsets"] == 9880


def test_theorem_1_order__hand_value():
    # d = 8, k = 2, k' = 4, T = 1e4: 64 / 4 * sqrt(2 ln 8 1e4) = 16 * 203.93 = 3262.9
    assert theorem_1_order(8, 2, 4, 1e4) == pytest.approx(16 * math.sqrt(2 * math.log(8) * 1e4))
    assert theorem_1_order(8, 2, 4, 1e4) == pytest.approx(3262.94, rel=1e-5)


@pytest.mark.slow
def test_foster__regret_sublinear_and_below_theorem_1_order():
    d, k = 6, 2
    problem, pp = oslr.make_problem("sparse-linear", d=d, k=k, design="sphere", clip_y=True,
                                    w_norm="l2")
    horizon = 20_000
    learner, params = _params(d, k=k, horizon=horizon)
    res = oslr.simulate(learner, problem, params, pp, horizon=horizon, n_runs=8,
                        comparator_radius=1.0)
    reg = res.regret_curves()["regret"].mean(axis=(0, 1))
    assert reg[-1] < theorem_1_order(d, k, k + 2, horizon)
    t = res.ckpts
    sel = t >= 1000
    slope = np.polyfit(np.log(t[sel]), np.log(np.maximum(reg[sel], 1e-9)), 1)[0]
    assert slope < 0.9


_SHARD_SCRIPT = """
import json
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec
from oslr.learners.foster import Rates, subset_gather, subset_update
from oslr.primitives.subsets import subset_table
gather = subset_gather(jnp.asarray(subset_table(10, 3)), 10)  # 120 subsets
w = 0.3 * jax.random.normal(jax.random.key(0), (3, 120))
x_r = jnp.where(jnp.arange(10) < 4, jax.random.normal(jax.random.key(1), (10,)) / 4, 0.0)
xs = gather(x_r)
r = Rates(jnp.float32(0.4), jnp.float32(2 / 15), jnp.float32(0.01), jnp.float32(0.02))
f = jax.jit(subset_update)
cost, new = f(xs, w, jnp.float32(0.3), r, jnp.float32(1.0))
shard = NamedSharding(Mesh(np.array(jax.devices()), ("subsets",)),
                      PartitionSpec(None, "subsets"))
cost_s, new_s = f(jax.device_put(xs, shard), jax.device_put(w, shard), jnp.float32(0.3), r,
                  jnp.float32(1.0))
print(json.dumps({"devices": len(jax.devices()),
                  "shard_cols": sorted({s.data.shape[1] for s in new_s.addressable_shards}),
                  "cost_err": float(jnp.max(jnp.abs(cost - cost_s))),
                  "w_err": float(jnp.max(jnp.abs(new - new_s)))}))
"""


@pytest.mark.slow  # a subprocess with two host devices
def test_subset_update__runs_with_the_subset_axis_sharded_over_two_devices():
    res = run_on_host_devices(_SHARD_SCRIPT, 2)
    assert res["devices"] == 2 and res["shard_cols"] == [60]  # the result stays split by subset
    assert res["cost_err"] < 1e-6 and res["w_err"] < 1e-6


def test_foster_hedge__bounds_on_k_and_the_default_query_bound():
    from oslr.learners.foster import foster_hedge

    learner = foster_hedge(6, k=4)  # k = d - 2 is the largest sparsity (R needs two slots)
    assert learner.name == "foster-hedge"
    assert foster_hedge(6, k=1).name == "foster-hedge"  # and k = 1 the smallest
    with pytest.raises(ValueError, match=r"^foster-hedge needs a static sparsity 1 <= k <= d - 2 "
                       r"= 4 \(its query budget k' >= k \+ 2 must fit in d=6\); got k=0\.$"):
        foster_hedge(6, k=0)
    with pytest.raises(ValueError, match=r"^foster-hedge needs a static sparsity 1 <= k <= d - 2 "
                       r"= 4"):
        foster_hedge(6, k=5)
    with pytest.raises(ValueError, match=r"^foster-hedge enumerates all C\(d=40, k=10\)"):
        foster_hedge(40, k=10)
    _, params = oslr.make("foster-hedge", d=6, k=2)
    state = foster_hedge(6, k=2).init(jax.random.key(0), params)  # max_k_query = d by default
    assert jax.tree.leaves(state)
