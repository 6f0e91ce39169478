"""[KKLP] validation experiments (E4): the calibration reads the learner's own draws, the
theorem order terms, and a tiny study's table."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import oslr
from oslr.experiments import kale
from oslr.learners.dantzig import gram_estimate
from oslr.rollout import PROBLEM_INIT, run_keys
from oslr.testing import episode_fn


def test_theorem_order_terms__golden():
    # Thm 2: 5^2 ln(100 / 0.1) (100 / 10)^3 ln(e^2) = 25 * 6.907755 * 1000 * 2 = 345,387.76
    np.testing.assert_allclose(kale.theorem_2_order(100, 5, 10, math.e**2), 345_387.76,
                               rtol=1e-6)
    # Thm 9: (100 * 5^4 / 10)^(1/3) * 1000^(2/3) = 6250^(1/3) * 100 = 1842.02
    np.testing.assert_allclose(kale.theorem_9_order(100, 5, 10, 1000), 1842.016, rtol=1e-5)


@pytest.mark.slow  # behind -m slow: keeps the default run under 5 min
def test_slack_ratios__are_the_learners_own_gram_and_lambda():
    """The calibration's ratio at n equals ||c - G w*||_inf / lam_n(C = 1) recomputed from the
    state of `dantzig-poslr` itself after n rounds of the same run (same stream, same subsets)."""
    d, k, k0, seed, run, n = 12, 2, 4, 5, 3, 15
    ratios, ns = kale.slack_ratios(d, k, k0, horizon=16, draws=run + 1, seed=seed)
    assert ns.tolist() == [1, 3, 7, 15]
    problem, pp = kale.realizable_problem(d, k)
    # t0 > n: the learner only accumulates, w stays 0 and the budget is k0 + k
    learner, params = oslr.make("dantzig-poslr", d=d, k=k, k0=k0, t0=100)
    state, _ = jax.jit(episode_fn(learner, problem, n))(jnp.uint32(seed), run, params, pp)
    w_star = np.asarray(problem.init(run_keys(jnp.uint32(seed), run)[PROBLEM_INIT], pp).w_star,
                        np.float64)
    g = np.asarray(gram_estimate(state.gram, jnp.float32(n), jnp.int32(k0), d, "unbiased"),
                   np.float64)
    c = np.asarray(state.xy, np.float64) / n
    lam = math.sqrt(d * math.log(n * d / 0.1) / (n * k0)) * (0.1 + d / k0)
    np.testing.assert_allclose(ratios[run, -1], np.max(np.abs(c - g @ w_star)) / lam, rtol=1e-4)


def test_calibrate_c__quantile_of_the_worst_solve_after_t0():
    df = kale.calibrate_c((4,), d=12, k=2, horizon=64, draws=20, seed=1)
    ratios, ns = kale.slack_ratios(12, 2, 4, 64, 20, 1)
    t0 = kale.t0_of(12, 2, 64)  # ceil(2 ln 12 ln 64) = ceil(20.66) = 21
    assert t0 == 21 and df["solved"].tolist() == [n >= 21 for n in ns]
    worst = ratios[:, ns >= 21].max(axis=1)
    np.testing.assert_allclose(df["c_all"].iloc[0], np.quantile(worst, 0.95), rtol=1e-6)
    # at C = c_all, w* is feasible at every solve in at least 95% of the draws
    assert np.mean(worst <= df["c_all"].iloc[0] + 1e-9) >= 0.95


@pytest.mark.slow
def test_kale_dantzig__tiny_study_table():
    df = kale.kale_dantzig(k0s=(4,), horizon=64, runs=3, d=12, k=2, designs=("rademacher",),
                           references=("ogd-full",), lp_share=False)
    assert set(df["learner"]) == {"dantzig-poslr", "ogd-full"}
    err = df[df["metric"] == "l1_error"]
    t0 = kale.t0_of(12, 2, 64)
    # before t0 the committed w is 0, so ||w - w*||_1 = ||w*||_1 = 1 in every run
    np.testing.assert_allclose(err[err["n"] < t0]["mean"], 1.0, rtol=1e-6)
    assert (err[err["n"] < t0]["ci_high"] - err[err["n"] < t0]["ci_low"] < 1e-5).all()
    assert df[df["metric"] == "regret_wstar"]["bound"].notna().sum() > 0


@pytest.mark.slow
def test_kale_greedy__tiny_study_rows_and_theorem_9_column():
    df = kale.kale_greedy(horizons=(60, 120), runs=3, settings=((8, 2, 4),),
                          designs=("rademacher",), references=("ogd-full",))
    assert len(df) == 4 and set(df["learner"]) == {"online-greedy", "ogd-full"}
    assert (df["metric"] == "regret").all()  # C(8, 2) = 28 supports: the exact comparator
    greedy = df[df["learner"] == "online-greedy"]
    np.testing.assert_allclose(greedy["bound"],
                               kale.theorem_9_order(8, 2, 4, greedy["horizon"]))
    assert greedy["exponent"].nunique() == 1
    assert df[df["learner"] == "ogd-full"]["bound"].isna().all()
