"""Reading a finished study back: `oslr.load(DIR)` on a folder that `oslr run`, `oslr.Study`,
`oslr experiment` or `oslr merge` wrote.

`load` first checks every file the folder's manifest lists (`oslr.folder.verify`: a file cut
short or changed is a one-line `LoadError`), then returns a `SavedStudy` holding the study's
files (config.json as a dict, each CSV / Parquet table as a pandas frame, the figures' paths)
and recomputes from the per-run files what a researcher asks next without a rerun: the per-run
finals of every learner x grid point (`finals`), their paired comparison (`compare`,
`oslr.stats.compare`: the runs of a study share their streams), regret at T against a swept
parameter (`final_vs`, `plot_final`), the regret curves with bands (`plot`) and an xarray
Dataset entry x run x t (`to_xarray`, with xarray installed). `merge` joins folders of the same
study run with other seeds (more runs later) into one, whose runs are then (seed, run) pairs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from oslr.folder import MANIFEST, LoadError, check_derived, unseal, verify
from oslr.frames import PRIMARY_METRICS, params_label

#: the tables `oslr run` writes, by attribute of `SavedStudy`
RUN_TABLES = {"summary": "summary.csv", "curves": "curves.csv", "runs": "runs.csv",
              "run_curves": "runs.parquet", "compare_table": "compare.csv",
              "until": "until.csv"}
#: figure suffixes a folder may hold
FIGURES = (".png", ".pdf", ".svg")
#: a per-run table larger than this (bytes) is read when first used, not by `load`
LAZY_BYTES = 1 << 26


class _Unread(NamedTuple):
    """A per-run table `load` left on disk (larger than LAZY_BYTES): its path and the
    manifest's records, read when first used (`SavedStudy.__getattribute__`), or in part."""

    path: Path
    listed: dict | None

    def read(self, filters: list | None = None) -> pd.DataFrame:
        return _read_table(self.path, self.listed, filters)


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
        folder has no such file. A per-run file larger than LAZY_BYTES is read when its
        attribute is first used, and the regret curves of one metric (`plot`, `to_xarray`)
        read only that metric's rows.
      tables: every other CSV or Parquet file (an experiment's tables and per-run files), by
        file stem.
      documents: every JSON file but config.json (summary.json, an arena's tables), parsed, by
        file stem.
      texts: every Markdown or text file (an arena's pages), by file stem.
      figures: paths of the folder's figures (the study's and those drawn from it later).
      manifest: manifest.json's record of each of the study's files (bytes, sha256, rows),
        checked when the folder was loaded; None for a folder of an older oslr (not checked).
      others: files in the folder that the study did not write (not in its manifest), not
        read.
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
    manifest: dict | None = None
    others: list[Path] = field(default_factory=list)

    def __getattribute__(self, name: str):
        value = object.__getattribute__(self, name)
        if type(value) is _Unread:  # a large per-run table: read at its first use
            value = value.read()
            object.__setattr__(self, name, value)
        return value

    def files(self) -> list[str]:
        """The name of every file read back (config.json and manifest.json included),
        sorted."""
        names = {"config.json"} | ({MANIFEST} if self.manifest is not None else set())
        names |= {RUN_TABLES[a] for a in RUN_TABLES if (self.path / RUN_TABLES[a]).is_file()
                  and vars(self)[a] is not None}
        names |= {f.name for f in self.path.iterdir() if f.is_file() and f.stem in
                  set(self.tables) | set(self.documents) | set(self.texts)
                  and f not in self.others}
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

    def select(self, studies) -> SavedStudy:
        """An experiment's folder restricted to some of its studies (the `study` column of its
        per-run files): compare, plot and finals then read those alone, e.g. the studies that
        ran on the same streams."""
        import dataclasses

        if self.run_curves is None or "study" not in self.run_curves:
            raise LoadError(f"{self.path}: no studies to select (an experiment's per-run file "
                            "has a study column).")
        wanted = set(np.atleast_1d(studies).tolist())
        unknown = sorted(wanted - set(self.run_curves["study"]))
        if unknown:
            raise LoadError(f"{self.path}: no study {unknown}; it has "
                            f"{sorted(set(self.run_curves['study']))}.")
        assert self.runs is not None  # read with the per-run curves
        return dataclasses.replace(
            self, runs=self.runs[self.runs["study"].isin(wanted)].reset_index(drop=True),
            run_curves=self.run_curves[self.run_curves["study"].isin(wanted)].reset_index(
                drop=True))

    def metrics(self) -> list[str]:
        """The regret quantities of the per-run file, primary first."""
        have = list(dict.fromkeys(self._per_run()["metric"]))
        return [m for m in PRIMARY_METRICS if m in have] + [m for m in have
                                                              if m not in PRIMARY_METRICS]

    def finals(self, metric: str | None = None) -> dict[str, np.ndarray]:
        """Entry -> (runs,) final value of `metric` (default: the primary regret), the runs in
        (seed, run) order, the same for every entry (common random numbers)."""
        df = self._per_run()
        metric = self._check_metric(metric)
        df = df[df["metric"] == metric].sort_values(["seed", "run"], kind="stable")
        out = {name: g["final"].to_numpy(np.float64)
               for name, g in df.groupby("entry", sort=False)}
        run_sets = {tuple(map(tuple, g[["seed", "run"]].to_numpy()))
                    for _, g in df.groupby("entry", sort=False)}
        if len(run_sets) != 1:
            raise LoadError(f"{self.path}: the entries ran different runs; a paired comparison "
                            "needs the same (seed, run) pairs for every entry (an experiment: "
                            "pick studies that did, .select(studies)).")
        return out

    def compare(self, reference: str = "best", metric: str | None = None,
                level: float = 0.95, margin: float | None = None) -> pd.DataFrame:
        """Paired comparison of every entry with `reference` ("best" or an entry's name) on the
        per-run finals (`oslr.stats.compare`: mean difference, t interval, Holm's p, verdict,
        the sign-flip companion; with `margin`, TOST's "equivalent")."""
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
        """Mean final `metric` with its t interval per learner, value of the swept parameter
        `param` ("param_NAME" in summary.csv, or in an experiment's per-run file) and value of
        every other swept parameter (a column each, so that a k x eta study keeps its k values
        apart): learner (and study, in an experiment), the other swept parameters, `param`,
        metric, mean, ci_low, ci_high, n_runs, sorted by them."""
        from oslr.stats import mean_ci

        swept = self.swept()
        if param not in swept:
            raise LoadError(f"{self.path}: {param!r} was not swept; swept parameters: {swept}.")
        metric = self._check_metric(metric)
        others = [p for p in swept if p != param]
        points, keys = self._points()
        labels = points.set_index(keys)
        df = self._per_run()
        df = df[df["metric"] == metric]
        rows = []
        for key, g in df.groupby(keys, sort=False):
            if key not in labels.index:
                continue
            point = labels.loc[key]
            if pd.isna(point[f"param_{param}"]):
                continue  # a learner without this parameter
            mean, _, half = mean_ci(g["final"].to_numpy(np.float64), level=level)
            rows.append({**dict(zip(keys[:-1], key[:-1])),
                         **{p: point[f"param_{p}"] for p in others},
                         param: point[f"param_{param}"], "metric": metric,
                         "mean": float(mean), "ci_low": float(mean - half),
                         "ci_high": float(mean + half), "n_runs": len(g)})
        table = pd.DataFrame(rows)
        kept = [p for p in others if table[p].notna().any()]
        table = table.drop(columns=[p for p in others if p not in kept])
        order = ["learner", "study"] if "study" in keys else ["learner"]
        return table.sort_values([*order, *kept, param], kind="stable", ignore_index=True)

    def _points(self) -> tuple[pd.DataFrame, list[str]]:
        """One row per entry with its param_NAME columns, and the columns that name an entry:
        learner and params (summary.csv), or study, learner and params (an experiment's
        per-run file)."""
        if self.summary is not None and "params" in self.summary:
            keys = ["learner", "params"]
            source = self.summary
        elif self.run_curves is not None and "study" in self.run_curves:
            keys = ["study", "learner", "params"]
            source = self.run_curves
        else:
            return pd.DataFrame(columns=["learner", "params"]), ["learner", "params"]
        cols = [c for c in source if c.startswith("param_")]
        return source.drop_duplicates(keys)[keys + cols], keys

    def swept(self) -> list[str]:
        """The parameters swept in the study: summary.csv's param_NAME columns, or those of an
        experiment's per-run file whose value changes from one entry to another."""
        points, keys = self._points()
        cols = [c for c in points if c.startswith("param_")]
        if "study" in keys:  # every scalar param is recorded there: the ones that vary
            cols = [c for c in cols if points[c].nunique(dropna=True) > 1]
        return [c[len("param_"):] for c in cols]

    def _check_metric(self, metric: str | None) -> str:
        """`metric`, or the primary one when None; LoadError naming those there are."""
        have = self.metrics()
        if metric is None:
            return have[0]
        if metric not in have:
            raise LoadError(f"{self.path}: no metric {metric!r}; it has {have}.")
        return metric

    def _curves(self, metric: str | None) -> tuple[pd.DataFrame, str]:
        """runs.parquet's rows of `metric` (default: the primary regret) with an `entry` column
        and `run` renumbered 0..R-1 over the (seed, run) pairs of a merged folder."""
        table = vars(self)["run_curves"]  # as it is: a large file not read yet stays so
        if table is None:
            raise LoadError(f"{self.path} has no runs.parquet (written by `oslr run`).")
        metric = self._check_metric(metric)
        df = (table.read([("metric", "==", metric)]) if type(table) is _Unread
              else table[table["metric"] == metric].copy())
        if "seed" in df:
            order = df[["seed", "run"]].drop_duplicates().sort_values(["seed", "run"])
            index = {pair: i for i, pair in enumerate(map(tuple, order.to_numpy()))}
            df["run"] = [index[pair] for pair in zip(df["seed"], df["run"])]
        return _with_entries(df), metric

    # ------------------------------------------------------------------------------ figures

    def plot_final(self, param: str, path: str | Path | None = None,
                   metric: str | None = None, logx: bool | None = None):
        """Final regret (mean, 95% interval) against the swept parameter `param`, one panel per
        learner and, in it, one line per value of the other swept parameters (a legend names
        them); saved to `path` (PNG, PDF or SVG by its suffix) when given, never over a file
        the study wrote. Returns the figure."""
        import matplotlib.pyplot as plt

        from oslr import atomic
        from oslr.report import FIGURE_DPI, METRIC_LABELS, axis_label

        if path is not None:
            check_derived(path, self.path)
        table = self.final_vs(param, metric)
        others = [p for p in ["study", *self.swept()] if p != param and p in table]
        learners = list(dict.fromkeys(table["learner"]))
        fig, axs = plt.subplots(1, len(learners), figsize=(3.6 * len(learners) + 1, 3.6),
                                squeeze=False, sharey=True)
        values = table[param].astype(float)
        logx = bool((values > 0).all() and values.max() / values.min() >= 20) if logx is None \
            else logx
        for ax, learner in zip(axs[0], learners):
            rows = table[table["learner"] == learner]
            lines = rows.groupby(others, sort=False, dropna=False) if others else [((), rows)]
            for key, g in lines:
                key = key if isinstance(key, tuple) else (key,)
                label = params_label({p: v for p, v in zip(others, key) if not pd.isna(v)})
                ax.errorbar(g[param], g["mean"], yerr=[g["mean"] - g["ci_low"],
                                                       g["ci_high"] - g["mean"]],
                            marker="o", capsize=3, label=label if others else None)
            if others and len(lines) > 1:
                ax.legend(fontsize=7)
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
        if path is not None:
            check_derived(path, self.path)
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
    "learner [params]"; in an experiment's frame of several studies, prefixed "study S: "."""
    by_study = "study" in df and df["study"].nunique() > 1
    studies = df["study"] if by_study else pd.Series(0, index=df.index)
    points = df.assign(_s=studies).groupby(["_s", "learner"])["params"].nunique()
    names = [lrn if points[(s, lrn)] == 1 else f"{lrn} [{par}]"
             for s, lrn, par in zip(studies, df["learner"], df["params"])]
    if by_study:
        names = [f"study {s}: {n}" for s, n in zip(studies, names)]
    return df.assign(entry=names)


def _read_table(path: Path, listed: dict | None = None,
                filters: list | None = None) -> pd.DataFrame:
    """A CSV or Parquet table (of a Parquet one, the rows that pass `filters` alone); with the
    manifest's records, its rows checked against them (when whole)."""
    try:
        frame = (pd.read_parquet(path, filters=filters) if path.suffix == ".parquet"
                 else pd.read_csv(path))
    except Exception as err:  # a damaged or foreign file: say which
        raise LoadError(f"{path}: cannot be read as a table ({type(err).__name__}: "
                        f"{err}).") from None
    rows = None if filters else (listed or {}).get(path.name, {}).get("rows")
    if rows is not None and rows != len(frame):
        raise LoadError(f"{path} reads as {len(frame)} rows where manifest.json records "
                        f"{rows}; copy it again.")
    return frame


def load(path: str | Path) -> SavedStudy:
    """Read back a folder written by `oslr run`, `oslr experiment` or `oslr merge` (config.json,
    the tables and per-run files, the other JSON and Markdown files, the figures' paths; the
    lock file and unfinished chunks are not results and are skipped). Every file the folder's
    manifest.json lists is checked against its size and SHA-256 first, and only those are read
    as the study's (figures drawn later, `oslr plot`, are listed too). An experiment's per-run
    file (NAME-runs.parquet) gives `run_curves` and `runs` as a run's folder does, its studies
    told apart by a `study` column.

    Raises:
      LoadError: the folder does not exist, has no config.json (an unfinished or foreign
        folder: config.json is written last), holds a file cut short or changed since it was
        written (manifest.json), or a file that does not parse.
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
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise LoadError(f"{cfg_path}: not valid JSON ({err}).") from None
    if not isinstance(config, dict):
        raise LoadError(f"{cfg_path}: not a study's settings (a JSON object).")
    config = unseal(folder, config)  # a sealed config: its manifest must be there and its own
    listed = verify(folder)  # None: a folder of an older oslr, read as it is
    study = SavedStudy(path=folder, config=config,
                       kind="experiment" if "experiment" in config else "run", manifest=listed)
    for f in sorted(folder.iterdir()):
        if not f.is_file() or f.name in ("config.json", MANIFEST) or f.name.startswith("."):
            continue
        if f.suffix in FIGURES:
            study.figures.append(f)
        elif listed is not None and f.name not in listed:
            study.others.append(f)  # not the study's: left there by someone else
        elif f.name in _RUN_FILES:
            table = _Unread(f, listed)
            large = f.suffix == ".parquet" and f.stat().st_size > LAZY_BYTES
            setattr(study, _RUN_FILES[f.name], table if large else table.read())
        elif f.suffix in (".csv", ".parquet"):
            study.tables[f.stem] = _read_table(f, listed)
        elif f.suffix == ".json":
            try:
                study.documents[f.stem] = json.loads(f.read_text())
            except json.JSONDecodeError as err:
                raise LoadError(f"{f}: not valid JSON ({err}).") from None
        elif f.suffix in (".md", ".txt"):
            study.texts[f.stem] = f.read_text()
    if study.kind == "experiment" and study.run_curves is None:
        _experiment_runs(study)
    return study


#: file name -> attribute of `SavedStudy`
_RUN_FILES = {name: attr for attr, name in RUN_TABLES.items()}


def _experiment_runs(study: SavedStudy) -> None:
    """An experiment's per-run file (the table whose stem ends in "-runs", with a `study`
    column) as `run_curves`, and each run's value at its study's last checkpoint as `runs`
    (runs.csv's columns with `study` and `seed`), so that `compare`, `plot` and `finals` read
    an experiment's folder as a run's."""
    names = [n for n, t in study.tables.items() if n.endswith("-runs") and "study" in t]
    if len(names) != 1:
        return
    curves = study.tables[names[0]]
    study.run_curves = curves
    regret = curves[~curves["metric"].str.startswith("sum_")]
    last = regret.groupby("study")["t"].transform("max")
    runs = regret[regret["t"] == last].rename(columns={"value": "final"})
    study.runs = runs[["study", "seed", "learner", "params", "metric", "run", "final"]].reset_index(
        drop=True)


def merge(paths, out: str | Path) -> SavedStudy:
    """Join the per-run files of folders of the same study (the same config but the seed and
    the run count) into `out`: runs.csv and runs.parquet with a `seed` column, the runs then
    (seed, run) pairs, and a config.json listing the merged folders. Refuses folders of other
    settings or repeated seeds (the same streams twice are not independent runs), and an
    `out` that holds a finished study (one of the inputs too): nothing there is replaced."""
    from oslr import atomic, folder

    folder.refuse_finished(out)  # at once (the lock's holder line untouched); again under it
    studies = [load(p) for p in paths]
    if len(studies) < 2:
        raise LoadError("merge needs at least two folders.")
    base = _merge_settings(studies[0].config)
    for s in studies[1:]:
        other = _merge_settings(s.config)
        if other != base:
            diff = sorted(k for k in set(base) | set(other) if base.get(k) != other.get(k))
            raise LoadError(f"{s.path} is another study than {studies[0].path} (settings "
                            f"{diff} differ); merge folders of the same study run with other "
                            "seeds.")
    runs: list[pd.DataFrame] = []
    curves: list[pd.DataFrame] = []
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
    with folder.claim(target):  # decided under the lock: a finished study is never replaced
        tables = {"runs.csv": runs_df, "runs.parquet": curves_df}
        seeds = sorted({s.config.get("seed") for s in studies})  # type: ignore[type-var]
        config = {**studies[0].config, "seed": seeds,
                  "runs": int(runs_df.groupby(["learner", "params", "metric"]).size().min()),
                  "merged_from": [str(s.path) for s in studies]}
        config.pop("command", None)
        if "out" in config:  # the merged folder's own, not its first input's
            config["out"] = str(target)
        if studies[0].summary is not None:  # the grid labels (param_ columns), not the stats
            keep = [c for c in studies[0].summary if c in ("learner", "problem", "params")
                    or c.startswith("param_")]
            tables["summary.csv"] = studies[0].summary[keep].drop_duplicates()
        for name, frame in tables.items():
            atomic.write_frame_atomic(target / name, frame)
        folder.finish(target, tables, config, {n: len(f) for n, f in tables.items()})
    return load(target)


#: config keys that may differ between folders merged into one study
_MERGE_MAY_DIFFER = {"seed", "out", "command", "commit", "dirty", "results", "runtime", "python",
                     "numpy", "oslr", "runs", "merged_from"}


def _merge_settings(config: dict) -> dict:
    """What must be equal for two folders to be runs of one study."""
    return {k: v for k, v in config.items() if k not in _MERGE_MAY_DIFFER}


__all__ = ["LoadError", "SavedStudy", "load", "merge"]
