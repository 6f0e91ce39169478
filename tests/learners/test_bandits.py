"""Epsilon-greedy (oslr.learners.bandits) against a float64 NumPy reference with the same draws."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import oslr
from oslr.testing import episode_fn
from tests.helpers import learner_keys, stream
from tests.reference.eps_greedy import eps_greedy_reference


T = 200


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


@pytest.mark.slow
def test_eps_greedy__pseudo_regret_grows_slower_than_random():
    problem, pp = oslr.make_problem("linear-bandit", d=5, n_arms=8)
    greedy, gp = oslr.make("eps-greedy", d=5, eps=0.05)
    random, rp = oslr.make("eps-greedy", d=5, eps=1.0)
    rg = oslr.simulate(greedy, problem, gp, pp, horizon=1000, n_runs=16).final["pseudo_regret"]
    rr = oslr.simulate(random, problem, rp, pp, horizon=1000, n_runs=16).final["pseudo_regret"]
    assert rg.mean() < 0.3 * rr.mean()
