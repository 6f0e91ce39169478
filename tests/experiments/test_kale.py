"""[KKLP] validation experiments (E4): the calibration reads the learner's own draws, the
theorem order terms, and a tiny study's table."""

import math

import jax
import jax.numpy as jnp
import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

import oslr
from oslr.experiments import kale
from oslr.learners.dantzig import gram_estimate
from oslr.rollout import PROBLEM_INIT, run_keys
from oslr.testing import episode_fn
from tests.experiments.fakes import FakeEngine, t_interval

matplotlib.use("Agg")


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


@pytest.mark.slow  # keeps the default run under 5 min (CI runs it with -m slow)
def test_slack_ratios__recomputed_in_numpy_from_the_runs_stream_and_subsets():
    # the ratio ||c_n - G_n w*||_inf / lam_n(C = 1) at n = 1, 3, 7 of run 1, from the stream's
    # examples and the k0-subsets drawn from the run's learner round keys, in float64
    from oslr.primitives import random_subset_mask
    from tests.helpers import learner_keys, stream

    d, k, k0, seed, horizon = 6, 2, 3, 5, 8
    ratios, ns = kale.slack_ratios(d, k, k0, horizon=horizon, draws=2, seed=seed)
    assert ns.tolist() == [1, 3, 7]
    problem, pp = kale.realizable_problem(d, k)
    ex = stream(problem, pp, seed, 1, 7)
    keys = learner_keys(seed, 1, 7)
    masks = np.asarray(jax.jit(jax.vmap(lambda kk: random_subset_mask(kk, d, jnp.int32(k0), d)))(keys))
    x = np.asarray(ex.x, np.float64) * masks * (d / k0)
    y = np.asarray(ex.y, np.float64)
    w_star = np.asarray(jax.jit(problem.init)(run_keys(jnp.uint32(seed), 1)[PROBLEM_INIT],
                                              pp).w_star, np.float64)
    studies = kale._w_star(problem, pp, seed, 2)  # the tables' w* of each run, in float64
    assert studies.dtype == np.float64
    np.testing.assert_array_equal(studies[1], w_star)
    for j, n in enumerate((1, 3, 7)):
        g = x[:n].T @ x[:n]
        off = (g - np.diag(np.diag(g))) * (k0 * (d - 1) / (d * (k0 - 1)))
        gram = (off + np.diag(np.diag(g) * k0 / d)) / n
        c = y[:n] @ x[:n] / n
        lam = math.sqrt(d * math.log(n * d / 0.1) / (n * k0)) * (0.1 + d / k0)
        np.testing.assert_allclose(ratios[1, j], np.max(np.abs(c - gram @ w_star)) / lam,
                                   rtol=1e-4)


def test_calibrate_c__quantile_of_the_worst_solve_after_t0(monkeypatch):
    real, seen = kale.slack_ratios, {}

    def once(*args):  # the test reads the same draws as calibrate_c: one compile, not two
        if args not in seen:
            seen[args] = real(*args)
        return seen[args]

    monkeypatch.setattr(kale, "slack_ratios", once)
    df = kale.calibrate_c((4,), d=12, k=2, horizon=64, draws=20, seed=1)
    ratios, ns = once(12, 2, 4, 64, 20, 1, "rademacher")
    assert len(seen) == 1
    t0 = kale.t0_of(12, 2, 64)  # ceil(2 ln 12 ln 64) = ceil(20.66) = 21
    assert t0 == 21 and df["solved"].tolist() == [n >= 21 for n in ns]
    worst = ratios[:, ns >= 21].max(axis=1)
    np.testing.assert_allclose(df["c_all"].iloc[0], np.quantile(worst, 0.95), rtol=1e-6)
    # at C = c_all, w* is feasible at every solve in at least 95% of the draws
    assert np.mean(worst <= df["c_all"].iloc[0] + 1e-9) >= 0.95
    assert list(df.columns) == ["k0", "n", "solved", "c_quantile", "c_all", "quantile", "draws",
                                "d", "k", "t0", "design", "horizon"]
    assert df[["quantile", "draws", "d", "k", "t0", "design", "horizon"]].iloc[0].tolist() == [
        0.95, 20, 12, 2, 21, "rademacher", 64]
    problem, _ = kale.realizable_problem()  # the E4 defaults: d = 100, k = 5, the RIP design
    assert (problem.d, problem.info["design"]) == (100, "rademacher")


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


