"""[ITO] E3 experiments: the Table-1 study's rows, the paper's numbers beside ours."""

import dataclasses

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from oslr.experiments import ito
from tests.experiments.fakes import FakeEngine, t_interval
from tests.helpers import stream

matplotlib.use("Agg")


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
    learner, params = ito.method("kklp", 10, 8, 2, 5000, a)
    # k0 = k = 8, k1 = k' = 2, B = ceil((8 * 5000 / (10 * 2))^(1/3)) = ceil(12.599) = 13
    assert (learner.info["k0"], learner.info["k1"], learner.info["batch"]) == (8, 2, 13)
    assert float(params.horizon) == 5000.0  # the study's T, which the greedy's rates read
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


# ------------------------------------------------- the studies' bookkeeping, on a fake engine




def test_label_energy__sum_of_squared_labels_of_each_runs_stream():
    problem, pp = ito.make_problem("ito-synthetic", d=6, k=2)
    got = ito.label_energy(problem, pp, 3, 2, 25)
    want = [(np.asarray(stream(problem, pp, 3, r, 25).y, np.float64) ** 2).sum() for r in (0, 1)]
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert got[0] != got[1]


def _fake_energy(monkeypatch):
    """label_energy replaced by known numbers; returns the list of its calls' arguments."""
    calls = []

    def energy(problem, pp, seed, runs, horizon):
        calls.append((problem.name, seed, runs, horizon))
        return np.arange(1.0, runs + 1) * 10.0

    monkeypatch.setattr(ito, "label_energy", energy)
    return calls


def test_ito_table1__rows_curves_and_finals_from_each_methods_study(monkeypatch):
    eng = FakeEngine(n_checkpoints=3, regret=("regret",))
    monkeypatch.setattr(ito, "simulate", eng.simulate)
    energy_calls = _fake_energy(monkeypatch)
    table, curves, finals = ito.ito_table1(settings=((10, 2, 4),), horizon=45, runs=6, seed=1,
                                           return_finals=True, normalise=False, clip=False)
    assert [c.learner.name for c in eng.calls] == [
        "ito-dual-averaging", "ito-projection", "online-greedy", "online-greedy",
        "ito-block-bandit"]
    assert {(c.horizon, c.n_runs, c.seed, c.kwargs["comparator_k"]) for c in eng.calls} == {
        (45, 6, 1, 4)}
    problem = eng.calls[0].problem
    assert problem.name == "ito-synthetic" and problem.d == 10
    assert energy_calls == [("ito-synthetic", 1, 6, 45)]
    energy = np.arange(1.0, 7.0) * 10.0
    assert table["method"].tolist() == list(ito.METHODS)
    # each study names its method: the per-run file's info_method tells KKLP from KKLP_A
    assert [res.info["method"] for res in eng.results] == list(ito.METHODS)
    for (_, row), res in zip(table.iterrows(), eng.results):
        reg = res._regret["regret"][0]
        mean, half = t_interval(reg[:, -1])
        assert (row["d"], row["k_prime"], row["k"], row["horizon"], row["runs"]) == (
            10, 2, 4, 45, 6)
        assert row["label"] == ito.LABELS[row["method"]]
        assert not row["normalise"] and not row["clip"]
        assert row["regret_5"] == pytest.approx(reg[:5, -1].mean())
        assert (row["regret"], row["ci_low"], row["ci_high"]) == pytest.approx(
            (mean, mean - half, mean + half))
        assert row["queries_per_round"] == pytest.approx(res.final["queries"][0].mean() / 45)
        comparator = res.final["loss"][0] - reg[:, -1]
        assert row["zero_regret"] == pytest.approx(np.mean(energy - comparator), rel=1e-5)
        want = ito.PAPER[(10, 2, 4)].get(row["method"], np.nan)
        assert row["paper"] == want or (np.isnan(want) and np.isnan(row["paper"]))
        assert row["paper_s"] == ito.PAPER_SECONDS.get(row["method"], np.nan) or np.isnan(
            row["paper_s"])
        part = curves[curves["method"] == row["method"]]
        cm, ch = t_interval(reg, axis=0)
        assert part["n"].tolist() == [15, 30, 45]
        np.testing.assert_allclose(part["mean"], cm)
        np.testing.assert_allclose(part["ci_low"], cm - ch)
        np.testing.assert_allclose(part["ci_high"], cm + ch)
        np.testing.assert_allclose(part["typical"], reg[0])
        fin = finals[finals["method"] == row["method"]]
        assert fin["run"].tolist() == list(range(6))
        np.testing.assert_allclose(fin["regret"], reg[:, -1])
        assert set(fin["k"]) == {4} and set(fin["d"]) == {10} and set(fin["k_prime"]) == {2}
    assert len(ito.ito_table1(settings=((10, 2, 4),), horizon=45, runs=2,
                              methods=("alg2",))) == 2  # (table, curves) without finals
    # a setting the paper did not run: no paper number, not an error
    other, _ = ito.ito_table1(settings=((10, 3, 4),), horizon=45, runs=2, methods=("alg2",))
    assert np.isnan(other["paper"]).all()


