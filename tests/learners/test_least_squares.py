"""Least-squares trackers ([KPM]; docs/algorithms.md L2.0, L2.3, L2.4, B11) against closed forms."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from oslr.learners.least_squares import make_tracker, ridge_inverse, tracker_defaults
from oslr.primitives import history_add, history_init
from tests.helpers import x64


def _data(n, d, seed=0, noise=0.1):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d)) / np.sqrt(d)
    theta = rng.normal(size=d)
    return x, x @ theta + noise * rng.normal(size=n)


def _drive(kind, x, y, params, repeats=1, seed=0, average=False):
    """Arrive the samples one per step (repeats = inner steps per arrival), float of the input.

    Returns the final estimate, and the estimate after each arrival (n, d)."""
    n, d = x.shape
    tracker = make_tracker(kind, d, capacity=n, average=average)
    dtype = x.dtype

    def arrive(carry, inp):
        state, hist = carry
        t, xt, yt = inp
        hist = history_add(hist, yt, x=xt)

        def inner(state, j):
            key = jax.random.fold_in(jax.random.key(seed), t * repeats + j)
            return tracker.update(key, state, xt, yt, hist, None, t * repeats + j, params), None

        state, _ = jax.lax.scan(inner, state, jnp.arange(repeats))
        return (state, hist), tracker.theta(state, params)

    hist = history_init(n, d, store_features=True)
    hist = hist._replace(x=hist.x.astype(dtype), y=hist.y.astype(dtype))
    state = jax.tree.map(lambda a: a.astype(dtype) if a.dtype.kind == "f" else a,
                         tracker.init(params))
    (state, _), thetas = jax.jit(lambda s, h: jax.lax.scan(
        arrive, (s, h), (jnp.arange(n), jnp.asarray(x), jnp.asarray(y))))(state, hist)
    return np.asarray(tracker.theta(state, params)), np.asarray(thetas)


def test_rls_sm__float64_equals_the_closed_form_after_many_updates():
    with x64():
        x, y = _data(3000, 6)
        params = tracker_defaults("rls-sm", 1, lam0=0.5)
        params = jax.tree.map(lambda a: a.astype(jnp.float64), params)
        theta, _ = _drive("rls-sm", x, y, params)
        exact = np.linalg.solve(0.5 * np.eye(6) + x.T @ x, x.T @ y)
        np.testing.assert_allclose(theta, exact, rtol=1e-9, atol=1e-10)


def test_rls_sm__float32_drift_stays_small_over_1e4_updates_with_refactorisation():
    x, y = _data(10_000, 8, seed=1)
    theta, _ = _drive("rls-sm", x.astype(np.float32), y.astype(np.float32),
                      tracker_defaults("rls-sm", 1))
    exact = np.linalg.solve(np.eye(8) + x.T @ x, x.T @ y)
    assert np.linalg.norm(theta - exact) / np.linalg.norm(exact) < 1e-4


def test_ridge_inverse__equals_numpy_inverse():
    a = np.random.default_rng(2).normal(size=(5, 5))
    a = a @ a.T
    np.testing.assert_allclose(np.asarray(ridge_inverse(jnp.asarray(a), 0.3)),
                               np.linalg.inv(a + 0.3 * np.eye(5)), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", ["fols-gd", "frls-gd"])
def test_gd_trackers__converge_to_the_solution_on_a_noiseless_static_design(kind):
    """Theta* interpolates the data, so OLS = theta* and the RLS bias vanishes as lam_n -> 0."""
    with x64():
        x, y = _data(40, 5, seed=3, noise=0.0)
        x, y = x * np.sqrt(5), y * np.sqrt(5)  # isotropic design, lambda_min(A / n) ~ 0.4
        params = jax.tree.map(lambda a: a.astype(jnp.float64), tracker_defaults(kind, 5))
        # 40 arrivals, then the same 40 points again and again: 20,000 steps in all
        theta, _ = _drive(kind, np.tile(x, (500, 1)), np.tile(y, 500), params, seed=1)
        if kind == "fols-gd":
            target, tol = np.linalg.lstsq(x, y, rcond=None)[0], 1e-4
        else:  # the fixed point of (9): (A_n + n lam_n I)^{-1} b_n, n = 20,000, lam_n = n^-0.25
            n = 20_000
            target = np.linalg.solve(500 * x.T @ x + n * n**-0.25 * np.eye(5), 500 * x.T @ y)
            tol = 2e-2  # lam_n > 0 leaves SGD noise at the fixed point; steps ~ n^-0.75
        assert np.linalg.norm(theta - target) < tol


@pytest.mark.slow
def test_fols_gd__tracking_error_decays_like_one_over_sqrt_n_on_an_iid_stream():
    """[KPM] Thm 1 loosely: log-log slope of ||theta_n - theta_hat_n|| in [-0.7, -0.3]."""
    with x64():
        n, d = 20_000, 4
        x, y = _data(n, d, seed=4, noise=0.5)
        x = x * np.sqrt(d)  # isotropic, mu = 1
        params = jax.tree.map(lambda a: a.astype(jnp.float64),
                              tracker_defaults("rls-sm", 1, c_gamma=3.0, c_lambda=0.0))
        errs, ns = [], np.unique(np.logspace(2, np.log10(n), 12).astype(int))
        mean_err = np.zeros(len(ns))
        for seed in range(4):
            _, thetas = _drive("fols-gd", x, y, params, seed=seed)
            for j, m in enumerate(ns):
                ols = np.linalg.lstsq(x[:m], y[:m], rcond=None)[0]
                mean_err[j] += np.linalg.norm(thetas[m - 1] - ols) / 4
        slope = np.polyfit(np.log(ns), np.log(mean_err), 1)[0]
        assert -0.7 <= slope <= -0.3, slope
        errs = mean_err * np.sqrt(ns)
        assert errs.max() < 5 * errs.min()


@pytest.mark.parametrize("kind,step", [("svrg", 0.25), ("sag", 0.5)])
def test_variance_reduced_trackers__converge_linearly_to_rls_on_a_static_design(kind, step):
    """Static history: the error falls below 1e-8 in 4000 steps (SVRG with 256-step epochs)."""
    with x64():
        x, y = _data(30, 4, seed=5, noise=0.3)
        params = jax.tree.map(lambda a: a.astype(jnp.float64),
                              tracker_defaults("rls-sm", 1, c_lambda=0.0, step_scale=step))
        # the 30 samples arrive one per step, then 4000 more steps with n = 30 (last re-sent)
        x_seq = np.concatenate([x, np.repeat(x[-1:], 4000, 0)])
        y_seq = np.concatenate([y, np.repeat(y[-1:], 4000)])
        n, d = x_seq.shape
        tracker = make_tracker(kind, d, capacity=30, snapshot_every=256)
        hist = history_init(30, d, store_features=True)
        hist = hist._replace(x=hist.x.astype(jnp.float64), y=hist.y.astype(jnp.float64))
        state = jax.tree.map(lambda a: a.astype(jnp.float64) if a.dtype.kind == "f" else a,
                             tracker.init(params))

        def body(carry, inp):
            state, hist = carry
            t, xt, yt = inp
            hist = history_add(hist, yt, x=xt, accept=t < 30)
            key = jax.random.fold_in(jax.random.key(0), t)
            return (tracker.update(key, state, xt, yt, hist, None, t, params), hist), None

        (state, _), _ = jax.jit(lambda c: jax.lax.scan(
            body, c, (jnp.arange(n), jnp.asarray(x_seq), jnp.asarray(y_seq))))((state, hist))
        ols = np.linalg.lstsq(x, y, rcond=None)[0]
        assert np.linalg.norm(np.asarray(tracker.theta(state, params)) - ols) < 1e-8


def test_step_and_ridge_schedules__golden_values():
    from oslr.learners.least_squares import reg_at, step_at

    p = tracker_defaults("rls-sm", 1, c_gamma=3.0, alpha=0.75, c_lambda=2.0)
    # [KPM] Thm 1 step c / (4 (c + n)) at c = 3, n = 5: 3 / 32 (not c / (4c + n) = 3 / 17)
    assert float(step_at(5, p, "kpm")) == pytest.approx(3 / 32, rel=1e-7)
    # power step c n^-alpha at n = 16: 3 * 16^-0.75 = 3 / 8
    assert float(step_at(16, p, "power")) == pytest.approx(3 / 8, rel=1e-7)
    # lam_n = c_lambda n^-(1 - alpha) at n = 16: 2 * 16^-0.25 = 1
    assert float(reg_at(16, p)) == pytest.approx(1.0, rel=1e-7)
    # n = 0 (no sample yet) is read as n = 1
    assert float(step_at(0, p, "kpm")) == pytest.approx(3 / 16, rel=1e-7)


def test_svrg_snapshot__full_gradient_over_every_stored_sample_beyond_one_block():
    # 600 samples (three blocks of 256): the snapshot's mean gradient is over all of them
    with x64():
        x, y = _data(600, 3, seed=2, noise=0.5)
        params = jax.tree.map(lambda a: a.astype(jnp.float64),
                              tracker_defaults("svrg", 3))
        tracker = make_tracker("svrg", 3, capacity=700)
        hist = history_init(700, 3, store_features=True)
        hist = hist._replace(x=hist.x.astype(jnp.float64), y=hist.y.astype(jnp.float64))
        hist = jax.lax.fori_loop(0, 600, lambda i, h: history_add(h, jnp.asarray(y)[i],
                                                                  x=jnp.asarray(x)[i]), hist)
        state = jax.tree.map(lambda a: a.astype(jnp.float64) if a.dtype.kind == "f" else a,
                             tracker.init(params))
        state = state._replace(theta=jnp.asarray([0.3, -0.2, 0.1]), n_mu=jnp.int32(600))
        # t + 1 = 1024: a snapshot round; mu = mean of -(y_i - snap^T x_i) x_i at the new snap
        new = tracker.update(jax.random.key(0), state, jnp.asarray(x[-1]), jnp.asarray(y[-1]),
                             hist, None, jnp.int32(1023), params)
        snap = np.asarray(new.snap)
        np.testing.assert_allclose(np.asarray(new.theta), snap)
        expected = -((y - x @ snap)[:, None] * x).mean(0)
        np.testing.assert_allclose(np.asarray(new.mu), expected, rtol=1e-10)


def test_make_tracker__each_kind_carries_its_own_name_and_unknown_kinds_are_refused():
    from oslr.learners.least_squares import TRACKERS

    for kind in TRACKERS:
        assert make_tracker(kind, 3, 10, snapshot_every=5).name == kind
    # no Polyak averaging unless asked: after two samples theta is the last iterate, not the
    # mean of the two
    params = tracker_defaults("frls-gd", 2)
    tracker = make_tracker("frls-gd", 2, 4)
    hist, state = history_init(4, 2, store_features=True), tracker.init(params)
    for t, (x, y) in enumerate([([1.0, 0.0], 1.0), ([0.0, 1.0], -1.0)]):
        x, y = jnp.array(x), jnp.float32(y)
        hist = history_add(hist, y, x=x)
        state = tracker.update(jax.random.key(t), state, x, y, hist, None, t, params)
    np.testing.assert_array_equal(tracker.theta(state, params), state.theta)
    assert not np.allclose(state.theta, state.theta_avg)
    with pytest.raises(ValueError, match=r"unknown tracker 'rls'; choose one of \('ols-sm'"):
        make_tracker("rls", 3, 10)


@pytest.mark.parametrize("kind", ["fols-gd", "frls-gd"])
def test_gd_trackers__polyak_average_is_the_mean_of_the_iterates_so_far(kind):
    # the same keys and samples: the averaged tracker's estimate after n arrivals is the plain
    # mean of the first n iterates theta_1..theta_n (a divisor n + 1 or n - 1 shows at once)
    with x64():
        x, y = _data(30, 4, seed=5)
        params = jax.tree.map(lambda a: a.astype(jnp.float64), tracker_defaults(kind, 4))
        _, iterates = _drive(kind, x, y, params, seed=2)
        final, averaged = _drive(kind, x, y, params, seed=2, average=True)
    want = np.cumsum(iterates, axis=0) / np.arange(1, 31)[:, None]
    np.testing.assert_allclose(averaged, want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(final, want[-1], rtol=1e-12, atol=1e-14)
    assert not np.allclose(averaged[-1], iterates[-1])  # the average is not the last iterate


def test_refresh__the_periodic_work_of_a_round_without_a_sample():
    """A rejected replay event calls `refresh`: rls-sm refactorises A^{-1} on its period only;
    SVRG moves its snapshot to theta and mu to the full mean gradient at theta on snapshot rounds
    (t + 1 a power of two) only, and leaves theta alone."""
    x, y = _data(6, 3, seed=7)
    x, y = x.astype(np.float32), y.astype(np.float32)
    params = tracker_defaults("rls-sm", 1, lam0=0.5)
    hist = history_init(6, 3, store_features=True)
    for xi, yi in zip(x, y):
        hist = history_add(hist, jnp.float32(yi), x=jnp.asarray(xi))

    sm = make_tracker("rls-sm", 3, capacity=6, refactor_every=4)
    a = jnp.asarray(x.T @ x)
    stale = sm.init(params)._replace(a=a, a_inv=jnp.eye(3) * 7.0)  # a_inv out of date
    due = sm.refresh(stale, hist, None, jnp.int32(3), params)  # (3 + 1) % 4 == 0
    np.testing.assert_allclose(np.asarray(due.a_inv), np.linalg.inv(0.5 * np.eye(3) + x.T @ x),
                               rtol=1e-4, atol=1e-5)
    idle = sm.refresh(stale, hist, None, jnp.int32(4), params)
    np.testing.assert_array_equal(np.asarray(idle.a_inv), np.eye(3) * 7.0)

    svrg = make_tracker("svrg", 3, capacity=6)
    theta = np.array([0.5, -1.0, 2.0], np.float32)
    state = svrg.init(params)._replace(theta=jnp.asarray(theta), mu=jnp.ones(3))
    due = svrg.refresh(state, hist, None, jnp.int32(7), params)  # t + 1 = 8
    full = np.mean([-(yi - theta @ xi) * xi for xi, yi in zip(x, y)], axis=0)
    np.testing.assert_allclose(np.asarray(due.snap), theta)
    np.testing.assert_allclose(np.asarray(due.mu), full, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(due.theta), theta)
    idle = svrg.refresh(state, hist, None, jnp.int32(8), params)  # t + 1 = 9
    np.testing.assert_array_equal(np.asarray(idle.snap), np.zeros(3))
    np.testing.assert_array_equal(np.asarray(idle.mu), np.ones(3))


def test_svrg__first_step_by_hand_with_a_ridge():
    # d = 2, x = (1, 2), y = 3, c_lambda = 1, alpha = 0.5, step_scale = 0.5, from zeros at
    # t = 0: n = 1, mu = g(0) = -(3 - 0) x = (-3, -6), lmax = ||x||^2 = 5, lam_1 = 1,
    # eta = 0.5 / (5 + 1) = 1/12; the one stored sample is drawn: g = g(0) - g(0) + mu = mu,
    # theta = -eta (mu + lam 0) = (0.25, 0.5); t + 1 = 1 is a snapshot: snap = theta,
    # mu = g(theta) = -(3 - 1.25) x = (-1.75, -3.5)
    params = tracker_defaults("rls-sm", 2, c_lambda=1.0, alpha=0.5, step_scale=0.5)
    tracker = make_tracker("svrg", 2, capacity=4)
    x, y = jnp.array([1.0, 2.0]), jnp.float32(3.0)
    hist = history_add(history_init(4, 2, store_features=True), y, x=x)
    state = tracker.update(jax.random.key(0), tracker.init(params), x, y, hist, None,
                           jnp.int32(0), params)
    np.testing.assert_allclose(np.asarray(state.theta), [0.25, 0.5], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(state.snap), [0.25, 0.5], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(state.mu), [-1.75, -3.5], rtol=1e-6)
    assert int(state.n_mu) == 1 and float(state.lmax) == 5.0


@pytest.mark.parametrize("kind", ["svrg", "sag", "frls-gd"])
def test_sampling_trackers__arm_ids_with_a_table_equal_stored_features(kind):
    # id mode (the history keeps arm indices, x rebuilt from the arm table) and feature mode
    # take the same steps on the same samples
    rng = np.random.default_rng(2)
    table = jnp.asarray(rng.normal(size=(5, 3)), jnp.float32)
    ids = rng.integers(0, 5, 40)
    ys = jnp.asarray(rng.normal(size=40), jnp.float32)
    params = tracker_defaults("rls-sm", 3, c_lambda=0.5, step_scale=0.5)
    tracker = make_tracker(kind, 3, capacity=40, snapshot_every=8)

    arms = jnp.asarray(ids, jnp.int32)

    def run(store_features):
        def round_(carry, t):  # round t: arm ids[t], label ys[t], key t
            hist, state = carry
            i, y = arms[t], ys[t]
            x = table[i]
            hist = (history_add(hist, y, x=x) if store_features
                    else history_add(hist, y, idx=i))
            state = tracker.update(jax.random.key(t), state, x, y, hist,
                                   None if store_features else table, t, params)
            return (hist, state), None

        start = (history_init(40, 3, store_features), tracker.init(params))
        (_, state), _ = jax.jit(lambda c: jax.lax.scan(round_, c, jnp.arange(40)))(start)
        return np.asarray(tracker.theta(state, params))

    by_id = run(False)
    np.testing.assert_allclose(by_id, run(True), rtol=1e-6, atol=1e-7)
    assert np.abs(by_id).max() > 0.01  # the tracker moved
