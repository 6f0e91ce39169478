"""[FKK] experiments (`oslr.experiments.foster`): the E5 stream, budgets held at k', the decision
table of the hardness runs (the studies themselves run in the slow suite and `oslr reproduce`)."""

import math

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from oslr.experiments import foster
from oslr.experiments.foster import budgeted, hard_decisions, rate_problem
from tests.experiments.fakes import FakeEngine, t_interval

matplotlib.use("Agg")


def test_rate_problem__unit_x_unit_wstar_clipped_labels():
    problem, pp = rate_problem(d=6, k=2, sigma=0.2)
    assert problem.d == 6 and problem.info["design"] == "sphere"
    assert float(pp.sigma) == pytest.approx(0.2) and int(pp.k) == 2
    _, pp = rate_problem()  # the E5 defaults: d = 8, k = 2, sigma = 0.1
    assert float(pp.sigma) == pytest.approx(0.1) and int(pp.k) == 2


@pytest.mark.parametrize("name,k_query,want", [
    ("foster-hedge", 5, 5),        # static k, k' = k_query
    ("ogd-random-subset", 4, 4),   # its k is its query count
    ("online-greedy", 4, 4),       # exploration size k0 = k'
    ("ogd-full", 3, 8),            # reads every feature whatever k'
])
def test_budgeted__every_learner_held_to_k_prime_features_a_round(name, k_query, want):
    learner, params, budget = budgeted(name, d=8, k=2, k_query=k_query, horizon=100)
    assert budget == want == int(np.asarray(learner.budget(params)))


def test_budgeted__foster_hedge_keeps_the_given_k_and_options_pass_through():
    learner, params, _ = budgeted("foster-hedge", d=8, k=3, k_query=5, horizon=100,
                                  eta_hedge_scale=0.5, not_an_option=1)
    assert learner.options["k"] == 3 and learner.info["n_subsets"] == 56  # C(8, 3)
    assert float(params.eta_hedge_scale) == 0.5 and int(params.k_query) == 5


def test_hard_decisions__final_round_means_per_learner_budget_and_instance_type():
    rows = []
    for learner, sat, losses, says in [("a", True, (1.0, 3.0), (1, 0)),
                                       ("a", False, (5.0, 7.0), (0, 0)),
                                       ("b", True, (2.0, 2.0), (1, 1))]:
        for run, (loss, said) in enumerate(zip(losses, says)):
            for n in (10, 20):
                rows.append(dict(learner=learner, budget=4, satisfiable=sat, run=run, n=n,
                                 horizon=20, loss=loss * n / 20, threshold=4.0,
                                 says_satisfiable=said))
    got = hard_decisions(pd.DataFrame(rows))
    assert got[["learner", "satisfiable"]].values.tolist() == [["a", True], ["a", False],
                                                               ["b", True]]
    assert got["loss"].tolist() == [2.0, 6.0, 2.0]  # the final round only
    assert got["says_satisfiable"].tolist() == [0.5, 0.0, 1.0]
    assert got["threshold"].tolist() == [4.0] * 3 and set(got["budget"]) == {4}


# ------------------------------------------------- the studies' bookkeeping, on a fake engine




