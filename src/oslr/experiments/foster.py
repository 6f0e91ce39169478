"""[FKK] experiments (docs/algorithms.md E5 and L5.2; [FKK] itself has none) as functions
(`oslr experiment foster-*`):

* `foster_rate`: final regret R1 (best k-sparse w with ||w||_2 <= 1, exact) of `foster-hedge` at
  every T of a grid, each run with the rates of line 1 tuned to its own T, for a k' sweep, beside
  `ogd-random-subset` (the same k' features per round, uniformly) and `ogd-full` (all d), on the
  E5 stream: x uniform on the unit sphere of R^d, w* 2-sparse with ||w*||_2 = 1, y = <w*, x> +
  0.1 eps clipped to [-1, 1]. Theorem 1's order d^2 / (k' - k)^2 sqrt(k ln(d) T) (constant 1)
  and the fitted growth exponent in T go beside it.
* `foster_hard`: every registered prediction learner on planted "yes" and "no" set-cover streams
  (Alg. 2), cumulative loss against T with the decision line T / (2 m d k), and the decision
  each run's total loss implies.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from oslr import atomic
from oslr.experiments.output import write_table_and_figure
from oslr.learners.foster import theorem_1_order
from oslr.problems.set_cover import decision_threshold
from oslr.registry import LEARNERS, make, make_problem
from oslr.report import FIGURE_DPI, draw_bound, finish_figure, growth_exponent, mean_ci
from oslr.sim import simulate, sweep
from oslr.spec import ExperimentArgs, ExperimentSpec
from oslr.types import PREDICTION

HORIZONS = (1_000, 3_000, 10_000, 30_000, 100_000)
K_QUERIES = (4, 5, 6, 8)
#: foster-hard --quick's learners (the full size runs every registered prediction learner): the
#: four that compile fastest, so that the quick size takes about a minute
QUICK_HARD_LEARNERS = ("ogd-full", "ogd-random-subset", "foster-hedge", "ito-dual-averaging")

#: The learners of foster-rate (foster-hard runs every registered prediction learner).
RATE_LEARNERS = ("foster-hedge", "ogd-random-subset", "ogd-full")


def rate_problem(d: int = 8, k: int = 2, sigma: float = 0.1):
    """The E5 stream: ||x||_2 = 1, k-sparse w* with ||w*||_2 = 1, clipped noisy labels."""
    return make_problem("sparse-linear", d=d, k=k, sigma=sigma, design="sphere", clip_y=True,
                        w_norm="l2")


def budgeted(name: str, d: int, k: int, k_query: int, horizon: int, **options):
    """Learner `name` held to at most k' features per round where it takes a budget:
    `foster-hedge` (static k, k_query = k'), a learner whose k is its query count (k = k'), one
    with an exploration size k0 (set so that its whole budget, k0 or k0 + k, is k'); `ogd-full`
    keeps d. Returns (learner, params, budget)."""
    spec = LEARNERS[name]
    kw = {key: v for key, v in options.items()
          if key in spec.param_names or key in spec.option_names}
    if "k" in spec.option_names:
        kw.setdefault("k", k)
    if "k_query" in spec.param_names:
        kw.setdefault("k_query", k_query)
    elif "k0" in spec.param_names or "k0" in spec.option_names:
        kw.setdefault("k0", k_query)
    elif "k" in spec.param_names and "k" not in spec.option_names:
        kw.setdefault("k", k_query)
    learner, params = make(name, d=d, horizon=horizon, **kw)
    budget = int(np.asarray(learner.budget(params)))
    if "k0" not in options and "k0" in kw and budget > k_query:  # the budget is k0 + its k
        kw["k0"] = kw["k0"] - (budget - k_query)
        learner, params = make(name, d=d, horizon=horizon, **kw)
        budget = int(np.asarray(learner.budget(params)))
    return learner, params, budget


def foster_rate(horizons: Sequence[int] = HORIZONS, k_queries: Sequence[int] = K_QUERIES,
                runs: int = 50, seed: int = 0, d: int = 8, k: int = 2,
                learners: Sequence[str] = RATE_LEARNERS, progress: bool = False,
                **options) -> pd.DataFrame:
    """Final regret (mean and 95% interval over runs) per learner, budget k' and T.

    Every T is its own study (the rates of line 1 and OGD's are tuned to the horizon); a k' grid
    is one vmapped call per learner. Returns one row per (learner, k', T) with the exponent of
    regret in T fitted per (learner, k') in column `exponent`.
    """
    problem, pp = rate_problem(d, k)
    rows = []
    for horizon in horizons:
        for name in learners:
            learner, params, _ = budgeted(name, d, k, k_queries[0], horizon, **options)
            spec = LEARNERS[name]
            field = ("k_query" if "k_query" in spec.param_names
                     else "k" if "k" in spec.param_names else None)
            grid = {field: list(k_queries)} if field else {}
            t0 = time.perf_counter()
            res = sweep(learner, problem, params, pp, grid, horizon=horizon, n_runs=runs,
                        seed=seed, comparator_k=k, comparator_radius=1.0, progress=progress)
            wall = time.perf_counter() - t0
            reg = res.regret_curves()
            for g, label in enumerate(res.grid):
                budget = int(label.get(field, d)) if field else d
                mean, _, half = mean_ci(reg["regret"][g][:, -1])
                wmean, _, whalf = mean_ci(reg["regret_wstar"][g][:, -1])
                rows.append({
                    "learner": name, "k_query": budget, "d": d, "k": k, "horizon": horizon,
                    "runs": runs, "regret": mean, "ci_low": mean - half, "ci_high": mean + half,
                    "regret_wstar": wmean, "regret_wstar_half": whalf,
                    "theorem_1_order": (theorem_1_order(d, k, budget, horizon)
                                        if name == "foster-hedge" else np.nan),
                    "wall_s": wall,
                })
    df = pd.DataFrame(rows)
    for (_, _), part in df.groupby(["learner", "k_query"]):
        df.loc[part.index, "exponent"] = growth_exponent(part["horizon"], part["regret"])
    return df


def plot_rate(df: pd.DataFrame, path: str | Path | None = None, title: str = ""):
    """Final regret against T (log-log) with 95% bands, Theorem 1's order (dashed, constant 1)
    for each foster-hedge budget, and a sqrt(T) guide through foster-hedge's last point."""
    import matplotlib

    if path is not None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10.5, 4.8))
    lowest = np.inf
    for (name, budget), part in df.groupby(["learner", "k_query"], sort=False):
        part = part.sort_values("horizon")
        # ogd-full sees every feature: no budget k' to name
        seen = "all d features" if name == "ogd-full" else f"k'={budget}"
        label = f"{name}, {seen} (slope {part['exponent'].iloc[0]:.2f})"
        (line,) = ax.plot(part["horizon"], part["regret"], marker="o", label=label)
        ax.fill_between(part["horizon"], part["ci_low"], part["ci_high"],
                        color=line.get_color(), alpha=0.2, linewidth=0)
        lowest = min(lowest, part["ci_low"].min())
        if name == "foster-hedge":
            draw_bound(ax, part["horizon"], part["theorem_1_order"],
                       f"Thm 1, k'={budget}", color=line.get_color(), order_only=True)
    foster = df[df["learner"] == "foster-hedge"].sort_values("horizon")
    if len(foster):
        first = foster[foster["k_query"] == foster["k_query"].min()]
        t = first["horizon"].to_numpy(float)
        ax.plot(t, first["regret"].iloc[-1] * np.sqrt(t / t[-1]), color="black", linestyle=":",
                label="sqrt(T) guide")
    ax.set_xscale("log")
    ax.set_yscale("log" if lowest > 0 else "symlog")
    ax.set_xlabel("horizon T (rates tuned to T)")
    ax.set_ylabel("regret R1 at T (||w||_2 <= 1, exact)")
    ax.set_title(title, fontsize=10)
    return finish_figure(fig, ax, path, legend_outside=True)


def foster_hard(horizon: int = 20_000, runs: int = 20, instances: int = 3, d: int = 8,
                k: int = 2, k_query: int = 4, m: int = 10, rho: float = 0.3, seed: int = 0,
                learners: Sequence[str] | None = None, progress: bool = False,
                **options) -> pd.DataFrame:
    """Cumulative loss curves (mean and 95% interval over runs) of every prediction learner on
    planted yes / no set-cover instances, with the decision line T / (2 m d k) and, at the
    horizon, the fraction of runs whose total loss says "satisfiable"."""
    names = list(learners) if learners is not None else [
        n for n in LEARNERS if LEARNERS[n].family == PREDICTION]
    rows = []
    for satisfiable in (True, False):
        for inst in range(instances):
            problem, pp = make_problem("set-cover", d=d, k=k, m=m, rho=rho,
                                       satisfiable=satisfiable, instance_seed=inst)
            n_rows = (problem.info or {})["rows"]
            for name in names:
                learner, params, budget = budgeted(name, d, k, k_query, horizon, **options)
                res = simulate(learner, problem, params, pp, horizon=horizon, n_runs=runs,
                               seed=seed, progress=progress)
                loss = res.curves["loss"][0].astype(np.float64)  # (runs, C) cumulative
                line = decision_threshold(res.ckpts, n_rows, d, k)
                says_yes = loss[:, -1] <= line[-1]
                for c, n in enumerate(res.ckpts):
                    mean, _, half = mean_ci(loss[:, c])
                    rows.append({
                        "learner": name, "budget": budget, "satisfiable": satisfiable,
                        "instance": inst, "rows": n_rows, "d": d, "k": k, "n": int(n),
                        "loss": mean, "ci_low": mean - half, "ci_high": mean + half,
                        "threshold": float(line[c]),
                        "says_satisfiable": (float(says_yes.mean()) if n == horizon
                                             else np.nan),
                        "runs": runs, "horizon": horizon,
                    })
    return pd.DataFrame(rows)


def hard_decisions(df: pd.DataFrame) -> pd.DataFrame:
    """The final-round table of `foster_hard`: per learner and instance type, the mean total loss,
    the decision line and the fraction of runs (over all instances) that say "satisfiable"."""
    final = df[df["n"] == df["horizon"]]
    return (final.groupby(["learner", "budget", "satisfiable"], sort=False)
            .agg(loss=("loss", "mean"), threshold=("threshold", "mean"),
                 says_satisfiable=("says_satisfiable", "mean"))
            .reset_index())


def plot_hard(df: pd.DataFrame, path: str | Path | None = None, title: str = ""):
    """Cumulative loss against T (log-log) on instance 0, one panel for the "yes" (satisfiable)
    instance and one for the "no" instance, one line per learner (same colour in both panels,
    legend once) with 95% bands, and each panel's decision line T / (2 m d k)."""
    import matplotlib

    if path is not None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.8), sharey=True)
    part0 = df[df["instance"] == 0]
    colors: dict = {}
    for ax, sat in zip(axes, (True, False)):
        panel = part0[part0["satisfiable"] == sat]
        for name, part in panel.groupby("learner", sort=False):
            (line,) = ax.plot(part["n"], part["loss"], color=colors.get(name), label=name)
            colors[name] = line.get_color()
            ax.fill_between(part["n"], part["ci_low"], part["ci_high"], color=line.get_color(),
                            alpha=0.15, linewidth=0)
        if len(panel):
            one = panel[panel["learner"] == panel["learner"].iloc[0]]
            ax.plot(one["n"], one["threshold"], color="black", linestyle="--", linewidth=1.0,
                    label=f"decision line T/(2mdk), m={one['rows'].iloc[0]}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("round t")
        ax.set_title(f"{'yes' if sat else 'no'} instance (satisfiable: {sat})", fontsize=10)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("cumulative square loss")
    axes[0].legend(fontsize=7, loc="upper left")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    if path is not None:
        atomic.save_figure_atomic(fig, path, FIGURE_DPI)
    return fig


# ----------------------------------------------------------------------------- experiments


def _run_rate(a: ExperimentArgs) -> pd.DataFrame:
    runs = a.runs or (50 if a.quick else 200)
    df = foster_rate((1_000, 3_000, 10_000) if a.quick else HORIZONS,
                     (4, 6) if a.quick else K_QUERIES, runs=runs, seed=a.seed,
                     progress=a.progress, **a.options)
    write_table_and_figure(a.out, "foster-rate", df, lambda p, t: plot_rate(df, p, t),
                           f"E5 stream (d=8, k=2, ||x||=1, ||w*||=1, sigma=0.1): {runs} runs "
                           "per T, 95% bands")
    return df


def _run_hard(a: ExperimentArgs) -> pd.DataFrame:
    runs = a.runs or 20
    df = foster_hard(horizon=2_000 if a.quick else 20_000, runs=runs,
                     instances=1 if a.quick else 3, seed=a.seed, progress=a.progress,
                     learners=QUICK_HARD_LEARNERS if a.quick else None, **a.options)
    write_table_and_figure(a.out, "foster-hard", df, lambda p, t: plot_hard(df, p, t),
                           f"planted set cover (d=8, k=2, m=10, rho=0.3): {runs} runs, 95% bands")
    atomic.write_frame_atomic(a.out / "foster-hard-decisions.csv", hard_decisions(df))
    return df


_SETS = ("k", "k_query", "horizon")
FOSTER_RATE = ExperimentSpec(
    "foster-rate", "foster-hedge regret at T = 1e3..1e5 (k' sweep) vs sqrt(T) and Theorem 1, "
    "beside the OGD references (E5)", _run_rate,
    sizes="T = 1e3 ... 1e5, k' in {4, 5, 6, 8}, 200 runs; quick: T <= 1e4, k' in {4, 6}, "
          "50 runs",
    files=("foster-rate.csv", "foster-rate.png"), docs="docs/foster-results.md",
    learners=RATE_LEARNERS, sets_itself=_SETS)
FOSTER_HARD = ExperimentSpec(
    "foster-hard", "every prediction learner on planted yes / no set-cover streams: loss vs the "
    "T/(2mdk) decision line ([FKK] Alg. 2)", _run_hard,
    sizes="T = 20,000, 3 instances, 20 runs; quick: T = 2,000, 1 instance, 4 learners",
    files=("foster-hard.csv", "foster-hard.png", "foster-hard-decisions.csv"),
    docs="docs/foster-results.md", learners=None, sets_itself=_SETS, summary=hard_decisions)
