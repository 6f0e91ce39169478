"""[WLL] experiment helpers: Theorem 3's order term (golden) and its overlay on the k/d figure."""

import math

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from oslr.experiments import wll
from oslr.experiments.wll import plot_experiment, theorem_3_order
from tests.experiments.fakes import FakeEngine, t_interval

matplotlib.use("Agg")


def test_theorem_3_order__golden():
    # b = 2: sqrt(4^(1/2) * 10^2 * ln 10 * e * ln e) = sqrt(1251.82) = 35.3810
    np.testing.assert_allclose(theorem_3_order(10, 4, math.e), 35.3810, rtol=1e-5)
    # b = 1 drops the k factor: sqrt(100 ln 10 e) = 25.0181
    np.testing.assert_allclose(theorem_3_order(10, 4, math.e, b=1.0), 25.0181, rtol=1e-5)


def test_plot_experiment__draws_best_minus_the_order_term():
    df = pd.DataFrame({"learner": ["ftpsl", "ftpsl"], "ratio": [0.1, 0.2], "k": [2, 4],
                       "d": [20, 20], "horizon": [1000, 1000], "reward_mean": [50.0, 60.0],
                       "reward_ci_low": [45.0, 55.0], "reward_ci_high": [55.0, 65.0],
                       "comparator_reward_mean": [80.0, 90.0]})
    fig = plot_experiment(df, "ratio", title="a9a")
    # 80 - 1.1e3 is far below every interval: no line, no legend entry, said in the title
    assert not [ln for ln in fig.axes[0].get_children()
                if str(ln.get_label()).startswith("best - [WLL] Thm 3")]
    assert fig.axes[0].get_title() == ("a9a\n[WLL] Thm 3's bound (best - order term, constant 1) "
                                       "lies below the axes: vacuous")
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend == ["ftpsl", "best k-sparse action in hindsight"]
    gap = fig.axes[1]  # the gap to the comparator, log: learners near it read apart
    np.testing.assert_allclose(gap.lines[0].get_ydata(), [30.0, 30.0])
    ys = gap.collections[0].get_paths()[0].vertices[:, 1]
    np.testing.assert_allclose([ys.min(), ys.max()], [25.0, 35.0])
    assert gap.get_yscale() == "log"
    assert gap.lines[0].get_color() == fig.axes[0].lines[0].get_color()
    high = df.assign(comparator_reward_mean=[5e4, 6e4], reward_mean=[4.5e4, 5.5e4],
                     reward_ci_low=[4e4, 5e4], reward_ci_high=[5e4, 6e4])
    fig = plot_experiment(high, "ratio")  # the bound inside the range: drawn, with its entry
    line = [ln for ln in fig.axes[0].get_children()
            if str(ln.get_label()).startswith("best - [WLL] Thm 3")][0]
    np.testing.assert_allclose(line.get_ydata(), [5e4, 6e4] - theorem_3_order(20, [2, 4], 1000))


# ------------------------------------------------- the studies' bookkeeping, on a fake engine




def _check_rows(df, eng, k_of):
    """Every row against its result: reward statistics and the best k-sparse l2 action's reward
    (b = 2: the l2 norm of the k largest |theta_sum| entries)."""
    i = 0
    for res in eng.results:
        for g, label in enumerate(res.grid):
            row, i = df.iloc[i], i + 1
            k = k_of(res)
            reward = res.final["reward"][g]
            theta = res.final["theta_sum"][g].astype(np.float64)
            best = np.sqrt(np.sort(theta**2, axis=-1)[:, -k:].sum(-1))
            mean, half = t_interval(reward)
            assert row["learner"] == res.learner and row["k"] == k
            assert all(row[key] == pytest.approx(v) for key, v in label.items())
            assert (row["runs"], row["horizon"]) == (res.n_runs, res.horizon)
            assert (row["reward_mean"], row["reward_ci_low"], row["reward_ci_high"]) == (
                pytest.approx((mean, mean - half, mean + half)))
            assert row["reward_sd"] == pytest.approx(reward.std(ddof=1))
            assert row["comparator_reward_mean"] == pytest.approx(best.mean(), rel=1e-6)
            assert row["regret_mean"] == pytest.approx((best - reward).mean(), rel=1e-6)
    assert i == len(df)


