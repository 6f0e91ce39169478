"""Labelled results: summary tables, regret curves with confidence bands, files in standard formats.

* `summary_frame`: one row per (learner, grid point, regret quantity): mean, standard error and the
  95% Student-t interval of the final value over runs.
* `curves_frame`: the same statistics at every checkpoint (long format, ready for plotting).
* `compare_frame`: paired comparisons of learners and grid points on the same runs (common
  random numbers) with a reference, Holm-corrected (`oslr.stats`).
* `save_study`: writes `summary.csv`, `summary.json`, `curves.csv`, `runs.csv` (final values per
  run), `runs.parquet` (every run at every checkpoint), `compare.csv` (when asked) and
  `regret.png` into a folder; all open with pandas (the CSVs with any spreadsheet).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np
import pandas as pd

from oslr import atomic
from oslr.stats import mean_ci, t_quantile  # noqa: F401  (re-exported)

if TYPE_CHECKING:  # the results are read, not built, here: no import at run time
    from oslr.result import SimResult

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


def entry_name(result: SimResult, point: dict) -> str:
    """How a learner x grid point is named in comparisons: the learner, with its grid point's
    label in brackets when the result has several points."""
    if len(result.grid) == 1:
        return result.learner
    return f"{result.learner} [{params_label(point)}]"


def per_run_finals(results: Sequence[SimResult], metric: str | None = None
                   ) -> tuple[dict[str, np.ndarray], str]:
    """(entry name -> (runs,) final value of `metric`, the metric) over every learner x grid
    point of `results` (default metric: the first result's primary regret). Refuses results
    that did not run the same runs of the same seed (no common random numbers to pair)."""
    if not results:
        raise ValueError("no results to compare.")
    runs = {(r.seed, r.run_offset, r.n_runs, r.horizon) for r in results}
    if len(runs) != 1:
        raise ValueError("paired comparisons need the same runs: every result must have the "
                         f"same seed, run_offset, runs and horizon; got {sorted(runs)}.")
    metric = metric or _primary(results[0], results[0].regret_curves())
    out: dict[str, np.ndarray] = {}
    for res in results:
        curves = res.regret_curves()
        if metric not in curves:
            raise ValueError(f"{res.learner} has no {metric!r} to compare (it has "
                             f"{sorted(curves)}).")
        for g, point in enumerate(res.grid):
            name = entry_name(res, point)
            if name in out:
                raise ValueError(f"two entries are named {name!r}; compare distinct learners or "
                                 "grid points.")
            out[name] = np.asarray(curves[metric][g, :, -1], np.float64)
    return out, metric


def _reference(finals: dict, reference: str) -> str:
    """The entry `reference` names: "best", an entry's name, or a learner with one entry."""
    if reference == "best" or reference in finals:
        return reference
    matches = [n for n in finals if n.split(" [")[0] == reference]
    if len(matches) != 1:
        raise ValueError(f"--compare-to {reference!r} names none of the entries {list(finals)} "
                         "(or several); give one of them or 'best'.")
    return matches[0]


def compare_frame(results: Sequence[SimResult], reference: str = "best",
                  metric: str | None = None, level: float = 0.95) -> pd.DataFrame:
    """Paired comparison of every learner x grid point of `results` with `reference` ("best":
    the lowest mean final regret, or an entry's name, `entry_name`) on the per-run final regret
    (common random numbers: run r of every entry saw the same stream): the mean difference
    (entry minus reference), its t interval, the runs where the entry is ahead or behind, the
    paired t test's p-value and Holm's adjustment over the table's comparisons, and a verdict
    ("better", "worse", "indistinguishable" at family-wise 1 - level). See `oslr.stats`."""
    from oslr.stats import compare

    finals, metric = per_run_finals(results, metric)
    reference = _reference(finals, reference)
    table = compare(finals, reference=reference, lower_is_better=True, level=level)
    table.insert(1, "metric", metric)
    return table


def sequential_frame(results: Sequence[SimResult], look: int, reference: str = "best",
                     metric: str | None = None, level: float = 0.95) -> pd.DataFrame:
    """Look `look` of a study that adds runs until its comparisons are decided (`oslr run
    --until separated`): `oslr.stats.sequential_compare` on the per-run final regrets of every
    learner x grid point of `results` (reference: "best" or an entry's name)."""
    from oslr.stats import sequential_compare

    finals, metric = per_run_finals(results, metric)
    table = sequential_compare(finals, look, _reference(finals, reference), level)
    table.insert(1, "metric", metric)
    return table


def summary_frame(results: Sequence[SimResult], compare_to: str | None = None) -> pd.DataFrame:
    """Final-value statistics per learner x grid point x regret quantity; with `compare_to`,
    the primary rows also carry the paired comparison with that entry (`compare_frame`:
    diff, diff_low, diff_high, p_holm, verdict)."""
    summary = _summary_rows(results)
    if compare_to is None:
        return summary
    table = compare_frame(results, compare_to).set_index("name")
    names = [entry_name(res, point) for res in results for point in res.grid]
    primary = summary.index[summary["primary"]]
    for col in ("reference", "diff", "diff_low", "diff_high", "p_holm", "verdict"):
        summary[col] = None if col in ("reference", "verdict") else np.nan
        summary.loc[primary, col] = table.loc[names, col].to_numpy()
    return summary


def _summary_rows(results: Sequence[SimResult]) -> pd.DataFrame:
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


def runs_curves_frame(results: Sequence[SimResult]) -> pd.DataFrame:
    """Every run's regret at every checkpoint and its other running sums at the horizon (long
    format: learner, params, metric, run, t, value; run is the seed's run index,
    run_offset + r; the sums as metric "sum_NAME" at t = T: loss, reward, accepted, queries,
    ..., so that a CTR or a loss is recomputed per run too), for `runs.parquet`: any table or
    comparison is recomputed from it without a rerun."""
    frames = []
    for res in results:
        for name, c in res.regret_curves().items():
            for g, point in enumerate(res.grid):
                n_runs, n_ck = c[g].shape
                frames.append(pd.DataFrame({
                    "learner": res.learner, "params": params_label(point), "metric": name,
                    "run": np.repeat(np.arange(n_runs) + res.run_offset, n_ck),
                    "t": np.tile(res.ckpts, n_runs), "value": c[g].reshape(-1)}))
        for name, v in res.per_run_sums().items():
            for g, point in enumerate(res.grid):
                frames.append(pd.DataFrame({
                    "learner": res.learner, "params": params_label(point),
                    "metric": f"sum_{name}", "run": np.arange(v.shape[1]) + res.run_offset,
                    "t": res.horizon, "value": v[g].astype(np.float64)}))
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


#: resolution of every saved figure
FIGURE_DPI = 120


def finish_figure(fig, ax, path: str | Path | None = None):
    """Grid, legend, tight layout, and save to `path` when given; returns `fig`."""
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    if path is not None:  # replaced whole (oslr.atomic), in the format of its suffix
        atomic.save_figure_atomic(fig, path, FIGURE_DPI)
    return fig


def save_study(results: Sequence[SimResult], out_dir: str | Path, config: dict | None = None,
               plot: bool = True, axes: str = "loglog",
               compare_to: str | None = None) -> dict[str, Path]:
    """Write summary.csv/json, curves.csv, runs.csv (final regret per run), runs.parquet (every
    run's regret at every checkpoint), config.json, regret.png and, with `compare_to`,
    compare.csv (`compare_frame`) to `out_dir`, each replaced whole (`oslr.atomic`: a crash or
    a power loss leaves the old file or the whole new one), config.json last.

    Returns:
      name -> path of every file written. The plot is skipped (with a note in the returned dict)
      when matplotlib is not installed.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}

    def put(name: str, frame, **kwargs) -> None:
        atomic.write_frame_atomic(out / name, frame, **kwargs)
        files[name] = out / name

    summary = summary_frame(results, compare_to=compare_to)
    put("summary.csv", summary)
    put("summary.json", summary, orient="records", indent=1)
    put("curves.csv", curves_frame(results))
    put("runs.csv", runs_frame(results))
    put("runs.parquet", runs_curves_frame(results))
    if compare_to is not None:
        put("compare.csv", compare_frame(results, compare_to))
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
    from oslr.provenance import stamp

    meta = {**dict(config or {}), **stamp()}
    meta["results"] = [
        {"learner": r.learner, "problem": r.problem, "family": r.family, "horizon": r.horizon,
         "n_runs": r.n_runs, "seed": r.seed, "grid": r.grid, "comparator_k": r.comparator_k,
         "comparator_radius": r.comparator_radius, "info": r.info}
        for r in results
    ]
    # config.json last: its presence says the study's files are all on disk (each was flushed
    # and renamed into place before it)
    atomic.write_text_atomic(out / "config.json", json.dumps(meta, indent=1, default=str))
    files["config.json"] = out / "config.json"
    return files
