"""Synthetic linear bandits (`oslr.problems.bandits`): the laws of theta*, the arms, the noise."""

import contextlib

import jax.numpy as jnp
import numpy as np
import pytest

import oslr
from oslr.rollout import PROBLEM_INIT, run_keys, stream


@pytest.mark.parametrize("changing", [False, True])
def test_linear_bandit__unit_arms_and_theta_means_and_bounded_noise(changing):
    problem, pp = oslr.make_problem("linear-bandit", d=5, n_arms=4, changing=changing,
                                    noise=0.25)
    assert (problem.name, problem.kind, problem.n_arms, problem.d) == ("linear-bandit", "bandit",
                                                                       4, 5)
    assert problem.changing_arms is changing and problem.info == {"changing": changing}
    exs = stream(problem, pp, 0, 0, 400)
    arms, rewards, means = (np.asarray(a, np.float64) for a in (exs.arms, exs.rewards,
                                                                 exs.means))
    assert arms.shape == (400, 4, 5)
    np.testing.assert_allclose(np.linalg.norm(arms, axis=-1), 1.0, rtol=1e-6)
    theta = np.asarray(problem.init(run_keys(0, 0)[PROBLEM_INIT], pp).theta, np.float64)
    np.testing.assert_allclose(np.linalg.norm(theta), 1.0, rtol=1e-5)  # a unit theta*
    np.testing.assert_allclose(np.einsum("tad,d->ta", arms, theta), means, atol=1e-5)
    noise = rewards - means
    assert np.abs(noise).max() <= 0.25 + 1e-6 and np.abs(noise).max() > 0.2  # U[-0.25, 0.25]
    assert abs(noise.mean()) < 0.02
    assert (np.unique(arms[:, 0, 0]).size > 1) is changing  # new arms every round, or one set


def test_sphere_bandit__basis_arms_theta_of_the_given_norm_and_noise_in_the_reward():
    problem, pp = oslr.make_problem("sphere-bandit", d=4, noise=0.5, norm=2.0)
    assert problem.continuous_actions and problem.n_arms == 4 and problem.name == "sphere-bandit"
    assert problem.info == {"action_set": "unit sphere"}
    exs = stream(problem, pp, 1, 0, 300)
    theta = np.asarray(exs.theta[0], np.float64)
    assert np.linalg.norm(theta) == pytest.approx(2.0, rel=1e-6)
    np.testing.assert_allclose(np.asarray(exs.arms[0]), np.eye(4))
    np.testing.assert_allclose(np.asarray(exs.best), 2.0, rtol=1e-6)
    noise = np.asarray(exs.noise, np.float64)
    np.testing.assert_allclose(np.asarray(exs.rewards) - theta, np.repeat(noise[:, None], 4, 1),
                               atol=1e-6)
    assert np.abs(noise).max() <= 0.5 + 1e-6 and np.abs(noise).max() > 0.4


def test_bandit_factories__refuse_bad_settings_in_one_line():
    # each value checked against the problem's declaration, naming it and its range
    bandit = "^problem 'linear-bandit': option "
    for kw, message in [(dict(n_arms=1), r"n_arms=1 is out of range \[2, inf\) \(arms per "
                                         r"round K\)\.$"),
                        (dict(noise=1.5), r"noise=1\.5 is out of range \[0, 1\] \(half-width "),
                        (dict(noise=-0.1), r"noise=-0\.1 is out of range \[0, 1\]"),
                        (dict(d=0), r"d=0 is out of range \[1, inf\) \(feature dimension\)\.$"),
                        (dict(n_arms=2.0), r"n_arms=2\.0 must be of type int"),
                        (dict(changing="yes"), r"changing='yes' must be of type bool")]:
        with pytest.raises(ValueError, match=bandit + message):
            oslr.make_problem("linear-bandit", **kw)
    # and the factory's own checks behind them
    with pytest.raises(ValueError, match=r"^norm=0\.0 of theta\* must be > 0\.$"):
        oslr.make_problem("sphere-bandit", norm=0)
    with pytest.raises(ValueError, match=r"^problem 'sphere-bandit': option d=0 is out of range"):
        oslr.make_problem("sphere-bandit", d=0)
    # the edges are accepted: two arms, noise 0 and 1
    oslr.make_problem("linear-bandit", n_arms=2, noise=0.0)
    oslr.make_problem("sphere-bandit", noise=1.0)
    _, pp = oslr.make_problem("linear-bandit")
    assert float(pp.noise) == 0.5 and jnp.asarray(pp.noise).dtype == jnp.float32
    _, sp = oslr.make_problem("sphere-bandit")
    assert (float(sp.noise), float(sp.norm)) == (1.0, 1.0)



def test_bandits__the_same_float32_stream_under_x64_and_the_fixed_arm_default():
    from oslr.problems.bandits import linear_bandit
    from tests.helpers import x64

    assert linear_bandit(5).changing_arms is False  # one arm set unless asked
    sphere, _ = oslr.make_problem("sphere-bandit", d=3)
    assert sphere.kind == "bandit"
    want = {}
    for mode in ("float32", "x64"):
        with x64() if mode == "x64" else contextlib.nullcontext():
            for name, kw in (("linear-bandit", {"n_arms": 3}), ("sphere-bandit", {})):
                problem, pp = oslr.make_problem(name, d=3, **kw)
                assert pp.noise.dtype == jnp.float32, (mode, name)
                exs = stream(problem, pp, 0, 0, 5)
                assert exs.arms.dtype == exs.rewards.dtype == jnp.float32, (mode, name)
                got = np.asarray(exs.rewards)
                if mode == "float32":
                    want[name] = got
                else:  # float64 mode plays the float32 stream, value for value
                    np.testing.assert_array_equal(got, want[name])
