"""[KKLP] validation (docs/algorithms.md E4; [KKLP] itself has no experiments) as functions
(`oslr experiment kale-*`):

* `calibrate_c`: the constant C of lam_n = C sqrt(d log(n d / delta) / (n k0)) (sigma + d / k0),
  a GAP of the paper. For each synthetic draw (a run's stream, the learner's uniform k0-subsets,
  on a seed range apart from the studies'), the smallest C at which w* is feasible for the
  Dantzig LP at a solve n is ||c_n - G_n w*||_inf / lam_n(C = 1); a draw needs the largest of
  these over its solves (n = 2^j - 1 > t0). C_95 is the 95% quantile of that over draws.
* `kale_dantzig`: `dantzig-poslr` (with the calibrated C) on the E4 realizable stream (d = 100,
  k = 5, Rademacher x, ||w*||_1 = 1, sigma = 0.1) for k0 in {10, 20, 50}, beside
  `ogd-random-subset` with the same budget k0 + k and `ogd-full`: regret R3 (against w*) and
  ||w_t - w*||_1 of the committed predictor against t, Theorem 2's order term; the correlated
  (non-RIP) design for contrast; the LP's share of the runtime (the same study with the LP never
  solved, t0 > T, timed beside it).
* `kale_greedy`: `online-greedy` on the agnostic stream (y = sign(<w*, x>), 10% flips) at every T
  of a grid (its B, k1 and BEXP rates are set from T), beside the same references: regret R2
  (against the greedy k-sparse least squares, a lower bound on the regret) at d = 100, R1 (exact)
  at d = 20; the fitted growth exponent in T beside Theorem 9's 2/3 and its order term.
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

from oslr.experiments.output import write_table_and_figure
from oslr.learners.dantzig import default_t0, gram_estimate, lambda_n
from oslr.primitives import random_subset_mask
from oslr.registry import make, make_problem
from oslr.report import draw_bound, finish_figure, growth_exponent, mean_ci
from oslr.rollout import LEARNER_ROUNDS, PROBLEM_INIT, PROBLEM_ROUNDS, run_keys
from oslr.sim import simulate, sweep
from oslr.spec import Ctx, ExperimentArgs, ExperimentSpec

K0S = (10, 20, 50)
DESIGNS = ("rademacher", "correlated")
#: Seeds of the calibration draws start here (apart from the studies' seeds 0, 1, ...).
CALIBRATION_SEED = 10_000
GREEDY_HORIZONS = (1_000, 3_000, 10_000, 30_000)
#: The references beside both learners.
REFERENCES = ("ogd-random-subset", "ogd-full")


def realizable_problem(d: int = 100, k: int = 5, design: str = "rademacher",
                       sigma: float = 0.1):
    """The E4 realizable stream: ||x||_inf = 1, k-sparse w* with ||w*||_1 = 1, Gaussian noise."""
    return make_problem("sparse-linear", d=d, k=k, sigma=sigma, design=design)


def agnostic_problem(d: int = 100, k: int = 5, design: str = "rademacher", flip: float = 0.1):
    """The E4 agnostic stream: the same x, y = sign(<w*, x>) flipped with probability `flip`."""
    return make_problem("agnostic", d=d, k=k, design=design, flip=flip)


def t0_of(d: int, k: int, horizon: int) -> int:
    """dantzig-poslr's default t0 = ceil(k ln d ln T)."""
    return default_t0(Ctx(d=d, horizon=horizon, options={"k": k}))


