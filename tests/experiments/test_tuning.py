"""The shared tuning rule: the grid extends by one window past an edge, the choice and the cap
are reported, failed points (NaN) are never chosen."""

import numpy as np
import pytest

from oslr.experiments.tuning import TUNING_FACTORS, extension, tune


def _bowl(optimum: float):
    """evaluate(window) with scores (log10 f - log10 optimum)^2, recording each window."""
    seen = []

    def evaluate(window):
        seen.append(window)
        return (np.log10(window) - np.log10(optimum)) ** 2, f"payload {len(seen)}"

    return evaluate, seen


def test_tune__an_interior_optimum_needs_no_extension():
    evaluate, seen = _bowl(1.0)
    t = tune(evaluate)
    assert seen == [TUNING_FACTORS] and t.factors[t.best] == 1.0 and not t.at_cap
    assert t.chosen() == (0, 2) and t.payloads == ["payload 1"]


def test_tune__an_optimum_past_the_top_extends_once_and_is_found():
    evaluate, seen = _bowl(90.0)
    t = tune(evaluate)
    assert seen == [TUNING_FACTORS, (30.0, 90.0, 300.0, 900.0, 3000.0)]
    assert t.factors[t.best] == 90.0 and not t.at_cap and t.chosen() == (1, 1)
    assert len(t.factors) == len(t.scores) == 10


def test_tune__beyond_one_window_the_choice_is_at_the_cap():
    evaluate, seen = _bowl(1e-6)
    t = tune(evaluate)
    assert seen[1] == extension(TUNING_FACTORS, 0.1, -1) and len(seen) == 2
    assert t.factors[t.best] == min(t.factors) == 0.0003 and t.at_cap and t.chosen() == (1, 0)
    # two windows allowed: it goes on down
    evaluate, seen = _bowl(1e-6)
    t = tune(evaluate, max_extensions=2)
    assert len(seen) == 3 and t.at_cap and t.factors[t.best] == min(t.factors)


def test_tune__failed_points_are_not_chosen():
    def evaluate(window):
        return np.array([np.nan, 3.0, 2.0, 1.0, np.nan]), None

    t = tune(evaluate)  # 3 is not the largest factor tried (10 failed): no extension
    assert t.factors[t.best] == 3.0 and not t.at_cap and len(t.windows) == 1
    t = tune(lambda w: (np.full(len(w), np.nan), None))
    assert t.factors[t.best] == 1.0 and not t.at_cap  # nothing finite: the middle, no extension
    t = tune(lambda w: (np.full(len(w), np.nan), None), factors=(1.0, 3.0))
    assert len(t.windows) == 1 and not t.at_cap  # two factors: the "middle" is an edge, still
    # the scores are kept in float64 whatever evaluate returns
    t = tune(lambda w: (np.asarray(w, np.float32), None))
    assert t.scores.dtype == np.float64


def test_scaled_points__every_named_field_times_each_factor_in_its_own_dtype():
    from oslr.experiments.tuning import scaled_points
    from oslr.registry import make

    _, params = make("ogd-full", d=4, horizon=100)  # eta 0.125, radius 1, k 4 (int32)
    labels, stacked = scaled_points(params, ["eta", "radius"], (0.1, 3.0))
    assert labels == [{"eta": pytest.approx(0.0125), "radius": pytest.approx(0.1), "factor": 0.1},
                      {"eta": 0.375, "radius": 3.0, "factor": 3.0}]
    np.testing.assert_allclose(np.asarray(stacked.eta), [0.0125, 0.375], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(stacked.radius), [0.1, 3.0], rtol=1e-6)
    assert stacked.eta.dtype == np.float32 and stacked.k.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(stacked.k), [4, 4])  # fields not named: unchanged
    _, stacked = scaled_points(params, ["k"], (2.0,))  # an integer field stays integer
    assert np.asarray(stacked.k).dtype == np.int32 and np.asarray(stacked.k).tolist() == [8]


def test_mean_final_regret__r1_at_the_horizon_averaged_over_runs_ignoring_nan():
    from oslr.experiments.tuning import mean_final_regret
    from oslr.registry import make, make_problem
    from tests.experiments.fakes import FakeEngine

    learner, params = make("ogd-full", d=4, horizon=100)
    problem, pp = make_problem("sparse-linear", d=4, k=1)
    res = FakeEngine().sweep(learner, problem, params, pp, {"eta": [0.1, 0.2]}, horizon=100,
                             n_runs=3)
    res._regret["regret"][1, 0, -1] = np.nan  # a diverged run
    final = res._regret["regret"][:, :, -1]
    np.testing.assert_allclose(mean_final_regret(res), [final[0].mean(), final[1, 1:].mean()])
    res._regret = {"regret_lb_greedy": res._regret["regret_wstar"]}  # no exact comparator: R2
    np.testing.assert_allclose(mean_final_regret(res),
                               res._regret["regret_lb_greedy"][:, :, -1].mean(axis=1))


def test_half_scores__two_disjoint_sets_their_means_nan_runs_ignored():
    from oslr.experiments.tuning import half_scores, lowest

    finals = np.array([[1.0, 3.0, 10.0, 20.0],     # A 2, B 15
                       [5.0, np.nan, 1.0, 2.0],    # A 5 (NaN run ignored), B 1.5
                       [np.nan, np.nan, 4.0, 6.0]])  # A none, B 5
    a, b = half_scores(finals)
    np.testing.assert_array_equal(a, [2.0, 5.0, np.nan])
    np.testing.assert_array_equal(b, [15.0, 1.5, 5.0])
    assert (lowest(a), lowest(b)) == (0, 1)  # the two sets disagree: an unstable choice
    # an odd count: the first R // 2 runs, then the rest
    a, b = half_scores(np.array([[1.0, 2.0, 4.0]]))
    assert (a[0], b[0]) == (1.0, 3.0)
    assert half_scores(np.ones((3, 1))) is None  # one run: no two sets
    assert lowest([np.nan, np.nan]) is None and lowest([np.inf, 3.0, 2.0]) == 2


def test_half_scores__float32_finals_averaged_in_float64():
    from oslr.experiments.tuning import half_scores

    # float32 cannot hold 1e8 + 1: a float32 mean of (1e8, 1) is 5e7, float64's 50000000.5
    a, b = half_scores(np.array([[1e8, 1.0, 2.0, 2.0]], np.float32))
    assert a[0] == 50_000_000.5 and a.dtype == np.float64 and b[0] == 2.0