def test_wll_reward_vs_k__one_study_per_learner_and_k(monkeypatch):
    eng = FakeEngine(n_checkpoints=2, trailing={"theta_sum": (123,)})
    monkeypatch.setattr(wll, "sweep", eng.sweep)
    df = wll.wll_reward_vs_k("a9a", ratios=(0.05, 0.0501, 0.1), runs=3, seed=2, horizon=40,
                             learners=("ftpsl", "ftpl-random-subset"), n_resamples=3)
    ks = [6, 12]  # round(0.05 * 123) = round(0.0501 * 123) = 6: one study
    assert [(c.learner.name, int(c.params.k), c.learner.options["max_k"]) for c in eng.calls] == [
        ("ftpsl", 6, 6), ("ftpsl", 12, 12), ("ftpl-random-subset", 6, 6),
        ("ftpl-random-subset", 12, 12)]
    assert eng.calls[0].learner.options["n_resamples"] == 3  # options reach the learner
    assert {(c.horizon, c.n_runs, c.seed) for c in eng.calls} == {(40, 3, 2)}
    assert df["ratio"].tolist() == pytest.approx([k / 123 for k in ks] * 2)
    assert set(df["dataset"]) == {"a9a"} and set(df["d"]) == {123}
    _check_rows(df, eng, lambda res: int(res.params.k))


def test_wll_redundant__rho_zero_first_and_held_rates(monkeypatch):
    eng = FakeEngine(n_checkpoints=2, trailing={"theta_sum": (123,)})

    def sweep(learner, problem, params, pp, grid, **kw):  # theta_sum of the problem's d
        eng.trailing = {"theta_sum": (problem.d,)}
        return eng.sweep(learner, problem, params, pp, grid, **kw)

    monkeypatch.setattr(wll, "sweep", sweep)
    df = wll.wll_redundant("a9a", rhos=(0.5,), k_ratio=0.1, runs=2, horizon=30,
                           learners=("ftpsl",), hold_rates=True, eta_scale=2.0)
    assert {c.seed for c in eng.calls} == {0}  # the default seed
    assert [c.problem.d for c in eng.calls] == [123, 123 + 62]
    assert df["rho"].tolist() == [0.0, 0.5] and df["n_redundant"].tolist() == [0, 62]
    assert set(df["d_orig"]) == {123} and set(df["k"]) == {12}
    for c in eng.calls:  # eta(d') f = eta(d0) with f = sqrt(ln d0 / ln d') d' / d0
        d1 = c.problem.d
        f = math.sqrt(math.log(123) / math.log(d1)) * d1 / 123
        assert float(c.params.eta_scale) == pytest.approx(2.0 * f, rel=1e-6)
        assert float(c.params.c0) == pytest.approx(123 / d1, rel=1e-6)
    _check_rows(df, eng, lambda res: 12)
    assert {c.kwargs["progress"] for c in eng.calls} == {False}  # no bar unless asked
    eng.calls.clear()  # a c0 of one's own is held the same way
    wll.wll_redundant("a9a", rhos=(0.5,), k_ratio=0.1, runs=2, horizon=30, learners=("ftpsl",),
                      hold_rates=True, c0=0.5)
    assert [float(c.params.c0) for c in eng.calls] == pytest.approx([0.5, 0.5 * 123 / 185])


def test_wll_reward_vs_k__defaults_a9a_seed_0_no_bar(monkeypatch):
    eng = FakeEngine(n_checkpoints=2, trailing={"theta_sum": (123,)})
    monkeypatch.setattr(wll, "sweep", eng.sweep)
    df = wll.wll_reward_vs_k(ratios=(0.1,), horizon=20, learners=("ftpsl",))
    (call,) = eng.calls
    assert (call.problem.d, call.seed, call.n_runs, call.kwargs["progress"]) == (
        123, 0, wll.WLL_SHUFFLES, False)
    assert wll.WLL_SHUFFLES == 50 and set(df["dataset"]) == {"a9a"}


