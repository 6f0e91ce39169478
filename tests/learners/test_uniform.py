"""Uniform sparse play (oslr.learners.uniform): sampling law."""

import math

import jax
import jax.numpy as jnp
import numpy as np

import oslr
from oslr.testing import episode_fn


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


def test_uniform_subset__weights_per_norm_exponent_the_round_count_and_the_static_bound():
    from oslr.learners.uniform import uniform_subset
    from oslr.primitives import random_subset_mask
    from tests.helpers import learner_keys

    problem, pp = oslr.make_problem("sparse-linear", d=20, k=2)
    # b = 1: one coordinate at weight 1 whatever k; b = inf: k coordinates at 1; k = 1: weight 1
    for b, k, n_played, weight in [(1.0, 3, 1, 1.0), (math.inf, 3, 3, 1.0), (2.0, 1, 1, 1.0),
                                   (3.0, 4, 4, 4 ** (-1 / 3))]:
        learner, params = oslr.make("uniform-subset", d=20, k=k, b=b, max_k=4)
        state, recs = jax.jit(episode_fn(learner, problem, 30))(jnp.uint32(1), 0, params, pp)
        w = np.asarray(recs.w)
        assert ((w != 0).sum(1) == n_played).all(), b
        np.testing.assert_allclose(w[w != 0], weight, rtol=1e-6)
        assert int(state.t) == 30 and learner.name == "uniform-subset"
        assert learner.info == {"b": b}
    # the subsets follow the static bound max_k = 4 (Floyd's draw), not d = 20 (top-k of d)
    want = jax.jit(jax.vmap(lambda key: random_subset_mask(key, 20, 4, 4)))(learner_keys(1, 0, 30))
    np.testing.assert_array_equal(w != 0, np.asarray(want))
    # built directly, the bound defaults to d
    direct = jax.eval_shape(episode_fn(uniform_subset(20), problem, 3), jnp.uint32(0), 0,
                            params, pp)
    assert direct[1].w.shape == (3, 20)
