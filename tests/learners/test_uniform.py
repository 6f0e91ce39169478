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