# ------------------------------------------------- the studies' bookkeeping, on a fake engine




def _curve_check(part, values, bound=None):
    mean, half = t_interval(values, axis=0)
    np.testing.assert_allclose(part["mean"], mean)
    np.testing.assert_allclose(part["ci_low"], mean - half)
    np.testing.assert_allclose(part["ci_high"], mean + half)
    if bound is None:
        assert part["bound"].isna().all()
    else:
        np.testing.assert_allclose(part["bound"], bound)


def test_kale_dantzig__rows_of_each_metric_the_lp_share_and_the_references(monkeypatch):
    d, k, runs, horizon = 12, 2, 3, 40
    eng = FakeEngine(n_checkpoints=2, trailing={"w": (d,)}, regret=("regret_wstar",))
    monkeypatch.setattr(kale, "sweep", eng.sweep)
    df = kale.kale_dantzig(k0s=(3, 5), horizon=horizon, runs=runs, c_lambda=0.7, seed=2, d=d,
                           k=k, designs=("rademacher", "correlated"),
                           references=("ogd-random-subset", "ogd-full"))
    names = [(c.learner.name, c.problem.info["design"]) for c in eng.calls]
    assert names == [(n, des) for des in ("rademacher", "correlated")
                     for n in ("dantzig-poslr", "dantzig-poslr", "ogd-random-subset",
                               "ogd-full")]
    assert {(c.horizon, c.n_runs, c.seed, c.kwargs["track_stats"]) for c in eng.calls} == {
        (horizon, runs, 2, False)}
    main, idle, subset, full = eng.calls[:4]
    assert main.grid == idle.grid == [{"k0": 3}, {"k0": 5}]
    assert idle.learner.info["t0"] == horizon + 1  # the LP never solved: the share study
    assert main.learner.info["t0"] == 19  # ceil(k ln d ln T) = ceil(2 ln 12 ln 40) = ceil(18.33)
    assert float(main.params.c_lambda) == pytest.approx(0.7)
    assert subset.grid == [{"k": 5}, {"k": 7}] and subset.learner.options["max_k"] == d
    assert full.grid == [{}]
    res = eng.results[0]
    problem, pp = main.problem, main.problem_params
    w_star = np.stack([np.asarray(problem.init(run_keys(jnp.uint32(2), r)[PROBLEM_INIT],
                                               pp).w_star, np.float64) for r in range(runs)])
    rad = df[df["design"] == "rademacher"]
    for g, k0 in enumerate((3, 5)):
        mine = rad[(rad["learner"] == "dantzig-poslr") & (rad["k0"] == k0)]
        assert set(mine["budget"]) == {k0 + k} and set(mine["t0"]) == {main.learner.info["t0"]}
        np.testing.assert_allclose(mine["c_lambda"], 0.7, rtol=1e-6)
        assert (mine["no_lp_wall_s"] >= 0).all() and (mine["wall_s"] >= 0).all()
        reg = mine[mine["metric"] == "regret_wstar"]
        assert reg["n"].tolist() == res.ckpts.tolist() == [20, 40]
        _curve_check(reg, res._regret["regret_wstar"][g],
                     kale.theorem_2_order(d, k, k0, res.ckpts))
        err = np.abs(res.curves["w"][g] - w_star[:, None, :]).sum(-1)
        _curve_check(mine[mine["metric"] == "l1_error"], err)
        _curve_check(mine[mine["metric"] == "support"], res.curves["support"][g])
    sub = rad[rad["learner"] == "ogd-random-subset"]
    assert sub["k0"].tolist() == [3, 3, 5, 5] and sub["budget"].tolist() == [5, 5, 7, 7]
    _curve_check(sub[sub["k0"] == 5], eng.results[2]._regret["regret_wstar"][1])
    full_rows = rad[rad["learner"] == "ogd-full"]
    assert full_rows["k0"].isna().all() and set(full_rows["budget"]) == {d}
    assert set(full_rows["metric"]) == {"regret_wstar"}
    assert {(r.horizon, r.runs, r.d, r.k) for r in df.itertuples()} == {(horizon, runs, d, k)}
    # no LP share: one dantzig study per design, no_lp_wall_s NaN; c_lambda None: the default
    eng = FakeEngine(n_checkpoints=2, trailing={"w": (d,)}, regret=("regret_wstar",))
    monkeypatch.setattr(kale, "sweep", eng.sweep)
    monkeypatch.setattr(kale, "_w_star", lambda problem, pp, seed, runs: np.zeros((runs, d)))
    df = kale.kale_dantzig(k0s=(3,), horizon=horizon, runs=2, d=d, k=k,
                           designs=("rademacher",), references=(), lp_share=False)
    assert len(eng.calls) == 1 and df["no_lp_wall_s"].isna().all()
    default = oslr.make("dantzig-poslr", d=d, horizon=horizon, k=k)[1].c_lambda
    np.testing.assert_allclose(df["c_lambda"], float(default), rtol=1e-6)


