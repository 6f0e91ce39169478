"""Reference learners against float64 NumPy references fed the same draws."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import oslr
from oslr.testing import episode_fn
from tests.helpers import learner_keys, stream
from tests.reference.eps_greedy import eps_greedy_reference
from tests.reference.ogd import ogd_reference

T = 200


@pytest.mark.parametrize("name", ["ogd-full", "ogd-random-subset"])
def test_ogd__matches_float64_reference_round_by_round(name):
    problem, pp = oslr.make_problem("sparse-linear", d=10, k=3)
    learner, params = oslr.make(name, d=10, eta=0.05, radius=0.8)
    _, recs = jax.jit(episode_fn(learner, problem, T))(jnp.uint32(11), 3, params, pp)
    exs = stream(problem, pp, 11, 3, T)
    queries = np.asarray(recs.query)
    if name == "ogd-full":
        assert queries.all()
    else:
        assert (queries.sum(1) == int(params.k)).all()
    preds, _ = ogd_reference(exs.x, exs.y, queries, 0.05, 0.8)
    np.testing.assert_allclose(np.asarray(recs.prediction), preds, rtol=1e-4, atol=1e-5)


def test_ogd_full__regret_sublinear_on_realizable_stream():
    problem, pp = oslr.make_problem("sparse-linear", d=8, k=2)
    learner, params = oslr.make("ogd-full", d=8)
    res = oslr.simulate(learner, problem, params, pp, horizon=4000, n_runs=8)
    reg = res.regret_curves()["regret"].mean(axis=(0, 1))
    t = res.ckpts
    sel = t >= 100
    slope = np.polyfit(np.log(t[sel]), np.log(np.maximum(reg[sel], 1e-9)), 1)[0]
    assert slope < 0.75


def test_uniform_subset__plays_k_sparse_weights_uniformly():
    d, k, n = 6, 2, 4000
    problem, pp = oslr.make_problem("sparse-linear", d=d, k=2)
    learner, params = oslr.make("uniform-subset", d=d, k=k)
    _, recs = jax.jit(episode_fn(learner, problem, n))(jnp.uint32(0), 0, params, pp)
    w = np.asarray(recs.w)
    assert ((w != 0).sum(1) == k).all()
    np.testing.assert_allclose(w[w != 0], k ** (-1 / 2.0), rtol=1e-6)
    freq = (w != 0).mean(0)
    se = math.sqrt(k / d * (1 - k / d) / n)
    assert np.all(np.abs(freq - k / d) < 5 * se)


def test_eps_greedy__matches_float64_reference_with_same_draws():
    d, n_arms = 5, 6
    problem, pp = oslr.make_problem("linear-bandit", d=d, n_arms=n_arms)
    learner, params = oslr.make("eps-greedy", d=d, eps=0.2)
    _, recs = jax.jit(episode_fn(learner, problem, T))(jnp.uint32(4), 2, params, pp)
    exs = stream(problem, pp, 4, 2, T)
    keys = learner_keys(4, 2, T)

    def draws(key):  # the learner's own split of its round key
        k_coin, k_arm = jax.random.split(key)
        return jax.random.bernoulli(k_coin, 0.2), jax.random.randint(k_arm, (), 0, n_arms)

    explore, random_arm = jax.vmap(draws)(keys)
    pulled = eps_greedy_reference(exs.arms, exs.rewards, np.asarray(explore),
                                  np.asarray(random_arm), 1.0)
    np.testing.assert_array_equal(np.asarray(recs.arm), pulled)


def test_eps_greedy__pseudo_regret_grows_slower_than_random():
    problem, pp = oslr.make_problem("linear-bandit", d=5, n_arms=8)
    greedy, gp = oslr.make("eps-greedy", d=5, eps=0.05)
    random, rp = oslr.make("eps-greedy", d=5, eps=1.0)
    rg = oslr.simulate(greedy, problem, gp, pp, horizon=1000, n_runs=16).final["pseudo_regret"]
    rr = oslr.simulate(random, problem, rp, pp, horizon=1000, n_runs=16).final["pseudo_regret"]
    assert rg.mean() < 0.3 * rr.mean()


def test_ogd_random_subset__with_k_equal_d_is_exactly_ogd_full():
    problem, pp = oslr.make_problem("sparse-linear", d=6, k=2)
    sub, sp = oslr.make("ogd-random-subset", d=6, k=6)
    full, fp = oslr.make("ogd-full", d=6)
    a = oslr.simulate(sub, problem, sp, pp, horizon=150, n_runs=3)
    b = oslr.simulate(full, problem, fp, pp, horizon=150, n_runs=3)
    np.testing.assert_array_equal(a.final["loss"], b.final["loss"])
