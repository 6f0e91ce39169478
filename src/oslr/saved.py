"""Reading a finished study back: `oslr.load(DIR)` on a folder that `oslr run` or
`oslr experiment` wrote.

`load` returns a `SavedStudy` holding every file of the folder (config.json as a dict, each
CSV / Parquet table as a pandas frame, the figures' paths) and recomputes from the per-run
files what a researcher asks next without a rerun: the per-run finals of every learner x grid
point (`finals`), their paired comparison (`compare`, `oslr.stats.compare`: the runs of a study
share their streams), regret at T against a swept parameter (`final_vs`, `plot_final`), the
regret curves with bands (`plot`) and an xarray Dataset entry x run x t (`to_xarray`, with
xarray installed). `merge` joins folders of the same study run with other seeds (more runs
later) into one, whose runs are then (seed, run) pairs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from oslr.frames import PRIMARY_METRICS

#: the tables `oslr run` writes, by attribute of `SavedStudy`
RUN_TABLES = {"summary": "summary.csv", "curves": "curves.csv", "runs": "runs.csv",
              "run_curves": "runs.parquet", "compare_table": "compare.csv",
              "until": "until.csv"}
#: figure suffixes a folder may hold
FIGURES = (".png", ".pdf", ".svg")


class LoadError(ValueError):
    """A folder that is not a finished study (no config.json, or a file that does not parse)."""


@dataclass
class SavedStudy:
    """A finished study's folder, read back (`load`).

    Attributes:
      path: the folder.
      config: config.json (the study's settings, the command line, versions and runtime).
      kind: "run" (`oslr run`) or "experiment" (`oslr experiment`, named in config).
      summary, curves, runs, run_curves, compare_table, until: the frames of summary.csv,
        curves.csv, runs.csv (final per run), runs.parquet (every run at every checkpoint, long
        format learner, params, metric, run, t, value), compare.csv, until.csv; None where the
        folder has no such file.
      tables: every other CSV or Parquet file (an experiment's tables and per-run files), by
        file stem.
      documents: every JSON file but config.json (summary.json, an arena's tables), parsed, by
        file stem.
      texts: every Markdown or text file (an arena's pages), by file stem.
      figures: paths of the folder's figures.
    """

    path: Path
    config: dict
    kind: str
    summary: pd.DataFrame | None = None
    curves: pd.DataFrame | None = None
    runs: pd.DataFrame | None = None
    run_curves: pd.DataFrame | None = None
    compare_table: pd.DataFrame | None = None
    until: pd.DataFrame | None = None
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    documents: dict[str, object] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    figures: list[Path] = field(default_factory=list)

    def files(self) -> list[str]:
        """The name of every file read back (config.json included), sorted."""
        names = {"config.json"} | {RUN_TABLES[a] for a in RUN_TABLES
                                   if getattr(self, a) is not None}
        names |= {f.name for f in self.path.iterdir() if f.is_file() and f.stem in
                  set(self.tables) | set(self.documents) | set(self.texts)}
        return sorted(names | {f.name for f in self.figures})

    # ----------------------------------------------------------------- per-run recomputation

    def _per_run(self) -> pd.DataFrame:
        """runs.csv, with an `entry` column naming each learner x grid point as comparisons do
        ("learner" alone where the learner has one grid point, else "learner [params]") and a
        `seed` column (config's seed where the file has none)."""
        if self.runs is None:
            raise LoadError(f"{self.path} has no runs.csv: per-run values are written by "
                            "`oslr run`; an experiment's tables are in .tables.")
        df = self.runs.copy()
        if "seed" not in df:
            df["seed"] = self.config.get("seed", 0)
        return _with_entries(df)

    def metrics(self) -> list[str]:
        """The regret quantities of the per-run file, primary first."""
        have = list(dict.fromkeys(self._per_run()["metric"]))
        return [m for m in PRIMARY_METRICS if m in have] + [m for m in have
                                                              if m not in PRIMARY_METRICS]

    def finals(self, metric: str | None = None) -> dict[str, np.ndarray]:
        """Entry -> (runs,) final value of `metric` (default: the primary regret), the runs in
        (seed, run) order, the same for every entry (common random numbers)."""
        df = self._per_run()
        metric = metric or self.metrics()[0]
        if metric not in set(df["metric"]):
            raise LoadError(f"{self.path}: no metric {metric!r}; it has {self.metrics()}.")
        df = df[df["metric"] == metric].sort_values(["seed", "run"], kind="stable")
        out = {name: g["final"].to_numpy(np.float64)
               for name, g in df.groupby("entry", sort=False)}
        run_sets = {tuple(map(tuple, g[["seed", "run"]].to_numpy()))
                    for _, g in df.groupby("entry", sort=False)}
        if len(run_sets) != 1:
            raise LoadError(f"{self.path}: the entries ran different runs; a paired comparison "
                            "needs the same (seed, run) pairs for every entry.")
        return out

    def compare(self, reference: str = "best", metric: str | None = None,
                level: float = 0.95, margin: float | None = None) -> pd.DataFrame:
        """Paired comparison of every entry with `reference` ("best" or an entry's name) on the
        per-run finals (`oslr.stats.compare`: mean difference, t interval, Holm's p, verdict,
        the Wilcoxon companion; with `margin`, TOST's "equivalent")."""
        from oslr.stats import compare

        finals = self.finals(metric)
        if reference != "best" and reference not in finals:
            matches = [n for n in finals if n.split(" [")[0] == reference]
            if len(matches) != 1:
                raise LoadError(f"reference {reference!r} names none of the entries "
                                f"{list(finals)} (or several); give one of them or 'best'.")
            reference = matches[0]
        table = compare(finals, reference=reference, lower_is_better=True, level=level,
                        margin=margin)
        table.insert(1, "metric", metric or self.metrics()[0])
        return table

    def final_vs(self, param: str, metric: str | None = None,
                 level: float = 0.95) -> pd.DataFrame:
        """Mean final `metric` with its t interval per learner and value of the swept parameter
        `param` (a column of summary.csv, "param_NAME"): learner, the parameter, mean, ci_low,
        ci_high, n_runs, sorted by learner and value."""
        from oslr.stats import mean_ci

        if self.summary is None or f"param_{param}" not in self.summary:
            swept = [] if self.summary is None else [
                c[6:] for c in self.summary if c.startswith("param_")]
            raise LoadError(f"{self.path}: {param!r} was not swept; swept parameters: {swept}.")
        metric = metric or self.metrics()[0]
        value = (self.summary.drop_duplicates(["learner", "params"])
                 .set_index(["learner", "params"])[f"param_{param}"])
        df = self._per_run()
        df = df[df["metric"] == metric]
        rows = []
        for (learner, params), g in df.groupby(["learner", "params"], sort=False):
            v = value.get((learner, params), np.nan)
            if pd.isna(v):
                continue  # a learner without this parameter
            mean, _, half = mean_ci(g["final"].to_numpy(np.float64), level=level)
            rows.append({"learner": learner, param: v, "metric": metric, "mean": float(mean),
                         "ci_low": float(mean - half), "ci_high": float(mean + half),
                         "n_runs": len(g)})
        return pd.DataFrame(rows).sort_values(["learner", param], kind="stable",
                                              ignore_index=True)

    def _curves(self, metric: str | None) -> tuple[pd.DataFrame, str]:
        """runs.parquet's rows of `metric` (default: the primary regret) with an `entry` column
        and `run` renumbered 0..R-1 over the (seed, run) pairs of a merged folder."""
        if self.run_curves is None:
            raise LoadError(f"{self.path} has no runs.parquet (written by `oslr run`).")
        metric = metric or self.metrics()[0]
        df = self.run_curves[self.run_curves["metric"] == metric].copy()
        if "seed" in df:
            order = df[["seed", "run"]].drop_duplicates().sort_values(["seed", "run"])
            index = {pair: i for i, pair in enumerate(map(tuple, order.to_numpy()))}
            df["run"] = [index[pair] for pair in zip(df["seed"], df["run"])]
        return _with_entries(df), metric

    # ------------------------------------------------------------------------------ figures

    def plot_final(self, param: str, path: str | Path | None = None,
                   metric: str | None = None, logx: bool | None = None):
        """Final regret (mean, 95% interval) against the swept parameter `param`, one panel per
        learner; saved to `path` (PNG, PDF or SVG by its suffix) when given. Returns the
        figure."""
        import matplotlib.pyplot as plt

        from oslr import atomic
        from oslr.report import FIGURE_DPI, METRIC_LABELS, axis_label

        table = self.final_vs(param, metric)
        learners = list(dict.fromkeys(table["learner"]))
        fig, axs = plt.subplots(1, len(learners), figsize=(3.6 * len(learners) + 1, 3.6),
                                squeeze=False, sharey=True)
        values = table[param].astype(float)
        logx = bool((values > 0).all() and values.max() / values.min() >= 20) if logx is None \
            else logx
        for ax, learner in zip(axs[0], learners):
            g = table[table["learner"] == learner]
            ax.errorbar(g[param], g["mean"], yerr=[g["mean"] - g["ci_low"],
                                                   g["ci_high"] - g["mean"]],
                        marker="o", capsize=3)
            ax.set_title(learner, fontsize=9)
            ax.set_xlabel(param)
            if logx:
                ax.set_xscale("log")
            ax.grid(alpha=0.3)
        label = METRIC_LABELS.get(table["metric"].iloc[0], table["metric"].iloc[0])
        axs[0][0].set_ylabel(axis_label(f"{label} at T (mean, 95% interval)"), fontsize=8)
        horizon = self.config.get("horizon")
        fig.suptitle(f"{self.config.get('problem', '')}, T={horizon}: final regret against "
                     f"{param}", fontsize=10)
        fig.tight_layout()
        if path is not None:  # replaced whole, in the format of its suffix
            atomic.save_figure_atomic(fig, path, FIGURE_DPI)
        return fig

    def plot(self, path: str | Path | None = None, metric: str | None = None,
             axes: str = "loglog", band: str = "pointwise"):
        """Regret against rounds with 95% bands (`band`: "pointwise" or "simultaneous", see
        `oslr.report.curve_band`) from the per-run curves (runs.parquet), one line per entry,
        as `oslr.report.plot_regret` draws a fresh study. Returns the figure."""
        import matplotlib.pyplot as plt

        from oslr.report import (AXES, METRIC_LABELS, axis_label, check_band, curve_band,
                                 finish_figure, set_regret_scales)

        if axes not in AXES:
            raise ValueError(f"axes={axes!r}; choose one of {AXES}.")
        check_band(band)
        df, metric = self._curves(metric)
        fig, ax = plt.subplots(figsize=(7, 4.5))
        lowest = np.inf
        for entry, g in df.groupby("entry", sort=False):
            wide = g.pivot(index="run", columns="t", values="value")
            mean, half = curve_band(wide.to_numpy(np.float64), band)
            (line,) = ax.plot(wide.columns, mean, label=entry)
            ax.fill_between(wide.columns, mean - half, mean + half, color=line.get_color(),
                            alpha=0.2, linewidth=0)
            lowest = min(lowest, float(np.min(mean - half)))
        set_regret_scales(ax, axes, lowest)
        ax.set_xlabel("round t")
        ax.set_ylabel(axis_label(METRIC_LABELS.get(metric, metric)), fontsize=8)
        n_runs = df.groupby("entry")["run"].nunique().max()
        ax.set_title(f"{self.config.get('problem', '')}, T={self.config.get('horizon')}: mean "
                     f"over {n_runs} runs, 95% {'simultaneous ' * (band == 'simultaneous')}"
                     "bands", fontsize=10)
        return finish_figure(fig, ax, path)

    # ------------------------------------------------------------------------------- xarray

    def to_xarray(self, metric: str | None = None):
        """The per-run curves of `metric` (default: the primary regret) as an xarray Dataset
        with dims entry x run x t (variable `value`; coords learner and params per entry; a
        merged folder's runs numbered over its (seed, run) pairs)."""
        try:
            import xarray as xr
        except ImportError:
            raise ImportError("to_xarray needs xarray: pip install xarray (or "
                              "'oslr[xarray]').") from None
        df, metric = self._curves(metric)
        cube = df.set_index(["entry", "run", "t"])["value"].to_xarray()
        first = df.drop_duplicates("entry").set_index("entry")
        return xr.Dataset({"value": cube}, coords={
            "learner": ("entry", first.loc[cube["entry"].values, "learner"].to_numpy()),
            "params": ("entry", first.loc[cube["entry"].values, "params"].to_numpy())},
            attrs={"metric": metric, "problem": self.config.get("problem", ""),
                   "horizon": self.config.get("horizon", 0)})


def _with_entries(df: pd.DataFrame) -> pd.DataFrame:
    """`df` (columns learner, params) with an `entry` column naming each learner x grid point
    as `oslr.frames.entry_name` does: the learner alone where it has one grid point, else
    "learner [params]"."""
    points = df.groupby("learner")["params"].nunique()
    return df.assign(entry=[lrn if points[lrn] == 1 else f"{lrn} [{par}]"
                            for lrn, par in zip(df["learner"], df["params"])])


def _read_table(path: Path) -> pd.DataFrame:
    try:
        return pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    except Exception as err:  # a damaged or foreign file: say which
        raise LoadError(f"{path}: cannot be read as a table ({type(err).__name__}: "
                        f"{err}).") from None


def load(path: str | Path) -> SavedStudy:
    """Read back a folder written by `oslr run` or `oslr experiment` (every file: config.json,
    the tables and per-run files, the other JSON and Markdown files, the figures' paths; the
    lock file and unfinished chunks are not results and are skipped).

    Raises:
      LoadError: the folder does not exist, has no config.json (an unfinished or foreign
        folder: `oslr run` writes config.json last) or holds a file that does not parse.
    """
    folder = Path(path)
    if not folder.is_dir():
        raise LoadError(f"{folder} is not a folder.")
    cfg_path = folder / "config.json"
    if not cfg_path.is_file():
        hint = (" (an unfinished `oslr run`: rerun the same command to resume it)"
                if (folder / ".checkpoints").exists() else "")
        raise LoadError(f"{folder} has no config.json: not a finished study{hint}.")
    try:
        config = json.loads(cfg_path.read_text())
    except json.JSONDecodeError as err:
        raise LoadError(f"{cfg_path}: not valid JSON ({err}).") from None
    study = SavedStudy(path=folder, config=config,
                       kind="experiment" if "experiment" in config else "run")
    known = set()
    for attr, name in RUN_TABLES.items():
        if (folder / name).is_file():
            setattr(study, attr, _read_table(folder / name))
            known.add(name)
    for f in sorted(folder.iterdir()):
        if not f.is_file() or f.name in known or f.name == "config.json":
            continue
        if f.suffix in (".csv", ".parquet"):
            study.tables[f.stem] = _read_table(f)
        elif f.suffix == ".json":
            try:
                study.documents[f.stem] = json.loads(f.read_text())
            except json.JSONDecodeError as err:
                raise LoadError(f"{f}: not valid JSON ({err}).") from None
        elif f.suffix in (".md", ".txt"):
            study.texts[f.stem] = f.read_text()
        elif f.suffix in FIGURES:
            study.figures.append(f)
    return study


def merge(paths, out: str | Path) -> SavedStudy:
    """Join the per-run files of folders of the same study (the same config but the seed) into
    `out`: runs.csv and runs.parquet with a `seed` column, the runs then (seed, run) pairs, and
    a config.json listing the merged folders. Refuses folders of other settings or repeated
    seeds (the same streams twice are not independent runs)."""
    from oslr import atomic

    studies = [load(p) for p in paths]
    if len(studies) < 2:
        raise LoadError("merge needs at least two folders.")
    ignore = {"seed", "out", "command", "commit", "dirty", "results", "runtime", "python",
              "numpy", "oslr", "runs", "merged_from"}
    base = {k: v for k, v in studies[0].config.items() if k not in ignore}
    for s in studies[1:]:
        other = {k: v for k, v in s.config.items() if k not in ignore}
        if other != base:
            diff = sorted(k for k in set(base) | set(other) if base.get(k) != other.get(k))
            raise LoadError(f"{s.path} is another study than {studies[0].path} (settings "
                            f"{diff} differ); merge folders of the same study run with other "
                            "seeds.")
    runs, curves = [], []
    for s in studies:
        for frames, frame in ((runs, s.runs), (curves, s.run_curves)):
            if frame is None:
                raise LoadError(f"{s.path} has no per-run files to merge.")
            frames.append(frame if "seed" in frame else frame.assign(seed=s.config.get("seed")))
    runs_df, curves_df = pd.concat(runs, ignore_index=True), pd.concat(curves, ignore_index=True)
    pairs = runs_df[["learner", "params", "metric", "seed", "run"]]
    if pairs.duplicated().any():
        raise LoadError("the folders share runs of a seed (the same streams twice); merge "
                        "studies of different seeds.")
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    atomic.write_frame_atomic(target / "runs.csv", runs_df)
    atomic.write_frame_atomic(target / "runs.parquet", curves_df)
    config = {**studies[0].config, "seed": sorted({s.config.get("seed") for s in studies}),
              "runs": int(runs_df.groupby(["learner", "params", "metric"]).size().min()),
              "merged_from": [str(s.path) for s in studies]}
    config.pop("command", None)
    if studies[0].summary is not None:  # the grid labels (param_ columns), recomputed stats not
        keep = [c for c in studies[0].summary if c in ("learner", "problem", "params")
                or c.startswith("param_")]
        atomic.write_frame_atomic(target / "summary.csv",
                                  studies[0].summary[keep].drop_duplicates())
    atomic.write_text_atomic(target / "config.json", json.dumps(config, indent=1, default=str))
    return load(target)


__all__ = ["LoadError", "SavedStudy", "load", "merge"]
