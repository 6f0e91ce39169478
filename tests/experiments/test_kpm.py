"""[KPM] experiment helpers: the PEGE / fPEGE-GD order terms drawn over kpm-pege (golden)."""

import math

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from oslr.experiments import kpm
from tests.experiments.fakes import FakeEngine, t_interval

matplotlib.use("Agg")


def test_pege_bounds__golden():
    df = pd.DataFrame({"learner": ["pege", "fpege-gd"], "d": [5, 5], "n": [100, 100]})
    # PEGE: d = 5; fPEGE-GD: 2 d ln^4 n = 10 * 4.60517^4 = 4497.62
    np.testing.assert_allclose(kpm.pege_bounds(df), [5.0, 4497.62], rtol=1e-5)


@pytest.mark.slow  # moved behind -m slow to keep the default run under 5 min
def test_kpm_runtime__both_linucb_forms_are_rows():
    from oslr.experiments.kpm import kpm_runtime

    df = kpm_runtime(ds=(4,), n_arms=3, horizon=8, repeats=1,
                     learners=("linucb", "linucb (A^-1 form)"))
    assert df["learner"].tolist() == ["linucb", "linucb (A^-1 form)"]
    assert df["fixed_arms"].tolist() == [True, False]  # the O(K d) form, then the A^-1 one
    assert (df["ms_per_round"] > 0).all() and (df["d"] == 4).all()


def test_kpm_runtime__timed_studies_are_played_whole_inside_an_experiment(tmp_path):
    # an experiment keeps its studies' checkpoints to resume them; a timed study loaded from
    # its own finished checkpoint would time nothing
    from oslr.checkpoint import keep_studies
    from oslr.experiments.kpm import kpm_runtime

    with keep_studies(tmp_path / "kept") as kept:
        kpm_runtime(ds=(4,), n_arms=3, horizon=8, repeats=2, learners=("linucb",))
    assert not (tmp_path / "kept").exists() and kept.resumed == []


# ------------------------------------------------- the studies' bookkeeping, on a fake engine




def test_kpm_tracking__curve_rows_per_learner_from_stream_mode_studies(monkeypatch):
    eng = FakeEngine(n_checkpoints=3)
    monkeypatch.setattr(kpm, "simulate", eng.simulate)
    df = kpm.kpm_tracking("men", runs=3, horizon=60, learners=("flinucb-gd", "flinucb-sag"),
                          seed=4)
    assert [c.learner.name for c in eng.calls] == ["flinucb-gd", "flinucb-sag"]
    for c in eng.calls:
        assert (c.horizon, c.n_runs, c.seed) == (60, 3, 4)
        assert c.problem.info["stream"] and c.problem.info["campaign"] == "men"
        assert c.learner.options["history"] == "id" and c.learner.options["track"]
    assert len(df) == 2 * 3 and set(df["campaign"]) == {"men"}
    assert set(df["d"]) == {eng.calls[0].problem.d} == {842}  # men: |u| |a| + 1
    for j, res in enumerate(eng.results):
        part = df.iloc[3 * j: 3 * j + 3]
        assert part["n"].tolist() == [20, 40, 60] and set(part["learner"]) == {res.learner}
        for c in range(3):
            mean, half = t_interval(res.curves["tracking_error"][0][:, c])
            assert (part["tracking_error"].iloc[c], part["ci_low"].iloc[c],
                    part["ci_high"].iloc[c]) == pytest.approx((mean, mean - half, mean + half))
    eng = FakeEngine(n_checkpoints=3)
    monkeypatch.setattr(kpm, "simulate", eng.simulate)
    kpm.kpm_tracking("women", learners=("flinucb-gd",))  # the whole log, 10 runs by default
    assert (eng.calls[0].horizon, eng.calls[0].n_runs) == (10_000, 10)


