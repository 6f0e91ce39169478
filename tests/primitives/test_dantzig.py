"""The Dantzig selector LP in JAX (mpax PDHG) against HiGHS (docs/algorithms.md B10)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import linprog

from oslr.primitives.dantzig import ITERATION_LIMIT, OPTIMAL, batched_dantzig_lp, dantzig_lp
from tests.helpers import x64


def _instance(seed, d=12, n=150, shift=0.0):
    """Bias-corrected-Gram-like data: a Rademacher design, a 3-sparse w, noise; `shift` makes G
    indefinite (as the corrected estimate can be)."""
    rng = np.random.default_rng(seed)
    x = rng.choice([-1.0, 1.0], size=(n, d))
    w = np.zeros(d)
    w[rng.choice(d, 3, replace=False)] = rng.normal(size=3)
    y = x @ w + 0.1 * rng.normal(size=n)
    return x.T @ x / n - shift * np.eye(d), x.T @ y / n


def _highs(g, c, lam):
    d = len(c)
    a_ub = np.block([[g, -g], [-g, g]])
    b_ub = np.concatenate([c + lam, lam - c])
    return linprog(np.ones(2 * d), A_ub=a_ub, b_ub=b_ub, bounds=(0, None), method="highs")


_SLOW = pytest.mark.slow


@pytest.mark.parametrize("seed,lam,shift", [(0, 0.05, 0.0), pytest.param(2, 0.1, 0.5, marks=_SLOW),
                                            pytest.param(1, 0.02, 0.0, marks=_SLOW),
                                            pytest.param(3, 0.3, 0.0, marks=_SLOW)])
def test_dantzig_lp__objective_and_residuals_match_highs_to_1e6(seed, lam, shift):
    g, c = _instance(seed, shift=shift)
    ref = _highs(g, c, lam)
    assert ref.status == 0
    with x64():
        sol = jax.jit(lambda g, c, lam: dantzig_lp(g, c, lam, eps=1e-10))(
            jnp.asarray(g), jnp.asarray(c), jnp.asarray(lam))
        w = np.asarray(sol.w)
    assert int(sol.status) == OPTIMAL and int(sol.doublings) == 0
    assert np.abs(w).sum() == pytest.approx(ref.fun, abs=1e-6)
    assert np.abs(c - g @ w).max() <= lam + 1e-6  # feasible to 1e-6


@pytest.mark.slow
def test_dantzig_lp__float32_and_batched_over_runs():
    insts = [_instance(s) for s in range(4)]
    g = jnp.asarray(np.stack([i[0] for i in insts]), jnp.float32)
    c = jnp.asarray(np.stack([i[1] for i in insts]), jnp.float32)
    sol = jax.jit(batched_dantzig_lp)(g, c, jnp.full(4, 0.05, jnp.float32))
    for (gi, ci), w in zip(insts, np.asarray(sol.w, np.float64)):
        assert np.abs(w).sum() == pytest.approx(_highs(gi, ci, 0.05).fun, rel=1e-4)
        assert np.abs(ci - gi @ w).max() <= 0.05 * (1 + 1e-3)


_LP = jax.jit(dantzig_lp)  # one program for the (3, 3) float32 cases below


@pytest.mark.slow  # keeps the default run under 5 min (CI runs it with -m slow)
def test_dantzig_lp__doubles_lambda_until_feasible():
    # G = diag(1, 0, 0): |c_2 - 0| <= lam needs lam >= 0.5, so 0.1 -> 0.2 -> 0.4 -> 0.8
    g = jnp.diag(jnp.array([1.0, 0.0, 0.0]))
    c = jnp.array([1.0, 0.5, 0.0])
    sol = _LP(g, c, jnp.float32(0.1))
    assert int(sol.doublings) == 3 and float(sol.lam) == pytest.approx(0.8)
    assert bool(sol.converged)
    np.testing.assert_allclose(np.asarray(sol.w), [0.2, 0.0, 0.0], atol=1e-4)
    assert _highs(np.asarray(g, float), np.asarray(c, float), 0.4).status == 2  # infeasible
    # G = 0: only w = 0 and lam >= ||c||_inf
    zero = _LP(jnp.zeros((3, 3)), c, jnp.float32(0.1))
    assert int(zero.doublings) == 4 and np.all(np.asarray(zero.w) == 0)
    assert bool(zero.converged)


def test_dantzig_lp__zero_shortcut_reads_the_largest_absolute_entry_of_c():
    # G = I: the LP is min ||w||_1 s.t. |c - w|_inf <= lam, solved by soft-thresholding c.
    # c = (-1, 0.2, 0.1), lam = 0.5: max c = 0.2 <= lam but max |c| = 1 > lam, so w = 0 is not
    # feasible; the answer is (-0.5, 0, 0)
    c = jnp.array([-1.0, 0.2, 0.1])
    sol = _LP(jnp.eye(3), c, jnp.float32(0.5))
    np.testing.assert_allclose(np.asarray(sol.w), [-0.5, 0.0, 0.0], atol=2e-3)
    assert int(sol.doublings) == 0
    # within lam in every entry: exactly 0 (the shortcut)
    sol = _LP(jnp.eye(3), jnp.array([-0.4, 0.2, 0.1]), jnp.float32(0.5))
    assert np.all(np.asarray(sol.w) == 0) and int(sol.status) == OPTIMAL


@pytest.mark.slow
def test_dantzig_lp__zero_when_c_is_within_lambda():
    g, c = _instance(5)
    lam = float(np.abs(c).max()) * 1.01
    sol = jax.jit(dantzig_lp)(jnp.asarray(g, jnp.float32), jnp.asarray(c, jnp.float32),
                              jnp.float32(lam))
    assert np.all(np.asarray(sol.w) == 0) and int(sol.status) == OPTIMAL


def _ill_conditioned(seed, d=8, lo=-4.0, hi=1.0):
    """G = Q diag(logspace(lo, hi)) Q^T (condition number 10^(hi - lo)), c ~ N(0, 1/4)."""
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    return q @ np.diag(np.logspace(lo, hi, d)) @ q.T, 0.5 * rng.normal(size=d)


@pytest.mark.slow  # keeps the default run under 5 min (CI runs it with -m slow)
def test_dantzig_lp__iteration_limit_is_reported_not_taken_for_infeasibility():
    # condition number 1e5: PDHG stops at its iteration limit far from the optimum, where the
    # old rule (a constraint broken beyond the tolerance = infeasible) doubled lam 10 times and
    # returned the solution of a much looser LP. HiGHS solves every one at the original lam.
    insts = [_ill_conditioned(s) for s in range(3)]
    lam = 0.02
    for g, c in insts:
        assert _highs(g, c, lam).status == 0
    g = jnp.asarray(np.stack([i[0] for i in insts]), jnp.float32)
    c = jnp.asarray(np.stack([i[1] for i in insts]), jnp.float32)
    sol = jax.jit(lambda g, c, lam: batched_dantzig_lp(g, c, lam, iteration_limit=2000))(
        g, c, jnp.full(3, lam, jnp.float32))
    assert np.all(np.asarray(sol.status) == ITERATION_LIMIT)
    assert not np.asarray(sol.converged).any()
    assert np.all(np.asarray(sol.doublings) == 0)
    np.testing.assert_allclose(np.asarray(sol.lam), lam, rtol=1e-6)


@pytest.mark.slow  # keeps the default run under 5 min (CI runs it with -m slow)
def test_dantzig_lp__moderately_ill_conditioned_converges_to_highs():
    # condition number 1e3, enough iterations: converged, at HiGHS's optimum, feasible to 1e-6
    # of lam (float64)
    for seed in range(3):
        g, c = _ill_conditioned(seed, lo=-2.0)
        ref = _highs(g, c, 0.05)
        with x64():
            sol = jax.jit(lambda g, c: dantzig_lp(g, c, 0.05, eps=1e-9,
                                                  iteration_limit=200_000))(
                jnp.asarray(g), jnp.asarray(c))
        w = np.asarray(sol.w)
        assert bool(sol.converged) and int(sol.doublings) == 0
        assert np.abs(w).sum() == pytest.approx(ref.fun, rel=1e-5)
        assert np.abs(c - g @ w).max() <= 0.05 * (1 + 1e-6)


# the tolerance itself, 1e-4 here: 0.5% above it is not converged, 0.5% below it is
@pytest.mark.parametrize("delta,converged", [(1e-3, False), (5e-5, True), (1.005e-4, False),
                                             (0.995e-4, True)])
def test_dantzig_lp__tolerance_is_relative_to_lambda(monkeypatch, delta, converged):
    # G = I, c = (1, 0, 0), lam = 0.01: the optimum is w = (0.99, 0, 0). A solver that says
    # OPTIMAL at w = (0.99 - delta, 0, 0) breaks |c - G w| <= lam by delta: 10% of lam is not
    # converged, 0.5% is (the tolerance is 100 eps lam = 1% of lam at eps = 1e-4; the old one,
    # 10 eps (1 + ||c||_inf + lam) = 2e-3 = 20% of lam, passed both)
    import types

    import mpax

    made = []

    class FakeSolver:
        def __init__(self, **kw):
            made.append(kw)

        def optimize(self, lp):
            x = jnp.zeros(6).at[0].set(0.99 - delta)
            return types.SimpleNamespace(primal_solution=x, termination_status=OPTIMAL,
                                         iteration_count=7)

    monkeypatch.setattr(mpax, "r2HPDHG", FakeSolver)
    sol = dantzig_lp(jnp.eye(3), jnp.array([1.0, 0.0, 0.0]), jnp.float32(0.01))
    assert bool(sol.converged) is converged
    assert int(sol.doublings) == 0 and int(sol.status) == OPTIMAL
    assert made == [{"eps_abs": 1e-4, "eps_rel": 1e-4, "iteration_limit": 20_000,
                     "verbose": False}]
    # the batched form hands its options on
    sol = batched_dantzig_lp(jnp.eye(3)[None], jnp.array([[1.0, 0.0, 0.0]]),
                             jnp.array([0.01]), eps=1e-3, iteration_limit=50)
    assert made[-1] == {"eps_abs": 1e-3, "eps_rel": 1e-3, "iteration_limit": 50,
                        "verbose": False}
    assert bool(sol.converged[0]) is (delta <= 1e-3)  # 100 eps lam = 1e-3 now


@pytest.mark.slow  # keeps the default run under 5 min (CI runs it with -m slow)
def test_dantzig_lp__doublings_stop_at_the_cap_and_a_zero_row_counts_alone():
    # G = 0, c = (1, 0, 0): infeasible until lam >= 1. From lam = 2^-5 that takes 5 doublings;
    # with max_doublings = 3 it stops at lam = 2^-2, still infeasible, having doubled 3 times
    # (max_doublings is traced here: one program for both caps)
    g, c = jnp.zeros((3, 3)), jnp.array([1.0, 0.0, 0.0])
    sol = _LP(g, c, jnp.float32(2.0**-5), max_doublings=3)
    assert int(sol.doublings) == 3 and float(sol.lam) == 0.25 and sol.doublings.dtype == jnp.int32
    sol = _LP(g, c, jnp.float32(2.0**-5), max_doublings=10)
    assert int(sol.doublings) == 5 and float(sol.lam) == 1.0 and bool(sol.converged)
    # G = diag(1, 1, 0): only the third row is zero, and |c_3| = 1 > lam needs lam >= 1 from 1/4
    sol = _LP(jnp.diag(jnp.array([1.0, 1.0, 0.0])), jnp.array([0.5, 0.0, 1.0]),
              jnp.float32(0.25), max_doublings=10)
    assert int(sol.doublings) == 2 and float(sol.lam) == 1.0 and bool(sol.converged)


@pytest.mark.slow  # keeps the default run under 5 min (CI runs it with -m slow)
def test_dantzig_lp__lam_in_the_dtype_of_g_and_a_non_finite_solution_is_zero():
    with x64():  # shapes and dtypes only: traced, not compiled
        g, c = _instance(0, d=4)
        out = jax.eval_shape(dantzig_lp, jnp.asarray(g), jnp.asarray(c), np.float32(0.05))
        assert out.lam.dtype == jnp.float64 and out.w.dtype == jnp.float64
    sol = _LP(jnp.full((3, 3), jnp.nan), jnp.array([1.0, 2.0, 3.0]), jnp.float32(0.1),
              max_doublings=0)
    assert np.asarray(sol.w).tolist() == [0.0, 0.0, 0.0] and not bool(sol.converged)