def test_ito_table1_tuned__the_chosen_point_is_the_lowest_tuning_score(monkeypatch):
    from oslr.experiments import tuning

    eng = FakeEngine(n_checkpoints=2, regret=("regret",))
    monkeypatch.setattr(ito, "simulate", eng.simulate)
    _fake_energy(monkeypatch)
    table, _ = ito.ito_table1(settings=((10, 2, 4),), horizon=40, runs=2, seed=3,
                              methods=("alg2", "kklp", "kklp_a"), tune=True, tune_runs=3)
    rows = table.set_index("method")
    tuning_calls = [(c, r) for c, r in zip(eng.calls, eng.results)
                    if c.kwargs.get("run_offset") == tuning.TUNE_OFFSET]
    assert {(c.n_runs, c.seed, c.horizon, c.kwargs["comparator_k"])
            for c, _ in tuning_calls} == {(3, 3, 40, 4)}
    # alg2: one vmapped call per window, lam_scale times each factor
    alg2 = [(c, r) for c, r in tuning_calls if c.learner.name == "ito-dual-averaging"]
    factors = [g["factor"] for c, _ in alg2 for g in c.grid]
    scores = np.concatenate([tuning.mean_final_regret(r) for _, r in alg2])
    assert factors[:5] == list(tuning.TUNING_FACTORS)
    best = int(np.argmin(scores))
    assert rows.loc["alg2", "factor"] == factors[best]
    assert rows.loc["alg2", "tuning_points"] == len(factors)
    assert rows.loc["alg2", "tuning_regret"] == pytest.approx(scores[best])
    edge = factors[best] in (min(factors), max(factors))
    assert bool(rows.loc["alg2", "at_cap"]) == edge
    evaluated = [c for c in eng.calls if "run_offset" not in c.kwargs]
    default = ito.method("alg2", 10, 4, 2, 40, None)[1].lam_scale
    assert float(evaluated[0].params.lam_scale) == pytest.approx(float(default) * factors[best])
    assert rows.loc["alg2", "tuned"] == f"lam_scale={float(evaluated[0].params.lam_scale):.4g}"
    # kklp: one study per batch length, B = max(1, round(factor x 2)), the default
    # ceil((4 * 40 / (10 * 2))^(1/3)) = 2
    kklp = [(c, r) for c, r in tuning_calls
            if c.learner.name == "online-greedy" and c.learner.info["projection_m"] == 0]
    kklp_a = [c for c, _ in tuning_calls if (c.learner.info or {}).get("projection_m") == 20]
    # KKLP_A chooses among m = 20 forms: default ceil((4 * 40 / (20 * 2))^(1/3)) = 2 too
    assert [c.learner.info["batch"] for c in kklp_a][:5] == [1, 1, 2, 6, 20]
    batches = [c.learner.info["batch"] for c, _ in kklp]
    assert batches[:5] == [1, 1, 2, 6, 20]
    scores = np.concatenate([tuning.mean_final_regret(r) for _, r in kklp])
    best = int(np.argmin(scores))
    assert rows.loc["kklp", "tuned"] == f"batch={batches[best]}"
    assert evaluated[1].learner.info["batch"] == batches[best]