def slack_ratios(d: int = 100, k: int = 5, k0: int = 10, horizon: int = 2**14, draws: int = 200,
                 seed: int = CALIBRATION_SEED, design: str = "rademacher", sigma: float = 0.1,
                 delta: float = 0.1, gram_mode: str = "unbiased") -> tuple[np.ndarray, np.ndarray]:
    """||c_n - G_n w*||_inf / lam_n(C = 1) at every solve n = 2^j - 1 < horizon of `draws` runs.

    Run r is the stream of run r under `seed` and the uniform k0-subsets drawn, as
    `dantzig-poslr` draws them, from the run's learner round keys. Returns (ratios (draws, J),
    n (J,)).
    """
    problem, pp = realizable_problem(d, k, design, sigma)
    # lam_n(C = 1) of the learner itself
    _, params = make("dantzig-poslr", d=d, k=k, k0=k0, sigma=sigma, delta=delta, c_lambda=1.0)
    ns = np.array([2**j - 1 for j in range(1, int(math.log2(horizon)) + 1)], np.int64)
    ns_j = jnp.asarray(ns, jnp.int32)

    def one(run):
        keys = run_keys(seed, run)
        ps = problem.init(keys[PROBLEM_INIT], pp)

        def slack(g, xy, n):
            gram = gram_estimate(g, n, jnp.int32(k0), d, gram_mode)
            return jnp.max(jnp.abs(xy / n - gram @ ps.w_star)) / lambda_n(params, d, n)

        def body(carry, t):
            g, xy, out = carry
            ps_t, ex = problem.sample(jax.random.fold_in(keys[PROBLEM_ROUNDS], t), ps, t, pp)
            del ps_t  # static w* (sparse-linear)
            explore = random_subset_mask(jax.random.fold_in(keys[LEARNER_ROUNDS], t), d,
                                         jnp.int32(k0), d)
            x_hat = jnp.where(explore, ex.x, 0.0) * (d / k0)
            g, xy = g + jnp.outer(x_hat, x_hat), xy + ex.y * x_hat
            hit = ns_j == t + 1  # t is shared by every run: the cond stays a branch under vmap
            out = lax.cond(jnp.any(hit),
                           lambda: jnp.where(hit, slack(g, xy, (t + 1).astype(jnp.float32)),
                                             out),
                           lambda: out)
            return (g, xy, out), None

        init = (jnp.zeros((d, d)), jnp.zeros(d), jnp.zeros(len(ns)))
        return lax.scan(body, init, jnp.arange(int(ns[-1]), dtype=jnp.int32))[0][2]

    return np.asarray(jax.jit(jax.vmap(one))(jnp.arange(draws))), ns


def calibrate_c(k0s: Sequence[int] = K0S, d: int = 100, k: int = 5, horizon: int = 2**14,
                draws: int = 200, seed: int = CALIBRATION_SEED, quantile: float = 0.95,
                design: str = "rademacher", progress: bool = False, **kw) -> pd.DataFrame:
    """C at which w* is feasible at every solve after t0 in `quantile` of the draws, per k0 (one
    row per k0 and solve n: the per-solve quantile, and the draw-wise maximum in `c_all`)."""
    t0 = t0_of(d, k, horizon)
    rows = []
    for k0 in _progress(k0s, progress, "calibrating C"):
        ratios, ns = slack_ratios(d, k, k0, horizon, draws, seed, design, **kw)
        after = ns >= t0
        worst = ratios[:, after].max(axis=1)
        for j, n in enumerate(ns):
            rows.append({"k0": k0, "n": int(n), "solved": bool(after[j]),
                         "c_quantile": float(np.quantile(ratios[:, j], quantile)),
                         "c_all": float(np.quantile(worst, quantile)),
                         "quantile": quantile, "draws": draws, "d": d, "k": k, "t0": t0,
                         "design": design, "horizon": horizon})
    return pd.DataFrame(rows)


def _progress(items, progress: bool, desc: str):
    if not progress:
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc=desc)


def theorem_2_order(d: int, k: int, k0: int, t, delta: float = 0.1) -> np.ndarray:
    """[KKLP] Theorem 2's k^2 log(d / delta) (d / k0)^3 log T (order only, constant 1)."""
    return k**2 * math.log(d / delta) * (d / k0) ** 3 * np.log(np.asarray(t, np.float64))


