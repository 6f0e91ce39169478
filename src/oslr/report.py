"""Labelled results as files and figures: regret curves with confidence bands, a study's folder.

The tables (`summary_frame`, `curves_frame`, `compare_frame`, ...) live in `oslr.frames` and are
re-exported here.

* `plot_regret`: mean regret against rounds with 95% bands, one line per learner x params.
* `save_study`: writes `summary.csv`, `summary.json`, `curves.csv`, `runs.csv` (final values per
  run), `runs.parquet` (every run at every checkpoint), `compare.csv` (when asked) and
  `regret.png` into a folder; all open with pandas (the CSVs with any spreadsheet).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np

from oslr import atomic, folder
from oslr.frames import (  # noqa: F401  (re-exported: the tables of a result)
    compare_frame,
    curves_frame,
    entry_name,
    params_label,
    per_run_finals,
    primary_metric,
    runs_curves_frame,
    runs_curves_pieces,
    runs_frame,
    runs_pieces,
    sequential_frame,
    summary_frame,
)
from oslr.stats import mean_ci, t_quantile  # noqa: F401  (re-exported)

if TYPE_CHECKING:  # the results are read, not built, here: no import at run time
    from oslr.result import SimResult

#: Axis scales of `plot_regret`.
AXES = ("loglog", "linear", "logx")
#: the bands of a regret-against-rounds plot: the t interval at each checkpoint, or a band that
#: covers the whole mean curve at once (`oslr.stats.simultaneous_band`)
BANDS = ("pointwise", "simultaneous")


#: axis labels of the regret quantities (`oslr/regret.py`)
METRIC_LABELS = {
    "regret": "regret against the best k-sparse comparator in hindsight",
    "regret_wstar": "regret against the true w*",
    "regret_lb_greedy": "regret against a greedy k-sparse comparator (lower bound)",
    "pseudo_regret": "pseudo-regret (best arm's mean minus the pulled arm's, summed)",
}


def check_band(band: str) -> None:
    """Refuse a band kind other than `BANDS`, before anything is drawn."""
    if band not in BANDS:
        raise ValueError(f"band={band!r}; choose one of {BANDS}.")


def curve_band(values, band: str = "pointwise") -> tuple[np.ndarray, np.ndarray]:
    """(mean, half-width), each (C,), of (R, C) per-run curves: the 95% t interval at each
    checkpoint ("pointwise") or the 95% bootstrap-t max band covering the whole curve at once
    ("simultaneous"; one run: no band, NaN)."""
    check_band(band)
    values = np.asarray(values, np.float64)
    if band == "simultaneous" and values.shape[0] > 1:
        from oslr.stats import simultaneous_band

        return simultaneous_band(values)
    mean, _, half = mean_ci(values, axis=0)
    return mean, half


def plot_regret(results: Sequence[SimResult], path: str | Path | None = None, ax=None,
                metric: str | None = None, axes: str = "loglog", band: str = "pointwise"):
    """Plot mean regret against rounds with 95% confidence bands, one line per learner x params.

    Args:
      results: SimResults (any families; each uses its primary regret quantity unless `metric`),
        or one SimResult.
      path: file to save (PNG/PDF); None keeps the figure open.
      ax: matplotlib axes to draw on (a new figure if None).
      metric: regret quantity to plot (default: the primary one of each result).
      axes: "loglog" (default: a regret growing like T^a is a line of slope a, so sqrt(T) and
        linear regret read apart; a y axis that must show values <= 0 is symmetric-log),
        "linear", or "logx" (log rounds, linear regret: a linear regret then looks exponential).
      band: "pointwise" (95% t interval at each checkpoint) or "simultaneous" (a 95% band that
        covers each whole mean curve at once, `oslr.stats.simultaneous_band`).

    Returns:
      The matplotlib figure.
    """
    import matplotlib

    if path is not None and ax is None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    if axes not in AXES:
        raise ValueError(f"axes={axes!r}; choose one of {AXES}.")
    check_band(band)
    if hasattr(results, "regret_curves"):  # one SimResult: its grid points' lines
        results = [results]  # type: ignore[list-item]
    fig, ax = (plt.subplots(figsize=(7, 4.5)) if ax is None else (ax.figure, ax))
    labels = []
    lowest = np.inf
    for res in results:
        curves = res.regret_curves()
        name = metric or primary_metric(res, curves)
        if name not in curves:
            continue
        labels.append(name)
        for g, point in enumerate(res.grid):
            mean, half = curve_band(curves[name][g], band)
            label = f"{res.learner} ({params_label(point)})" if point else res.learner
            lowest = min(lowest, float(np.min(mean - half)))
            (line,) = ax.plot(res.ckpts, mean, label=label)
            ax.fill_between(res.ckpts, mean - half, mean + half, color=line.get_color(),
                            alpha=0.2, linewidth=0)
    set_regret_scales(ax, axes, lowest)
    ax.set_xlabel("round t")
    ax.set_ylabel(axis_label(" / ".join(METRIC_LABELS.get(n, n) for n in sorted(set(labels)))
                             or "regret"), fontsize=8)
    ax.set_title(plot_title(results, band), fontsize=10)
    return finish_figure(fig, ax, path)


def set_regret_scales(ax, axes: str, lowest: float) -> None:
    """The scales of a regret-against-rounds plot (`AXES`): log rounds for "loglog" and "logx";
    for "loglog" a log y axis, or a symmetric-log one when the lowest band edge is <= 0."""
    if axes in ("loglog", "logx"):
        ax.set_xscale("log")
    if axes == "loglog":
        if lowest > 0:
            ax.set_yscale("log")
        else:
            ax.set_yscale("symlog", linthresh=1.0)


def axis_label(text: str, width: int = 42) -> str:
    """`text` wrapped into lines of at most `width` characters, so that a long regret label fits
    the height of a 4.5-inch axis at 8 points instead of running off both ends."""
    import textwrap

    return "\n".join(textwrap.wrap(text, width)) or text


def plot_title(results: Sequence[SimResult], band: str = "pointwise") -> str:
    """'sparse-linear (d=16, k=3), T=2000: mean over 100 runs, 95% bands' for a set of results
    ('95% simultaneous bands' for `band` "simultaneous")."""
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
    kind = "simultaneous " if band == "simultaneous" else ""
    return f"{first.problem}{where}, T={horizons}: mean over {n_runs} runs, 95% {kind}bands"


def growth_exponent(t, values, t_min: float | None = None) -> float:
    """Least-squares slope a of log(values) against log(t), the empirical exponent of a curve
    growing like t^a (points with t >= t_min and values > 0; NaN with fewer than two)."""
    return float(_loglog_slopes(t, np.asarray(values, np.float64)[None, :], t_min)[0])


def _loglog_slopes(t, values, t_min: float | None) -> np.ndarray:
    """(B,) least-squares slopes of log(values[b]) on log(t) over the points with t >= t_min,
    t > 0 and values > 0, for (B, C) `values` at once; NaN for a row with fewer than two."""
    t = np.asarray(t, np.float64)
    keep = ((values > 0) & (t > 0) & (t >= (t_min or 0))).astype(np.float64)
    n = keep.sum(axis=1)
    x = np.log(np.where(t > 0, t, 1.0))
    y = np.log(np.where(values > 0, values, 1.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        xm = (keep * x).sum(axis=1) / n
        ym = (keep * y).sum(axis=1) / n
        dx = x - xm[:, None]
        slopes = (keep * dx * (y - ym[:, None])).sum(axis=1) / (keep * dx * dx).sum(axis=1)
    return np.where(n >= 2, slopes, np.nan)


def growth_exponent_interval(t, runs, t_min: float | None = None, level: float = 0.95,
                             n_boot: int = 2000, seed: int = 0) -> tuple[float, float]:
    """Bootstrap percentile interval of `growth_exponent` of the mean curve: the runs (rows of
    `runs`, (R, C) values at the C rounds `t`) resampled `n_boot` times with replacement, the
    exponent of each resample's mean curve fitted as `growth_exponent` does (t >= t_min, mean >
    0), and the central `level` share of those exponents. Seeded; NaN for fewer than 2 runs
    or where fewer than two points of a resample's mean curve are positive."""
    t = np.asarray(t, np.float64)
    runs = np.asarray(runs, np.float64)
    if runs.ndim != 2 or runs.shape[0] < 2:
        return float("nan"), float("nan")
    idx = np.random.default_rng(seed).integers(0, runs.shape[0], size=(n_boot, runs.shape[0]))
    slopes = _loglog_slopes(t, runs[idx].mean(axis=1), t_min)  # each resample's mean curve
    if np.isnan(slopes).any():
        return float("nan"), float("nan")
    low, high = np.quantile(slopes, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


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


def finish_figure(fig, ax, path: str | Path | None = None, legend_outside: bool = False):
    """Grid, legend (right of the axes with `legend_outside`, where a long one would cover
    lines), tight layout, and save to `path` when given; returns `fig`."""
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:  # (nothing labelled: no empty legend, no warning)
        where = ({"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "borderaxespad": 0.0}
                 if legend_outside else {})
        ax.legend(fontsize=8, **where)
    fig.tight_layout()
    if path is not None:  # replaced whole (oslr.atomic), in the format of its suffix
        atomic.save_figure_atomic(fig, path, FIGURE_DPI)
    return fig


def save_study(results: Sequence[SimResult], out_dir: str | Path, config: dict | None = None,
               plot: bool = True, axes: str = "loglog",
               compare_to: str | None = None, until=None) -> dict[str, Path]:
    """Write summary.csv/json, curves.csv, runs.csv (final regret per run), runs.parquet (every
    run's regret at every checkpoint), regret.png, with `compare_to` compare.csv
    (`compare_frame`), with `until` (the frame of `sequential_frame`) until.csv, then
    manifest.json and config.json (`oslr.folder.finish`) to `out_dir`, each replaced whole
    (`oslr.atomic`: a crash or a power loss leaves the old file or the whole new one),
    config.json last.

    Returns:
      name -> path of every file written. The plot is skipped (with a note in the returned dict)
      when matplotlib is not installed.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}
    rows: dict[str, int] = {}  # the tables' rows, for the manifest

    def put(name: str, frame, **kwargs) -> None:
        atomic.write_frame_atomic(out / name, frame, **kwargs)
        files[name] = out / name
        rows[name] = len(frame)

    summary = summary_frame(results, compare_to=compare_to)
    put("summary.csv", summary)
    put("summary.json", summary, orient="records", indent=1)
    put("curves.csv", curves_frame(results))
    for name, pieces in (("runs.csv", runs_pieces), ("runs.parquet", runs_curves_pieces)):
        rows[name] = atomic.write_frames_atomic(out / name, pieces(results))  # a piece at a time
        files[name] = out / name
    if compare_to is not None:
        put("compare.csv", compare_frame(results, compare_to))
    if until is not None:
        put("until.csv", until)
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
    # and renamed into place before it), each recorded in manifest.json
    written = [name for name, path in files.items() if path.parent == out and path != out]
    folder.finish(out, written, meta, rows)
    files[folder.MANIFEST] = out / folder.MANIFEST
    files[folder.CONFIG] = out / folder.CONFIG
    return files