def test_foster_rate__one_study_per_learner_and_t_rows_from_their_final_regret(monkeypatch):
    eng = FakeEngine()
    monkeypatch.setattr(foster, "sweep", eng.sweep)
    df = foster.foster_rate(horizons=(100, 400), k_queries=(4, 6), runs=5, seed=3, d=8, k=2,
                            learners=("foster-hedge", "ogd-full"))
    assert [(c.learner.name, c.horizon, c.grid) for c in eng.calls] == [
        ("foster-hedge", 100, [{"k_query": 4}, {"k_query": 6}]), ("ogd-full", 100, [{}]),
        ("foster-hedge", 400, [{"k_query": 4}, {"k_query": 6}]), ("ogd-full", 400, [{}])]
    for c in eng.calls:
        assert (c.n_runs, c.seed, c.kwargs["comparator_k"], c.kwargs["comparator_radius"]) == (
            5, 3, 2, 1.0)
        assert c.kwargs["progress"] is False
        assert c.problem.info["design"] == "sphere" and c.problem.d == 8
        assert c.problem.info["clip_y"] == 1.0  # labels clipped to [-1, 1] (E5)
        if c.learner.name == "foster-hedge":  # the learner's own params, tuned to T
            assert float(c.params.horizon) == c.horizon
        assert float(c.problem_params.sigma) == pytest.approx(0.1)
        assert int(c.problem_params.k) == 2
    assert len(df) == 6
    i = 0
    for res in eng.results:
        for g, label in enumerate(res.grid):
            row = df.iloc[i]
            i += 1
            budget = label.get("k_query", 8)
            assert (row["learner"], row["k_query"], row["horizon"], row["runs"], row["d"],
                    row["k"]) == (res.learner, budget, res.horizon, 5, 8, 2)
            mean, half = t_interval(res._regret["regret"][g][:, -1])
            assert row["regret"] == pytest.approx(mean, rel=1e-12)
            assert (row["ci_low"], row["ci_high"]) == pytest.approx((mean - half, mean + half))
            wmean, whalf = t_interval(res._regret["regret_wstar"][g][:, -1])
            assert (row["regret_wstar"], row["regret_wstar_half"]) == pytest.approx(
                (wmean, whalf))
            if res.learner == "foster-hedge":  # d^2 / (k' - k)^2 sqrt(k ln d T)
                want = 64 / (budget - 2) ** 2 * math.sqrt(2 * math.log(8) * res.horizon)
                assert row["theorem_1_order"] == pytest.approx(want)
            else:
                assert np.isnan(row["theorem_1_order"])
            assert row["wall_s"] >= 0
    eng.calls.clear()  # one budget alone, and a progress bar passed on
    foster.foster_rate(horizons=(100,), k_queries=(5,), runs=2, learners=("foster-hedge",),
                       progress=True)
    assert eng.calls[-1].grid == [{"k_query": 5}] and eng.calls[-1].kwargs["progress"] is True
    for (_, _), part in df.groupby(["learner", "k_query"]):  # slope of log R on log T
        want = math.log(part["regret"].iloc[1] / part["regret"].iloc[0]) / math.log(4)
        assert part["exponent"].tolist() == pytest.approx([want, want])


def test_foster_hard__loss_rows_per_checkpoint_and_the_decision_at_the_horizon(monkeypatch):
    eng = FakeEngine(n_checkpoints=3)
    monkeypatch.setattr(foster, "simulate", eng.simulate)
    df = foster.foster_hard(horizon=90, runs=4, instances=2, d=8, k=3, k_query=5, m=10,
                            seed=7, learners=("ogd-full", "foster-hedge"), eta_hedge_scale=0.5)
    hedge = [c for c in eng.calls if c.learner.name == "foster-hedge"]
    assert {c.learner.options["k"] for c in hedge} == {3}  # the cover size reaches the learner
    assert {float(c.params.eta_hedge_scale) for c in hedge} == {0.5}  # and the options
    assert [(c.problem.info["satisfiable"], c.problem.info["instance_seed"], c.learner.name)
            for c in eng.calls] == [(s, i, n) for s in (True, False) for i in (0, 1)
                                    for n in ("ogd-full", "foster-hedge")]
    assert {(c.horizon, c.n_runs, c.seed) for c in eng.calls} == {(90, 4, 7)}
    assert {float(c.params.horizon) for c in hedge} == {90.0}  # line-1 rates tuned to T
    assert {c.kwargs["progress"] for c in eng.calls} == {False}
    assert len(df) == 8 * 3
    for j, (c, res) in enumerate(zip(eng.calls, eng.results)):
        part = df.iloc[3 * j: 3 * j + 3]
        rows = c.problem.info["rows"]
        assert set(part["rows"]) == {rows} and set(part["learner"]) == {c.learner.name}
        assert set(part["budget"]) == {8 if c.learner.name == "ogd-full" else 5}
        assert part["n"].tolist() == res.ckpts.tolist() == [30, 60, 90]
        line = res.ckpts / (2.0 * rows * 8 * 3)
        assert part["threshold"].tolist() == pytest.approx(line.tolist())
        loss = res.curves["loss"][0]
        for cc in range(3):
            mean, half = t_interval(loss[:, cc])
            assert (part["loss"].iloc[cc], part["ci_low"].iloc[cc], part["ci_high"].iloc[cc]) == (
                pytest.approx((mean, mean - half, mean + half)))
        assert part["says_satisfiable"].iloc[:2].isna().all()
        assert part["says_satisfiable"].iloc[2] == np.mean(loss[:, -1] <= line[-1])
        assert set(part["horizon"]) == {90} and set(part["runs"]) == {4}
    # an instance whose runs all say "yes" and one whose runs all say "no"
    assert set(df["instance"]) == {0, 1} and set(df["d"]) == {8} and set(df["k"]) == {3}