def test_kale_greedy__final_regret_rows_the_metric_and_the_exponent(monkeypatch):
    eng = FakeEngine(n_checkpoints=2, regret=("regret",))
    monkeypatch.setattr(kale, "simulate", eng.simulate)
    df = kale.kale_greedy(horizons=(50, 200), runs=3, seed=1, settings=((8, 2, 4),),
                          designs=("rademacher",), progress=True)
    assert all(c.kwargs["progress"] for c in eng.calls)
    assert [(c.learner.name, c.horizon) for c in eng.calls] == [
        (n, t) for t in (50, 200) for n in ("online-greedy", "ogd-random-subset", "ogd-full")]
    assert {(c.n_runs, c.seed, c.kwargs["comparator_k"]) for c in eng.calls} == {(3, 1, 2)}
    assert eng.calls[0].problem.name == "agnostic"
    greedy = eng.calls[0].learner
    assert (greedy.info["k0"], greedy.options["k"]) == (4, 2)
    for c in eng.calls[::3]:  # online-greedy's batch and k1 are set from each horizon T
        want = oslr.make("online-greedy", d=8, horizon=c.horizon, k=2, k0=4)[0].info
        assert (c.learner.info["batch"], c.learner.info["k1"]) == (want["batch"], want["k1"])
    assert eng.calls[0].learner.info["batch"] != eng.calls[3].learner.info["batch"]
    assert int(eng.calls[1].params.k) == 4 and eng.calls[1].learner.options["max_k"] == 4
    for (_, row), c, res in zip(df.iterrows(), eng.calls, eng.results):
        mean, half = t_interval(res._regret["regret"][0][:, -1])
        assert (row["regret"], row["ci_low"], row["ci_high"]) == pytest.approx(
            (mean, mean - half, mean + half))
        assert (row["learner"], row["horizon"], row["d"], row["k"], row["k0"], row["runs"],
                row["metric"]) == (c.learner.name, c.horizon, 8, 2, 4, 3, "regret")
        assert row["budget"] == (8 if row["learner"] == "ogd-full" else 4)
        if row["learner"] == "online-greedy":
            assert row["bound"] == pytest.approx(kale.theorem_9_order(8, 2, 4, c.horizon))
            assert (row["k1"], row["batch"]) == (c.learner.info["k1"], c.learner.info["batch"])
        else:
            assert np.isnan(row["bound"]) and np.isnan(row["batch"])
    for _, part in df.groupby("learner"):
        want = math.log(part["regret"].iloc[1] / part["regret"].iloc[0]) / math.log(4)
        assert part["exponent"].tolist() == pytest.approx([want, want])
    eng = FakeEngine(n_checkpoints=2, regret=("regret_lb_greedy",))  # C(d, k) too large: R2
    monkeypatch.setattr(kale, "simulate", eng.simulate)
    df = kale.kale_greedy(horizons=(50,), runs=2, settings=((8, 2, 4),),
                          designs=("correlated",), references=())
    assert df["metric"].tolist() == ["regret_lb_greedy"] and df["design"].tolist() == [
        "correlated"]


# ----------------------------------------------------------------------------- the figures


def _dantzig_frame():
    rows = []
    for name, k0 in (("dantzig-poslr", 10), ("ogd-full", np.nan)):
        for design in ("rademacher", "correlated"):
            for metric in ("regret_wstar", "l1_error") if name == "dantzig-poslr" else (
                    "regret_wstar",):
                for n in (1, 2, 100):
                    v = (2.0 if design == "rademacher" else 3.0) * n
                    rows.append(dict(learner=name, k0=k0, design=design, metric=metric, n=n,
                                     mean=v, ci_low=0.5 * v, ci_high=1.5 * v, bound=100.0 * n))
    return pd.DataFrame(rows)