def test_ito_real__loss_rows_per_k_method_and_checkpoint(monkeypatch):
    eng = FakeEngine(n_checkpoints=2, regret=("regret",))
    monkeypatch.setattr(ito, "simulate", eng.simulate)
    energy_calls = _fake_energy(monkeypatch)
    finals = []
    df = ito.ito_real(ks=(4, 6), horizon=30, runs=3, seed=2, methods=("alg2", "alg3_identity"),
                      finals=finals)
    assert [(c.learner.name, c.kwargs["comparator_k"]) for c in eng.calls] == [
        ("ito-dual-averaging", 4), ("ito-projection", 4), ("ito-dual-averaging", 6),
        ("ito-projection", 6)]
    assert eng.calls[1].learner.info["m"] == 26  # A = I on kegg's 26 features
    assert [res.info["method"] for res in eng.results] == ["alg2", "alg3_identity"] * 2
    np.testing.assert_array_equal(eng.calls[1].learner.options["projection"], np.eye(26))
    problem = eng.calls[0].problem
    assert problem.name == "kegg" and energy_calls == [("kegg", 2, 3, 30)]
    zero = 20.0  # the mean of 10, 20, 30
    for j, (c, res) in enumerate(zip(eng.calls, eng.results)):
        part = df.iloc[2 * j: 2 * j + 2]
        k = c.kwargs["comparator_k"]
        assert set(part["k"]) == {k} and set(part["k_prime"]) == {k - 1}
        loss, reg = res.curves["loss"][0], res._regret["regret"][0]
        for cc in range(2):
            mean, half = t_interval(loss[:, cc])
            assert (part["loss"].iloc[cc], part["ci_low"].iloc[cc], part["ci_high"].iloc[cc]) == (
                pytest.approx((mean, mean - half, mean + half)))
            assert part["comparator_loss"].iloc[cc] == pytest.approx((loss - reg)[:, cc].mean())
        assert np.isnan(part["zero_loss"].iloc[0])
        assert part["zero_loss"].iloc[1] == pytest.approx(zero, rel=1e-5)
        rmean, rhalf = t_interval(reg[:, -1])
        assert (part["final_regret"].iloc[0], part["final_regret_half"].iloc[0]) == (
            pytest.approx((rmean, rhalf)))
        assert set(part["metric"]) == {"regret"} and set(part["runs"]) == {3}
    assert [(f["k"], f["method"], f["run"]) for f in finals[:4]] == [
        (4, "alg2", 0), (4, "alg2", 1), (4, "alg2", 2), (4, "alg3_identity", 0)]
    assert finals[0]["loss"] == pytest.approx(eng.results[0].curves["loss"][0][0, -1])
    # no exact comparator computed (C(d, k) too large): the greedy lower bound R2 instead
    eng = FakeEngine(n_checkpoints=2, regret=("regret_lb_greedy",))
    monkeypatch.setattr(ito, "simulate", eng.simulate)
    df = ito.ito_real(ks=(13,), horizon=20, runs=2, methods=("kklp",))
    assert set(df["metric"]) == {"regret_lb_greedy"} and eng.calls[0].horizon == 20


# ----------------------------------------------------------------------------- the figures


def test_plot_fig1a__run_zero_solid_mean_dashed_and_the_band(tmp_path):
    rows = [dict(d=10, k_prime=2, k=4, method=m, n=n, typical=v * n, mean=v * n + 1,
                 ci_low=v * n, ci_high=v * n + 2)
            for m, v in (("alg2", 1.0), ("kklp", 3.0)) for n in (10, 20)]
    rows += [dict(d=10, k_prime=5, k=8, method="alg2", n=10, typical=0, mean=0, ci_low=0,
                  ci_high=0)]  # another setting: not drawn
    fig = ito.plot_fig1a(pd.DataFrame(rows), tmp_path / "f.png")
    ax = fig.axes[0]
    assert (tmp_path / "f.png").stat().st_size > 0
    lines = ax.get_lines()
    assert [ln.get_label() for ln in lines[::2]] == [f"{ito.LABELS['alg2']}, run 0",
                                                     f"{ito.LABELS['kklp']}, run 0"]
    np.testing.assert_allclose(lines[2].get_ydata(), [30, 60])
    mean = lines[3]
    assert mean.get_linestyle() == "--" and mean.get_color() == lines[2].get_color()
    assert mean.get_linewidth() == 0.8
    np.testing.assert_allclose(mean.get_ydata(), [31, 61])
    assert len(ax.collections) == 2
    assert ax.get_xlabel() == "round t"
    assert ax.get_ylabel() == "regret R1 (best k-sparse LS on x, exact)"
    assert ax.get_title() == ("(d, k', k) = (10, 2, 4): run 0 (solid), mean and 95% band "
                              "(dashed)")
    plt.close(fig)
    fig = ito.plot_fig1a(pd.DataFrame(rows), title="given", setting=(10, 5, 8))
    assert fig.axes[0].get_title() == "given" and len(fig.axes[0].get_lines()) == 2
    plt.close(fig)