def test_kpm_replay__ctr_per_kappa_from_clicks_over_accepted_events(monkeypatch):
    eng = FakeEngine(n_checkpoints=2)
    monkeypatch.setattr(kpm, "sweep", eng.sweep)
    clock = iter([100.0, 103.5])  # the study's start and end
    monkeypatch.setattr(kpm.time, "perf_counter", lambda: next(clock))
    df = kpm.kpm_replay("women", kappas=(0.3, 3.0), runs=4, learners=("flinucb-svrg",), seed=2,
                        horizon=50)
    monkeypatch.undo()  # the real clock again
    assert df["wall_s"].tolist() == [3.5, 3.5]
    (c,) = eng.calls
    assert c.params.kappa is not None  # the made learner's params, swept over kappa
    assert c.grid == [{"kappa": 0.3}, {"kappa": 3.0}] and not c.problem.info["stream"]
    assert (c.horizon, c.n_runs, c.seed, c.learner.options["history"]) == (50, 4, 2, "id")
    res = eng.results[0]
    for g in range(2):
        row = df.iloc[g]
        assert (row["learner"], row["kappa"], row["campaign"], row["runs"], row["events"]) == (
            "flinucb-svrg", (0.3, 3.0)[g], "women", 4, 50)
        assert row["clicks_mean"] == pytest.approx(res.final["reward"][g].mean())
        assert row["wall_s"] >= 0
    # a run with no accepted event counts as one accepted event
    eng2 = FakeEngine(n_checkpoints=2)

    def sweep_with_zero(*args, **kwargs):
        r = eng2.sweep(*args, **kwargs)
        r.final["accepted"][0, 0] = 0.0
        return r

    monkeypatch.setattr(kpm, "sweep", sweep_with_zero)
    df = kpm.kpm_replay("women", kappas=(1.0,), runs=3, learners=("flinucb-gd",), horizon=20)
    clicks, acc = eng2.results[0].final["reward"][0], eng2.results[0].final["accepted"][0]
    ctr = 1e4 * clicks / np.maximum(acc, 1.0)
    mean, half = t_interval(ctr)
    assert (df["ctr_mean"].iloc[0], df["ctr_ci_low"].iloc[0], df["ctr_ci_high"].iloc[0]) == (
        pytest.approx((mean, mean - half, mean + half)))
    assert df["accepted_mean"].iloc[0] == pytest.approx(acc.mean())


def test_kpm_pege__regret_over_sqrt_n_rows_and_their_bounds(monkeypatch):
    eng = FakeEngine(n_checkpoints=4)
    monkeypatch.setattr(kpm, "simulate", eng.simulate)
    df = kpm.kpm_pege(ds=(3, 6), horizon=400, runs=3, seed=1)
    assert [(c.learner.name, c.problem.d) for c in eng.calls] == [
        ("pege", 3), ("fpege-gd", 3), ("pege", 6), ("fpege-gd", 6)]
    assert {(c.horizon, c.n_runs, c.seed) for c in eng.calls} == {(400, 3, 1)}
    assert "pseudo_regret" not in df and len(df) == 16
    for j, res in enumerate(eng.results):
        part = df.iloc[4 * j: 4 * j + 4]
        assert part["n"].tolist() == [100, 200, 300, 400]
        assert set(part["d"]) == {eng.calls[j].problem.d}
        for c, n in enumerate(res.ckpts):
            mean, half = t_interval(res.curves["pseudo_regret"][0][:, c] / math.sqrt(n))
            assert (part["regret_over_sqrt_n"].iloc[c], part["ci_low"].iloc[c],
                    part["ci_high"].iloc[c]) == pytest.approx((mean, mean - half, mean + half))
    np.testing.assert_allclose(df["bound"], kpm.pege_bounds(df))
    eng.calls.clear()
    kpm.kpm_pege(ds=(3,), horizon=40, runs=2)
    assert {c.seed for c in eng.calls} == {0}  # seed 0 by default


def test_kpm_runtime__rows_per_d_and_learner_and_the_slope_from_d_100(monkeypatch):
    eng = FakeEngine(n_checkpoints=2)
    monkeypatch.setattr(kpm, "simulate", eng.simulate)
    clock = iter(np.arange(0.0, 1e4, 0.5))  # every perf_counter call half a second later
    monkeypatch.setattr(kpm.time, "perf_counter", lambda: next(clock))
    df = kpm.kpm_runtime(ds=(10, 100, 200), n_arms=3, horizon=40, runs=2, repeats=2,
                         learners=("linucb", "linucb (A^-1 form)"))
    assert len(eng.calls) == 3 * 2 * 3  # a compile call, then the repeats
    assert [c.learner.name for c in eng.calls[:6]] == ["linucb"] * 3 + ["linucb"] * 3
    assert eng.calls[3].learner.options["history"] == "features"
    assert {(c.horizon, c.n_runs) for c in eng.calls} == {(40, 2)}
    for j in range(0, len(eng.calls), 3):  # the timed calls run the compile call's params
        assert all(c.problem_params is eng.calls[j].problem_params is not None
                   for c in eng.calls[j:j + 3])
    assert df[["learner", "d"]].values.tolist() == [
        [n, d] for d in (10, 100, 200) for n in ("linucb", "linucb (A^-1 form)")]
    assert df["fixed_arms"].tolist() == [True, False] * 3
    np.testing.assert_allclose(df["ms_per_round"], 1e3 * 0.5 / 40)  # 0.5 s / 40 rounds
    assert set(df["n_arms"]) == {3} and set(df["runs"]) == {2} and set(df["horizon"]) == {40}
    np.testing.assert_allclose(df["slope"], 0.0, atol=1e-9)  # flat timings, d >= 100 only
    for compile_call, timed in zip(eng.calls[::3], eng.calls[1::3]):  # the same study timed
        assert timed.params is compile_call.params and timed.learner is compile_call.learner
    eng.calls.clear()
    kpm.kpm_runtime(ds=(10,), learners=("linucb",))  # defaults: T = 500, one run, 3 repeats
    assert {(c.horizon, c.n_runs, c.learner.options.get("n_arms", 10)) for c in eng.calls} == {
        (500, 1, 10)}
    assert len(eng.calls) == 1 + 3