def test_plot_dantzig__three_panels_designs_by_line_style_and_theorem_2(tmp_path):
    fig = kale.plot_dantzig(_dantzig_frame(), tmp_path / "k.png", "E4 title")
    ax, ax_b, ax2 = fig.axes
    assert (tmp_path / "k.png").stat().st_size > 0
    labels = [ln.get_label() for ln in ax.get_lines()]
    assert labels == ["dantzig-poslr, k0=10", "dantzig-poslr, k0=10 (correlated)", "ogd-full",
                      "ogd-full (correlated)"]
    styles = [ln.get_linestyle() for ln in ax.get_lines()]
    assert styles == ["-", ":", "-", ":"]
    lines = ax.get_lines()
    assert lines[0].get_color() == lines[1].get_color()  # one colour per learner and k0
    assert ax.get_xscale() == "log" and ax.get_yscale() == "linear"
    assert ax.get_title() == "E4 title" and ax.get_ylabel() == "regret R3 against w*"
    assert ax.get_xlabel() == "round t (log scale)" and ax.title.get_fontsize() == 9
    assert ax2.get_xlabel() == "round t"
    # middle: the Rademacher curves only, log-log, Theorem 2 from n > 1
    mid = {ln.get_label(): ln for ln in ax_b.get_lines()}
    assert set(mid) == {"dantzig-poslr, k0=10", "ogd-full",
                        "Thm 2, k0=10 (order only, constant 1)"}
    np.testing.assert_allclose(mid["Thm 2, k0=10 (order only, constant 1)"].get_xdata(),
                               [2, 100])
    np.testing.assert_allclose(mid["Thm 2, k0=10 (order only, constant 1)"].get_ydata(),
                               [200, 10_000])
    assert ax_b.get_xscale() == ax_b.get_yscale() == "log" and ax_b.get_ylim()[0] == 0.1
    assert ax_b.get_ylabel() == "regret R3 (log)"
    # right: the estimation error per k0 and design, in the learner's colour
    right = ax2.get_lines()
    assert [ln.get_label() for ln in right] == ["k0=10 (rademacher)", "k0=10 (correlated)"]
    assert right[0].get_color() == lines[0].get_color()
    assert [ln.get_linestyle() for ln in right] == ["-", ":"]
    np.testing.assert_allclose(right[1].get_ydata(), [3.0, 6.0, 300.0])
    assert ax2.get_ylabel() == "||w_t - w*||_1 (committed, top-k)"
    assert len(ax.collections) == 4 and len(ax2.collections) == 2
    plt.close(fig)


def test_plot_greedy__a_panel_per_setting_theorem_9_and_the_guide(tmp_path):
    rows = []
    for d, k, k0 in ((20, 2, 4), (100, 5, 10)):
        for name, design in (("online-greedy", "rademacher"), ("online-greedy", "correlated"),
                             ("ogd-full", "rademacher")):
            for t in (100, 800):
                r = (10.0 if design == "rademacher" else 30.0) * (t / 100) ** (2 / 3)
                rows.append(dict(d=d, k=k, k0=k0, learner=name, design=design, horizon=t,
                                 regret=r, ci_low=(0.5 if d == 20 else -1.0) * r,
                                 ci_high=1.5 * r, exponent=2 / 3,
                                 bound=kale.theorem_9_order(d, k, k0, t),
                                 metric="regret" if d == 20 else "regret_lb_greedy"))
    fig = kale.plot_greedy(pd.DataFrame(rows), tmp_path / "g.png", "agnostic:")
    left, right = fig.axes
    assert (tmp_path / "g.png").stat().st_size > 0
    assert left.get_title() == "agnostic: d=20, k=2, k0=4" and left.title.get_fontsize() == 9
    assert left.get_ylabel() == "regret at T" and right.get_ylabel() == "regret_lb_greedy at T"
    assert left.get_yscale() == "log" and right.get_yscale() == "symlog"
    assert left.get_xlabel() == "horizon T (B, k1, eta set from T)"
    lines = {ln.get_label(): ln for ln in left.get_lines()}
    assert set(lines) == {"online-greedy (rademacher, slope 0.67)",
                          "online-greedy (correlated, slope 0.67)",
                          "ogd-full (rademacher, slope 0.67)",
                          "Thm 9 (order only, constant 1)", "T^(2/3) guide"}
    assert lines["online-greedy (correlated, slope 0.67)"].get_linestyle() == ":"
    assert lines["online-greedy (rademacher, slope 0.67)"].get_marker() == "o"
    guide = lines["T^(2/3) guide"]
    assert guide.get_linestyle() == ":" and guide.get_color() == "black"
    np.testing.assert_allclose(guide.get_ydata(), [10.0, 40.0], rtol=1e-6)
    np.testing.assert_allclose(lines["Thm 9 (order only, constant 1)"].get_ydata(),
                               kale.theorem_9_order(20, 2, 4, np.array([100, 800])))
    assert len(left.collections) == 3
    # each band spans ci_low .. ci_high: 0.5 r .. 1.5 r with r = 10 .. 40 (rademacher) and
    # 30 .. 120 (correlated)
    bands = sorted((float(v[:, 1].min()), float(v[:, 1].max()))
                   for v in (c.get_paths()[0].vertices for c in left.collections))
    np.testing.assert_allclose(bands, [(5.0, 60.0), (5.0, 60.0), (15.0, 180.0)], rtol=1e-6)
    plt.close(fig)