def test_plot_real__a_panel_per_k_with_the_comparator_and_symlog_for_bands_below_zero(tmp_path):
    rows = []
    # k = 4: every band above 0 (some below 1): log; k = 8: bands below 0 and one loss of 0
    for k, metric, low in ((4, "regret", 0.05), (8, "regret_lb_greedy", -5.0)):
        for m in ("alg2", "kklp"):
            for n in (10, 100):
                zero = k == 8 and m == "alg2" and n == 10
                rows.append(dict(k=k, method=m, n=n, loss=0.0 if zero else 2.0 * n,
                                 ci_low=low * n, ci_high=3.0 * n, comparator_loss=0.5 * n,
                                 metric=metric))
    fig = ito.plot_real(pd.DataFrame(rows), tmp_path / "r.png", "kegg:")
    a4, a8 = fig.axes
    assert (tmp_path / "r.png").stat().st_size > 0
    assert a4.get_title() == "kegg: k=4, k'=3" and a8.get_title() == "kegg: k=8, k'=7"
    assert a4.get_yscale() == "log" and a8.get_yscale() == "symlog"
    assert a8.yaxis.get_transform().linthresh == 20.0  # the smallest positive mean loss (not 0)
    for ax, which, k in ((a4, "best", 4), (a8, "greedy", 8)):
        assert ax.get_xscale() == "log" and ax.get_xlabel() == "round t"
        assert ax.get_ylabel() == "cumulative square loss"
        lines = {ln.get_label(): ln for ln in ax.get_lines()}
        comp = lines[f"{which} {k}-sparse LS in hindsight"]
        assert comp.get_linestyle() == "--" and comp.get_color() == "black"
        np.testing.assert_allclose(comp.get_ydata(), [5.0, 50.0])
        np.testing.assert_allclose(lines["kklp"].get_ydata(), [20.0, 200.0])
        assert len(ax.collections) == 2 and ax.get_legend() is not None
    plt.close(fig)


@pytest.mark.parametrize("name", ["ito-table1", "ito-real"])
def test_experiment__quick_sizes_and_files_from_the_returned_table(tmp_path, monkeypatch, name):
    from oslr.registry import EXPERIMENTS
    from oslr.spec import ExperimentArgs

    eng = FakeEngine(n_checkpoints=2, regret=("regret",))
    monkeypatch.setattr(ito, "simulate", eng.simulate)
    _fake_energy(monkeypatch)
    spec = EXPERIMENTS[name]
    options = {"normalise": False} if name == "ito-table1" else {}
    df = spec.run(ExperimentArgs(dataset=None, runs=3, seed=4, out=tmp_path, quick=True,
                                 progress=False, options=options))
    assert {(c.n_runs, c.seed) for c in eng.calls} == {(3, 4)}
    if name == "ito-table1":
        assert {c.horizon for c in eng.calls} == {1_000} and len(df) == len(ito.METHODS)
        assert set(df["k"]) == {4} and not df["normalise"].any() and df["clip"].all()
        finals = pd.read_csv(tmp_path / "ito-table1-finals.csv")
        assert len(finals) == 3 * len(ito.METHODS)
        curves = pd.read_csv(tmp_path / "ito-table1-curves.csv")
        assert set(curves["n"]) == {500, 1000}
    else:
        assert {c.horizon for c in eng.calls} == {5_000} and set(df["k"]) == {4}
        finals = pd.read_csv(tmp_path / "ito-real-finals.csv")
        assert len(finals) == 3 * 5 and set(finals["k"]) == {4}
    for f in spec.files:
        assert (tmp_path / f).stat().st_size > 0
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / f"{name}.csv"), df, check_dtype=False)
    eng.calls.clear()  # without --runs: the docs' run counts (100 instances; 50 shuffles)
    spec.run(ExperimentArgs(dataset=None, runs=None, seed=4, out=tmp_path, quick=True,
                            progress=False, options=options))
    assert {c.n_runs for c in eng.calls} == {100 if name == "ito-table1" else 50}


def test_ito_real_experiment__full_size_and_the_figure_title(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    from oslr.registry import EXPERIMENTS
    from oslr.spec import ExperimentArgs

    calls, titles = [], []

    def fake_real(**kw):
        calls.append(kw)
        return pd.DataFrame({"k": [4], "n": [10], "loss": [1.0]})

    def fake_plot(df, path, title=""):
        titles.append(title)
        return plt.figure()

    monkeypatch.setattr(ito, "ito_real", fake_real)
    monkeypatch.setattr(ito, "plot_real", fake_plot)
    EXPERIMENTS["ito-real"].run(ExperimentArgs(dataset=None, runs=None, seed=1, out=tmp_path,
                                               quick=False, progress=False))
    (kw,) = calls
    assert (kw["ks"], kw["horizon"], kw["runs"], kw["seed"]) == ((4, 8, 13), None, 50, 1)
    assert titles == ["kegg (for CT), 50 shuffles, 95% bands:"]
    plt.close("all")
