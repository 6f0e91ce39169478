"""Paper experiments as functions (and `oslr experiment NAME`).

[WLL] Appendix B (ALGORITHMS.md E1):

* `wll_reward_vs_k`: cumulative reward sum_t y_t <w_t, x_t> against k/d on a dataset (one pass,
  a fresh shuffle per run), for FTPSL and the random-subset and oracle-subset FTPL baselines, with
  b = 2, M = 10 and eq. (1) rates (c0 = 1); Fig. 1a-d.
* `wll_redundant`: the same at k = 0.2 d_orig against the number of appended standard-normal
  features rho d_orig, rho in {0.2, 0.5, 0.8, 1.1, 1.5}; Fig. 1e-f.

Each grid point is compiled with max_k = k (a top-k on max_k = d would be a full sort per draw).
The R4 comparator reward ||top_k(|sum y x|)||_2 is reported next to every learner.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from oslr import regret
from oslr.registry import LEARNERS, factory_options, make, make_problem
from oslr.report import finish_figure, mean_ci
from oslr.sim import simulate

WLL_LEARNERS = ("ftpsl", "ftpl-random-subset", "ftpl-oracle-subset")
WLL_RATIOS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
WLL_RHOS = (0.2, 0.5, 0.8, 1.1, 1.5)


def _applicable(name: str, d: int, options: dict) -> dict:
    """The options that learner `name` understands (factory options or params fields)."""
    fields = {f.name for f in dataclasses.fields(LEARNERS[name].params(d))}
    return {k: v for k, v in options.items() if k in fields | factory_options(name)}


def _run_point(name: str, problem, pp, k: int, horizon: int, runs: int, seed: int,
               progress: bool, **options) -> dict:
    options = _applicable(name, problem.d, options)
    learner, params = make(name, d=problem.d, max_k=k, horizon=horizon, k=k, **options)
    spec = LEARNERS[name]
    if spec.prepare is not None:
        params = spec.prepare(params, problem, pp)
    res = simulate(learner, problem, params, pp, horizon=horizon, n_runs=runs, seed=seed,
                   progress=progress)
    reward = res.final["reward"][0].astype(np.float64)
    best = regret.best_sparse_linear_reward(res.final["theta_sum"][0], k, 2.0)
    mean, sem, half = mean_ci(reward)
    return {"learner": name, "k": k, "runs": runs, "horizon": horizon,
            "reward_mean": mean, "reward_sd": reward.std(ddof=1) if runs > 1 else np.nan,
            "reward_ci_low": mean - half, "reward_ci_high": mean + half,
            "comparator_reward_mean": float(np.mean(best)),
            "regret_mean": float(np.mean(best - reward))}


def wll_reward_vs_k(dataset: str = "a9a", ratios: Sequence[float] = WLL_RATIOS, runs: int = 5,
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
    horizon = horizon or problem.n_rows
    ks = sorted({max(1, int(round(r * problem.d))) for r in ratios})
    rows = [dict(_run_point(name, problem, pp, k, horizon, runs, seed, progress, **options),
                 dataset=dataset, d=problem.d, ratio=k / problem.d)
            for name in learners for k in ks]
    return pd.DataFrame(rows)


def wll_redundant(dataset: str = "a9a", rhos: Sequence[float] = WLL_RHOS, k_ratio: float = 0.2,
                  runs: int = 5, seed: int = 0, horizon: int | None = None,
                  learners: Sequence[str] = WLL_LEARNERS, progress: bool = False,
                  **options) -> pd.DataFrame:
    """Cumulative reward against appended N(0,1) features ([WLL] Fig. 1e-f); k = k_ratio d_orig."""
    base, _ = make_problem(dataset)
    k = max(1, int(round(k_ratio * base.d)))
    horizon = horizon or base.n_rows
    rows = []
    for rho in (0.0, *rhos):
        extra = int(round(rho * base.d))
        problem, pp = make_problem(dataset, n_redundant=extra)
        for name in learners:
            row = _run_point(name, problem, pp, k, horizon, runs, seed, progress, **options)
            rows.append(dict(row, dataset=dataset, d_orig=base.d, n_redundant=extra, rho=rho))
    return pd.DataFrame(rows)


def plot_experiment(df: pd.DataFrame, x: str, path: str | Path | None = None, title: str = ""):
    """Mean cumulative reward with 95% intervals against `x`, one line per learner."""
    import matplotlib

    if path is not None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for name, part in df.groupby("learner", sort=False):
        part = part.sort_values(x)
        (line,) = ax.plot(part[x], part["reward_mean"], marker="o", label=name)
        ax.fill_between(part[x], part["reward_ci_low"], part["reward_ci_high"],
                        color=line.get_color(), alpha=0.2, linewidth=0)
    first = df.drop_duplicates(x).sort_values(x)
    ax.plot(first[x], first["comparator_reward_mean"], "k--", lw=1,
            label="best k-sparse action in hindsight")
    ax.set_xlabel(x)
    ax.set_ylabel("cumulative reward")
    ax.set_title(title)
    return finish_figure(fig, ax, path)


EXPERIMENTS = {
    "wll-k": "FTPSL vs random/oracle-subset FTPL: cumulative reward against k/d ([WLL] Fig. 1a-d)",
    "wll-redundant": "the same against appended N(0,1) features ([WLL] Fig. 1e-f)",
}


def run_experiment(name: str, dataset: str, runs: int, seed: int, out: Path, quick: bool,
                   progress: bool, **options) -> pd.DataFrame:
    """Run experiment `name`, write `<name>-<dataset>.csv` and `.png` into `out`."""
    if name not in EXPERIMENTS:
        raise ValueError(f"unknown experiment {name!r}; available: {', '.join(EXPERIMENTS)}.")
    horizon = 5000 if quick else None
    if name == "wll-k":
        ratios = (0.1, 0.3, 0.5) if quick else WLL_RATIOS
        df = wll_reward_vs_k(dataset, ratios, runs, seed, horizon, progress=progress, **options)
        x = "ratio"
    else:
        rhos = (0.5, 1.5) if quick else WLL_RHOS
        df = wll_redundant(dataset, rhos, runs=runs, seed=seed, horizon=horizon,
                           progress=progress, **options)
        x = "rho"
    out.mkdir(parents=True, exist_ok=True)
    stem = f"{name}-{dataset}"
    df.to_csv(out / f"{stem}.csv", index=False)
    try:
        import matplotlib.pyplot as plt

        fig = plot_experiment(df, x, out / f"{stem}.png",
                              title=f"{dataset}: {runs} shuffles, T={df['horizon'].iloc[0]}")
        plt.close(fig)
    except ImportError:  # pragma: no cover - plotting is optional
        pass
    return df
