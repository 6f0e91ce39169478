"""[KPM] experiments (docs/algorithms.md E2) as functions (`oslr experiment kpm-*`):

* `kpm_tracking`: tracking error ||theta_n - theta~_n|| of fLinUCB-GD / -SVRG / -SAG against the
  regularised LS solution of the same run, over the OBD log in stream mode (every event accepted;
  OURS, since replay accepts ~1/K of the events); Fig. 2a-c.
* `kpm_runtime`: wall time per round of LinUCB (Sherman-Morrison, O(K d^2)) against the fast
  variants (O(K d)) as d grows, on the synthetic linear bandit; Fig. 2d in spirit.
* `kpm_replay`: CTR score 10000 clicks / accepted events of LinUCB and the SGD variants under
  rejection-sampling replay of the OBD uniform-random log, over a kappa grid (one vmapped call per
  learner), a fresh event order per run.
* `kpm_pege`: pseudo-regret / sqrt(n) of PEGE and fPEGE-GD on the unit sphere (the O(log^4 n)
  overhead of [KPM] Thm 2 checked empirically).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Sequence

import jax
import numpy as np
import pandas as pd

from oslr.checkpoint import keep_studies
from oslr.experiments.output import write_table_and_figure
from oslr.problems.obd import CAMPAIGNS
from oslr.registry import make, make_problem
from oslr.report import draw_bound, finish_figure, mean_ci
from oslr.sim import simulate, sweep
from oslr.spec import ExperimentArgs, ExperimentSpec

FAST = ("flinucb-gd", "flinucb-svrg", "flinucb-sag")
KAPPAS = (0.1, 0.3, 1.0, 3.0)


def _curve_rows(res, name: str, metric: str, scale=None, **labels) -> list[dict]:
    rows = []
    for g, label in enumerate(res.grid):
        values = res.curves[metric][g].astype(np.float64)  # (runs, C)
        if scale is not None:
            values = values * scale[None, :]
        for c, n in enumerate(res.ckpts):
            mean, _, half = mean_ci(values[:, c])
            rows.append({"learner": name, **label, **labels, "n": int(n), metric: mean,
                         "ci_low": mean - half, "ci_high": mean + half})
    return rows


def kpm_tracking(campaign: str = "all", runs: int = 10, horizon: int | None = None,
                 learners: Sequence[str] = FAST, seed: int = 0, progress: bool = False,
                 **options) -> pd.DataFrame:
    """Tracking error curves (mean and 95% interval over runs) on OBD in stream mode."""
    problem, pp = make_problem("obd", campaign=campaign, stream=True)
    horizon = horizon or int(problem.n_rows)  # type: ignore[arg-type]  # a dataset's rows
    rows = []
    for name in learners:
        learner, params = make(name, d=problem.d, n_arms=problem.n_arms, horizon=horizon,
                               history="id", track=True, **options)
        res = simulate(learner, problem, params, pp, horizon=horizon, n_runs=runs, seed=seed,
                       progress=progress)
        rows += _curve_rows(res, name, "tracking_error", campaign=campaign, d=problem.d)
    return pd.DataFrame(rows)


#: Rows of kpm-runtime that are a learner with options: exact LinUCB in its A^-1 form (the
#: O(K d^2) Sherman-Morrison of [LCLS10], what the arms-may-change path runs).
RUNTIME_FORMS = {"linucb (A^-1 form)": ("linucb", {"history": "features"})}


def kpm_runtime(ds: Sequence[int] = (10, 30, 100, 300, 1000), n_arms: int = 10,
                horizon: int = 500, runs: int = 1,
                learners: Sequence[str] = ("linucb", "linucb (A^-1 form)", *FAST),
                repeats: int = 3) -> pd.DataFrame:
    """Milliseconds per round of each learner against d (compile excluded; median of repeats).

    `learners`: registry names or keys of `RUNTIME_FORMS`. `linucb` on these fixed arms runs its
    O(K d) form; "linucb (A^-1 form)" the O(K d^2) one. Also fits the log-log slope of time
    against d per learner (`slope` column, from d >= 100): about 2 for an O(K d^2) learner and
    1 for the O(K d) ones once the per-round overhead is amortised.
    """
    rows = []
    for d in ds:
        problem, pp = make_problem("linear-bandit", d=d, n_arms=n_arms)
        for name in learners:
            registry, options = RUNTIME_FORMS.get(name, (name, {}))
            learner, params = make(registry, d=d, n_arms=n_arms, horizon=horizon, **options)
            times = []
            with keep_studies(None):  # timed: every call plays the whole study
                simulate(learner, problem, params, pp, horizon=horizon, n_runs=runs)  # compile
                for _ in range(repeats):
                    t0 = time.perf_counter()
                    res = simulate(learner, problem, params, pp, horizon=horizon, n_runs=runs)
                    jax.block_until_ready(res.final["reward"])
                    times.append(time.perf_counter() - t0)
            rows.append({"learner": name, "fixed_arms": (learner.info or {}).get("fixed_arms"),
                         "d": d, "n_arms": n_arms, "runs": runs,
                         "horizon": horizon, "ms_per_round": 1e3 * np.median(times) / horizon,
                         "device": str(jax.devices()[0])})
    df = pd.DataFrame(rows)
    for name, part in df.groupby("learner"):
        big = part[part["d"] >= 100]
        if len(big) >= 2:
            slope = np.polyfit(np.log(big["d"]), np.log(big["ms_per_round"]), 1)[0]
            df.loc[df["learner"] == name, "slope"] = slope
    return df


def kpm_replay(campaign: str = "all", kappas: Sequence[float] = KAPPAS, runs: int = 20,
               learners: Sequence[str] = FAST, seed: int = 0, progress: bool = False,
               horizon: int | None = None, **options) -> pd.DataFrame:
    """CTR score (10000 clicks / accepted) under replay, per learner and kappa.

    One vmapped call per learner over kappas x runs; every run replays its own shuffle of the
    events (common to all learners). Exact `linucb` costs O(K d^2) per event (d = 1177 on
    random/all): add it to `learners` for small run counts.
    """
    problem, pp = make_problem("obd", campaign=campaign)
    horizon = horizon or problem.n_rows  # events replayed (default: the whole log)
    rows = []
    for name in learners:
        learner, params = make(name, d=problem.d, n_arms=problem.n_arms, horizon=horizon,
                               history="id", **options)
        t0 = time.perf_counter()
        res = sweep(learner, problem, params, pp, {"kappa": list(kappas)},
                    horizon=horizon, n_runs=runs, seed=seed, progress=progress)
        wall = time.perf_counter() - t0
        for g, label in enumerate(res.grid):
            clicks = res.final["reward"][g].astype(np.float64)
            accepted = res.final["accepted"][g].astype(np.float64)
            ctr = 1e4 * clicks / np.maximum(accepted, 1)
            mean, _, half = mean_ci(ctr)
            rows.append({"learner": name, **label, "campaign": campaign, "runs": runs,
                         "events": horizon,
                         "ctr_mean": mean, "ctr_ci_low": mean - half, "ctr_ci_high": mean + half,
                         "clicks_mean": clicks.mean(), "accepted_mean": accepted.mean(),
                         "wall_s": wall})
    return pd.DataFrame(rows)


def kpm_pege(ds: Sequence[int] = (5, 10, 20, 50), horizon: int = 100_000, runs: int = 20,
             seed: int = 0, progress: bool = False) -> pd.DataFrame:
    """Pseudo-regret / sqrt(n) curves of PEGE and fPEGE-GD on the unit sphere (||theta*|| = 1,
    U[-1, 1] noise)."""
    rows = []
    for d in ds:
        problem, pp = make_problem("sphere-bandit", d=d)
        for name in ("pege", "fpege-gd"):
            learner, params = make(name, d=d, horizon=horizon)
            res = simulate(learner, problem, params, pp, horizon=horizon, n_runs=runs,
                           seed=seed, progress=progress)
            rows += _curve_rows(res, name, "pseudo_regret", scale=res.ckpts ** -0.5, d=d)
    df = pd.DataFrame(rows).rename(columns={"pseudo_regret": "regret_over_sqrt_n"})
    return df.assign(bound=pege_bounds(df))


PEGE_BOUND_LABEL = ("dashed: bound / sqrt n, order only: pege d [RT10],\n"
                    "fpege-gd 2 d ln^4 n [KPM] Thm 2 (above the axes: not drawn)")


def pege_bounds(df: pd.DataFrame) -> np.ndarray:
    """The order terms (constant 1) of the regret bounds divided by sqrt(n), per row of a
    kpm-pege table with ||theta*|| = 1: PEGE's d sqrt(n) ([RT10] Thm 3.1) gives d; fPEGE-GD's
    K_1(n)^2 d^-1 (||theta*|| + 1 / ||theta*||) sqrt(n) with K_1(n) = d ln^2 n ([KPM] Thm 2)
    gives 2 d ln^4 n."""
    d = df["d"].to_numpy(np.float64)
    n = df["n"].to_numpy(np.float64)
    return np.where(df["learner"] == "fpege-gd", 2 * d * np.log(n) ** 4, d)


def plot_curves(df: pd.DataFrame, y: str, path: str | Path | None = None, title: str = "",
                by: Sequence[str] = ("learner",), logy: bool = True,
                bound_label: str = "dashed: bounds"):
    """Mean curve with its 95% band against n (log axes), one line per `by` group; a `bound`
    column is drawn dashed in each group's colour (see `report.draw_bound`)."""
    import matplotlib

    if path is not None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    top = float(df["ci_high"].max())
    for key, part in df.groupby(list(by), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        label = ", ".join(f"{k}={v}" if k != "learner" else str(v) for k, v in zip(by, key))
        (line,) = ax.plot(part["n"], part[y], label=label)
        ax.fill_between(part["n"], part["ci_low"], part["ci_high"], color=line.get_color(),
                        alpha=0.2, linewidth=0)
        # a bound above every curve at the horizon is left out (the legend says so) rather
        # than drawn as a line leaving the axes after the first rounds
        if ("bound" in part and part["bound"].notna().any()
                and part["bound"].iloc[-1] <= top):
            draw_bound(ax, part["n"], part["bound"], None, line.get_color(), rescale=False)
    if "bound" in df and df["bound"].notna().any():
        ax.plot([], [], "k--", label=bound_label)
    ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel("n (rounds)")
    ax.set_ylabel(y.replace("_", " "))
    ax.set_title(title)
    return finish_figure(fig, ax, path)


def plot_runtime(df: pd.DataFrame, path: str | Path | None = None, title: str = ""):
    """Milliseconds per round against d (log-log), one line per learner."""
    import matplotlib

    if path is not None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for name, part in df.groupby("learner", sort=False):
        slope = part["slope"].iloc[0] if "slope" in part else float("nan")
        fitted = f" (slope {slope:.2f})" if np.isfinite(slope) else " (no slope: d < 100 only)"
        ax.plot(part["d"], part["ms_per_round"], marker="o", label=name + fitted)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("d")
    ax.set_ylabel("ms per round (one run)")
    ax.set_title(title)
    return finish_figure(fig, ax, path)


# ----------------------------------------------------------------------------- experiments


def _run_tracking(a: ExperimentArgs) -> pd.DataFrame:
    runs = a.runs or (2 if a.quick else 10)
    assert a.dataset is not None  # the spec's datasets: the first by default
    df = kpm_tracking(a.dataset, runs, 1000 if a.quick else None, seed=a.seed,
                      progress=a.progress, **a.options)
    write_table_and_figure(a.out, f"kpm-tracking-{a.dataset}", df,
                           lambda p, t: plot_curves(df, "tracking_error", p, t),
                           f"OBD {a.dataset}, stream mode: {runs} runs")
    return df


def _run_runtime(a: ExperimentArgs) -> pd.DataFrame:
    df = kpm_runtime((10, 30, 100) if a.quick else (10, 30, 100, 300, 1000),
                     horizon=200 if a.quick else 500)
    write_table_and_figure(a.out, "kpm-runtime-synthetic", df,
                           lambda p, t: plot_runtime(df, p, t), "linear bandit, K = 10")
    return df


def _run_replay(a: ExperimentArgs) -> pd.DataFrame:
    assert a.dataset is not None  # the spec's datasets: the first by default
    df = kpm_replay(a.dataset, (0.3, 1.0) if a.quick else KAPPAS,
                    a.runs or (10 if a.quick else 20), seed=a.seed,
                    progress=a.progress, horizon=2_500 if a.quick else None, **a.options)
    write_table_and_figure(a.out, f"kpm-replay-{a.dataset}", df)
    return df


def _run_pege(a: ExperimentArgs) -> pd.DataFrame:
    runs = a.runs or 20
    df = kpm_pege((5, 10) if a.quick else (5, 10, 20, 50), 10_000 if a.quick else 100_000, runs,
                  a.seed, a.progress)
    write_table_and_figure(
        a.out, "kpm-pege-sphere", df,
        lambda p, t: plot_curves(df, "regret_over_sqrt_n", p, t, by=("learner", "d"),
                                 logy=False, bound_label=PEGE_BOUND_LABEL),
        f"unit sphere, T={10_000 if a.quick else 100_000}: {runs} runs, 95% bands")
    return df


KPM_TRACKING = ExperimentSpec(
    "kpm-tracking", "tracking error of fLinUCB-GD/-SVRG/-SAG on OBD, stream mode ([KPM] Fig. 2a-c)",
    _run_tracking, sizes="the whole campaign, 10 runs; quick: 2 runs, T = 1,000",
    files=("kpm-tracking-{dataset}.csv", "kpm-tracking-{dataset}.png"),
    docs="docs/kpm-results.md", learners=FAST, sets_itself=("n_arms", "horizon", "history",
                                                             "track"), datasets=CAMPAIGNS)
KPM_RUNTIME = ExperimentSpec(
    "kpm-runtime", "ms per round of LinUCB (Sherman-Morrison) vs the SGD variants as d grows",
    _run_runtime, sizes="d = 10 ... 1,000, T = 500; quick: d <= 100, T = 200",
    files=("kpm-runtime-synthetic.csv", "kpm-runtime-synthetic.png"),
    docs="docs/kpm-results.md")
KPM_REPLAY = ExperimentSpec(
    "kpm-replay", "CTR of the SGD variants (and LinUCB) under OBD replay over a kappa grid",
    _run_replay,
    sizes="4 kappas, 20 runs, the whole log; quick: 2 kappas, 10 runs, 2,500 events a run",
    files=("kpm-replay-{dataset}.csv",), docs="docs/kpm-results.md", learners=FAST,
    sets_itself=("n_arms", "horizon", "history", "kappa"), datasets=CAMPAIGNS)
KPM_PEGE = ExperimentSpec(
    "kpm-pege", "PEGE vs fPEGE-GD pseudo-regret / sqrt(n) on the unit sphere", _run_pege,
    sizes="d = 5 ... 50, T = 100,000, 20 runs; quick: d = 5, 10, T = 10,000",
    files=("kpm-pege-sphere.csv", "kpm-pege-sphere.png"), docs="docs/kpm-results.md")
