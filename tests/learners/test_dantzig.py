"""Dantzig selector for POSLR ([KKLP] Alg. 1): the Gram estimate's law, lam_n, the schedule,
Lemma 4, and a float64 reference with HiGHS."""

import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import oslr
from oslr.learners.dantzig import gram_estimate, lambda_n
from oslr.primitives import random_subset_mask, top_k_mask
from oslr.testing import episode_fn
from tests.helpers import learner_keys, stream
from tests.reference.dantzig import dantzig_reference


@pytest.mark.parametrize("d,k0", [(6, 2), (7, 3), (7, 5)])
def test_gram_estimate__exact_expectation_over_every_k0_subset(d, k0):
    # one sample (n = 1): "unbiased" mode gives E[G] = x x^T; "paper" mode leaves the
    # off-diagonal factor d (k0 - 1) / (k0 (d - 1)) of sampling without replacement
    x = np.random.default_rng(d + k0).normal(size=d)
    sets = list(itertools.combinations(range(d), k0))
    mean = {"unbiased": 0.0, "paper": 0.0}
    for s in sets:
        x_hat = np.where(np.isin(np.arange(d), s), x, 0.0) * d / k0
        for mode in mean:
            mean[mode] = mean[mode] + np.asarray(gram_estimate(
                jnp.asarray(np.outer(x_hat, x_hat), jnp.float32), jnp.float32(1.0),
                jnp.int32(k0), d, mode), np.float64) / len(sets)
    xx = np.outer(x, x)
    np.testing.assert_allclose(mean["unbiased"], xx, rtol=1e-5, atol=1e-5)
    factor = d * (k0 - 1) / (k0 * (d - 1))
    off = ~np.eye(d, dtype=bool)
    np.testing.assert_allclose(mean["paper"][off], factor * xx[off], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.diag(mean["paper"]), np.diag(xx), rtol=1e-5, atol=1e-5)


def test_lambda_n__golden():
    # d = 100, n = 1023, k0 = 10, delta = 0.1, sigma = 0.1, C = 1:
    # sqrt(100 ln(1023 * 100 / 0.1) / 10230) (0.1 + 10) = 0.3677924 * 10.1 = 3.714703
    _, params = oslr.make("dantzig-poslr", d=100, k=5, k0=10, c_lambda=1.0)
    assert float(lambda_n(params, 100, jnp.float32(1023))) == pytest.approx(3.714703, rel=1e-5)
    # the calibrated default C = 0.3 (docs/kale-results.md): 0.3 * 3.714703 = 1.114411
    _, params = oslr.make("dantzig-poslr", d=100, k=5, k0=10)
    assert float(lambda_n(params, 100, jnp.float32(1023))) == pytest.approx(1.114411, rel=1e-5)


def test_defaults__t0_golden():
    # ceil(5 ln 100 ln 16384) = ceil(223.44) = 224
    learner, _ = oslr.make("dantzig-poslr", d=100, k=5, horizon=2**14)
    assert learner.info["t0"] == 224


def test_lemma_4__truncation_error_within_sqrt3():
    # ||w-hat(S~) - w*|| <= sqrt(3) ||w-hat - w*|| for k-sparse w*, S~ the top-k of |w-hat|
    rng = np.random.default_rng(0)
    for _ in range(300):
        d, k = 12, int(rng.integers(1, 5))
        w_star = np.zeros(d)
        w_star[rng.choice(d, k, replace=False)] = rng.normal(size=k)
        w_hat = w_star + rng.normal(size=d) * rng.choice([0.01, 0.3, 3.0])
        keep = np.asarray(top_k_mask(jnp.asarray(np.abs(w_hat), jnp.float32), jnp.int32(k), k))
        lhs = np.linalg.norm(np.where(keep, w_hat, 0.0) - w_star)
        assert lhs <= math.sqrt(3) * np.linalg.norm(w_hat - w_star) + 1e-6


def _explore(keys, d, k0):
    return np.asarray(jax.jit(jax.vmap(lambda kk: random_subset_mask(kk, d, jnp.int32(k0), d)))(
        keys))