def test_wll_rate_sweep__the_grid_each_learner_has(monkeypatch):
    eng = FakeEngine(n_checkpoints=2, trailing={"theta_sum": (123,)})
    monkeypatch.setattr(wll, "sweep", eng.sweep)
    df = wll.wll_rate_sweep("a9a", eta_scales=(1.0, 3.0), c0s=(0.0, 0.1), runs=2, horizon=25,
                            learners=("ftpsl", "ftpl-random-subset"), progress=True)
    assert all(c.kwargs["progress"] for c in eng.calls)
    assert set(df["dataset"]) == {"a9a"} and set(df["d"]) == {123}
    assert eng.calls[0].grid == [{"eta_scale": 1.0, "c0": 0.0}, {"eta_scale": 1.0, "c0": 0.1},
                                 {"eta_scale": 3.0, "c0": 0.0}, {"eta_scale": 3.0, "c0": 0.1}]
    assert eng.calls[1].grid == [{"eta_scale": 1.0}, {"eta_scale": 3.0}]  # no exploration
    assert int(eng.calls[0].params.k) == 25  # k = 0.2 d
    assert len(df) == 6 and df["c0"].isna().sum() == 2
    _check_rows(df, eng, lambda res: 25)


# ----------------------------------------------------------------------------- the figures


def test_plot_rate_sweep__a_line_per_c0_dashed_baselines_and_the_comparator(tmp_path):
    df = pd.DataFrame({
        "learner": ["ftpsl"] * 4 + ["ftpl-random-subset"] * 2,
        "eta_scale": [3.0, 1.0, 3.0, 1.0, 3.0, 1.0], "c0": [0.1, 0.1, 1.0, 1.0, np.nan, np.nan],
        "reward_mean": [5.0, 4.0, 6.0, 7.0, 2.0, 1.0], "reward_ci_low": [4.0, 3, 5, 6, 1, 0],
        "reward_ci_high": [6.0, 5, 7, 8, 3, 2], "comparator_reward_mean": [9.0] * 6})
    fig = wll.plot_rate_sweep(df, tmp_path / "r.png", "rates")
    ax = fig.axes[0]
    assert (tmp_path / "r.png").stat().st_size > 0
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    assert list(lines) == ["ftpsl c0=0.1", "ftpsl c0=1", "ftpl-random-subset",
                           "best k-sparse action in hindsight"]
    np.testing.assert_allclose(lines["ftpsl c0=0.1"].get_xdata(), [1.0, 3.0])  # sorted by eta
    np.testing.assert_allclose(lines["ftpsl c0=0.1"].get_ydata(), [4.0, 5.0])
    assert lines["ftpsl c0=1"].get_linestyle() == "-"
    assert lines["ftpl-random-subset"].get_linestyle() == "--"
    assert lines["ftpsl c0=1"].get_marker() == "o"
    best = lines["best k-sparse action in hindsight"]
    assert best.get_linestyle() == ":" and best.get_color() == "k" and best.get_linewidth() == 1
    np.testing.assert_allclose(best.get_ydata(), [9.0, 9.0])
    assert ax.get_xscale() == "log" and ax.get_ylabel() == "cumulative reward"
    assert ax.get_xlabel() == "eta_scale (eta = eta_scale x eq. (1))"
    assert ax.get_title() == "rates" and len(ax.collections) == 3
    plt.close(fig)


