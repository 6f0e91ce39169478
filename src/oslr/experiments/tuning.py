"""Equal tuning budgets without edge effects, shared by the studies that tune (the arena,
[ITO] Table 1 with `tune=True`).

Every tuned method gets the same grid of factors (`TUNING_FACTORS`) times its step-size
constants, each point on the same tuning runs (run indices `TUNE_OFFSET`, `TUNE_OFFSET` + 1,
..., a range no evaluation uses). Where the best point is the grid's largest (smallest) factor,
the next window of as many factors above (below) it is tuned too (`extension`), at most
`MAX_EXTENSIONS` windows each way; a choice still at an edge then is reported as at the cap.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from oslr.sim import stack_params

#: Factors applied to each method's step-size constants (the same grid for every method).
TUNING_FACTORS = (0.1, 0.3, 1.0, 3.0, 10.0)
#: Windows of factors added past an edge of the grid, at most, each way (`extension`): the
#: tuning stops there and the choice is reported as at the cap.
MAX_EXTENSIONS = 1
#: Tuning runs are run indices TUNE_OFFSET, TUNE_OFFSET + 1, ...; evaluation uses 0, 1, ...
TUNE_OFFSET = 100_000


def final_regret_runs(res) -> np.ndarray:
    """(G, R) each grid point's final regret in each run of a SimResult (R1, or R2 where the
    exact comparator was not computed)."""
    reg = res.regret_curves()
    return np.asarray(reg["regret" if "regret" in reg else "regret_lb_greedy"][:, :, -1])


def mean_final_regret(res) -> np.ndarray:
    """(G,) tuning score of a SimResult: each grid point's final regret averaged over its runs
    (NaN runs ignored)."""
    return np.nanmean(final_regret_runs(res), axis=1)


def lowest(scores) -> int | None:
    """Index of the lowest finite score, None where none is finite: the choice rule of `tune`."""
    scores = np.asarray(scores, np.float64)
    finite = np.isfinite(scores)
    return int(np.argmin(np.where(finite, scores, np.inf))) if finite.any() else None


def half_scores(finals) -> tuple[np.ndarray, np.ndarray] | None:
    """The scores two disjoint sets of tuning runs give each point: the mean final regret
    (NaN runs ignored) over the first R // 2 runs of `finals` (G, R) and over the rest; None
    for a single run (no two sets). How often the two sets choose the same point (`lowest`)
    measures how stable a tuning choice is."""
    finals = np.asarray(finals, np.float64)
    half = finals.shape[1] // 2
    if half == 0:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a point NaN in every run of a set
        return np.nanmean(finals[:, :half], axis=1), np.nanmean(finals[:, half:], axis=1)


def extension(factors: Sequence[float], edge: float, side: int) -> tuple[float, ...]:
    """The next window of len(factors) factors past `edge` (side +1: above, -1: below),
    continuing the grid's spacing: `factors` shifted so that its first (last) point is one
    grid step beyond the edge. With TUNING_FACTORS past 10: 30, 90, 300, 900, 3000."""
    f = sorted(factors)
    if side > 0:
        scale = edge * (f[1] / f[0]) / f[0]
    else:
        scale = edge / (f[-1] / f[-2]) / f[-1]
    return tuple(float(f"{x * scale:.6g}") for x in f)


def scaled_points(params, fields: Sequence[str], factors: Sequence[float]):
    """(labels, stacked params) of `params` with every field in `fields` times each factor
    together: labels one dict per factor (each field's value and the factor), the params
    stacked along a leading grid axis (`oslr.sim.stack_params`)."""
    labels, points = [], []
    for f in factors:
        repl = {name: np.asarray(getattr(params, name)) * f for name in fields}
        labels.append({name: float(v) for name, v in repl.items()} | {"factor": float(f)})
        points.append(dataclasses.replace(params, **{
            name: np.asarray(v, np.asarray(getattr(params, name)).dtype)
            for name, v in repl.items()}))
    return labels, stack_params(points)


@dataclass(frozen=True)
class Tuned:
    """The outcome of `tune`: every factor tried (in the order tried) with its mean tuning
    score, the index of the chosen one, whether it sits at the cap (an edge after
    MAX_EXTENSIONS windows that way), and, for each window evaluated, its factors and what
    `evaluate` returned beside the scores (`payloads`)."""

    factors: list[float]
    scores: np.ndarray
    best: int
    at_cap: bool
    windows: list[tuple[float, ...]]
    payloads: list[Any]

    def chosen(self) -> tuple[int, int]:
        """(window, position in it) of the chosen factor."""
        start = 0
        for w, window in enumerate(self.windows):
            if self.best < start + len(window):
                return w, self.best - start
            start += len(window)
        raise AssertionError("the chosen factor lies in no window")


def tune(evaluate: Callable[[tuple[float, ...]], tuple[np.ndarray, Any]],
         factors: Sequence[float] = TUNING_FACTORS,
         max_extensions: int = MAX_EXTENSIONS) -> Tuned:
    """Tune over `factors`, extending past an edge where the best (lowest) score sits.

    Args:
      evaluate: window (a tuple of factors) -> (scores (len(window),), lower is better; NaN
        where a point failed, payload kept for the caller, e.g. the stacked params).
      factors: the first window.
      max_extensions: windows added each way at most.
    """
    windows, payloads, scores = [tuple(factors)], [], []
    extended = {+1: 0, -1: 0}
    while True:
        s, payload = evaluate(windows[-1])
        scores.append(np.asarray(s, np.float64))
        payloads.append(payload)
        all_f = [f for w in windows for f in w]
        means = np.concatenate(scores)
        finite = np.isfinite(means)
        order = np.argsort(all_f)
        best = lowest(means) if finite.any() else int(order[len(order) // 2])
        side = (+1 if best == order[-1] else -1 if best == order[0] else 0) if finite.any() else 0
        if side == 0 or extended[side] >= max_extensions:
            assert best is not None  # lowest of scores with a finite one
            return Tuned(all_f, means, best, side != 0, windows, payloads)
        extended[side] += 1
        windows.append(extension(factors, all_f[order[-1] if side > 0 else order[0]], side))


__all__ = ["MAX_EXTENSIONS", "TUNE_OFFSET", "TUNING_FACTORS", "Tuned", "extension",
           "final_regret_runs", "half_scores", "lowest", "mean_final_regret", "scaled_points",
           "tune"]