def theorem_9_order(d: int, k: int, k0: int, t) -> np.ndarray:
    """[KKLP] Theorem 9's (d k^4 / k0)^(1/3) T^(2/3) with kappa = 1 (order only, constant 1)."""
    return (d * k**4 / k0) ** (1 / 3) * np.asarray(t, np.float64) ** (2 / 3)


def _w_star(problem, pp, seed: int, runs: int) -> np.ndarray:
    """(runs, d) the w* of each run of a study (drawn at the problem's init)."""
    init = jax.jit(jax.vmap(lambda r: problem.init(run_keys(seed, r)[PROBLEM_INIT], pp).w_star))
    return np.asarray(init(jnp.arange(runs)), np.float64)


def kale_dantzig(k0s: Sequence[int] = K0S, horizon: int = 2**14, runs: int = 100,
                 c_lambda: float | None = None, seed: int = 0, d: int = 100, k: int = 5,
                 designs: Sequence[str] = DESIGNS, references: Sequence[str] = REFERENCES,
                 lp_share: bool = True, progress: bool = False, **options) -> pd.DataFrame:
    """Curves (mean and 95% interval at each checkpoint) of R3 for `dantzig-poslr` (a k0 grid in
    one vmapped call) and the references with the same budgets, and ||w_t - w*||_1 for
    `dantzig-poslr`, on each design. c_lambda None: the registry default.

    Columns: learner, design, k0 (NaN for ogd-full), budget, n, metric, mean, ci_low, ci_high,
    bound (Theorem 2's order, dantzig-poslr's R3 rows), wall_s, lp_wall_s (the share study).
    """
    rows = []
    for design in designs:
        problem, pp = realizable_problem(d, k, design)
        w_star = _w_star(problem, pp, seed, runs)
        kw = dict(options)
        if c_lambda is not None:
            kw["c_lambda"] = c_lambda
        learner, params = make("dantzig-poslr", d=d, horizon=horizon, k=k, **kw)
        t_start = time.perf_counter()
        res = sweep(learner, problem, params, pp, {"k0": list(k0s)}, horizon=horizon,
                    n_runs=runs, seed=seed, track_stats=False, progress=progress)
        wall = time.perf_counter() - t_start
        no_lp = np.nan
        if lp_share:  # the same study, the LP never solved (t0 > T); compile included in both
            idle, _ = make("dantzig-poslr", d=d, horizon=horizon, k=k, t0=horizon + 1, **kw)
            t_start = time.perf_counter()
            sweep(idle, problem, params, pp, {"k0": list(k0s)}, horizon=horizon, n_runs=runs,
                  seed=seed, track_stats=False, progress=progress)
            no_lp = time.perf_counter() - t_start
        reg = res.regret_curves()["regret_wstar"]
        for g, k0 in enumerate(k0s):
            err = np.abs(res.curves["w"][g].astype(np.float64) - w_star[:, None, :]).sum(-1)
            base = {"learner": "dantzig-poslr", "design": design, "k0": k0, "budget": k0 + k,
                    "wall_s": wall, "no_lp_wall_s": no_lp,
                    "c_lambda": float(np.asarray(params.c_lambda)),
                    "t0": (learner.info or {})["t0"]}
            rows += _curve_rows(base, res.ckpts, reg[g], "regret_wstar",
                                theorem_2_order(d, k, k0, res.ckpts))
            rows += _curve_rows(base, res.ckpts, err, "l1_error")
            rows += _curve_rows(base, res.ckpts, res.curves["support"][g], "support")
        for name in references:
            learner, params = make(name, d=d, horizon=horizon, **(
                {"max_k": d} if name == "ogd-random-subset" else {}))
            grid = {"k": [k0 + k for k0 in k0s]} if name == "ogd-random-subset" else {}
            t_start = time.perf_counter()
            res = sweep(learner, problem, params, pp, grid, horizon=horizon, n_runs=runs,
                        seed=seed, track_stats=False, progress=progress)
            wall = time.perf_counter() - t_start
            reg = res.regret_curves()["regret_wstar"]
            for g in range(len(res.grid)):
                ref_k0 = k0s[g] if grid else np.nan
                base = {"learner": name, "design": design, "k0": ref_k0,
                        "budget": ref_k0 + k if grid else d, "wall_s": wall}
                rows += _curve_rows(base, res.ckpts, reg[g], "regret_wstar")
    df = pd.DataFrame(rows)
    df["horizon"], df["runs"], df["d"], df["k"] = horizon, runs, d, k
    return df


