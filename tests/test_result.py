"""oslr.result: a recording keeps each study's per-run part only; the regret arithmetic of each
family, the comparator's radius and k, joined batches."""

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest

import oslr
from oslr import regret
from oslr.report import runs_curves_frame
from oslr.result import SimResult, recording
from oslr.types import BANDIT, LINEAR, PREDICTION


def test_recording__keeps_the_per_run_part_not_the_checkpoint_statistics():
    problem, pp = oslr.make_problem("sparse-linear", d=6, k=2)
    learner, params = oslr.make("ogd-full", d=6)
    with recording() as seen:
        res = oslr.simulate(learner, problem, params, pp, horizon=40, n_runs=3, seed=1,
                            comparator_k=2)
    (light,) = seen
    assert light is not res and light.curves == {} and res.curves  # the Gram sums dropped
    assert {"theta_sum", "gram"} & set(res.final) and not {"theta_sum", "gram"} & set(light.final)
    assert all(np.ndim(v) == 2 for v in light.final.values()) and "loss" in light.final
    for name, curve in res.regret_curves().items():
        np.testing.assert_array_equal(light.regret_curves()[name], curve)
    # the per-run file's rows are the same from the light copy as from the whole result
    assert runs_curves_frame([light]).equals(runs_curves_frame([res]))
    # outside a recording nothing is kept
    oslr.simulate(learner, problem, params, pp, horizon=40, n_runs=3, seed=1, comparator_k=2)
    assert len(seen) == 1


# ------------------------------------------- regret arithmetic on hand-built results (no scan)


G, R, C, D = 2, 3, 4, 5


def _result(family, curves, **kw):
    final = {n: v[:, :, -1] for n, v in curves.items()}
    base = dict(learner="l", problem="p", family=family, horizon=40, n_runs=R, seed=0,
                ckpts=np.array([5, 10, 20, 40]), grid=[{"eta": 0.1}, {"eta": 0.2}],
                final=final, curves=curves, params=SimpleNamespace(k=np.array([1, 3])))
    return SimResult(**{**base, **kw})


def _ls_curves(rng):
    x = rng.normal(size=(G, R, C, 6, D))  # six rows of X per checkpoint interval
    y = x[..., 0] * 4.0 + rng.normal(size=(G, R, C, 6))
    gram = np.cumsum(np.einsum("grcti,grctj->grcij", x, x), axis=2)
    xy = np.cumsum(np.einsum("grcti,grct->grci", x, y), axis=2)
    yy = np.cumsum(np.einsum("grct,grct->grc", y, y), axis=2)
    loss = yy * 0.9 + 1.0
    return {"loss": loss.astype(np.float32), "loss_wstar": (yy * 0.1).astype(np.float32),
            "gram": gram, "xy": xy, "yy": yy}


def test_prediction_regret__exact_comparator_with_the_result_radius_and_wstar(rng):
    curves = _ls_curves(rng)
    res = _result(PREDICTION, curves, comparator_k=2, comparator_radius=0.5, realizable=True)
    got = res.regret_curves()
    assert set(got) == {"regret", "regret_wstar"}
    best, exact = regret.best_sparse_ls_loss(curves["gram"], curves["xy"], curves["yy"], 2,
                                             radius=0.5)
    np.testing.assert_allclose(got["regret"], curves["loss"].astype(np.float64) - best)
    free, _ = regret.best_sparse_ls_loss(curves["gram"], curves["xy"], curves["yy"], 2)
    assert np.all(best > free + 1.0)  # the radius binds: dropping it would show
    np.testing.assert_allclose(got["regret_wstar"],
                               curves["loss"].astype(np.float64) - curves["loss_wstar"])
    assert got["regret"].dtype == np.float64
    # not realizable: no regret against w*; no comparator_k: no comparator regret
    assert set(_result(PREDICTION, curves, comparator_k=2).regret_curves()) == {"regret"}
    assert set(_result(PREDICTION, curves, realizable=True).regret_curves()) == {"regret_wstar"}


def test_prediction_regret__greedy_above_the_enumeration_limit_is_labelled_a_bound(rng,
                                                                                   monkeypatch):
    import oslr.families as families_module

    curves = _ls_curves(rng)
    monkeypatch.setattr(families_module, "ENUMERATION_LIMIT", 9)  # C(5, 2) = 10 supports
    got = _result(PREDICTION, curves, comparator_k=2).regret_curves()
    assert set(got) == {"regret_lb_greedy"}
    greedy = regret.greedy_sparse_ls_loss(curves["gram"], curves["xy"], curves["yy"], 2)
    np.testing.assert_allclose(got["regret_lb_greedy"], curves["loss"] - greedy)