# ----------------------------------------------------------------------------- the figures


def test_plot_curves__one_line_and_band_per_group_and_bounds_in_the_groups_colour(tmp_path):
    # pege's bounds lie inside the curves' range; fpege-gd's end above every curve (left out)
    rows = [dict(learner=name, d=d, n=n, y=v * n, ci_low=0.5 * v * n, ci_high=2 * v * n,
                 bound=(0.9 if name == "pege" else 10) * v * n)
            for name, v in (("pege", 1.0), ("fpege-gd", 2.0)) for d in (5, 10) for n in (10, 100)]
    df = pd.DataFrame(rows)
    fig = kpm.plot_curves(df, "y", tmp_path / "c.png", "a title", by=("learner", "d"),
                          logy=False, bound_label="dashed: the bounds")
    ax = fig.axes[0]
    assert (tmp_path / "c.png").stat().st_size > 0
    assert ax.get_xscale() == "log" and ax.get_yscale() == "linear"
    assert ax.get_xlabel() == "n (rounds)" and ax.get_ylabel() == "y"
    assert ax.get_title() == "a title"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["pege, d=5", "pege, d=10", "fpege-gd, d=5", "fpege-gd, d=10",
                      "dashed: the bounds"]
    curves = {ln.get_label(): ln for ln in ax.get_lines()}
    np.testing.assert_allclose(curves["fpege-gd, d=10"].get_ydata(), [20, 200])
    bounds = [ln for ln in ax.get_lines() if ln.get_label() == "_nolegend_"]
    assert len(bounds) == 2  # fpege-gd's, above the axes at the horizon, are not drawn
    for b, name in zip(bounds, ["pege, d=5", "pege, d=10"]):
        assert b.get_color() == curves[name].get_color()
        np.testing.assert_allclose(b.get_ydata(), 0.9 * curves[name].get_ydata())
    assert len(ax.collections) == 4
    for band, name in zip(ax.collections, ["pege, d=5", "pege, d=10", "fpege-gd, d=5"]):
        assert matplotlib.colors.same_color(band.get_facecolor()[0][:3],
                                            curves[name].get_color())
    plt.close(fig)
    fig = kpm.plot_curves(df.drop(columns="bound"), "y")  # by learner, log y, no bound entry
    ax = fig.axes[0]
    assert ax.get_yscale() == "log" and ax.get_ylabel() == "y"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["pege", "fpege-gd"]
    plt.close(fig)


def test_plot_runtime__log_log_lines_with_the_fitted_slope(tmp_path):
    df = pd.DataFrame({"learner": ["a", "a", "b", "b"], "d": [10, 100, 10, 30],
                       "ms_per_round": [1.0, 10.0, 2.0, 3.0], "slope": [1.0, 1.0, np.nan, np.nan]})
    import matplotlib

    matplotlib.use("pdf")
    try:  # no path: the figure only, in the backend the user has (a notebook's)
        kpm.plot_runtime(df, None, "runtime")
        assert matplotlib.get_backend() == "pdf" and list(tmp_path.iterdir()) == []
    finally:
        matplotlib.use("Agg")
    fig = kpm.plot_runtime(df, tmp_path / "r.png", "runtime")
    assert tuple(fig.get_size_inches()) == pytest.approx((6.5, 4.2))
    ax = fig.axes[0]
    assert (tmp_path / "r.png").stat().st_size > 0
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == (
        "d", "ms per round (one run)", "runtime")
    lines = ax.get_lines()
    assert [ln.get_label() for ln in lines] == ["a (slope 1.00)", "b (no slope: d < 100 only)"]
    assert lines[0].get_marker() == "o"
    np.testing.assert_allclose(lines[0].get_ydata(), [1.0, 10.0])
    plt.close(fig)