def _curve_rows(base: dict, ckpts, values, metric: str, bound=None) -> list[dict]:
    mean, _, half = mean_ci(np.asarray(values, np.float64), axis=0)
    return [{**base, "n": int(n), "metric": metric, "mean": mean[c], "ci_low": mean[c] - half[c],
             "ci_high": mean[c] + half[c],
             "bound": float(bound[c]) if bound is not None else np.nan}
            for c, n in enumerate(ckpts)]


def kale_greedy(horizons: Sequence[int] = GREEDY_HORIZONS, runs: int = 100, seed: int = 0,
                settings: Sequence[tuple[int, int, int]] = ((100, 5, 10), (20, 2, 4)),
                designs: Sequence[str] = DESIGNS, references: Sequence[str] = REFERENCES,
                progress: bool = False, **options) -> pd.DataFrame:
    """Final regret (mean and 95% interval) of `online-greedy` and the references at every T,
    per (d, k, k0) setting and design: R1 (exact) where C(d, k) is small, else R2. Columns:
    learner, design, d, k, k0, horizon, metric, regret, ci_low, ci_high, bound (Theorem 9's order,
    online-greedy rows), k1, batch, wall_s; `exponent` fitted per (learner, design, setting)."""
    rows = []
    for d, k, k0 in settings:
        for design in designs:
            problem, pp = agnostic_problem(d, k, design)
            for horizon in horizons:
                for name in ("online-greedy", *references):
                    if name == "online-greedy":
                        learner, params = make(name, d=d, horizon=horizon, k=k, k0=k0,
                                               **options)
                    elif name == "ogd-random-subset":
                        learner, params = make(name, d=d, horizon=horizon, k=k0, max_k=k0)
                    else:
                        learner, params = make(name, d=d, horizon=horizon)
                    t_start = time.perf_counter()
                    res = simulate(learner, problem, params, pp, horizon=horizon, n_runs=runs,
                                   seed=seed, comparator_k=k, progress=progress)
                    wall = time.perf_counter() - t_start
                    curves = res.regret_curves()
                    metric = "regret" if "regret" in curves else "regret_lb_greedy"
                    mean, _, half = mean_ci(curves[metric][0][:, -1])
                    info = learner.info or {}
                    rows.append({
                        "learner": name, "design": design, "d": d, "k": k, "k0": k0,
                        "budget": d if name == "ogd-full" else k0, "horizon": horizon,
                        "runs": runs, "metric": metric, "regret": mean, "ci_low": mean - half,
                        "ci_high": mean + half,
                        "bound": (float(theorem_9_order(d, k, k0, horizon))
                                  if name == "online-greedy" else np.nan),
                        "k1": info.get("k1", np.nan), "batch": info.get("batch", np.nan),
                        "wall_s": wall,
                    })
    df = pd.DataFrame(rows)
    for _, part in df.groupby(["learner", "design", "d"]):
        df.loc[part.index, "exponent"] = growth_exponent(part["horizon"], part["regret"])
    return df


def _band(ax, x, part, label, **kw):
    (line,) = ax.plot(x, part["mean"], label=label, **kw)
    ax.fill_between(x, part["ci_low"], part["ci_high"], color=line.get_color(), alpha=0.2,
                    linewidth=0)
    return line