def test_foster_hard__every_prediction_learner_by_default(monkeypatch):
    from oslr.registry import LEARNERS
    from oslr.types import PREDICTION

    eng = FakeEngine(n_checkpoints=2)
    monkeypatch.setattr(foster, "simulate", eng.simulate)
    foster.foster_hard(horizon=20, runs=2, instances=1)
    want = [n for n in LEARNERS if LEARNERS[n].family == PREDICTION]
    assert [c.learner.name for c in eng.calls] == want * 2
    # the defaults: m = 10 elements (the no instance adds its uncovered one), seed 0
    assert {(int(c.problem_params.matrix.shape[0]), c.seed) for c in eng.calls} == {(10, 0),
                                                                                 (11, 0)}


@pytest.mark.parametrize("experiment", ["foster-rate", "foster-hard"])
def test_experiment__writes_its_files_from_the_returned_table(tmp_path, monkeypatch, experiment):
    from oslr.spec import ExperimentArgs

    eng = FakeEngine(n_checkpoints=3)
    monkeypatch.setattr(foster, "sweep", eng.sweep)
    monkeypatch.setattr(foster, "simulate", eng.simulate)
    titles = []
    plot_rate = foster.plot_rate
    monkeypatch.setattr(foster, "plot_rate", lambda df, path, title: titles.append(title)
                        or plot_rate(df, path, title))
    spec = foster.FOSTER_RATE if experiment == "foster-rate" else foster.FOSTER_HARD
    args = ExperimentArgs(dataset=None, runs=3, seed=5, out=tmp_path, quick=True, progress=False)
    df = spec.run(args)
    assert {c.n_runs for c in eng.calls} == {3} and {c.seed for c in eng.calls} == {5}
    if experiment == "foster-rate":
        assert titles == ["E5 stream (d=8, k=2, ||x||=1, ||w*||=1, sigma=0.1): 3 runs per T, "
                          "95% bands"]
        assert sorted({c.horizon for c in eng.calls}) == [1_000, 3_000, 10_000]
        assert sorted(set(df["k_query"]) - {8}) == [4, 6]
    else:
        assert {c.horizon for c in eng.calls} == {2_000}
        assert {c.problem.info["instance_seed"] for c in eng.calls} == {0}
        assert [c.learner.name for c in eng.calls] == 2 * list(foster.QUICK_HARD_LEARNERS)
        assert foster.QUICK_HARD_LEARNERS == ("ogd-full", "ogd-random-subset", "foster-hedge",
                                              "ito-dual-averaging")
        pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "foster-hard-decisions.csv"),
                                      foster.hard_decisions(df), check_dtype=False)
    for name in spec.files:
        assert (tmp_path / name).stat().st_size > 0
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / f"{experiment}.csv"), df,
                                  check_dtype=False)


# ----------------------------------------------------------------------------- the figures