@pytest.mark.slow  # keeps the default run under 5 min (CI runs it with -m slow)
@pytest.mark.parametrize("name", ["kale-calibrate", "kale-dantzig", "kale-greedy"])
def test_experiment__quick_sizes_and_files_from_the_returned_table(tmp_path, monkeypatch, name):
    from oslr.registry import EXPERIMENTS
    from oslr.spec import ExperimentArgs

    eng = FakeEngine(n_checkpoints=2, trailing={"w": (100,)},
                     regret=("regret", "regret_wstar"))
    monkeypatch.setattr(kale, "simulate", eng.simulate)
    monkeypatch.setattr(kale, "sweep", eng.sweep)
    slack = []

    def fake_slack(d, k, k0, horizon, draws, seed, design, **kw):
        slack.append((k0, horizon, draws, seed))
        ns = np.array([2**j - 1 for j in range(1, int(math.log2(horizon)) + 1)])
        return np.random.default_rng(k0).random((draws, len(ns))), ns

    monkeypatch.setattr(kale, "slack_ratios", fake_slack)
    monkeypatch.setattr(kale, "_w_star", lambda problem, pp, seed, runs: np.zeros((runs, 100)))
    titles = []
    for plot in ("plot_dantzig", "plot_greedy"):
        real = getattr(kale, plot)
        monkeypatch.setattr(kale, plot, lambda df, path, title, real=real: titles.append(title)
                            or real(df, path, title))
    spec = EXPERIMENTS[name]
    df = spec.run(ExperimentArgs(dataset=None, runs=3, seed=4, out=tmp_path, quick=True,
                                 progress=False))
    if name == "kale-calibrate":
        assert slack == [(k0, 2**10, 3, kale.CALIBRATION_SEED + 4) for k0 in kale.K0S]
        assert len(df) == 3 * 10
        shown = []
        monkeypatch.setattr(kale, "_progress", lambda items, progress, desc: shown.append(
            progress) or items)
        kale.calibrate_c(horizon=2**10, draws=3)  # no bar unless asked
        assert shown == [False]
    elif name == "kale-dantzig":
        assert {(c.horizon, c.n_runs, c.seed) for c in eng.calls} == {(2**10, 3, 4)}
        assert len(eng.calls) == 2 * 3  # no LP share in the quick size
        eng.calls.clear()  # without --runs: 10 runs at the quick size, 100 at the full one
        for quick, want in ((True, 10), (False, 100)):
            spec.run(ExperimentArgs(dataset=None, runs=None, seed=4, out=tmp_path / "n",
                                    quick=quick, progress=False))
            assert {c.n_runs for c in eng.calls} == {want}
            eng.calls.clear()
    else:
        assert sorted({c.horizon for c in eng.calls}) == [1_000, 3_000]
        assert {c.problem.info["design"] for c in eng.calls} == {"rademacher"}
        assert {c.seed for c in eng.calls} == {4}
    if name != "kale-calibrate":  # the figure is drawn with its title
        assert titles and all(isinstance(t, str) and t for t in titles)
    for f in spec.files:
        assert (tmp_path / f).stat().st_size > 0
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / f"{name}.csv"), df, check_dtype=False)


def test_agnostic_problem__the_e4_stream_by_default():
    problem, pp = kale.agnostic_problem()
    assert (problem.d, int(pp.k), problem.info["design"]) == (100, 5, "rademacher")
    assert float(pp.flip) == pytest.approx(0.1)
