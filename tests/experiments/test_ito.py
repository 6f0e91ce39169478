"""[ITO] E3 experiments: the Table-1 study's rows, the paper's numbers beside ours."""

import dataclasses

import numpy as np
import pytest

from oslr.experiments import ito


@pytest.mark.slow
def test_ito_table1__tiny_study_has_every_method_and_the_papers_numbers():
    table, curves = ito.ito_table1(settings=((10, 2, 4),), horizon=60, runs=6)
    assert table["method"].tolist() == list(ito.METHODS)
    paper = table.set_index("method")["paper"]
    assert paper[["alg2", "alg3", "kklp", "kklp_a"]].tolist() == [427.0, 2544.3, 4649.4, 4335.0]
    assert np.isnan(paper["alg1"])  # Alg. 1 is not in [ITO]'s table
    assert (table["queries_per_round"] <= 4 + 1e-9).all()
    assert (table["ci_low"] <= table["regret"]).all()
    assert (table["regret"] <= table["ci_high"]).all()
    assert set(curves["method"]) == set(ito.METHODS) and curves["n"].max() == 60
    # predicting 0 has one regret per setting, whichever method's comparator loss is read
    np.testing.assert_allclose(table["zero_regret"], table["zero_regret"].iloc[0], rtol=1e-5)
    assert table["zero_regret"].iloc[0] > 0


def test_method__kklp_parameters_follow_l3_4():
    a = np.eye(10, 20, dtype=np.float32)
    learner, _ = ito.method("kklp", 10, 8, 2, 5000, a)
    # k0 = k = 8, k1 = k' = 2, B = ceil((8 * 5000 / (10 * 2))^(1/3)) = ceil(12.599) = 13
    assert (learner.info["k0"], learner.info["k1"], learner.info["batch"]) == (8, 2, 13)
    learner, _ = ito.method("kklp_a", 10, 8, 2, 5000, a)
    # on m = 20 forms: ceil((40000 / 40)^(1/3)) = 10
    assert learner.info["batch"] == 10 and learner.info["projection_m"] == 20


@pytest.mark.slow  # 15 s; the tuning rule itself is tested fast in test_tuning
def test_ito_table1_tuned__each_method_keeps_the_point_its_tuning_runs_favour(monkeypatch):
    from oslr.experiments import tuning
    from oslr.sim import simulate

    windows = []

    def two_points(evaluate, factors=tuning.TUNING_FACTORS):  # a 2-point grid: fast, no edge
        scores, payload = evaluate((0.3, 3.0))
        windows.append(scores)
        best = int(np.argmin(scores))
        return tuning.Tuned([0.3, 3.0], np.asarray(scores), best, False, [(0.3, 3.0)], [payload])

    monkeypatch.setattr(ito, "tune", two_points)
    setting = ((10, 2, 4),)
    table, _ = ito.ito_table1(settings=setting, horizon=80, runs=2, methods=("alg2", "kklp"),
                              normalise=False, clip=False, tune=True, tune_runs=3)
    rows = table.set_index("method")
    # by hand: alg2 at lam_scale 0.3 and 3 on tuning runs 100,000-100,002
    problem, pp = ito.make_problem("ito-synthetic", d=10, k=4, normalise=False, clip=False)
    a = ito.projection_matrix(10, 20, "gaussian", seed=0)
    learner, params = ito.method("alg2", 10, 4, 2, 80, a)
    means = []
    for f in (0.3, 3.0):
        scaled = dataclasses.replace(params, lam_scale=params.lam_scale * f)
        res = simulate(learner, problem, scaled, pp, horizon=80, n_runs=3, seed=0,
                       comparator_k=4, run_offset=tuning.TUNE_OFFSET)
        means.append(float(res.regret_curves()["regret"][0, :, -1].mean()))
    np.testing.assert_allclose(windows[0], means, rtol=1e-4)
    chosen = (0.3, 3.0)[int(np.argmin(means))]
    assert rows.loc["alg2", "factor"] == chosen
    assert rows.loc["alg2", "tuned"] == f"lam_scale={chosen:.4g}"
    assert rows.loc["alg2", "tuning_regret"] == pytest.approx(min(means), rel=1e-4)
    # KKLP tunes its batch length: default ceil((4 * 80 / (10 * 2))^(1/3)) = ceil(2.52) = 3,
    # so the points are round(0.3 * 3) = 1 and round(3 * 3) = 9
    f = rows.loc["kklp", "factor"]
    assert rows.loc["kklp", "tuned"] == f"batch={ {0.3: 1, 3.0: 9}[f] }"
    assert rows.loc["kklp", "tuning_points"] == 2 and not rows.loc["kklp", "at_cap"]