@pytest.mark.parametrize("b", [2.0, 3.0])
def test_linear_regret__top_k_norm_of_theta_with_each_grid_points_k_and_the_problems_b(b, rng):
    theta = rng.normal(size=(G, R, C, D))
    reward = rng.normal(size=(G, R, C))
    info = {"b": b} if b != 2.0 else {}  # b = 2 is the default
    got = _result(LINEAR, {"theta_sum": theta, "reward": reward}, info=info).regret_curves()
    assert set(got) == {"regret"}
    a = b / (b - 1.0)
    for g, k in enumerate((1, 3)):  # params.k per grid point
        top = -np.sort(-np.abs(theta[g]), axis=-1)[..., :k]
        want = np.sum(top ** a, axis=-1) ** (1 / a) - reward[g]
        np.testing.assert_allclose(got["regret"][g], want, rtol=1e-12)


def test_bandit_pseudo_regret__the_float64_running_sum(rng):
    pr = rng.random((G, R, C)).astype(np.float32)
    got = _result(BANDIT, {"pseudo_regret": pr, "reward": pr}).regret_curves()
    assert set(got) == {"pseudo_regret"} and got["pseudo_regret"].dtype == np.float64
    np.testing.assert_array_equal(got["pseudo_regret"], pr.astype(np.float64))


def test_concat_runs__joins_consecutive_batches_along_runs_and_refuses_others(rng):
    parts = []
    for offset, n in ((4, 3), (7, 2)):
        pr = rng.random((G, n, C))
        parts.append(_result(BANDIT, {"pseudo_regret": pr}, n_runs=n, run_offset=offset,
                             info={"t": offset}))
    whole = SimResult.concat_runs(parts)
    assert whole.n_runs == 5 and whole.run_offset == 4 and whole.info == {"t": 4}
    assert whole.info is not parts[0].info
    for which in ("final", "curves"):
        np.testing.assert_array_equal(
            getattr(whole, which)["pseudo_regret"],
            np.concatenate([getattr(p, which)["pseudo_regret"] for p in parts], axis=1))
    assert whole.regret_curves()["pseudo_regret"].shape == (G, 5, C)
    with pytest.raises(ValueError, match=r"^batches must follow each other: run_offset 8 "
                       r"where 7 was expected\.$"):
        SimResult.concat_runs([parts[0], dataclasses.replace(parts[1], run_offset=8)])
    with pytest.raises(ValueError, match="learner, problem, horizon, seed and grid must agree"):
        SimResult.concat_runs([parts[0], dataclasses.replace(parts[1], seed=1)])
    # the first part's fields, not the second's
    assert SimResult.concat_runs([parts[0]]).run_offset == 4


def test_compare__the_best_entry_is_the_default_reference(rng):
    finals = rng.normal(size=(2, 6, C)).cumsum(axis=2)
    a = _result(BANDIT, {"pseudo_regret": finals}, n_runs=6)
    b = _result(BANDIT, {"pseudo_regret": finals + 1.0}, n_runs=6, learner="m")
    from oslr.report import compare_frame

    assert a.compare(b).equals(compare_frame([a, b], reference="best"))


def test_summary_table__short_columns_and_the_comparison_with_compare_to():
    rng = np.random.default_rng(5)
    reg = rng.normal(10.0, 1.0, (2, R))[:, :, None] * np.arange(1, C + 1) / C
    curves = {"pseudo_regret": reg, "reward": np.ones((G, R, C)), "accepted": np.ones((G, R, C))}
    res = _result("bandit", curves)
    assert list(res.summary_table()) == ["learner", "params", "metric", "mean", "sem", "ci_low",
                                         "ci_high", "n_runs"]
    table = res.summary_table(compare_to="best")
    assert list(table)[-5:] == ["diff", "diff_low", "diff_high", "p_holm", "verdict"]
    assert set(table["verdict"]) <= {"reference", "better", "worse", "indistinguishable"}
    assert "reference" in set(table["verdict"])
    assert "param_eta" in res.summary_table(full=True)