@pytest.mark.parametrize("quick", [False, True])
def test_experiment__default_runs_enough_for_a_distribution_free_test(tmp_path, monkeypatch,
                                                                       quick):
    # the sign-flip test's smallest two-sided p is 2 / 2^n: 10 runs reach 0.002 (tracking's 3
    # learners), 20 runs 1.9e-6 (replay: Holm over 66 pairs of cells needs below 7.6e-4); quick runs fewer
    from oslr.registry import EXPERIMENTS
    from oslr.spec import ExperimentArgs

    eng = FakeEngine(n_checkpoints=3)
    monkeypatch.setattr(kpm, "simulate", eng.simulate)
    monkeypatch.setattr(kpm, "sweep", eng.sweep)
    runs = {}
    for name in ("kpm-tracking", "kpm-replay", "kpm-pege"):
        eng.calls.clear()
        EXPERIMENTS[name].run(ExperimentArgs(dataset="men", runs=None, seed=0, out=tmp_path,
                                             quick=quick, progress=False))
        runs[name] = {c.n_runs for c in eng.calls}
    assert runs == ({"kpm-tracking": {2}, "kpm-replay": {10}, "kpm-pege": {20}} if quick else
                    {"kpm-tracking": {10}, "kpm-replay": {20}, "kpm-pege": {20}})


@pytest.mark.parametrize("name", ["kpm-tracking", "kpm-replay", "kpm-pege", "kpm-runtime"])
def test_experiment__quick_sizes_and_files_from_the_returned_table(tmp_path, monkeypatch, name):
    from oslr.registry import EXPERIMENTS
    from oslr.spec import ExperimentArgs

    eng = FakeEngine(n_checkpoints=3)
    monkeypatch.setattr(kpm, "simulate", eng.simulate)
    monkeypatch.setattr(kpm, "sweep", eng.sweep)
    titles = []
    plot_runtime = kpm.plot_runtime
    monkeypatch.setattr(kpm, "plot_runtime",
                        lambda df, path, title: titles.append(title) or plot_runtime(df, path,
                                                                                      title))
    spec = EXPERIMENTS[name]
    args = ExperimentArgs(dataset="men", runs=3, seed=6, out=tmp_path, quick=True,
                          progress=False)
    df = spec.run(args)
    assert titles == (["linear bandit, K = 10"] if name == "kpm-runtime" else [])
    if name != "kpm-runtime":
        assert {(c.n_runs, c.seed) for c in eng.calls} == {(3, 6)}
    if name == "kpm-tracking":
        assert {c.horizon for c in eng.calls} == {1_000}
        assert [c.learner.name for c in eng.calls] == list(kpm.FAST)
    elif name == "kpm-replay":  # the first 2,500 of each run's shuffled events
        assert {c.horizon for c in eng.calls} == {2_500}
        assert {tuple(g["kappa"] for g in c.grid) for c in eng.calls} == {(0.3, 1.0)}
    elif name == "kpm-pege":
        assert {(c.horizon, c.problem.d) for c in eng.calls} == {(10_000, 5), (10_000, 10)}
    else:  # quick: d up to 100, T = 200, one run each, whatever --runs says
        assert {(c.horizon, c.problem.d, c.n_runs) for c in eng.calls} == {
            (200, d, 1) for d in (10, 30, 100)}
    for f in spec.files:
        path = tmp_path / f.format(dataset="men")
        assert path.stat().st_size > 0
    csv = [f for f in spec.files if f.endswith(".csv")][0].format(dataset="men")
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / csv), df, check_dtype=False)


def test_kpm_tracking_and_replay__the_default_campaign_and_the_progress_passed_on(monkeypatch):
    eng = FakeEngine(n_checkpoints=2)
    monkeypatch.setattr(kpm, "simulate", eng.simulate)
    monkeypatch.setattr(kpm, "sweep", eng.sweep)
    kpm.kpm_tracking(runs=2, horizon=20, learners=("flinucb-gd",), progress=True)
    kpm.kpm_replay(kappas=(1.0,), runs=2, learners=("flinucb-gd",), horizon=20, progress=True)
    assert [c.problem.info["campaign"] for c in eng.calls] == ["all", "all"]
    assert [c.kwargs["progress"] for c in eng.calls] == [True, True]