def plot_dantzig(df: pd.DataFrame, path: str | Path | None = None, title: str = ""):
    """Left: R3 against t on a log t axis with a linear regret axis (log T growth is a straight
    line), RIP design solid, correlated design dotted. Middle: the same on log-log axes (RIP
    design) with Theorem 2's order term (dashed, constant 1). Right: ||w_t - w*||_1 of the
    committed dantzig-poslr predictor against t."""
    import matplotlib

    if path is not None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, (ax, ax_b, ax2) = plt.subplots(1, 3, figsize=(17, 5))
    colors: dict = {}
    reg = df[df["metric"] == "regret_wstar"]
    for (name, k0, design), part in reg.groupby(["learner", "k0", "design"], sort=False,
                                                dropna=False):
        key = (name, k0)
        label = f"{name}" + (f", k0={int(k0)}" if k0 == k0 else "") + (
            "" if design == "rademacher" else f" ({design})")
        line = _band(ax, part["n"], part, label, color=colors.get(key),
                     linestyle="-" if design == "rademacher" else ":")
        colors[key] = line.get_color()
        if design != "rademacher":
            continue
        _band(ax_b, part["n"], part, label, color=line.get_color())
        if name == "dantzig-poslr":
            draw_bound(ax_b, part["n"][part["n"] > 1], part["bound"][part["n"] > 1],
                       f"Thm 2, k0={int(k0)}", color=line.get_color(), order_only=True)
    ax.set_xscale("log")
    ax.set_xlabel("round t (log scale)")
    ax.set_ylabel("regret R3 against w*")
    ax.set_title(title, fontsize=9)
    ax_b.set_xscale("log")
    ax_b.set_yscale("log")
    ax_b.set_ylim(bottom=0.1)
    ax_b.set_xlabel("round t")
    ax_b.set_ylabel("regret R3 (log)")
    ax_b.set_title("Rademacher design, with Theorem 2's order term", fontsize=9)
    for (k0, design), part in df[df["metric"] == "l1_error"].groupby(["k0", "design"],
                                                                     sort=False):
        _band(ax2, part["n"], part, f"k0={int(k0)} ({design})", color=colors.get(
            ("dantzig-poslr", k0)), linestyle="-" if design == "rademacher" else ":")
    ax2.set_xscale("log")
    ax2.set_xlabel("round t")
    ax2.set_ylabel("||w_t - w*||_1 (committed, top-k)")
    ax2.set_title("dantzig-poslr estimation error, 95% bands", fontsize=9)
    finish_figure(fig, ax2, None)
    finish_figure(fig, ax_b, None)
    return finish_figure(fig, ax, path)


def plot_greedy(df: pd.DataFrame, path: str | Path | None = None, title: str = ""):
    """Final regret against T (log-log) per learner, setting and design with 95% bands, Theorem 9's
    order for online-greedy (dashed) and a T^(2/3) guide through its last point."""
    import matplotlib

    if path is not None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    settings = list(df.groupby(["d", "k", "k0"], sort=False).groups)
    fig, axes = plt.subplots(1, len(settings), figsize=(6.5 * len(settings), 4.8), squeeze=False)
    for ax, (d, k, k0) in zip(axes[0], settings):
        sub = df[(df["d"] == d) & (df["k"] == k) & (df["k0"] == k0)]
        lowest = np.inf
        for (name, design), part in sub.groupby(["learner", "design"], sort=False):
            part = part.sort_values("horizon")
            (line,) = ax.plot(part["horizon"], part["regret"], marker="o",
                              linestyle="-" if design == "rademacher" else ":",
                              label=f"{name} ({design}, slope {part['exponent'].iloc[0]:.2f})")
            ax.fill_between(part["horizon"], part["ci_low"], part["ci_high"],
                            color=line.get_color(), alpha=0.2, linewidth=0)
            lowest = min(lowest, part["ci_low"].min())
            if name == "online-greedy" and design == "rademacher":
                draw_bound(ax, part["horizon"], part["bound"], "Thm 9",
                           color=line.get_color(), order_only=True)
                t = part["horizon"].to_numpy(float)
                ax.plot(t, part["regret"].iloc[-1] * (t / t[-1]) ** (2 / 3), color="black",
                        linestyle=":", linewidth=0.8, label="T^(2/3) guide")
        ax.set_xscale("log")
        ax.set_yscale("log" if lowest > 0 else "symlog")
        ax.set_xlabel("horizon T (B, k1, eta set from T)")
        ax.set_ylabel(f"{sub['metric'].iloc[0]} at T")
        ax.set_title(f"{title} d={d}, k={k}, k0={k0}", fontsize=9)
        finish_figure(fig, ax, None)
    return finish_figure(fig, ax, path)  # the layout of every panel, and the file


