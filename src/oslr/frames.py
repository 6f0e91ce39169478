"""Tables of results: summary, curves, per-run finals and paired comparisons as pandas frames.

* `summary_frame`: one row per (learner, grid point, regret quantity): mean, standard error and the
  95% Student-t interval of the final value over runs.
* `curves_frame`: the same statistics at every checkpoint (long format, ready for plotting).
* `runs_frame`, `runs_curves_frame`: every run's final regret, and its regret at every
  checkpoint (what `runs.csv` and `runs.parquet` hold).
* `compare_frame`, `sequential_frame`: paired comparisons of learners and grid points on the
  same runs (common random numbers) with a reference, Holm-corrected (`oslr.stats`).

`SimResult`'s table methods and `oslr.report` (files and plots) use these; this module reads
results and imports no other part of oslr but the statistics.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol

import numpy as np
import pandas as pd

from oslr.stats import mean_ci


class SimResult(Protocol):
    """A study's result as the tables read it (`oslr.result.SimResult` is one): read, never
    built, here, so this module imports no result module (results hold data; tables come from
    here)."""

    learner: str
    problem: str
    horizon: int
    n_runs: int
    seed: int
    run_offset: int
    grid: list[dict]
    ckpts: Any
    final: dict[str, Any]

    def regret_curves(self) -> dict[str, np.ndarray]: ...

    def per_run_sums(self) -> dict[str, np.ndarray]: ...


def params_label(point: dict) -> str:
    """'k=3, eta=0.1' style label of a grid point ('default' when empty)."""
    if not point:
        return "default"
    return ", ".join(f"{k}={_fmt(v)}" for k, v in point.items())


def _fmt(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


class FullTable(pd.DataFrame):
    """A DataFrame that prints whole: `print(table)` shows every row and column (pandas elides
    them behind "..." past its display width), floats to 4 significant digits."""

    @property
    def _constructor(self):
        return FullTable

    def __repr__(self) -> str:
        return self.to_string(float_format=lambda v: f"{v:.4g}")


#: the regret quantities in the order the primary one is chosen (`oslr.regret`)
PRIMARY_METRICS = ("regret", "regret_lb_greedy", "pseudo_regret", "regret_wstar")


def primary_metric(result: SimResult, curves: dict) -> str:
    """The regret quantity a result reports first: the first of PRIMARY_METRICS in `curves`."""
    for name in PRIMARY_METRICS:
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
    metric = metric or primary_metric(results[0], results[0].regret_curves())
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
    """The entry `reference` names: "best" or an entry's name (a learner with one grid point is
    named by the learner alone, `entry_name`; one with several has no entry of its name)."""
    if reference == "best" or reference in finals:
        return reference
    raise ValueError(f"--compare-to {reference!r} names none of the entries {list(finals)}; give "
                     "one of them or 'best'.")


def compare_frame(results: Sequence[SimResult], reference: str = "best",
                  metric: str | None = None, level: float = 0.95) -> pd.DataFrame:
    """Paired comparison of every learner x grid point of `results` with `reference` ("best":
    the lowest mean final regret, or an entry's name, `entry_name`) on the per-run final regret
    (common random numbers: run r of every entry saw the same stream): the mean difference
    (entry minus reference), its t interval, the runs where the entry is ahead or behind, the
    paired t test's p-value and Holm's adjustment (over the comparisons with a named reference,
    over all pairs for "best"), a verdict ("better", "worse", "indistinguishable" at
    family-wise 1 - level) and its distribution-free companion. See `oslr.stats.compare`."""
    from oslr.stats import compare

    finals, metric = per_run_finals(results, metric)
    reference = _reference(finals, reference)
    table = compare(finals, reference=reference, lower_is_better=True, level=level)
    table.insert(1, "metric", metric)
    return table


def sequential_frame(results: Sequence[SimResult], look: int, reference: str = "best",
                     metric: str | None = None, level: float = 0.95,
                     bounds: tuple[float, float] | None = None,
                     variance: float | None = None, normal: bool = False) -> pd.DataFrame:
    """Look `look` of a study that adds runs until its comparisons are decided (`oslr run
    --until separated`): `oslr.stats.sequential_compare` on the per-run final regrets of every
    learner x grid point of `results` (reference: "best" or an entry's name; the one
    assumption its interval rests on: `bounds` or a `variance` bound on the differences, or
    `normal` differences)."""
    from oslr.stats import sequential_compare

    finals, metric = per_run_finals(results, metric)
    table = sequential_compare(finals, look, _reference(finals, reference), level, bounds,
                               variance=variance, normal=normal)
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
        primary = primary_metric(res, curves)
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


def _joined(frames) -> pd.DataFrame:
    """The frames (any iterable) one after another, renumbered; an empty frame for none."""
    frames = list(frames)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


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
    return _joined(frames)


#: rows of one piece of the per-run tables (`runs_curves_pieces`, `runs_pieces`)
PIECE_ROWS = 1 << 20


def _run_slices(n_runs: int, rows_per_run: int):
    """Consecutive slices of range(n_runs), each of at most PIECE_ROWS rows (at least a run)."""
    step = max(1, PIECE_ROWS // max(1, rows_per_run))
    return (slice(a, min(a + step, n_runs)) for a in range(0, n_runs, step))


def runs_curves_pieces(results: Sequence[SimResult]) -> Iterator[pd.DataFrame]:
    """`runs_curves_frame` in consecutive pieces of at most PIECE_ROWS rows (a slice of the runs
    each), so that a study of many runs is written without building the whole table."""
    for res in results:
        for name, c in res.regret_curves().items():
            for g, point in enumerate(res.grid):
                n_runs, n_ck = c[g].shape
                for s in _run_slices(n_runs, n_ck):
                    runs = np.arange(s.start, s.stop) + res.run_offset
                    yield pd.DataFrame({
                        "learner": res.learner, "params": params_label(point), "metric": name,
                        "run": np.repeat(runs, n_ck), "t": np.tile(res.ckpts, len(runs)),
                        "value": np.asarray(c[g, s], np.float64).reshape(-1)})
        for name, v in res.per_run_sums().items():
            for g, point in enumerate(res.grid):
                for s in _run_slices(v.shape[1], 1):
                    yield pd.DataFrame({
                        "learner": res.learner, "params": params_label(point),
                        "metric": f"sum_{name}", "run": np.arange(s.start, s.stop)
                        + res.run_offset, "t": res.horizon, "value": v[g, s].astype(np.float64)})


def runs_curves_frame(results: Sequence[SimResult]) -> pd.DataFrame:
    """Every run's regret at every checkpoint and its other running sums at the horizon (long
    format: learner, params, metric, run, t, value; run is the seed's run index,
    run_offset + r; the sums as metric "sum_NAME" at t = T: loss, reward, accepted, queries,
    ..., so that a CTR or a loss is recomputed per run too), for `runs.parquet`: any table or
    comparison is recomputed from it without a rerun."""
    return _joined(runs_curves_pieces(results))


def runs_pieces(results: Sequence[SimResult]) -> Iterator[pd.DataFrame]:
    """`runs_frame` in consecutive pieces of at most PIECE_ROWS rows."""
    for res in results:
        for name, c in res.regret_curves().items():
            for g, point in enumerate(res.grid):
                for s in _run_slices(res.n_runs, 1):
                    yield pd.DataFrame({
                        "learner": res.learner, "params": params_label(point), "metric": name,
                        "run": np.arange(s.start, s.stop) + res.run_offset,
                        "final": np.asarray(c[g, s, -1], np.float64)})


def runs_frame(results: Sequence[SimResult]) -> pd.DataFrame:
    """Final regret of every run (one row per learner x grid point x run x quantity; run is
    the seed's run index, run_offset + r, as in `runs_curves_frame`)."""
    return _joined(runs_pieces(results))


__all__ = ["FullTable", "PRIMARY_METRICS", "compare_frame", "curves_frame", "entry_name",
           "params_label", "per_run_finals", "primary_metric", "runs_curves_frame",
           "runs_curves_pieces", "runs_frame", "runs_pieces", "sequential_frame",
           "summary_frame"]