def test_plot_experiment__labels_the_redundant_axis_and_uses_the_grown_d(tmp_path):
    df = pd.DataFrame({"learner": ["ftpsl", "ftpsl", "ftpl-random-subset",
                                   "ftpl-random-subset"],
                       "rho": [0.5, 0.0, 0.5, 0.0], "k": [2] * 4, "d_orig": [20] * 4,
                       "n_redundant": [10, 0, 10, 0], "horizon": [1000] * 4,
                       "reward_mean": [50.0, 60.0, 40.0, 45.0],
                       "reward_ci_low": [-1e6, 55.0, 35.0, 40.0],
                       "reward_ci_high": [55.0, 65.0, 45.0, 50.0],
                       "comparator_reward_mean": [80.0, 90.0, 80.0, 90.0]})
    fig = plot_experiment(df, "rho", tmp_path / "e.png", "redundant")
    ax = fig.axes[0]
    assert (tmp_path / "e.png").stat().st_size > 0
    assert ax.get_xlabel() == "rho (appended N(0, 1) features, as a share of d)"
    assert (ax.get_ylabel(), ax.get_title()) == ("cumulative reward", "redundant")
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    np.testing.assert_allclose(lines["ftpsl"].get_xdata(), [0.0, 0.5])
    np.testing.assert_allclose(lines["ftpsl"].get_ydata(), [60.0, 50.0])
    best = lines["best k-sparse action in hindsight"]
    np.testing.assert_allclose(best.get_ydata(), [90.0, 80.0])
    assert best.get_linestyle() == "--" and best.get_color() == "k"
    bound = lines["best - [WLL] Thm 3 order term (order only, constant 1)"]  # not vacuous here
    np.testing.assert_allclose(bound.get_ydata(),
                               [90.0, 80.0] - theorem_3_order([20, 30], 2, 1000))
    assert len(ax.collections) == 2
    plt.close(fig)
    fig = plot_experiment(df.rename(columns={"rho": "share"}), "share")  # no label for it
    assert fig.axes[0].get_xlabel() == "share"
    plt.close(fig)


@pytest.mark.slow  # keeps the default run under 5 min (CI runs it with -m slow)
@pytest.mark.parametrize("name", ["wll-k", "wll-redundant", "wll-rates"])
def test_experiment__quick_sizes_and_files_from_the_returned_table(tmp_path, monkeypatch, name):
    from oslr.registry import EXPERIMENTS
    from oslr.spec import ExperimentArgs

    eng = FakeEngine(n_checkpoints=2)

    def sweep(learner, problem, params, pp, grid, **kw):
        eng.trailing = {"theta_sum": (problem.d,)}
        return eng.sweep(learner, problem, params, pp, grid, **kw)

    monkeypatch.setattr(wll, "sweep", sweep)
    spec = EXPERIMENTS[name]
    # the k and redundant runs are built by _run_curve when the module is imported: built here
    # again from the same arguments, so that the function itself is what runs
    run = {"wll-k": lambda: wll._run_curve("wll-k", "wll_reward_vs_k", "ratio", wll.WLL_RATIOS,
                                           (0.1, 0.3, 0.5)),
           "wll-redundant": lambda: wll._run_curve("wll-redundant", "wll_redundant", "rho",
                                                   wll.WLL_RHOS, (0.5, 1.5)),
           "wll-rates": lambda: spec.run}[name]()
    titles = []
    write = wll.write_table_and_figure
    monkeypatch.setattr(wll, "write_table_and_figure",
                        lambda *a: titles.append(a[-1]) or write(*a))
    df = run(ExperimentArgs(dataset="a9a", runs=2, seed=3, out=tmp_path, quick=True,
                            progress=False))
    assert {(c.n_runs, c.seed) for c in eng.calls} == {(2, 3)}
    assert titles == [f"a9a: 2 shuffles, T={1000 if name == 'wll-rates' else 5000}"]
    assert [c.learner.name for c in eng.calls][:1] == ["ftpsl"]
    horizon = 1000 if name == "wll-rates" else 5000
    assert {c.horizon for c in eng.calls} == {horizon}
    if name == "wll-k":
        assert sorted(set(df["k"])) == [12, 37, 62]  # k/d in {0.1, 0.3, 0.5}
    elif name == "wll-redundant":
        assert sorted(set(df["rho"])) == [0.0, 0.5, 1.5]
    else:
        assert len(eng.calls[0].grid) == 4 and {g["eta_scale"] for g in eng.calls[0].grid} == {
            1.0, 30.0}
    for f in spec.files:
        assert (tmp_path / f.format(dataset="a9a")).stat().st_size > 0
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / f"{name}-a9a.csv"), df,
                                  check_dtype=False)
    eng.calls.clear()  # without --runs: the docs' shuffles (100 a point for the rate sweep)
    run(ExperimentArgs(dataset="a9a", runs=None, seed=3, out=tmp_path, quick=True,
                       progress=False))
    assert {c.n_runs for c in eng.calls} == {100 if name == "wll-rates" else 50}