__all__ = ["calibrate_c", "kale_dantzig", "kale_greedy", "plot_dantzig", "plot_greedy",
           "slack_ratios", "theorem_2_order", "theorem_9_order"]


# ----------------------------------------------------------------------------- experiments


def _run_calibrate(a: ExperimentArgs) -> pd.DataFrame:
    df = calibrate_c(horizon=2**10 if a.quick else 2**14, draws=a.runs or 200,
                     seed=CALIBRATION_SEED + a.seed, progress=a.progress)
    write_table_and_figure(a.out, "kale-calibrate", df)
    return df


def _run_dantzig(a: ExperimentArgs) -> pd.DataFrame:
    runs = a.runs or (10 if a.quick else 100)
    df = kale_dantzig(horizon=2**10 if a.quick else 2**14, runs=runs, seed=a.seed,
                      progress=a.progress, lp_share=not a.quick, **a.options)
    write_table_and_figure(a.out, "kale-dantzig", df, lambda p, t: plot_dantzig(df, p, t),
                           f"E4 (d=100, k=5, sigma=0.1): {runs} runs, 95% bands; dotted: "
                           "correlated design")
    return df


def _run_greedy(a: ExperimentArgs) -> pd.DataFrame:
    runs = a.runs or (10 if a.quick else 50)
    quick: dict[str, Any] = ({"horizons": (1_000, 3_000), "designs": ("rademacher",)}
                             if a.quick else {})
    df = kale_greedy(runs=runs, seed=a.seed, progress=a.progress, **quick, **a.options)
    write_table_and_figure(a.out, "kale-greedy", df, lambda p, t: plot_greedy(df, p, t),
                           f"agnostic (10% flips): {runs} runs,")
    return df


KALE_CALIBRATE = ExperimentSpec(
    "kale-calibrate", "the constant C of dantzig-poslr's lam_n: w* feasible at every solve in 95% "
    "of E4 draws, per k0", _run_calibrate, sizes="200 draws, T = 2^14; quick: T = 2^10",
    files=("kale-calibrate.csv",), docs="docs/kale-results.md")
KALE_DANTZIG = ExperimentSpec(
    "kale-dantzig", "dantzig-poslr regret vs log T and ||w_t - w*||_1 vs t, k0 in {10, 20, 50}, "
    "RIP and correlated designs, LP share of the runtime (E4)", _run_dantzig,
    sizes="T = 2^14, 100 runs; quick: T = 2^10, 10 runs, no LP share",
    files=("kale-dantzig.csv", "kale-dantzig.png"), docs="docs/kale-results.md",
    learners=("dantzig-poslr",), sets_itself=("k", "k0", "horizon"))
KALE_GREEDY = ExperimentSpec(
    "kale-greedy", "online-greedy regret vs T (T^(2/3), Theorem 9) on agnostic streams, "
    "d = 100 (R2) and d = 20 (R1) (E4)", _run_greedy,
    sizes=("T = 1e3 ... 3e4, 50 runs, two designs; quick: T = 1,000 and 3,000, 10 runs, the RIP "
           "design"),
    files=("kale-greedy.csv", "kale-greedy.png"), docs="docs/kale-results.md",
    learners=("online-greedy",), sets_itself=("k", "k0", "horizon"))
