"""Online greedy ([KKLP] Alg. 2): float64 reference, budgets, rates, batch structure."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import oslr
from oslr.learners.online_greedy import bexp_rates, budgets
from oslr.primitives.selectors import bexp_bins
from oslr.rollout import LEARNER_INIT, run_keys
from oslr.testing import episode_fn
from tests.helpers import learner_keys, stream
from tests.reference.online_greedy import online_greedy_reference


def test_budgets__remainder_one_each_to_the_first():
    assert budgets(7, 3).tolist() == [3, 2, 2]
    assert budgets(10, 10).tolist() == [1] * 10
    assert budgets(9, 2).tolist() == [5, 4]


def test_defaults__theorem_9_with_kappa_1_golden():
    # d = 100, k = 5, k0 = 10, T = 2^14: k1 = min(10, ceil(5 ln 16384 / 3) = 17) = 10,
    # B = ceil((10 * 16384 / 500)^(1/3)) = ceil(6.893) = 7
    learner, _ = oslr.make("online-greedy", d=100, horizon=2**14, k=5, k0=10)
    assert (learner.info["k1"], learner.info["batch"]) == (10, 7)
    # k = 2, T = 1e4, d = 8, k0 = 4: k1 = min(4, ceil(2 ln 1e4 / 3) = 7) = 4, B = ceil(13.57) = 14
    learner, _ = oslr.make("online-greedy", d=8, horizon=10_000, k=2, k0=4)
    assert (learner.info["k1"], learner.info["batch"]) == (4, 14)
    # the log term below the cap: d = 20, k = 1, k0 = 10, T = 100: k1 = min(10, ceil(ln 100 / 3)
    # = ceil(1.535) = 2) = 2 (log2 would give 3, log10 1); B = ceil((10 * 100 / 20)^(1/3)) =
    # ceil(3.684) = 4
    learner, _ = oslr.make("online-greedy", d=20, horizon=100, k=1, k0=10)
    assert (learner.info["k1"], learner.info["batch"]) == (2, 4)
    # k = 3, T = 1000: ceil(3 ln 1000 / 3) = ceil(6.908) = 7 < k0 = 9
    learner, _ = oslr.make("online-greedy", d=30, horizon=1000, k=3, k0=9)
    assert learner.info["k1"] == 7


def test_bexp_rates__golden():
    # d = 8, m = (2, 2) -> 4 bins each; T = 100, B = 5 -> 20 batches:
    # eta = sqrt(ln 8 / 80) = 0.16122, times eta_scale 3
    _, params = oslr.make("online-greedy", d=8, k0=4, k1=2, batch=5, horizon=100, eta_scale=3.0)
    np.testing.assert_allclose(bexp_rates(params, 8, budgets(4, 2), 5),
                               [3 * math.sqrt(math.log(8) / 80)] * 2, rtol=1e-6)
    # k0 = 5, k1 = 2: m = (3, 2) -> ceil(8/3) = 3 and 4 bins: sqrt(ln 8 / 60) = 0.1861649,
    # sqrt(ln 8 / 80) = 0.16122
    np.testing.assert_allclose(bexp_rates(params, 8, budgets(5, 2), 5),
                               [3 * 0.1861649, 3 * 0.1612235], rtol=1e-5)


def _uniforms(keys, k1, batch):
    """The draw uniform of each BEXP at every round (read at the batch starts)."""

    def one(key):
        return jax.vmap(lambda kk: jax.random.uniform(jax.random.split(kk)[0], ()))(
            jax.random.split(key, k1))

    return np.asarray(jax.jit(jax.vmap(one))(keys), np.float64)


def _reference(features, ys, params, seed, run, k0, k1, batch):
    """The float64 reference on (T, n) features, fed run `run`'s bins (its init key) and draw
    uniforms (its round keys)."""
    n_rounds, n = np.shape(features)
    init_key = run_keys(jnp.uint32(seed), run)[LEARNER_INIT]
    m = budgets(k0, k1)
    bins = np.stack([np.asarray(bexp_bins(kk, n, int(mi)))
                     for kk, mi in zip(jax.random.split(init_key, k1), m)])
    etas = np.asarray(bexp_rates(params, n, m, batch), np.float64)
    uniforms = _uniforms(learner_keys(seed, run, n_rounds), k1, batch)
    return online_greedy_reference(features, ys, bins, uniforms, k1, batch, etas)


@pytest.mark.parametrize("k0,k1", [(4, 2), pytest.param(5, 3, marks=pytest.mark.slow)])
def test_online_greedy__matches_float64_reference_round_by_round(k0, k1):
    d, T, batch, seed, run = 8, 90, 6, 3, 1
    problem, pp = oslr.make_problem("agnostic", d=d, k=2, design="rademacher")
    learner, params = oslr.make("online-greedy", d=d, k0=k0, k1=k1, batch=batch, horizon=T,
                                eta_scale=4.0)
    state, recs = jax.jit(episode_fn(learner, problem, T))(jnp.uint32(seed), run, params, pp)
    exs = stream(problem, pp, seed, run, T)
    preds, queries, cum = _reference(exs.x, exs.y, params, seed, run, k0, k1, batch)
    np.testing.assert_array_equal(np.asarray(recs.query), queries)
    np.testing.assert_allclose(np.asarray(recs.prediction), preds, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(state.bexp.cum_loss), cum, rtol=1e-4, atol=1e-4)
    assert len({tuple(q) for q in queries}) > 3  # the query moved between batches


@pytest.mark.slow  # moved behind -m slow to keep the default run under 5 min
def test_online_greedy__query_fixed_within_a_batch_and_within_budget():
    d, T, batch, k0 = 12, 120, 8, 6
    problem, pp = oslr.make_problem("agnostic", d=d, k=3, design="rademacher")
    learner, params = oslr.make("online-greedy", d=d, k0=k0, k1=3, batch=batch, horizon=T)
    _, recs = jax.jit(episode_fn(learner, problem, T))(jnp.uint32(0), 0, params, pp)
    q = np.asarray(recs.query).reshape(T // batch, batch, d)
    assert (q == q[:, :1]).all()  # one query set per batch
    sizes = q[:, 0].sum(1)
    assert sizes.max() <= k0 and sizes.min() >= 1
    assert not np.asarray(recs.over_budget).any()


def test_online_greedy__refuses_bad_static_options():
    with pytest.raises(ValueError, match="k1=5"):
        oslr.make("online-greedy", d=8, k0=4, k1=5)
    with pytest.raises(ValueError, match="k0=9"):
        oslr.make("online-greedy", d=8, k0=9)


def test_online_greedy__projection_reveals_exactly_the_queried_forms():
    """KKLP_A in the default run (one small compile): each round reveals the rows a_i^T of the
    queried forms i in S and zeros elsewhere, never a coordinate."""
    from oslr.primitives.projections import projection_matrix

    d, m, T, batch = 5, 7, 12, 4
    a = projection_matrix(d, m, "gaussian", seed=1)
    problem, pp = oslr.make_problem("agnostic", d=d, k=2, design="rademacher")
    learner, params = oslr.make("online-greedy", d=d, k0=3, k1=2, batch=batch, horizon=T,
                                projection=a)
    _, recs = jax.jit(episode_fn(learner, problem, T))(jnp.uint32(0), 0, params, pp)
    forms, queried = np.asarray(recs.forms), np.asarray(recs.query)
    shown = np.any(forms != 0, axis=-1)  # (T, m)
    assert not queried.any() and (shown.sum(1) >= 1).all() and (shown.sum(1) <= 3).all()
    np.testing.assert_allclose(forms[shown], np.broadcast_to(a.T, (T, m, d))[shown])
    assert not np.asarray(recs.over_budget).any()  # it asked for no form beyond S


@pytest.mark.slow  # behind -m slow: keeps the default run under 5 min
def test_online_greedy__projection_observes_forms_and_matches_reference():
    """KKLP_A: with A (d x m) the learner is Alg. 2 on z = A^T x (the float64 reference fed z),
    each round reveals exactly the forms a_i^T, i in S, and A = I is the coordinate learner."""
    from oslr.primitives.projections import projection_matrix

    d, m, T, batch, k0, k1, seed, run = 6, 9, 60, 5, 4, 2, 2, 0
    a = projection_matrix(d, m, "gaussian", seed=3)
    problem, pp = oslr.make_problem("agnostic", d=d, k=2, design="rademacher")
    learner, params = oslr.make("online-greedy", d=d, k0=k0, k1=k1, batch=batch, horizon=T,
                                eta_scale=4.0, projection=a)
    assert learner.info["projection_m"] == m
    state, recs = jax.jit(episode_fn(learner, problem, T))(jnp.uint32(seed), run, params, pp)
    exs = stream(problem, pp, seed, run, T)
    z = np.asarray(exs.x, np.float64) @ a.astype(np.float64)  # (T, m) the forms' values
    preds, queries, cum = _reference(z, exs.y, params, seed, run, k0, k1, batch)
    forms = np.asarray(recs.forms)  # (T, m, d): the rows revealed each round
    assert not np.asarray(recs.query).any()  # no coordinate is revealed
    np.testing.assert_array_equal(np.any(forms != 0, axis=-1), queries)
    np.testing.assert_allclose(forms[queries], np.broadcast_to(a.T, (T, m, d))[queries])
    np.testing.assert_allclose(np.asarray(recs.prediction), preds, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(state.bexp.cum_loss), cum, rtol=1e-4, atol=1e-4)

    plain, _ = oslr.make("online-greedy", d=d, k0=k0, k1=k1, batch=batch, horizon=T,
                         eta_scale=4.0)
    ident, _ = oslr.make("online-greedy", d=d, k0=k0, k1=k1, batch=batch, horizon=T,
                         eta_scale=4.0, projection="identity")
    run_plain = jax.jit(episode_fn(plain, problem, T))(jnp.uint32(seed), run, params, pp)[1]
    run_ident = jax.jit(episode_fn(ident, problem, T))(jnp.uint32(seed), run, params, pp)[1]
    np.testing.assert_allclose(np.asarray(run_ident.prediction),
                               np.asarray(run_plain.prediction), rtol=1e-5, atol=1e-6)


def test_online_greedy__refuses_a_projection_of_the_wrong_shape():
    with pytest.raises(ValueError, match=r"\(d=8, m\) matrix"):
        oslr.make("online-greedy", d=8, projection=np.ones((7, 3)))
    with pytest.raises(ValueError, match="unknown projection kind"):
        oslr.make("online-greedy", d=8, projection="fourier")


def test_online_greedy__defaults_and_refusals_pinned():
    from oslr.learners.online_greedy import default_k1, online_greedy
    from oslr.spec import Ctx

    # k1 = min(k0, ceil(k ln max(T, 2) / 3)): at T = 2, k = 4: ceil(0.92) = 1 (ln 3 would give 2)
    assert default_k1(Ctx(d=8, horizon=2, options={"k": 4, "k0": 5})) == 1
    assert default_k1(Ctx(d=8, horizon=10**6, options={"k": 4, "k0": 5})) == 5  # the k0 cap
    learner = online_greedy(8)
    assert learner.info == {"k0": 4, "k1": 2, "batch": 10, "projection_m": 0}
    assert online_greedy(8, projection="gaussian").info["projection_m"] == 16  # m = 2 d forms
    with pytest.raises(ValueError, match=r"^online-greedy: batch=0 must be an integer in "
                       r"\[1, inf\]\.$"):
        online_greedy(8, batch=0)