# "unbiased" in the default run (its only numeric check there); "paper" with -m slow (and in CI)
@pytest.mark.parametrize("mode", ["unbiased", pytest.param("paper", marks=pytest.mark.slow)])
def test_dantzig_poslr__matches_float64_highs_reference_round_by_round(mode):
    d, k, k0, t0, T = 8, 2, 4, 8, 64
    problem, pp = oslr.make_problem("sparse-linear", d=d, k=k, design="rademacher", sigma=0.1)
    learner, params = oslr.make("dantzig-poslr", d=d, k=k, k0=k0, t0=t0, gram_mode=mode,
                                c_lambda=0.2, lp_eps=1e-6, lp_iterations=100_000)
    state, recs = jax.jit(episode_fn(learner, problem, T))(jnp.uint32(2), 0, params, pp)
    exs = stream(problem, pp, 2, 0, T)
    explore = _explore(learner_keys(2, 0, T), d, k0)
    preds, w = dantzig_reference(exs.x, exs.y, explore, k, k0, t0, c_lambda=0.2, mode=mode)
    assert int(state.solves) == 3  # rounds 16, 32 and 64
    assert np.count_nonzero(w) == k
    np.testing.assert_allclose(np.asarray(state.w), w, atol=2e-3)
    np.testing.assert_allclose(np.asarray(recs.prediction), preds, atol=5e-3)
    q = np.asarray(recs.query)
    assert (q >= explore).all() and (q.sum(1) <= k0 + k).all()
    assert (q & ~explore).any()  # after t0 it also observes w's support, outside S_t
    # the accumulated estimates use x-hat = (d / k0) x on the exploration set S_t only: the Gram
    # sum is the (symmetric) sum of outer products x-hat x-hat^T, and xy = sum y x-hat
    x_hat = np.where(explore, np.asarray(exs.x, np.float64), 0.0) * d / k0
    np.testing.assert_allclose(np.asarray(state.gram), x_hat.T @ x_hat, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(np.asarray(state.xy), x_hat.T @ np.asarray(exs.y, np.float64),
                               rtol=1e-5, atol=1e-4)


@pytest.mark.slow
def test_dantzig_poslr__predicts_zero_until_t0_then_commits_k_sparse():
    d, k = 10, 3
    problem, pp = oslr.make_problem("sparse-linear", d=d, k=k, design="rademacher")
    learner, params = oslr.make("dantzig-poslr", d=d, k=k, k0=5, t0=20, c_lambda=0.1)
    state, recs = jax.jit(episode_fn(learner, problem, 40))(jnp.uint32(0), 0, params, pp)
    pred = np.asarray(recs.prediction)
    assert (pred[:31] == 0).all() and pred[31] != 0  # the first solve at round 32 (1-based)
    assert int(state.solves) == 1 and 1 <= np.count_nonzero(np.asarray(state.w)) <= k


def test_dantzig_poslr__unbiased_mode_refuses_k0_1():
    problem, pp = oslr.make_problem("sparse-linear", d=8, k=2)
    learner, params = oslr.make("dantzig-poslr", d=8, k=2, k0=1)
    with pytest.raises(ValueError, match="k0 >= 2"):
        oslr.simulate(learner, problem, params, pp, horizon=10, n_runs=1)


@pytest.mark.slow  # behind -m slow: keeps the default run under 5 min
def test_dantzig_poslr__records_its_committed_w_at_the_checkpoints():
    """The (d,) diagnostic `w` reaches SimResult curves (G, R, C, d) and, at the horizon, final
    (G, R, d) (the checkpoint axis, not the feature axis, is the one cut)."""
    d, k, T = 6, 2, 40
    problem, pp = oslr.make_problem("sparse-linear", d=d, k=k, design="rademacher")
    learner, params = oslr.make("dantzig-poslr", d=d, k=k, k0=3, t0=10, c_lambda=0.1)
    res = oslr.simulate(learner, problem, params, pp, horizon=T, n_runs=2, n_checkpoints=5)
    state, _ = jax.jit(episode_fn(learner, problem, T))(jnp.uint32(0), 1, params, pp)
    assert res.curves["w"].shape == (1, 2, len(res.ckpts), d)
    assert res.final["w"].shape == (1, 2, d)
    np.testing.assert_allclose(res.final["w"][0, 1], np.asarray(state.w), atol=1e-4)  # PDHG tol
    assert np.count_nonzero(res.final["w"]) > 0  # solved at round 32 (1-based)
    np.testing.assert_array_equal(res.final["support"][0],
                                  np.count_nonzero(res.final["w"][0], axis=-1))


def test_dantzig_poslr__unconverged_solves_are_not_used_counted_and_warned(monkeypatch):
    # an LP solver cut off by its iteration limit (the solver's side: tests/primitives/
    # test_dantzig.py) whose last iterate is far from 0: the committed w stays 0, every solve
    # is counted in lp_unconverged, none loosened lam, and simulate warns naming the diagnostic
    import oslr.learners.dantzig as module
    from oslr.primitives.dantzig import DantzigSolution

    asked = []

    def cut_off(g, c, lam, **kw):
        asked.append(kw)
        return DantzigSolution(w=jnp.ones_like(c), lam=lam, doublings=jnp.int32(0),
                               status=jnp.int32(6), iterations=jnp.int32(5),
                               converged=jnp.asarray(False))

    monkeypatch.setattr(module, "dantzig_lp", cut_off)
    d, T = 6, 40
    problem, pp = oslr.make_problem("sparse-linear", d=d, k=2, design="rademacher", sigma=0.1)
    learner, params = oslr.make("dantzig-poslr", d=d, k=2, k0=3, t0=8, c_lambda=0.05,
                                lp_iterations=5)
    with pytest.warns(RuntimeWarning, match=r"dantzig-poslr: 4 LP solves did not converge .*"
                                            r"raise lp_iterations or lp_eps "
                                            r"\(2 of 2 runs; diagnostic 'lp_unconverged'\)"):
        res = oslr.simulate(learner, problem, params, pp, horizon=T, n_runs=2)
    assert asked and all(kw == {"eps": 1e-4, "iteration_limit": 5} for kw in asked)
    np.testing.assert_array_equal(res.final["lp_unconverged"], [[2.0, 2.0]])  # rounds 16, 32
    np.testing.assert_array_equal(res.final["lp_loosened"], [[0.0, 0.0]])
    np.testing.assert_array_equal(res.final["support"], [[0.0, 0.0]])
    assert np.all(res.final["w"] == 0)


def test_dantzig_poslr__diagnostics_named_and_every_warned_name_is_one_of_them():
    learner, params = oslr.make("dantzig-poslr", d=6, k=2, k0=3, t0=10)
    state = learner.init(jax.random.key(0), params)
    assert {state.doublings.dtype, state.solves.dtype, state.loosened.dtype,
            state.unconverged.dtype} == {jnp.dtype(jnp.int32)}  # exact counts, not floats
    diag = learner.diagnostics(state, params)
    assert set(diag) == {"lambda", "lp_doublings", "lp_loosened", "lp_unconverged", "support",
                         "w"}
    assert all(jnp.asarray(v).dtype == jnp.float32 for v in diag.values())
    # a warning keyed by a name that is not a diagnostic would never fire
    assert set(learner.warn_if_nonzero) == {"lp_unconverged", "lp_loosened"}
    assert learner.info["gram_mode"] == "unbiased"  # the default Gram estimate
    from oslr.learners.dantzig import dantzig_poslr

    assert dantzig_poslr(6).info["gram_mode"] == "unbiased"
    assert dantzig_poslr(6).info["k"] == 2  # the factory's own default (oslr.make sets k)


def test_dantzig_poslr__loosened_solves_are_counted_with_their_doublings(monkeypatch):
    # an LP solver that always had to double lam twice: every solve (rounds 16 and 32, 1-based,
    # with t0 = 10) adds 2 doublings and one loosened solve
    import oslr.learners.dantzig as module
    from oslr.primitives.dantzig import DantzigSolution

    def loosened(g, c, lam, **kw):
        return DantzigSolution(w=c, lam=4.0 * lam, doublings=jnp.int32(2), status=jnp.int32(2),
                               iterations=jnp.int32(1), converged=jnp.asarray(True))

    monkeypatch.setattr(module, "dantzig_lp", loosened)
    learner, params = oslr.make("dantzig-poslr", d=6, k=2, k0=3, t0=10)
    problem, pp = oslr.make_problem("sparse-linear", d=6, k=2)
    state, _ = jax.jit(episode_fn(learner, problem, 40))(jnp.uint32(0), 0, params, pp)
    assert (int(state.solves), int(state.doublings), int(state.loosened),
            int(state.unconverged)) == (2, 4, 2, 0)