def _rate_frame():
    rows = []
    for name, budget, base in (("foster-hedge", 4, 10.0), ("foster-hedge", 6, 5.0),
                               ("ogd-full", 8, 2.0)):
        for t in (100, 400, 1600):
            r = base * math.sqrt(t / 100)
            rows.append(dict(learner=name, k_query=budget, horizon=t, regret=r, ci_low=0.8 * r,
                             ci_high=1.2 * r, exponent=0.5,
                             theorem_1_order=(foster.theorem_1_order(8, 2, budget, t)
                                              if name == "foster-hedge" else np.nan)))
    return pd.DataFrame(rows)


def test_plot_rate__lines_bands_theorem_and_sqrt_guide(tmp_path):
    df = _rate_frame()
    fig = foster.plot_rate(df, tmp_path / "r.png", "E5 title")
    ax = fig.axes[0]
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_xlabel() == "horizon T (rates tuned to T)"
    assert ax.get_ylabel() == "regret R1 at T (||w||_2 <= 1, exact)"
    assert ax.get_title() == "E5 title"
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    assert set(lines) == {"foster-hedge, k'=4 (slope 0.50)", "foster-hedge, k'=6 (slope 0.50)",
                          "ogd-full, all d features (slope 0.50)",
                          "Thm 1, k'=4 (order only, constant 1)",
                          "Thm 1, k'=6 (order only, constant 1)", "sqrt(T) guide"}
    hedge4 = lines["foster-hedge, k'=4 (slope 0.50)"]
    assert hedge4.get_marker() == "o"
    np.testing.assert_allclose(hedge4.get_ydata(), 10 * np.sqrt([1, 4, 16]))
    thm = lines["Thm 1, k'=4 (order only, constant 1)"]
    assert thm.get_linestyle() == "--" and thm.get_color() == hedge4.get_color()
    np.testing.assert_allclose(thm.get_ydata(), foster.theorem_1_order(8, 2, 4, [100, 400, 1600]))
    guide = lines["sqrt(T) guide"]  # through foster-hedge's smallest k' at the last T
    assert guide.get_linestyle() == ":" and guide.get_color() == "black"
    np.testing.assert_allclose(guide.get_ydata(), 40 * np.sqrt(np.array([100, 400, 1600]) / 1600))
    bands = ax.collections
    assert len(bands) == 3
    for band, name in zip(bands, ["foster-hedge, k'=4", "foster-hedge, k'=6",
                                  "ogd-full, all d features"]):
        line = [ln for lab, ln in lines.items() if lab.startswith(name)][0]
        assert matplotlib.colors.same_color(band.get_facecolor()[0][:3], line.get_color())
        ys = band.get_paths()[0].vertices[:, 1]
        np.testing.assert_allclose([ys.min(), ys.max()], [0.8 * line.get_ydata()[0],
                                                          1.2 * line.get_ydata()[-1]])
    legend = ax.get_legend()  # right of the axes: it covers no line
    fig.canvas.draw()
    assert legend.get_window_extent().x0 >= ax.get_window_extent().x1
    assert legend.get_window_extent().x1 <= fig.bbox.width
    plt.close(fig)
    df.loc[0, "ci_low"] = -1.0  # a band below zero: symlog
    fig = foster.plot_rate(df)
    assert fig.axes[0].get_yscale() == "symlog"
    plt.close(fig)


