"""PEGE and fPEGE-GD on the unit sphere ([RT10]; [KPM] Alg. 1; ALGORITHMS.md L2.1)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import oslr
from oslr.learners.pege import cycle_position
from oslr.protocol import ProtocolError
from oslr.rollout import episode_fn


def test_cycle_position__matches_the_enumerated_schedule():
    d = 3
    expected = [(m, pos) for m in range(1, 40) for pos in range(d + m)][:600]
    m, pos = jax.vmap(lambda t: cycle_position(t, d))(jnp.arange(600))
    assert list(zip(np.asarray(m).tolist(), np.asarray(pos).tolist())) == expected


def test_pege__noise_free_exploitation_after_one_exploration_phase_has_zero_regret():
    d = 4
    problem, pp = oslr.make_problem("sphere-bandit", d=d, noise=0.0)
    learner, params = oslr.make("pege", d=d)
    explore = oslr.simulate(learner, problem, params, pp, horizon=d, n_runs=3)
    exploit = oslr.simulate(learner, problem, params, pp, horizon=d + 1, n_runs=3)
    np.testing.assert_allclose(exploit.final["pseudo_regret"], explore.final["pseudo_regret"],
                               atol=1e-5)
    assert (explore.final["pseudo_regret"] > 0).all()


@pytest.mark.slow
def test_pege__regret_grows_like_sqrt_n():
    problem, pp = oslr.make_problem("sphere-bandit", d=5)
    finals = []
    for horizon in (2000, 20000):
        learner, params = oslr.make("pege", d=5, horizon=horizon)
        res = oslr.simulate(learner, problem, params, pp, horizon=horizon, n_runs=32)
        finals.append(res.final["pseudo_regret"].mean())
    slope = np.log(finals[1] / finals[0]) / np.log(10.0)
    assert 0.35 < slope < 0.7, slope


def test_fpege_gd__estimate_approaches_the_pege_estimate_as_cycles_grow():
    problem, pp = oslr.make_problem("sphere-bandit", d=5)
    learner, params = oslr.make("fpege-gd", d=5, horizon=20000)
    res = oslr.simulate(learner, problem, params, pp, horizon=20000, n_runs=16)
    err = res.curves["tracking_error"][0].mean(0)
    early = err[np.searchsorted(res.ckpts, 200)]
    assert err[-1] < 0.5 * early
    pege_learner, pege_params = oslr.make("pege", d=5, horizon=20000)
    ref = oslr.simulate(pege_learner, problem, pege_params, pp, horizon=20000, n_runs=16)
    # same streams (common random numbers): fPEGE-GD within 40% of PEGE's regret
    assert res.final["pseudo_regret"].mean() < 1.4 * ref.final["pseudo_regret"].mean()


def test_pege__refuses_finite_arm_problems_with_a_clear_error():
    problem, pp = oslr.make_problem("linear-bandit", d=4, n_arms=5)
    learner, params = oslr.make("pege", d=4)
    with pytest.raises(ValueError, match="continuous-action problem"):
        oslr.simulate(learner, problem, params, pp, horizon=10, n_runs=1)
    with pytest.raises(ProtocolError, match="continuous-action"):  # the protocol refuses too
        episode_fn(learner, problem, 2)(jnp.uint32(0), 0, params, pp)
