"""[ITO] section 6 (docs/algorithms.md E3) as functions (`oslr experiment ito-*`):

* `ito_table1`: final regret R1 (against the exact best k-sparse least squares on x, no norm
  bound: "an adversary that observes k entries of x") at T = 5000 of Alg. 2
  (`ito-dual-averaging`), Alg. 3 (`ito-projection`, OMP), KKLP (`online-greedy` on x) and KKLP_A
  (`online-greedy` on the forms A^T x), plus Alg. 1 (`ito-block-bandit`, not in [ITO]'s table),
  for (d, k', k) in {(10, 2, 4), (10, 2, 8), (10, 5, 8)} on the E3 stream (`ito-synthetic`),
  A Gaussian d x 2d with ||A||_2 = 1, D = 1, every method at its printed rates (no tuning). The
  paper's 5 instances (runs 0-4) and 100 with 95% intervals; curves for Fig. 1a.
* `ito_real`: cumulative square loss against rounds on `kegg` (standing in for the CT slices,
  which are not obtainable here), k = 4, k' = 3 and the sweep k in {4, 8, 13}, k' = k - 1, with
  A = I and Gaussian A (m = 2d); runtimes.

KKLP parameters are a GAP of [ITO] (docs/algorithms.md L3.4): k0 = k, k1 = k', the BEXP budgets
floor(k / k') with the remainder one each to the first, B = ceil((k0 T / (n k1))^(1/3)) with n
the number of features it chooses among (d, or m for KKLP_A).
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from jax import lax

from oslr import atomic
from oslr.experiments.output import write_table_and_figure
from oslr.experiments.tuning import TUNE_OFFSET, mean_final_regret, scaled_points, tune
from oslr.primitives.projections import projection_matrix
from oslr.rollout import PROBLEM_INIT, PROBLEM_ROUNDS, run_keys
from oslr.registry import make, make_problem
from oslr.report import finish_figure, mean_ci
from oslr.sim import simulate
from oslr.spec import ExperimentArgs, ExperimentSpec

SETTINGS = ((10, 2, 4), (10, 2, 8), (10, 5, 8))
METHODS = ("alg2", "alg3", "kklp", "kklp_a", "alg1")
LABELS = {"alg2": "Alg 2 (ito-dual-averaging)", "alg3": "Alg 3 (ito-projection, OMP)",
          "kklp": "KKLP (online-greedy on x)", "kklp_a": "KKLP_A (online-greedy on A^T x)",
          "alg1": "Alg 1 (ito-block-bandit; not in [ITO] Table 1)"}
#: [ITO] Table 1 (average final regret over 5 instances) and their runtimes (s).
PAPER = {(10, 2, 4): {"alg2": 427.0, "alg3": 2544.3, "kklp": 4649.4, "kklp_a": 4335.0},
         (10, 2, 8): {"alg2": 265.2, "alg3": 1271.7, "kklp": 4365.8, "kklp_a": 3952.8},
         (10, 5, 8): {"alg2": 245.8, "alg3": 787.7, "kklp": 4370.4, "kklp_a": 4087.1}}
PAPER_SECONDS = {"alg2": 0.32, "alg3": 2.31, "kklp": 4.58, "kklp_a": 46.76}
#: shuffles of kegg in Fig. 1b: enough for the sign-flip test to separate the methods
#: after Holm (at 5 its smallest p is 0.0625)
REAL_SHUFFLES = 50


def kklp_batch(name: str, d: int, k: int, k_prime: int, horizon: int, m: int) -> int:
    """KKLP's batch length B = ceil((k0 T / (n k1))^(1/3)), k0 = k, k1 = k', n = d (KKLP) or
    m (KKLP_A, the forms A^T x): Thm 9 with kappa = 1 (docs/algorithms.md L3.4, OURS)."""
    n = d if name == "kklp" else m
    return max(1, math.ceil((k * horizon / (n * k_prime)) ** (1 / 3)))


#: What `ito_table1(tune=True)` scales by the shared factors (`oslr.experiments.tuning`): a
#: step-size param (the grid is one vmapped call) or KKLP's batch length (static: one
#: compiled study per point, B = max(1, round(factor x the default))).
TUNED = {"alg2": "lam_scale", "alg3": "lam_scale", "alg3_identity": "lam_scale",
         "alg1": "eta_scale", "kklp": "batch", "kklp_a": "batch"}


def method(name: str, d: int, k: int, k_prime: int, horizon: int, a: np.ndarray,
           batch: int | None = None):
    """(learner, params) of method `name` with budget k (and k' where it has one); `batch`
    overrides KKLP's default batch length (`kklp_batch`)."""
    if name == "alg2":
        return make("ito-dual-averaging", d=d, horizon=horizon, k=k)
    if name == "alg3":
        return make("ito-projection", d=d, horizon=horizon, k=k, k_prime=k_prime, projection=a,
                    max_observed=k)
    if name == "alg1":
        return make("ito-block-bandit", d=d, horizon=horizon, k=k)
    batch = batch or kklp_batch(name, d, k, k_prime, horizon, a.shape[1])
    return make("online-greedy", d=d, horizon=horizon, k=k, k0=k, k1=k_prime, batch=batch,
                projection=None if name == "kklp" else a)


def label_energy(problem, pp, seed: int, runs: int, horizon: int) -> np.ndarray:
    """(runs,) sum_t y_t^2 of each run's stream: the loss of predicting 0."""

    def one(run):
        keys = run_keys(seed, run)

        def body(state, t):
            state, ex = problem.sample(jax.random.fold_in(keys[PROBLEM_ROUNDS], t), state, t, pp)
            return state, ex.y.astype(jnp.float32) ** 2

        _, y2 = lax.scan(body, problem.init(keys[PROBLEM_INIT], pp),
                         jnp.arange(horizon, dtype=jnp.int32))
        return jnp.sum(y2)

    return np.asarray(jax.jit(jax.vmap(one))(jnp.arange(runs)), np.float64)


def ito_table1(settings: Sequence[tuple[int, int, int]] = SETTINGS, horizon: int = 5000,
               runs: int = 100, seed: int = 0, methods: Sequence[str] = METHODS,
               progress: bool = False, normalise: bool = True, clip: bool = True,
               return_finals: bool = False, tune: bool = False,
               tune_runs: int = 20) -> tuple[pd.DataFrame, ...]:
    """Returns (table, curves), and finals with `return_finals`. `normalise=False`: the E3
    stream with x ~ N(0, I) as drawn; `clip=False`: labels not clipped to [-1, 1]
    (`ito-synthetic`'s options; the paper states no generator: with both its regrets' scale is
    matched, docs/ito-results.md).

    tune: every method gets the same tuning budget instead of its printed rates: its `TUNED`
    constant times the shared factors (`oslr.experiments.tuning.tune`, extended past an edge),
    each point on the same `tune_runs` runs (indices TUNE_OFFSET..), the lowest mean final
    regret kept; the table then says what was chosen (`tuned`, `factor`, `tuning_points`,
    `at_cap`). KKLP's k1 stays k' (its batch length is what it tunes).

    table: one row per setting and method with the mean final regret of runs 0-4 (`regret_5`),
    of all runs with its 95% interval, the paper's number, the wall time of the vmapped study
    (compilation included), and `zero_regret`, the regret of the constant prediction 0 on the
    same streams (sum y^2 minus the comparator's loss). curves: mean and 95% band of the regret
    at every checkpoint, and run 0's curve (`typical`). finals: every run's final regret (one
    row per setting, method and run: the methods of a setting play the same streams in run r,
    so they are compared on these pairs)."""
    rows, curves, finals = [], [], []
    for d, k_prime, k in settings:
        problem, pp = make_problem("ito-synthetic", d=d, k=k, normalise=normalise, clip=clip)
        a = projection_matrix(d, 2 * d, "gaussian", seed=0)
        energy = label_energy(problem, pp, seed, runs, horizon)
        for name in methods:
            tuning = {}
            if tune:
                learner, params, tuning = _tune_method(name, problem, pp, d, k, k_prime,
                                                       horizon, a, tune_runs, seed)
            else:
                learner, params = method(name, d, k, k_prime, horizon, a)
            t_start = time.perf_counter()
            res = simulate(learner, problem, params, pp, horizon=horizon, n_runs=runs,
                           seed=seed, comparator_k=k, progress=progress)
            res.info["method"] = name  # the per-run file's info_method: KKLP vs KKLP_A
            wall = time.perf_counter() - t_start
            reg = res.regret_curves()["regret"][0]  # (runs, C)
            mean, _, half = mean_ci(reg[:, -1])
            best = res.final["loss"][0].astype(np.float64) - reg[:, -1]  # comparator loss
            rows.append({
                "d": d, "k_prime": k_prime, "k": k, "method": name, "label": LABELS[name],
                "normalise": bool(normalise), "clip": bool(clip),
                "horizon": horizon, "runs": runs, "regret_5": float(reg[:5, -1].mean()),
                "regret": mean, "ci_low": mean - half, "ci_high": mean + half,
                "paper": PAPER.get((d, k_prime, k), {}).get(name, np.nan),
                "queries_per_round": float(res.final["queries"][0].mean() / horizon),
                "zero_regret": float(np.mean(energy - best)),
                "wall_s": wall, "paper_s": PAPER_SECONDS.get(name, np.nan), **tuning,
            })
            finals += [{"d": d, "k_prime": k_prime, "k": k, "method": name, "run": r,
                        "regret": float(reg[r, -1])} for r in range(reg.shape[0])]
            cm, _, ch = mean_ci(reg, axis=0)
            for c, n in enumerate(res.ckpts):
                curves.append({"d": d, "k_prime": k_prime, "k": k, "method": name,
                               "n": int(n), "mean": cm[c], "ci_low": cm[c] - ch[c],
                               "ci_high": cm[c] + ch[c], "typical": reg[0, c]})
    out = (pd.DataFrame(rows), pd.DataFrame(curves))
    return (*out, pd.DataFrame(finals)) if return_finals else out


def _tune_method(name: str, problem, pp, d: int, k: int, k_prime: int, horizon: int,
                 a: np.ndarray, tune_runs: int, seed: int):
    """(learner, params, table fields) of method `name` tuned by `tuning.tune` on `tune_runs`
    runs: the `TUNED` param scaled in one vmapped call per window, or KKLP's batch length one
    study per point."""
    what = TUNED[name]
    common = dict(horizon=horizon, n_runs=tune_runs, seed=seed, comparator_k=k,
                  run_offset=TUNE_OFFSET)

    if what == "batch":
        default = kklp_batch(name, d, k, k_prime, horizon, a.shape[1])

        def batch_of(f: float) -> int:
            return max(1, int(round(f * default)))

        def evaluate(window):
            made = [method(name, d, k, k_prime, horizon, a, batch=batch_of(f)) for f in window]
            return np.concatenate([mean_final_regret(simulate(lrn, problem, prm, pp, **common))
                                   for lrn, prm in made]), made
    else:
        learner, params = method(name, d, k, k_prime, horizon, a)

        def evaluate(window):
            labels, stacked = scaled_points(params, (what,), window)
            res = simulate(learner, problem, stacked, pp, grid=labels, **common)
            return mean_final_regret(res), stacked

    tuned = tune(evaluate)
    factor = tuned.factors[tuned.best]
    window, local = tuned.chosen()
    if what == "batch":
        learner, params = tuned.payloads[window][local]
        value = f"batch={batch_of(factor)}"
    else:
        params = jax.tree.map(lambda x: x[local], tuned.payloads[window])
        value = f"{what}={float(getattr(params, what)):.4g}"
    return learner, params, {"tuned": value, "factor": factor,
                             "tuning_points": len(tuned.factors), "at_cap": tuned.at_cap,
                             "tuning_regret": float(tuned.scores[tuned.best])}


def ito_real(ks: Sequence[int] = (4, 8, 13), horizon: int | None = None,
             runs: int = REAL_SHUFFLES,
             seed: int = 0, methods: Sequence[str] = ("alg2", "alg3", "alg3_identity", "kklp",
                                                      "kklp_a"),
             progress: bool = False, finals: list | None = None) -> pd.DataFrame:
    """Cumulative square loss (mean and 95% interval over `runs` shuffles) against rounds on
    kegg, k' = k - 1, for each k; Alg. 3 and KKLP_A with Gaussian A (m = 2d), `alg3_identity`
    Alg. 3 with A = I. horizon None: one pass (63,608 rounds). Also per checkpoint the mean loss
    of the comparator (`comparator_loss`: the best k-sparse least squares in hindsight, or the
    greedy one where C(d, k) is too large) and, at the horizon, of predicting 0 (`zero_loss`).
    `finals`, when given, receives every shuffle's final loss (one dict per k, method and run:
    the methods play the same shuffles in run r, so they are compared on these pairs)."""
    problem, pp = make_problem("kegg")
    d = problem.d
    horizon = horizon or int(problem.n_rows)  # type: ignore[arg-type]  # a dataset's rows
    gauss = projection_matrix(d, 2 * d, "gaussian", seed=0)
    zero = float(label_energy(problem, pp, seed, runs, horizon).mean())
    rows = []
    for k in ks:
        for name in methods:
            base = "alg3" if name == "alg3_identity" else name
            a = np.eye(d, dtype=np.float32) if name == "alg3_identity" else gauss
            learner, params = method(base, d, k, k - 1, horizon, a)
            t_start = time.perf_counter()
            res = simulate(learner, problem, params, pp, horizon=horizon, n_runs=runs,
                           seed=seed, comparator_k=k, progress=progress)
            res.info["method"] = name  # the per-run file's info_method: KKLP vs KKLP_A
            wall = time.perf_counter() - t_start
            loss = res.curves["loss"][0].astype(np.float64)
            reg = res.regret_curves()
            metric = "regret" if "regret" in reg else "regret_lb_greedy"
            rmean, _, rhalf = mean_ci(reg[metric][0][:, -1])
            best = (loss - reg[metric][0]).mean(axis=0)
            if finals is not None:
                finals += [{"k": k, "method": name, "run": r, "loss": float(loss[r, -1])}
                           for r in range(runs)]
            for c, n in enumerate(res.ckpts):
                mean, _, half = mean_ci(loss[:, c])
                rows.append({"k": k, "k_prime": k - 1, "method": name, "n": int(n),
                             "loss": mean, "ci_low": mean - half, "ci_high": mean + half,
                             "comparator_loss": best[c],
                             "zero_loss": zero if n == horizon else np.nan,
                             "final_regret": rmean, "final_regret_half": rhalf,
                             "metric": metric, "wall_s": wall, "runs": runs,
                             "horizon": horizon})
    return pd.DataFrame(rows)


def plot_fig1a(curves: pd.DataFrame, path: str | Path | None = None, title: str = "",
               setting: tuple[int, int, int] = (10, 2, 4)):
    """Regret against rounds at one setting: run 0 (solid, "a typical instance") and the mean with
    its 95% band."""
    import matplotlib

    if path is not None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    d, kp, k = setting
    sub = curves[(curves["d"] == d) & (curves["k_prime"] == kp) & (curves["k"] == k)]
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for name, part in sub.groupby("method", sort=False):
        (line,) = ax.plot(part["n"], part["typical"], label=f"{LABELS[name]}, run 0")
        ax.plot(part["n"], part["mean"], color=line.get_color(), linestyle="--", linewidth=0.8)
        ax.fill_between(part["n"], part["ci_low"], part["ci_high"], color=line.get_color(),
                        alpha=0.15, linewidth=0)
    ax.set_xlabel("round t")
    ax.set_ylabel("regret R1 (best k-sparse LS on x, exact)")
    ax.set_title(title or f"(d, k', k) = {setting}: run 0 (solid), mean and 95% band (dashed)",
                 fontsize=9)
    return finish_figure(fig, ax, path)


def plot_real(df: pd.DataFrame, path: str | Path | None = None, title: str = ""):
    """Cumulative square loss against rounds on kegg, one panel per k, with the comparator's
    (dashed)."""
    import matplotlib

    if path is not None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    ks = sorted(df["k"].unique())
    fig, axes = plt.subplots(1, len(ks), figsize=(5.5 * len(ks), 4.5), squeeze=False)
    for ax, k in zip(axes[0], ks):
        sub = df[df["k"] == k]
        for name, part in sub.groupby("method", sort=False):
            (line,) = ax.plot(part["n"], part["loss"], label=name)
            ax.fill_between(part["n"], part["ci_low"], part["ci_high"], color=line.get_color(),
                            alpha=0.2, linewidth=0)
        first = sub[sub["method"] == sub["method"].iloc[0]]
        which = ("best" if first["metric"].iloc[0] == "regret" else "greedy")
        ax.plot(first["n"], first["comparator_loss"], color="black", linestyle="--",
                label=f"{which} {k}-sparse LS in hindsight")
        ax.set_xscale("log")
        if (sub["ci_low"] > 0).all():
            ax.set_yscale("log")
        else:  # a band of few runs reaches below zero: symmetric-log keeps it visible
            positive = sub["loss"][sub["loss"] > 0]
            ax.set_yscale("symlog", linthresh=float(positive.min()) if len(positive) else 1.0)
        ax.set_xlabel("round t")
        ax.set_ylabel("cumulative square loss")
        ax.set_title(f"{title} k={k}, k'={k - 1}", fontsize=9)
        finish_figure(fig, ax, None)
    return finish_figure(fig, ax, path)  # the layout of every panel, and the file


__all__ = ["LABELS", "METHODS", "PAPER", "PAPER_SECONDS", "SETTINGS", "TUNED", "ito_real",
           "ito_table1", "kklp_batch", "method", "plot_fig1a", "plot_real"]


# ----------------------------------------------------------------------------- experiments


def _run_table1(a: ExperimentArgs) -> pd.DataFrame:
    table, curves, finals = ito_table1(settings=SETTINGS[:1] if a.quick else SETTINGS,
                               horizon=1000 if a.quick else 5000, runs=a.runs or 100,
                               seed=a.seed, progress=a.progress,
                               normalise=bool(a.options.get("normalise", True)),
                               clip=bool(a.options.get("clip", True)), return_finals=True,
                               tune=bool(a.options.get("tune", False)))
    write_table_and_figure(a.out, "ito-table1", table,
                           lambda path, title: plot_fig1a(curves, path, title), "")
    atomic.write_frame_atomic(a.out / "ito-table1-curves.csv", curves)
    atomic.write_frame_atomic(a.out / "ito-table1-finals.csv", finals)
    return table


def _run_real(a: ExperimentArgs) -> pd.DataFrame:
    runs = a.runs or REAL_SHUFFLES
    finals: list[Any] = []
    df = ito_real(ks=(4,) if a.quick else (4, 8, 13), horizon=5000 if a.quick else None,
                  runs=runs, seed=a.seed, progress=a.progress, finals=finals)
    write_table_and_figure(a.out, "ito-real", df, lambda path, title: plot_real(df, path, title),
                           f"kegg (for CT), {runs} shuffles, 95% bands:")
    atomic.write_frame_atomic(a.out / "ito-real-finals.csv", pd.DataFrame(finals))
    return df


ITO_TABLE1 = ExperimentSpec(
    "ito-table1", "[ITO] Table 1: Alg 2, Alg 3, KKLP, KKLP_A (and Alg 1) regret at T = 5000, "
    "5 and 100 instances, Fig. 1a, runtimes (E3)", _run_table1,
    sizes="every setting, T = 5,000, 100 runs; quick: the first setting, T = 1,000",
    files=("ito-table1.csv", "ito-table1.png", "ito-table1-curves.csv", "ito-table1-finals.csv"),
    docs="docs/ito-results.md", extra_options=("normalise", "clip", "tune"))
ITO_REAL = ExperimentSpec(
    "ito-real", "[ITO] Fig. 1b on kegg (standing in for CT): cumulative loss vs rounds, "
    "k in {4, 8, 13}, k' = k - 1, runtimes", _run_real,
    sizes="k in {4, 8, 13}, the whole dataset, 50 shuffles; quick: k = 4, T = 5,000",
    files=("ito-real.csv", "ito-real.png", "ito-real-finals.csv"), docs="docs/ito-results.md")
