"""OGD references (oslr.learners.ogd) against a float64 NumPy reference."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import oslr
from oslr.testing import episode_fn
from tests.helpers import stream
from tests.reference.ogd import ogd_reference


T = 200


@pytest.mark.parametrize("name", ["ogd-full", "ogd-random-subset"])
@pytest.mark.parametrize("eta,radius", [(0.05, 0.8), (0.3, 0.25)])
def test_ogd__matches_float64_reference_round_by_round(name, eta, radius):
    # (0.3, 0.25): a radius below 1 that binds (a projection on the unit ball would show)
    problem, pp = oslr.make_problem("sparse-linear", d=10, k=3)
    learner, params = oslr.make(name, d=10, eta=eta, radius=radius)
    _, recs = jax.jit(episode_fn(learner, problem, T))(jnp.uint32(11), 3, params, pp)
    exs = stream(problem, pp, 11, 3, T)
    queries = np.asarray(recs.query)
    if name == "ogd-full":
        assert queries.all()
    else:
        assert (queries.sum(1) == int(params.k)).all()
    preds, w = ogd_reference(exs.x, exs.y, queries, eta, radius)
    np.testing.assert_allclose(np.asarray(recs.prediction), preds, rtol=1e-4, atol=1e-5)
    if radius == 0.25:
        assert np.linalg.norm(w) == pytest.approx(radius)  # the ball binds


def test_ogd__names_budgets_and_the_subset_law():
    from oslr.learners.ogd import OgdParams, ogd_full, ogd_random_subset
    from oslr.primitives import random_subset_mask
    from tests.helpers import learner_keys

    params = OgdParams(eta=jnp.float32(0.1), radius=jnp.float32(1.0), k=jnp.int32(2))
    full = ogd_full(6)
    assert full.name == "ogd-full" and int(full.budget(params)) == 6  # k = 2 ignored: all d
    sub = ogd_random_subset(6, max_k=3)
    assert sub.name == "ogd-random-subset" and int(sub.budget(params)) == 2
    # each round's subset is random_subset_mask(round key, d, k, max_k) with the static max_k:
    # at d = 20 a bound of 4 draws by Floyd's algorithm, a bound of d by the top-k of d uniforms
    # (other subsets from the same key)
    problem, pp = oslr.make_problem("sparse-linear", d=20, k=2)
    sub, params = oslr.make("ogd-random-subset", d=20, k=2, max_k=4)
    _, recs = jax.jit(episode_fn(sub, problem, 20))(jnp.uint32(5), 0, params, pp)
    keys = learner_keys(5, 0, 20)
    want = jax.jit(jax.vmap(lambda key: random_subset_mask(key, 20, params.k, 4)))(keys)
    np.testing.assert_array_equal(np.asarray(recs.query), np.asarray(want))
    loose = jax.jit(jax.vmap(lambda key: random_subset_mask(key, 20, params.k, 20)))(keys)
    assert not np.array_equal(np.asarray(want), np.asarray(loose))


@pytest.mark.slow
def test_ogd_full__regret_sublinear_on_realizable_stream():
    problem, pp = oslr.make_problem("sparse-linear", d=8, k=2)
    learner, params = oslr.make("ogd-full", d=8)
    res = oslr.simulate(learner, problem, params, pp, horizon=4000, n_runs=8)
    reg = res.regret_curves()["regret"].mean(axis=(0, 1))
    t = res.ckpts
    sel = t >= 100
    slope = np.polyfit(np.log(t[sel]), np.log(np.maximum(reg[sel], 1e-9)), 1)[0]
    assert slope < 0.75


@pytest.mark.slow  # behind -m slow to keep the default run under 5 min
def test_ogd_random_subset__with_k_equal_d_is_ogd_full():
    """The same algorithm; ogd-full's static budget skips the protocol's truncation (so XLA
    fuses its round differently), hence equal to float32 rounding, not bit for bit."""
    problem, pp = oslr.make_problem("sparse-linear", d=6, k=2)
    sub, sp = oslr.make("ogd-random-subset", d=6, k=6)
    full, fp = oslr.make("ogd-full", d=6)
    a = oslr.simulate(sub, problem, sp, pp, horizon=150, n_runs=3)
    b = oslr.simulate(full, problem, fp, pp, horizon=150, n_runs=3)
    np.testing.assert_allclose(a.final["loss"], b.final["loss"], rtol=1e-6)
    np.testing.assert_array_equal(a.final["queries"], b.final["queries"])
