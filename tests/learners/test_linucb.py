"""LinUCB and fLinUCB ([KPM] Alg. 2) against float64 NumPy references; harness checks."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import oslr
from oslr.primitives import history_add
from oslr.rollout import play_round
from oslr.testing import episode_fn
from oslr.types import BanditExample
from tests.helpers import learner_keys, stream, users_build
from tests.reference.linucb import flinucb_reference, linucb_reference

T = 300


@pytest.mark.parametrize("changing, history, refactor_every, build", [
    (True, "features", 256, jax.jit),  # arms change: A^-1 by Sherman-Morrison, O(K d^2)
    (False, "arm", 256, jax.jit),  # a fixed arm set: the O(K d) form, refactorised at round 256
    (False, "arm", 7, jax.jit),  # ... and every 7 rounds
    # an argmax is a discrete choice: the build users get (optimised, other fusions) too
    (False, "arm", 7, users_build),
])
def test_linucb__pulls_the_float64_reference_argmax_every_round(changing, history,
                                                                 refactor_every, build):
    d, n_arms = 5, 6
    problem, pp = oslr.make_problem("linear-bandit", d=d, n_arms=n_arms, changing=changing)
    learner, params = oslr.make("linucb", d=d, n_arms=n_arms, kappa=0.5, lam0=1.0,
                                history=history, refactor_every=refactor_every)
    assert learner.info["fixed_arms"] == (history == "arm")
    _, recs = build(episode_fn(learner, problem, T))(jnp.uint32(4), 2, params, pp)
    exs = stream(problem, pp, 4, 2, T)
    arms = np.asarray(recs.arm)
    _, scores = linucb_reference(exs.arms, exs.rewards, kappa=0.5, lam0=1.0, follow=arms)
    # the learner's arm is the float64 argmax, up to float32 near-ties (unit-norm arms tie
    # exactly in round 0, where every UCB is kappa)
    gap = scores.max(1) - scores[np.arange(T), arms]
    assert gap.max() < 1e-4
    assert (arms == scores.argmax(1)).mean() > 0.95
    assert len(np.unique(arms)) > 1


@pytest.mark.parametrize("name, build", [
    pytest.param("flinucb-gd", jax.jit, marks=pytest.mark.slow),  # default run: users' build
    ("flinucb-svrg", jax.jit), pytest.param("flinucb-sag", jax.jit, marks=pytest.mark.slow),
    ("flinucb-gd", users_build)])  # as users compile
def test_flinucb__matches_float64_reference_with_the_same_history_draws(name, build):
    d, n_arms = 5, 4
    problem, pp = oslr.make_problem("linear-bandit", d=d, n_arms=n_arms)
    learner, params = oslr.make(name, d=d, n_arms=n_arms, horizon=T, kappa=0.3)
    run = build(episode_fn(learner, problem, T))
    state, recs = run(jnp.uint32(1), 0, params, pp)
    exs = stream(problem, pp, 1, 0, T)
    n = jnp.arange(T)

    def draws(key, n):  # the learner's own split and uniform draws of history indices
        k_phi, k_est = jax.random.split(key)
        return (jax.random.randint(k_phi, (), 0, jnp.maximum(n, 1)),
                jax.random.randint(k_est, (), 0, n + 1))

    i_phi, i_est = jax.jit(jax.vmap(draws))(learner_keys(1, 0, T), n)
    tracker = {"flinucb-gd": "frls-gd", "flinucb-svrg": "svrg", "flinucb-sag": "sag"}[name]
    pulled, thetas = flinucb_reference(np.asarray(exs.arms[0]), np.asarray(exs.rewards),
                                       np.asarray(i_phi), np.asarray(i_est), 0.3, 1.0, 0.75,
                                       1.0, tracker, float(params.step_scale))
    np.testing.assert_array_equal(np.asarray(recs.arm), pulled)
    np.testing.assert_allclose(np.asarray(state.est.theta), thetas[-1], rtol=1e-4, atol=1e-5)
    # early rounds too, before the estimate has converged (the same program, states frozen
    # after n rounds): a snapshot one round early or late shows there
    for n_active in (3, 4, 6, 9):
        early, _ = run(jnp.uint32(1), 0, params, pp, n_active)
        np.testing.assert_allclose(np.asarray(early.est.theta), thetas[n_active - 1],
                                   rtol=1e-4, atol=1e-6, err_msg=f"after {n_active} rounds")


@pytest.mark.slow  # a regret study; the float64 references check the variants round by round
@pytest.mark.parametrize("name", ["linucb", "flinucb-gd", "flinucb-svrg", "flinucb-sag"])
def test_linucb_variants__regret_well_below_uniform_pulls(name):
    problem, pp = oslr.make_problem("linear-bandit", d=8, n_arms=10)
    learner, params = oslr.make(name, d=8, n_arms=10, horizon=1000)
    uniform, up = oslr.make("eps-greedy", d=8, eps=1.0)
    ours = oslr.simulate(learner, problem, params, pp, horizon=1000, n_runs=8)
    rand = oslr.simulate(uniform, problem, up, pp, horizon=1000, n_runs=8)
    assert ours.final["pseudo_regret"].mean() < 0.25 * rand.final["pseudo_regret"].mean()


def test_linucb__simulator_refuses_mismatched_arms_history_and_arm_mode():
    problem, pp = oslr.make_problem("linear-bandit", d=4, n_arms=6)
    learner, params = oslr.make("flinucb-gd", d=4, n_arms=5, horizon=100)
    with pytest.raises(ValueError, match="n_arms=6"):
        oslr.simulate(learner, problem, params, pp, horizon=50, n_runs=1)
    learner, params = oslr.make("flinucb-gd", d=4, n_arms=6, horizon=100)
    with pytest.raises(ValueError, match="horizon >= 200"):
        oslr.simulate(learner, problem, params, pp, horizon=200, n_runs=1)
    changing, cp = oslr.make_problem("linear-bandit", d=4, n_arms=6, changing=True)
    with pytest.raises(ValueError, match="history='features'"):
        oslr.simulate(learner, changing, params, cp, horizon=50, n_runs=1)
    exact, ep = oslr.make("linucb", d=4, n_arms=6)  # the O(K d) form needs a fixed arm set
    with pytest.raises(ValueError, match="history='features'"):
        oslr.simulate(exact, changing, ep, cp, horizon=50, n_runs=1)
    with pytest.raises(ValueError, match="kappa"):
        oslr.make("linucb", d=4, n_arms=6, kappa=-1.0)[0].check(
            oslr.make("linucb", d=4, n_arms=6, kappa=-1.0)[1], 4)


@pytest.mark.slow
def test_flinucb_tracking_error__recorded_at_checkpoints_and_shrinks():
    problem, pp = oslr.make_problem("linear-bandit", d=6, n_arms=8)
    learner, params = oslr.make("flinucb-svrg", d=6, n_arms=8, horizon=2000, track=True)
    res = oslr.simulate(learner, problem, params, pp, horizon=2000, n_runs=4)
    err = res.curves["tracking_error"][0].mean(0)
    assert err.shape == res.ckpts.shape
    assert err[-1] < 0.1 * err[5]
    np.testing.assert_allclose(res.final["tracking_error"][0],
                               res.curves["tracking_error"][0, :, -1])


def _rejected_round(d, t):
    """A replayed event whose logged arm (1) is not the pulled one (0: every UCB ties at 0)."""
    ex = BanditExample(arms=jnp.eye(d, dtype=jnp.float32)[:2], rewards=jnp.array([1.0, 0.0]),
                       means=jnp.array([1.0, 0.0]), logged=jnp.int32(1))
    return ex, jnp.int32(t)


def test_linucb_under_replay__cholesky_refresh_happens_on_rejected_rounds():
    # a regression: a rejected event discarded the refresh of its round with the rest of the update
    d = 3
    learner, params = oslr.make("linucb", d=d, n_arms=2, refactor_every=4, history="features")
    a = jnp.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.0], [0.0, 0.0, 3.0]])
    state = learner.init(jax.random.key(0), params)
    state = state._replace(est=state.est._replace(a=a, a_inv=jnp.zeros((d, d))))
    for t, refreshed in ((2, False), (3, True)):  # t + 1 = 4 is a refresh round
        ex, tt = _rejected_round(d, t)
        new, rec = play_round(learner, jax.random.key(1), state, ex, params, tt)
        assert not bool(rec.accepted)
        expected = np.linalg.inv(np.asarray(a, np.float64) + np.eye(d)) if refreshed else 0.0
        np.testing.assert_allclose(np.asarray(new.est.a_inv), expected, atol=1e-6)
        np.testing.assert_array_equal(np.asarray(new.est.a), np.asarray(a))  # no sample added


def test_linucb_fixed_arms__refactorisation_from_counts_also_on_rejected_rounds():
    # the O(K d) form recomputes u, widths and means from the pull counts at t % R == 0
    d = 3
    learner, params = oslr.make("linucb", d=d, n_arms=2, refactor_every=4, lam0=1.0)
    state = learner.init(jax.random.key(0), params)  # zeros: every UCB ties at 0 -> arm 0
    pulls, rsum = jnp.array([0.0, 3.0]), jnp.array([0.0, 0.0])
    state = state._replace(est=state.est._replace(pulls=pulls, rsum=rsum))
    for t, refreshed in ((3, False), (4, True)):
        ex, tt = _rejected_round(d, t)
        new, rec = play_round(learner, jax.random.key(1), state, ex, params, tt)
        assert not bool(rec.accepted) and int(rec.arm) == 0  # logged arm 1: rejected
        # A = I + 3 e1 e1^T: u_a = A^-1 e_a, widths 1 and 1/4, means 0 (no reward yet)
        u = np.array([[1.0, 0, 0], [0, 0.25, 0]]) if refreshed else np.zeros((2, d))
        np.testing.assert_allclose(np.asarray(new.est.u), u, atol=1e-6)
        np.testing.assert_allclose(np.asarray(new.est.width),
                                   [1.0, 0.25] if refreshed else [0.0, 0.0], atol=1e-6)
        np.testing.assert_array_equal(np.asarray(new.est.pulls), np.asarray(pulls))


def test_linucb_fixed_arms__update_equals_sherman_morrison_on_a_inv():
    # one O(K d) step against A^-1 updated by Sherman-Morrison in float64
    from oslr.learners.linucb import fixed_arm_state, fixed_arm_update

    rng = np.random.default_rng(3)
    arms = rng.normal(size=(4, 3))
    pulls, rsum = np.array([2.0, 0.0, 1.0, 3.0]), rng.normal(size=4)
    a = 0.7 * np.eye(3) + arms.T @ (pulls[:, None] * arms)
    b = arms.T @ rsum
    state = fixed_arm_state(jnp.asarray(arms, jnp.float32), jnp.asarray(pulls, jnp.float32),
                            jnp.asarray(rsum, jnp.float32), jnp.float32(0.7))
    new = fixed_arm_update(state, jnp.asarray(arms, jnp.float32), 2, jnp.float32(0.9))
    a2, b2 = a + np.outer(arms[2], arms[2]), b + 0.9 * arms[2]
    a2_inv = np.linalg.inv(a2)
    np.testing.assert_allclose(np.asarray(new.u), arms @ a2_inv, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(new.width), np.einsum("kd,de,ke->k", arms, a2_inv, arms),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(new.mean), arms @ a2_inv @ b2, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(np.asarray(new.pulls), [2.0, 0.0, 2.0, 3.0])
    np.testing.assert_allclose(np.asarray(new.rsum), rsum + [0, 0, 0.9, 0], rtol=1e-6)


def test_flinucb_svrg_under_replay__snapshot_refreshes_on_rejected_rounds():
    d = 3
    learner, params = oslr.make("flinucb-svrg", d=d, n_arms=2, horizon=16)
    state = learner.init(jax.random.key(0), params)
    hist = state.hist
    for idx, y in ((0, 1.0), (1, -0.5), (0, 0.25)):  # three accepted samples (arm index, reward)
        hist = history_add(hist, jnp.float32(y), idx=jnp.int32(idx))
    theta = jnp.array([0.3, -0.2, 0.1])
    state = state._replace(hist=hist, est=state.est._replace(theta=theta))
    for t, refreshed in ((4, False), (7, True)):  # t + 1 = 8 is a snapshot round
        ex, tt = _rejected_round(d, t)
        new, rec = play_round(learner, jax.random.key(1), state, ex, params, tt)
        assert not bool(rec.accepted)
        snap = np.asarray(new.est.snap)
        if refreshed:  # the snapshot is theta, mu the mean data gradient over the 3 samples
            xs, ys = np.eye(d)[[0, 1, 0]], np.array([1.0, -0.5, 0.25])
            mu = np.mean([-(y - x @ np.asarray(theta)) * x for x, y in zip(xs, ys)], axis=0)
            np.testing.assert_allclose(snap, theta, rtol=1e-6)
            np.testing.assert_allclose(np.asarray(new.est.mu), mu, rtol=1e-5, atol=1e-7)
        else:
            np.testing.assert_array_equal(snap, 0.0)
        np.testing.assert_array_equal(np.asarray(new.est.theta), np.asarray(theta))


@pytest.mark.parametrize("schedule, gamma_1", [("kpm", 1 / 8), (None, 1.0)])
def test_flinucb_gd__width_tracker_uses_the_theta_step_schedule(schedule, gamma_1):
    # round 0 brings the first sample (no width step yet); round 1 steps phi from 0 with gamma_1:
    # phi = gamma_1 * arms / n, n = 1. kpm: c / (4 (c + 1)) = 1/8 at c = 1; power: c 1^-alpha = 1
    problem, pp = oslr.make_problem("linear-bandit", d=4, n_arms=3)
    learner, params = oslr.make("flinucb-gd", d=4, n_arms=3, horizon=10, schedule=schedule)
    state, _ = jax.jit(episode_fn(learner, problem, 2))(jnp.uint32(0), 0, params, pp)
    arms = np.asarray(stream(problem, pp, 0, 0, 2).arms[1])
    np.testing.assert_allclose(np.asarray(state.phi), gamma_1 * arms, rtol=1e-6, atol=1e-7)


def test_tracker_alpha__must_lie_strictly_between_one_half_and_one():
    learner, params = oslr.make("flinucb-gd", d=4, n_arms=3, alpha=0.5)
    with pytest.raises(ValueError, match=r"alpha=\[0.5\] is out of range \(0.5, 1.0\)"):
        learner.check(params, 4)
    learner.check(oslr.make("flinucb-gd", d=4, n_arms=3, alpha=0.6)[1], 4)


@pytest.mark.slow  # keeps the default run under 5 min (CI runs it with -m slow)
def test_flinucb_tracking_error__the_diagnostic_is_the_distance_to_the_regularised_ls_solution():
    from oslr.learners.linucb import linucb
    from oslr.learners.least_squares import reg_at

    problem, pp = oslr.make_problem("linear-bandit", d=4, n_arms=5)
    learner, params = oslr.make("flinucb-gd", d=4, n_arms=5, horizon=30, track=True)
    state, recs = jax.jit(episode_fn(learner, problem, 30))(jnp.uint32(1), 0, params, pp)
    assert state.a_sum.shape == (4, 4) and int(state.hist.n) == 30
    # the sums of the pulled arms and their rewards, recomputed from the stream
    exs = stream(problem, pp, 1, 0, 30)
    pulled = np.asarray(exs.arms)[np.arange(30), np.asarray(recs.arm)]
    reward = np.asarray(exs.rewards)[np.arange(30), np.asarray(recs.arm)]
    np.testing.assert_allclose(np.asarray(state.a_sum), pulled.T @ pulled, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(state.b_sum), reward @ pulled, rtol=1e-5, atol=1e-6)
    n = 30
    reg = n * float(reg_at(jnp.int32(n), params)) + 1e-6
    a = np.asarray(state.a_sum, np.float64)
    target = np.linalg.solve(a + reg * np.eye(4), np.asarray(state.b_sum, np.float64))
    got = float(learner.diagnostics(state, params)["tracking_error"])
    assert got == pytest.approx(np.linalg.norm(np.asarray(state.est.theta) - target), rel=1e-4)
    # untracked or exact: no diagnostic and no O(d^2) sums in the state
    for name, kw in (("flinucb-gd", {}), ("linucb", {"track": True})):
        plain, pparams = oslr.make(name, d=4, n_arms=5, horizon=30, **kw)
        assert plain.diagnostics is None
        assert plain.init(jax.random.key(0), pparams).a_sum.shape == (0, 0)
    # the factory's defaults: no Polyak averaging, no tracking, a history of 10,000 rounds
    default = linucb(4, 5, variant="flinucb-gd")
    assert default.diagnostics is None
    explicit = linucb(4, 5, variant="flinucb-gd", average=False)
    ka, kb = (jax.jit(episode_fn(x, problem, 20))(jnp.uint32(2), 0, params, pp)[1].arm
              for x in (default, explicit))
    np.testing.assert_array_equal(np.asarray(ka), np.asarray(kb))
    assert oslr.make("flinucb-gd", d=4, n_arms=5)[0].requires.capacity == 10_000


def test_linucb_specs__history_labels_and_the_alternative_point():
    from oslr.learners.linucb import FLINUCB_GD, LINUCB

    assert oslr.make("linucb", d=4, n_arms=5)[0].info["history"] is None
    assert oslr.make("flinucb-gd", d=4, n_arms=5, history="features")[0].info["history"] == (
        "features")
    # the specs built here, not at import (the mutation tool maps this test to them)
    from oslr.learners.linucb import _spec

    linucb_spec = _spec("linucb", LINUCB.description, LINUCB.reference)
    alt = linucb_spec.alt_params(4)
    assert (float(alt.kappa), float(alt.lam0)) == (pytest.approx(0.3), 2.0)
    gd_spec = _spec("flinucb-gd", FLINUCB_GD.description, FLINUCB_GD.reference)
    assert float(gd_spec.alt_params(4).c_gamma) == 0.5
    assert gd_spec.make(4, n_arms=5)[0].requires.capacity == 10_000  # the default horizon
    # the options as `oslr list` shows them: default, one line, choices
    options = {o.name: (o.default, o.doc, o.choices) for o in gd_spec.options}
    assert options["schedule"] == (None, "fRLS-GD step form (power c n^-alpha or kpm "
                                   "c/(4(c+n)))", (None, "power", "kpm"))
    assert options["average"] == (False, "Polyak averaging of the fRLS-GD iterates", None)
    assert options["horizon"][1:] == ("history capacity (rounds)", None)
    assert gd_spec.make(4, n_arms=5, schedule="kpm")[0].name == "flinucb-gd"


@pytest.mark.parametrize("history", ["arm", "features"])  # the fixed-arm and the general form
def test_linucb__ucb_ties_within_a_relative_1e5_go_to_the_lower_index(history):
    # first round, A = I: UCB_a = kappa ||x_a||. kappa = 10: arm 0 at 10 (1 - 3e-6) is within
    # 1e-5 (1 + 10) = 1.1e-4 of arm 1's 10 (a tie: the lower index); at 10 (1 - 2e-5) it is not
    learner, params = oslr.make("linucb", d=2, n_arms=2, kappa=10.0, lam0=1.0, history=history)
    state = learner.init(jax.random.key(0), params)
    for shrink, pulled in ((3e-6, 0), (2e-5, 1)):
        ex = BanditExample(arms=jnp.array([[1.0 - shrink, 0.0], [0.0, 1.0]], jnp.float32),
                           rewards=jnp.zeros(2), means=jnp.zeros(2))
        _, rec = play_round(learner, jax.random.key(1), state, ex, params, jnp.int32(0))
        assert int(rec.arm) == pulled, shrink
