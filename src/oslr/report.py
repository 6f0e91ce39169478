"""Labelled results: summary tables, regret curves with confidence bands, files in standard formats.

* `summary_frame`: one row per (learner, grid point, regret quantity): mean, standard error and the
  95% Student-t interval of the final value over runs.
* `curves_frame`: the same statistics at every checkpoint (long format, ready for plotting).
* `save_study`: writes `summary.csv`, `summary.json`, `curves.csv`, `runs.csv` (final values per
  run) and `regret.png` into a folder; all open with pandas / any spreadsheet.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # the results are read, not built, here: no import at run time
    from oslr.result import SimResult

# two-sided 97.5% Student-t quantiles for df = 1..30; 1.96 beyond
_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
         2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
         2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t_quantile(df: int) -> float:
    """97.5% quantile of Student's t with `df` degrees of freedom (normal for df > 30)."""
    if df < 1:
        return float("nan")
    return _T975[df - 1] if df <= 30 else 1.96


def mean_ci(values: np.ndarray, axis: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, standard error and half-width of the 95% t interval along `axis` (NaN, of the mean's
    type, for a single run: no interval, written as null in JSON)."""
    v = np.asarray(values, np.float64)
    n = v.shape[axis]
    mean = v.mean(axis=axis)
    sem = v.std(axis=axis, ddof=1) / np.sqrt(n) if n > 1 else mean * np.nan
    return mean, sem, t_quantile(n - 1) * sem


def params_label(point: dict) -> str:
    """'k=3, eta=0.1' style label of a grid point ('default' when empty)."""
    if not point:
        return "default"
    return ", ".join(f"{k}={_fmt(v)}" for k, v in point.items())


def _fmt(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def _primary(result: SimResult, curves: dict) -> str:
    for name in ("regret", "regret_lb_greedy", "pseudo_regret", "regret_wstar"):
        if name in curves:
            return name
    raise ValueError("no regret quantity available")


def summary_frame(results: Sequence[SimResult]) -> pd.DataFrame:
    """Final-value statistics per learner x grid point x regret quantity."""
    rows = []
    for res in results:
        curves = res.regret_curves()
        primary = _primary(res, curves)
        perf = "loss" if "loss" in res.final else "reward"
        for g, point in enumerate(res.grid):
            base = {"learner": res.learner, "problem": res.problem, "params": params_label(point),
                    **{f"param_{k}": v for k, v in point.items()}}
            p_mean, _, p_half = mean_ci(res.final[perf][g])
            for name, c in curves.items():
                mean, sem, half = mean_ci(c[g, :, -1])
                rows.append({
                    **base, "metric": name, "primary": name == primary,
                    "horizon": res.horizon, "n_runs": res.n_runs,
                    "mean": mean, "sem": sem, "ci_low": mean - half, "ci_high": mean + half,
                    f"cum_{perf}": p_mean, f"cum_{perf}_ci": p_half,
                    "queries_per_round": float(np.mean(res.final["queries"][g]) / res.horizon)
                    if "queries" in res.final else np.nan,
                    "over_budget_rounds": int(np.sum(res.final["over_budget"][g]))
                    if "over_budget" in res.final else 0,
                })
    return pd.DataFrame(rows)


def curves_frame(results: Sequence[SimResult]) -> pd.DataFrame:
    """Mean and 95% band of every regret quantity at every checkpoint (long format)."""
    frames = []
    for res in results:
        for name, c in res.regret_curves().items():
            for g, point in enumerate(res.grid):
                mean, sem, half = mean_ci(c[g], axis=0)
                frames.append(pd.DataFrame({
                    "learner": res.learner, "problem": res.problem, "params": params_label(point),
                    "metric": name, "t": res.ckpts, "mean": mean, "sem": sem,
                    "ci_low": mean - half, "ci_high": mean + half,
                }))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def runs_frame(results: Sequence[SimResult]) -> pd.DataFrame:
    """Final regret of every run (one row per learner x grid point x run x quantity)."""
    rows = []
    for res in results:
        for name, c in res.regret_curves().items():
            for g, point in enumerate(res.grid):
                for r in range(res.n_runs):
                    rows.append({"learner": res.learner, "params": params_label(point),
                                 "metric": name, "run": r, "final": float(c[g, r, -1])})
    return pd.DataFrame(rows)


#: Axis scales of `plot_regret`.
AXES = ("loglog", "linear", "logx")


#: axis labels of the regret quantities (`oslr/regret.py`)
METRIC_LABELS = {
    "regret": "regret against the best k-sparse comparator in hindsight",
    "regret_wstar": "regret against the true w*",
    "regret_lb_greedy": "regret against a greedy k-sparse comparator (lower bound)",
    "pseudo_regret": "pseudo-regret (best arm's mean minus the pulled arm's, summed)",
}


def plot_regret(results: Sequence[SimResult], path: str | Path | None = None, ax=None,
                metric: str | None = None, axes: str = "loglog"):
    """Plot mean regret against rounds with 95% confidence bands, one line per learner x params.

    Args:
      results: SimResults (any families; each uses its primary regret quantity unless `metric`).
      path: file to save (PNG/PDF); None keeps the figure open.
      ax: matplotlib axes to draw on (a new figure if None).
      metric: regret quantity to plot (default: the primary one of each result).
      axes: "loglog" (default: a regret growing like T^a is a line of slope a, so sqrt(T) and
        linear regret read apart; a y axis that must show values <= 0 is symmetric-log),
        "linear", or "logx" (log rounds, linear regret: a linear regret then looks exponential).

    Returns:
      The matplotlib figure.
    """
    import matplotlib

    if path is not None and ax is None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    if axes not in AXES:
        raise ValueError(f"axes={axes!r}; choose one of {AXES}.")
    fig, ax = (plt.subplots(figsize=(7, 4.5)) if ax is None else (ax.figure, ax))
    labels = []
    lowest = np.inf
    for res in results:
        curves = res.regret_curves()
        name = metric or _primary(res, curves)
        if name not in curves:
            continue
        labels.append(name)
        for g, point in enumerate(res.grid):
            mean, _, half = mean_ci(curves[name][g], axis=0)
            label = f"{res.learner} ({params_label(point)})" if point else res.learner
            lowest = min(lowest, float(np.min(mean - half)))
            (line,) = ax.plot(res.ckpts, mean, label=label)
            ax.fill_between(res.ckpts, mean - half, mean + half, color=line.get_color(),
                            alpha=0.2, linewidth=0)
    if axes in ("loglog", "logx"):
        ax.set_xscale("log")
    if axes == "loglog":
        if lowest > 0:
            ax.set_yscale("log")
        else:
            ax.set_yscale("symlog", linthresh=1.0)
    ax.set_xlabel("round t")
    ax.set_ylabel(" / ".join(METRIC_LABELS.get(n, n) for n in sorted(set(labels))) or "regret")
    ax.set_title(plot_title(results), fontsize=10)
    return finish_figure(fig, ax, path)


def plot_title(results: Sequence[SimResult]) -> str:
    """'sparse-linear (d=16, k=3), T=2000: mean over 100 runs, 95% bands' for a set of results."""
    if not results:
        return ""
    first = results[0]
    facts = [f"d={first.info['d']}"] if "d" in first.info else []
    ks = sorted({r.comparator_k for r in results if r.comparator_k is not None})
    if ks:
        facts.append("k=" + "/".join(map(str, ks)))
    horizons = "/".join(str(h) for h in sorted({r.horizon for r in results}))
    n_runs = "/".join(str(n) for n in sorted({r.n_runs for r in results}))
    where = f" ({', '.join(facts)})" if facts else ""
    return f"{first.problem}{where}, T={horizons}: mean over {n_runs} runs, 95% bands"


def growth_exponent(t, values, t_min: float | None = None) -> float:
    """Least-squares slope a of log(values) against log(t), the empirical exponent of a curve
    growing like t^a (points with t >= t_min and values > 0; NaN with fewer than two)."""
    t = np.asarray(t, np.float64)
    v = np.asarray(values, np.float64)
    keep = (v > 0) & (t > 0) & (t >= (t_min or 0))
    if keep.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(t[keep]), np.log(v[keep]), 1)[0])


def draw_bound(ax, t, bound, label: str | None, color=None, order_only: bool = False,
               rescale: bool = True):
    """Draw a theorem's bound over a regret curve: dashed, labelled with the theorem, and marked
    "order only" when the paper states O(.) without constants (the line is then drawn with
    constant 1). label None: no legend entry. rescale False: the axes keep the limits the data
    set (a bound orders of magnitude above the curves then runs off the top instead of flattening
    them). Returns the line."""
    text = "_nolegend_" if label is None else (
        f"{label} (order only, constant 1)" if order_only else label)
    if rescale:
        (line,) = ax.plot(np.asarray(t), np.asarray(bound), linestyle="--", color=color,
                          label=text)
        return line
    from matplotlib.lines import Line2D

    line = Line2D(np.asarray(t), np.asarray(bound), linestyle="--", color=color, label=text)
    ax.add_artist(line)  # not ax.add_line: the data limits (and so the autoscale) ignore it
    line.set_clip_path(ax.patch)
    return line


def finish_figure(fig, ax, path: str | Path | None = None):
    """Grid, legend, tight layout, and save to `path` when given; returns `fig`."""
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig


def save_study(results: Sequence[SimResult], out_dir: str | Path, config: dict | None = None,
               plot: bool = True, axes: str = "loglog") -> dict[str, Path]:
    """Write summary.csv/json, curves.csv, runs.csv, config.json and regret.png to `out_dir`.

    Returns:
      name -> path of every file written. The plot is skipped (with a note in the returned dict)
      when matplotlib is not installed.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}
    summary = summary_frame(results)
    summary.to_csv(out / "summary.csv", index=False)
    files["summary.csv"] = out / "summary.csv"
    (out / "summary.json").write_text(summary.to_json(orient="records", indent=1))
    files["summary.json"] = out / "summary.json"
    curves_frame(results).to_csv(out / "curves.csv", index=False)
    files["curves.csv"] = out / "curves.csv"
    runs_frame(results).to_csv(out / "runs.csv", index=False)
    files["runs.csv"] = out / "runs.csv"
    from oslr.provenance import stamp

    meta = {**dict(config or {}), **stamp()}
    meta["results"] = [
        {"learner": r.learner, "problem": r.problem, "family": r.family, "horizon": r.horizon,
         "n_runs": r.n_runs, "seed": r.seed, "grid": r.grid, "comparator_k": r.comparator_k,
         "comparator_radius": r.comparator_radius, "info": r.info}
        for r in results
    ]
    (out / "config.json").write_text(json.dumps(meta, indent=1, default=str))
    files["config.json"] = out / "config.json"
    if plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            files["regret.png (skipped: pip install 'oslr[plot]')"] = out
        else:
            import matplotlib.pyplot as plt

            fig = plot_regret(results, out / "regret.png", axes=axes)
            plt.close(fig)
            files["regret.png"] = out / "regret.png"
    return files