def test_plot_hard__two_panels_one_colour_per_learner_and_the_decision_lines(tmp_path):
    rows = []
    for sat in (True, False):
        for inst in (0, 1):
            order = (("ogd-full", 1.0), ("foster-hedge", 2.0))
            for name, scale in order if sat else order[::-1]:  # the "no" panel: other order
                for n in (10, 100):
                    loss = scale * n * (0.01 if sat else 0.1) * (1 + inst)
                    rows.append(dict(learner=name, satisfiable=sat, instance=inst, n=n,
                                     loss=loss, ci_low=0.5 * loss, ci_high=2 * loss, rows=11,
                                     threshold=n / (2 * 11 * 8 * 2)))
    fig = foster.plot_hard(pd.DataFrame(rows), tmp_path / "h.png", "hard title")
    assert (tmp_path / "h.png").stat().st_size > 0
    yes, no = fig.axes
    assert yes.get_title() == "yes instance (satisfiable: True)"
    assert no.get_title() == "no instance (satisfiable: False)"
    assert fig._suptitle.get_text() == "hard title"
    assert yes.get_ylabel() == "cumulative square loss" and yes.get_xlabel() == "round t"
    for ax, factor in ((yes, 0.01), (no, 0.1)):
        assert ax.get_xscale() == ax.get_yscale() == "log"
        lines = {ln.get_label(): ln for ln in ax.get_lines()}
        assert set(lines) == {"ogd-full", "foster-hedge", "decision line T/(2mdk), m=11"}
        np.testing.assert_allclose(lines["ogd-full"].get_ydata(), [10 * factor, 100 * factor])
        dec = lines["decision line T/(2mdk), m=11"]  # instance 0 only, once per panel
        assert dec.get_linestyle() == "--" and dec.get_color() == "black"
        assert dec.get_linewidth() == 1.0
        np.testing.assert_allclose(dec.get_ydata(), [10 / 352, 100 / 352])
        assert len(ax.collections) == 2
        names = ("ogd-full", "foster-hedge") if ax is yes else ("foster-hedge", "ogd-full")
        for band, name in zip(ax.collections, names):
            xs = band.get_paths()[0].vertices[:, 0]  # the band spans the rounds 10 .. 100
            assert xs.min() == 10 and xs.max() == 100
            assert matplotlib.colors.same_color(band.get_facecolor()[0][:3],
                                                lines[name].get_color())
    assert yes.get_lines()[0].get_color() == no.get_lines()[1].get_color()  # same learner
    assert yes.get_lines()[1].get_color() == no.get_lines()[0].get_color()
    assert yes.get_legend() is not None and no.get_legend() is None
    plt.close(fig)


@pytest.mark.parametrize("quick", [False, True])
def test_experiment__default_runs(tmp_path, monkeypatch, quick):
    # foster-rate: 200 runs per T (k' = 6 at T = 1e5 was a t-only claim at 50), 50 quick;
    # foster-hard: 20 runs an instance either way
    from oslr.spec import ExperimentArgs

    eng = FakeEngine(n_checkpoints=3)
    monkeypatch.setattr(foster, "sweep", eng.sweep)
    monkeypatch.setattr(foster, "simulate", eng.simulate)
    runs = {}
    for spec in (foster.FOSTER_RATE, foster.FOSTER_HARD):
        eng.calls.clear()
        spec.run(ExperimentArgs(dataset=None, runs=None, seed=0, out=tmp_path, quick=quick,
                                progress=False))
        runs[spec.name] = {c.n_runs for c in eng.calls}
    assert runs == {"foster-rate": {50 if quick else 200}, "foster-hard": {20}}


def test_foster_hard__a_total_loss_on_the_line_says_satisfiable(monkeypatch):
    eng = FakeEngine(n_checkpoints=2)
    monkeypatch.setattr(foster, "simulate", eng.simulate)
    at = {}

    def line_at_run_0(ckpts, n_rows, d, k):  # the line through run 0's total loss
        return np.asarray(eng.results[-1].curves["loss"][0][0], np.float64)

    monkeypatch.setattr(foster, "decision_threshold", line_at_run_0)
    df = foster.foster_hard(horizon=40, runs=3, instances=1, learners=("ogd-full",),
                            progress=True)
    loss = eng.results[0].curves["loss"][0][:, -1].astype(np.float64)
    at["yes"] = df[df["satisfiable"] & (df["n"] == 40)]["says_satisfiable"].iloc[0]
    assert at["yes"] == np.mean(loss <= loss[0]) and at["yes"] >= 1 / 3  # "at most" the line
    assert {c.kwargs["progress"] for c in eng.calls} == {True}
