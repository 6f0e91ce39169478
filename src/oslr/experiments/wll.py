"""[WLL] Appendix B (docs/algorithms.md E1) as functions (`oslr experiment wll-*`):

* `wll_reward_vs_k`: cumulative reward sum_t y_t <w_t, x_t> against k/d on a dataset (one pass,
  a fresh shuffle per run), for FTPSL and the random-subset and oracle-subset FTPL baselines, with
  b = 2, M = 10 and eq. (1) rates (c0 = 1); Fig. 1a-d.
* `wll_redundant`: the same at k = 0.2 d_orig against the number of appended standard-normal
  features rho d_orig, rho in {0.2, 0.5, 0.8, 1.1, 1.5}; Fig. 1e-f.

Each grid point is compiled with max_k = k (a top-k on max_k = d would be a full sort per draw).
The R4 comparator reward ||top_k(|sum y x|)||_2 is reported next to every learner.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from oslr import regret
from oslr.experiments.output import write_table_and_figure
from oslr.registry import LEARNERS, make, make_problem
from oslr.report import draw_bound, finish_figure, mean_ci
from oslr.sim import sweep
from oslr.spec import ExperimentArgs, ExperimentSpec

WLL_LEARNERS = ("ftpsl", "ftpl-random-subset", "ftpl-oracle-subset")
WLL_RATIOS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
WLL_RHOS = (0.2, 0.5, 0.8, 1.1, 1.5)
WLL_ETA_SCALES = (1.0, 3.0, 10.0, 30.0, 100.0)
WLL_C0S = (0.0, 0.01, 0.1, 1.0)
#: shuffles per point of the k/d and redundant-feature curves: enough that the sign-flip
#: test can decide a table's rows after Holm (its smallest p at n runs is 2 / 2^n: at 5 it is
#: 0.0625 before any correction)
WLL_SHUFFLES = 50


def theorem_3_order(d, k, horizon, b: float = 2.0) -> np.ndarray:
    """[WLL] Theorem 3's order term sqrt(alpha T ln T), alpha = k^((b-1)/b) d^2 ln d (constant 1):
    FTPSL's reward is at least the best action's minus O(this)."""
    d, k, t = (np.asarray(v, np.float64) for v in (d, k, horizon))
    return np.sqrt(k ** ((b - 1) / b) * d**2 * np.log(d) * t * np.log(t))


def _applicable(name: str, d: int, options: dict) -> dict:
    """The options that learner `name` understands (factory options or params fields)."""
    spec = LEARNERS[name]
    return {k: v for k, v in options.items() if k in spec.param_names + spec.option_names}


def _rows(res, k: int) -> list[dict]:
    """One summary row per grid point of `res`: reward mean, sd and 95% interval over runs, and
    the R4 comparator reward of the same streams."""
    rows = []
    for g, label in enumerate(res.grid):
        reward = res.final["reward"][g].astype(np.float64)
        best = regret.best_sparse_linear_reward(res.final["theta_sum"][g], k, 2.0)
        mean, _, half = mean_ci(reward)
        rows.append({"learner": res.learner, **label, "k": k, "runs": res.n_runs,
                     "horizon": res.horizon, "reward_mean": mean,
                     "reward_sd": reward.std(ddof=1) if res.n_runs > 1 else np.nan,
                     "reward_ci_low": mean - half, "reward_ci_high": mean + half,
                     "comparator_reward_mean": float(np.mean(best)),
                     "regret_mean": float(np.mean(best - reward))})
    return rows


def _run_point(name: str, problem, pp, k: int, horizon: int, runs: int, seed: int,
               progress: bool, grid: dict | None = None, **options) -> list[dict]:
    """Simulate learner `name` at sparsity k on `problem`: one vmapped call over `grid` x runs."""
    options = _applicable(name, problem.d, options)
    learner, params = make(name, d=problem.d, max_k=k, horizon=horizon, k=k, **options)
    spec = LEARNERS[name]
    if spec.prepare is not None:
        params = spec.prepare(params, problem, pp)
    grid = {key: v for key, v in (grid or {}).items() if hasattr(params, key)}
    res = sweep(learner, problem, params, pp, grid, horizon=horizon, n_runs=runs, seed=seed,
                progress=progress)
    return _rows(res, k)


def wll_reward_vs_k(dataset: str = "a9a", ratios: Sequence[float] = WLL_RATIOS,
                    runs: int = WLL_SHUFFLES,
                    seed: int = 0, horizon: int | None = None,
                    learners: Sequence[str] = WLL_LEARNERS, progress: bool = False,
                    **options) -> pd.DataFrame:
    """Cumulative reward against k/d ([WLL] Fig. 1a-d). One row per learner x k.

    Args:
      dataset: a vendored dataset name.
      ratios: k/d grid (k = max(1, round(r d))).
      runs: shuffles (runs) per point.
      horizon: rounds (default: one pass over the dataset).
      learners: registry names (family `linear`).
      **options: learner options passed to `oslr.make` (e.g. eta_scale, n_resamples).
    """
    problem, pp = make_problem(dataset)
    horizon = horizon or int(problem.n_rows)  # type: ignore[arg-type]  # a dataset's rows
    ks = sorted({max(1, int(round(r * problem.d))) for r in ratios})
    rows = [dict(row, dataset=dataset, d=problem.d, ratio=k / problem.d)
            for name in learners for k in ks
            for row in _run_point(name, problem, pp, k, horizon, runs, seed, progress, **options)]
    return pd.DataFrame(rows)


def wll_redundant(dataset: str = "a9a", rhos: Sequence[float] = WLL_RHOS, k_ratio: float = 0.2,
                  runs: int = WLL_SHUFFLES, seed: int = 0, horizon: int | None = None,
                  learners: Sequence[str] = WLL_LEARNERS, progress: bool = False,
                  hold_rates: bool = False, **options) -> pd.DataFrame:
    """Cumulative reward against appended N(0,1) features ([WLL] Fig. 1e-f); k = k_ratio d_orig.

    hold_rates: keep eta and gamma at their eq. (1) values for the original d (eq. (1) has
      eta ~ sqrt(log d) / d, so by default adding features also shrinks the learning rate); this
      separates the effect of the noise features from that of the smaller step.
    """
    base, _ = make_problem(dataset)
    k = max(1, int(round(k_ratio * base.d)))
    horizon = horizon or int(base.n_rows)  # type: ignore[arg-type]  # a dataset's rows
    rows = []
    for rho in (0.0, *rhos):
        extra = int(round(rho * base.d))
        problem, pp = make_problem(dataset, n_redundant=extra)
        opts = dict(options)
        if hold_rates:  # eta(d) * f = eta(d_orig); c0 d eta = c0' d' eta keeps gamma
            d0, d1 = base.d, problem.d
            f = math.sqrt(math.log(d0) / math.log(d1)) * d1 / d0
            opts["eta_scale"] = options.get("eta_scale", 1.0) * f
            opts["c0"] = options.get("c0", 1.0) * d0 / d1
        for name in learners:
            for row in _run_point(name, problem, pp, k, horizon, runs, seed, progress, **opts):
                rows.append(dict(row, dataset=dataset, d_orig=base.d, n_redundant=extra, rho=rho))
    return pd.DataFrame(rows)


def wll_rate_sweep(dataset: str = "a9a", eta_scales: Sequence[float] = WLL_ETA_SCALES,
                   c0s: Sequence[float] = WLL_C0S, k_ratio: float = 0.2, runs: int = 100,
                   seed: int = 0, horizon: int | None = 5000,
                   learners: Sequence[str] = WLL_LEARNERS, progress: bool = False,
                   **options) -> pd.DataFrame:
    """Cumulative reward over an eta x gamma grid, `runs` shuffles per point, one vmapped call per
    learner (the sweep [WLL] could not afford; docs/algorithms.md gap 3).

    eta = eta_scale x eq. (1) and gamma = min(c0 d eta log T, gamma_max) for ftpsl; the subset
    baselines have no exploration and sweep eta_scale only. Common random numbers: every grid
    point of every learner sees the same `runs` shuffles. k = k_ratio d; horizon None = one pass.
    """
    problem, pp = make_problem(dataset)
    horizon = horizon or int(problem.n_rows)  # type: ignore[arg-type]  # a dataset's rows
    k = max(1, int(round(k_ratio * problem.d)))
    grid = {"eta_scale": list(eta_scales), "c0": list(c0s)}
    rows = [dict(row, dataset=dataset, d=problem.d, ratio=k / problem.d)
            for name in learners
            for row in _run_point(name, problem, pp, k, horizon, runs, seed, progress, grid=grid,
                                  **options)]
    return pd.DataFrame(rows)


def plot_rate_sweep(df: pd.DataFrame, path: str | Path | None = None, title: str = ""):
    """Mean reward (95% band) against eta_scale (log axis): one line per ftpsl c0 and one per
    baseline."""
    import matplotlib

    if path is not None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for (name, c0), part in df.groupby(["learner", df["c0"].fillna(-1)], sort=False):
        part = part.sort_values("eta_scale")
        label = f"{name} c0={c0:g}" if c0 >= 0 else name
        style = "-" if name == "ftpsl" else "--"
        (line,) = ax.plot(part["eta_scale"], part["reward_mean"], style, marker="o", label=label)
        ax.fill_between(part["eta_scale"], part["reward_ci_low"], part["reward_ci_high"],
                        color=line.get_color(), alpha=0.2, linewidth=0)
    ax.axhline(df["comparator_reward_mean"].iloc[0], color="k", lw=1, ls=":",
               label="best k-sparse action in hindsight")
    ax.set_xscale("log")
    ax.set_xlabel("eta_scale (eta = eta_scale x eq. (1))")
    ax.set_ylabel("cumulative reward")
    ax.set_title(title)
    return finish_figure(fig, ax, path)


def plot_experiment(df: pd.DataFrame, x: str, path: str | Path | None = None, title: str = ""):
    """Mean cumulative reward with 95% intervals against `x`, one line per learner (left), and
    the gap to the best k-sparse action in hindsight on a log axis (right), where learners
    close to the comparator, squashed together on the left, read apart."""
    import matplotlib

    if path is not None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, (ax, gap_ax) = plt.subplots(1, 2, figsize=(11.5, 4.2))
    for name, part in df.groupby("learner", sort=False):
        part = part.sort_values(x)
        (line,) = ax.plot(part[x], part["reward_mean"], marker="o", label=name)
        ax.fill_between(part[x], part["reward_ci_low"], part["reward_ci_high"],
                        color=line.get_color(), alpha=0.2, linewidth=0)
        best = part["comparator_reward_mean"]
        gap_ax.plot(part[x], best - part["reward_mean"], marker="o", color=line.get_color(),
                    label=name)
        gap_ax.fill_between(part[x], best - part["reward_ci_high"], best - part["reward_ci_low"],
                            color=line.get_color(), alpha=0.2, linewidth=0)
    first = df.drop_duplicates(x).sort_values(x)
    ax.plot(first[x], first["comparator_reward_mean"], "k--", lw=1,
            label="best k-sparse action in hindsight")
    d = first["d"] if "d" in first else first["d_orig"] + first["n_redundant"]
    order = theorem_3_order(d.to_numpy(), first["k"].to_numpy(), first["horizon"].to_numpy())
    bound = first["comparator_reward_mean"] - order
    vacuous = bool(np.all(bound < df["reward_ci_low"].min()))
    if vacuous:  # below every curve: said in the title, not a legend entry for an unseen line
        title = (f"{title}\n" if title else "") + ("[WLL] Thm 3's bound (best - order term, "
                                                   "constant 1) lies below the axes: vacuous")
    else:
        draw_bound(ax, first[x], bound, "best - [WLL] Thm 3 order term", color="0.4",
                   order_only=True, rescale=False)
    ax.set_xlabel(_X_LABELS.get(x, x))
    ax.set_ylabel("cumulative reward")
    ax.set_title(title, fontsize=10)
    gap = (df["comparator_reward_mean"] - df["reward_ci_high"]).to_numpy()
    gap_ax.set_yscale("log" if np.all(gap > 0) else "symlog")
    gap_ax.set_xlabel(_X_LABELS.get(x, x))
    gap_ax.set_ylabel("best k-sparse reward in hindsight - reward")
    gap_ax.set_title("gap to the comparator (mean, 95% interval)", fontsize=10)
    gap_ax.grid(alpha=0.3)
    return finish_figure(fig, ax, path)


_X_LABELS = {"ratio": "k / d (features played a round, as a share of d)",
             "rho": "rho (appended N(0, 1) features, as a share of d)"}


# ----------------------------------------------------------------------------- experiments

_WLL_DATASETS = ("a9a", "covtype", "connect4", "mnist35", "kegg")


def _shuffles_title(dataset: str, runs: int, df: pd.DataFrame) -> str:
    return f"{dataset}: {runs} shuffles, T={df['horizon'].iloc[0]}"


def _run_curve(name: str, study: str, x: str, full, quick):
    """`run(args)` of an experiment that sweeps `x` over `full` (`quick`) values with the
    function named `study` (looked up when it runs)."""
    def run(a: ExperimentArgs) -> pd.DataFrame:
        assert a.dataset is not None  # the spec's datasets: the first by default
        runs = a.runs or WLL_SHUFFLES
        df = globals()[study](a.dataset, quick if a.quick else full, runs=runs, seed=a.seed,
                   horizon=5000 if a.quick else None, progress=a.progress, **a.options)
        write_table_and_figure(a.out, f"{name}-{a.dataset}", df,
                               lambda path, title: plot_experiment(df, x, path, title),
                               _shuffles_title(a.dataset, runs, df))
        return df

    return run


def _run_rates(a: ExperimentArgs) -> pd.DataFrame:
    assert a.dataset is not None  # the spec's datasets: the first by default
    runs = a.runs or 100
    grids: dict[str, Any] = {"eta_scales": (1.0, 30.0), "c0s": (0.01, 1.0)} if a.quick else {}
    df = wll_rate_sweep(a.dataset, runs=runs, seed=a.seed, horizon=1000 if a.quick else 5000,
                        progress=a.progress, **grids, **a.options)
    write_table_and_figure(a.out, f"wll-rates-{a.dataset}", df,
                           lambda path, title: plot_rate_sweep(df, path, title),
                           _shuffles_title(a.dataset, runs, df))
    return df


_WLL_SETS = (WLL_LEARNERS, ("k", "max_k", "horizon"))
WLL_K = ExperimentSpec(
    "wll-k", "FTPSL vs random/oracle-subset FTPL: cumulative reward against k/d ([WLL] Fig. 1a-d)",
    _run_curve("wll-k", "wll_reward_vs_k", "ratio", WLL_RATIOS, (0.1, 0.3, 0.5)),
    sizes="11 ratios k/d, 50 shuffles, the whole dataset; quick: 3 ratios, T = 5,000",
    files=("wll-k-{dataset}.csv", "wll-k-{dataset}.png"), docs="docs/wll-results.md",
    learners=_WLL_SETS[0], sets_itself=_WLL_SETS[1], datasets=_WLL_DATASETS)
WLL_REDUNDANT = ExperimentSpec(
    "wll-redundant", "the same against appended N(0,1) features ([WLL] Fig. 1e-f)",
    _run_curve("wll-redundant", "wll_redundant", "rho", WLL_RHOS, (0.5, 1.5)),
    sizes="5 shares rho, 50 shuffles; quick: 2 shares, T = 5,000",
    files=("wll-redundant-{dataset}.csv", "wll-redundant-{dataset}.png"),
    docs="docs/wll-results.md", learners=_WLL_SETS[0], sets_itself=_WLL_SETS[1],
    extra_options=("hold_rates",), datasets=_WLL_DATASETS)
WLL_RATES = ExperimentSpec(
    "wll-rates", "eta x gamma grid at k = 0.2 d, 100 shuffles per point, one vmapped call each",
    _run_rates, sizes="5 x 4 rate points, 100 shuffles, T = 5,000; quick: 2 x 2, T = 1,000",
    files=("wll-rates-{dataset}.csv", "wll-rates-{dataset}.png"), docs="docs/wll-results.md",
    learners=_WLL_SETS[0], sets_itself=_WLL_SETS[1], datasets=_WLL_DATASETS)
