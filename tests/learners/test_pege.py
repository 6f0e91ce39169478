"""PEGE and fPEGE-GD on the unit sphere ([RT10]; [KPM] Alg. 1; docs/algorithms.md L2.1)."""

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
    m, pos = jax.jit(jax.vmap(lambda t: cycle_position(t, d)))(jnp.arange(600))
    assert list(zip(np.asarray(m).tolist(), np.asarray(pos).tolist())) == expected


def test_cycle_position__exact_where_float32_square_roots_round_either_way():
    # cycle j + 1 starts at S = j d + j (j + 1) / 2. Far out, float32 rounding of the closed
    # form's square root lands on either side of the integer: d = 2, t = 67,135,075 is the start
    # of cycle 11,586 with the raw root one short; t - 1 of other starts has it one long
    d = 2
    js = np.array([11_585, 11_592, 5_000, 20_000])
    starts = js * d + js * (js + 1) // 2
    assert starts[0] == 67_135_075
    t = np.concatenate([starts, starts - 1])
    m, pos = jax.jit(jax.vmap(lambda t: cycle_position(t, d)))(jnp.asarray(t, jnp.int32))
    assert np.asarray(m).tolist() == (js + 1).tolist() + js.tolist()
    prev = (js - 1) * d + (js - 1) * js // 2
    assert np.asarray(pos).tolist() == [0] * 4 + (starts - 1 - prev).tolist()


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


@pytest.mark.slow  # keeps the default run under 5 min (CI runs it with -m slow)
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


@pytest.mark.parametrize("name", ["pege", "fpege-gd"])
def test_pege__played_actions_match_the_float64_reference_round_by_round(name):
    # d = 3, 40 rounds: five exploration phases and the exploitation between them; fPEGE-GD at
    # its default step constant c = 6 d, with the learner's own history draws
    from tests.helpers import learner_keys, stream
    from tests.reference.pege import pege_reference

    d, horizon = 3, 40
    problem, pp = oslr.make_problem("sphere-bandit", d=d)
    learner, params = oslr.make(name, d=d, horizon=horizon)
    assert learner.name == name
    _, recs = jax.jit(episode_fn(learner, problem, horizon))(jnp.uint32(3), 1, params, pp)
    exs = stream(problem, pp, 3, 1, horizon)
    keys = learner_keys(3, 1, horizon)

    def draw(t, n):
        return int(jax.random.randint(keys[t], (), 0, n))

    if name == "fpege-gd":
        assert float(params.c_gamma) == 6.0 * d
    want = pege_reference(exs.theta, exs.noise, name == "fpege-gd", 6.0 * d, draw)
    np.testing.assert_allclose(np.asarray(recs.x), want, rtol=1e-5, atol=1e-6)
    # the exploitation rounds play the estimate's direction, not a basis vector
    assert (np.abs(want).max(axis=1) < 0.999).sum() >= 15


def test_fpege_gd__history_holds_the_exploration_samples_its_horizon_needs():
    from oslr.learners.pege import exploration_capacity

    learner, params = oslr.make("fpege-gd", d=3, horizon=40)
    assert learner.requires.capacity == 40
    state = learner.init(jax.random.key(0), params)
    assert state.hist.y.shape == (exploration_capacity(3, 40),)
    assert oslr.make("pege", d=3, horizon=40)[0].requires.capacity is None
    assert oslr.make("fpege-gd", d=3, horizon=40)[1].c_gamma == pytest.approx(18.0)


def test_fpege_gd__tracking_error_diagnostic_and_the_specs():
    from oslr.learners.pege import FPEGE_GD, PEGE

    # after the first exploration phase (d = 3 rounds) every basis vector has one sample: the
    # diagnostic is ||theta_GD - sums / 1||
    learner, params = oslr.make("fpege-gd", d=3, horizon=40)
    state, _ = jax.jit(episode_fn(learner, oslr.make_problem("sphere-bandit", d=3)[0], 3))(
        jnp.uint32(0), 0, params, oslr.make_problem("sphere-bandit", d=3)[1])
    assert np.asarray(state.counts).tolist() == [1.0, 1.0, 1.0]
    got = learner.diagnostics(state, params)["tracking_error"]
    est = np.asarray(state.est.theta)
    assert float(got) == pytest.approx(np.linalg.norm(est - np.asarray(state.sums)), rel=1e-6)
    assert oslr.make("pege", d=3)[0].diagnostics is None
    # the specs (built here, not at import, so that the mutation tool maps this test to them):
    # names, the default horizon (10,000 rounds of history), c = 6 d, alt c = 2 d
    from oslr.learners.pege import _spec

    pege_spec, fast_spec = _spec(fast=False), _spec(fast=True)
    assert (pege_spec.name, fast_spec.name) == (PEGE.name, FPEGE_GD.name) == ("pege", "fpege-gd")
    assert fast_spec.make(3)[0].requires.capacity == 10_000
    assert float(fast_spec.default_params(3).c_gamma) == 18.0
    assert float(fast_spec.alt_params(3).c_gamma) == 6.0
    # what `oslr list` shows, the horizon option reaching the history, the info
    assert pege_spec.description == "PEGE: explore the basis, exploit theta/||theta|| ([RT10])"
    assert fast_spec.description == ("fPEGE-GD: PEGE with an fOLS-GD estimate ([KPM] Alg. 1), "
                                     "unit sphere")
    assert fast_spec.option_names == ("horizon",)
    assert fast_spec.make(3, horizon=500)[0].requires.capacity == 500
    assert learner.info == {"action_set": "unit sphere"}
