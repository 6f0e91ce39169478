"""`SimResult`: the labelled output of a study; its regret is its family's comparator
(`oslr.families`, float64, host side).

Kept apart from the harness (`oslr.sim` builds it and imports neither the comparators nor the
reports directly) and from the files and plots (`oslr.report`, which reads it); its tables come
from `oslr.frames`.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from oslr import families

_RECORDERS: list[list] = []


@contextlib.contextmanager
def recording():
    """`with recording() as results:` collects the per-run part (`SimResult.per_run`) of every
    `SimResult` that `oslr.simulate` returns inside the block, in order (`oslr experiment`
    writes their per-run regrets from it)."""
    seen: list = []
    _RECORDERS.append(seen)
    try:
        yield seen
    finally:
        _RECORDERS.remove(seen)


def record(result: "SimResult") -> None:
    """Hand `result` to every active `recording` (called by `oslr.simulate`), as its per-run
    part only (`SimResult.per_run`): a recording that kept whole results held every study's
    checkpoint statistics (the comparator's d x d Gram sums per run and checkpoint, 0.6 GB for
    one a9a tuning call) until the end and ran out of memory in the arena."""
    if _RECORDERS:
        light = result.per_run()
        for seen in _RECORDERS:
            seen.append(light)


@dataclass
class SimResult:
    """Output of `simulate`: streaming metrics per grid point and run.

    Attributes:
      learner, problem, family: names.
      horizon, n_runs, seed: study settings.
      ckpts: (C,) int64 checkpoint round counts (1-based, last = horizon).
      grid: G dicts labelling the grid points.
      final: name -> (G, R, ...) running sums at the horizon.
      curves: name -> (G, R, C, ...) running sums at the checkpoints.
      params: the (G, ...) learner params as numpy.
      comparator_k: sparsity of the F1 comparator class (None when not computed).
      run_offset: index of the first run (run r of the result is run run_offset + r of the
        seed's streams: results with the same seed and runs saw the same streams).
      info: extra labels (problem info, timings, devices).
    """

    learner: str
    problem: str
    family: str
    horizon: int
    n_runs: int
    seed: int
    ckpts: np.ndarray
    grid: list[dict]
    final: dict[str, np.ndarray]
    curves: dict[str, np.ndarray]
    params: Any
    comparator_k: int | None = None
    comparator_radius: float | None = None
    realizable: bool = False
    run_offset: int = 0
    info: dict = field(default_factory=dict)
    _regret: dict | None = field(default=None, repr=False, compare=False)

    def regret_curves(self) -> dict[str, np.ndarray]:
        """Regret at every checkpoint, (G, R, C) per quantity, computed in float64.

        Returns a dict with the quantities that apply (docs/algorithms.md section 2):
          F1: `regret` (exact best k-sparse LS, R1) or `regret_lb_greedy` (R2, a lower bound), and
              `regret_wstar` (R3) on realizable streams; F2: `regret` (R4);
          F3: `pseudo_regret` (R5). Computed once and cached.
        """
        if self._regret is None:
            self._regret = self._compute_regret()
        return self._regret

    def per_run(self) -> "SimResult":
        """A copy holding what the per-run files need and little else: the regret curves
        (computed here once, and cached in this result too), the per-run final sums
        ((G, R) arrays) and the params; the checkpoint statistics (`curves`) and the vector
        and matrix sums (theta_sum, the Gram sums) are dropped."""
        regret = self.regret_curves()
        light = dataclasses.replace(self, curves={}, final=self.per_run_sums())
        light._regret = regret
        return light

    def per_run_sums(self) -> dict[str, np.ndarray]:
        """name -> (G, R) running sum at the horizon of every grid point and run (loss, reward,
        queries, ...); the vector and matrix statistics (theta_sum, the Gram sums) left out."""
        return {name: np.asarray(v) for name, v in self.final.items()
                if np.ndim(v) == 2 and np.shape(v)[0] == len(self.grid)}

    def summary_table(self, compare_to: str | None = None, full: bool = False):
        """pandas DataFrame: final regret per grid point and regret quantity (learner, params,
        metric, mean, sem, 95% interval, runs); with `compare_to` ("best" or a grid point's
        label), each point's paired difference to it on the same runs and the verdict
        (`oslr.report.compare_frame`). `full=True`: every column of summary.csv (the params one
        by one, losses, queries per round, budget violations). The short table prints whole
        (`oslr.frames.FullTable`)."""
        from oslr.frames import FullTable, summary_frame

        table = summary_frame([self], compare_to=compare_to)
        if full:
            return table
        keep = ["learner", "params", "metric", "mean", "sem", "ci_low", "ci_high", "n_runs",
                "diff", "diff_low", "diff_high", "p_holm", "verdict"]
        return FullTable(table[[c for c in keep if c in table]])

    def compare(self, *others: "SimResult", reference: str = "best"):
        """Paired comparison of every grid point of this result and `others` (same seed and
        runs: common random numbers) with `reference` ("best" or an entry's name), Holm-
        corrected: `oslr.report.compare_frame`."""
        from oslr.frames import compare_frame

        return compare_frame([self, *others], reference=reference)

    @staticmethod
    def concat_runs(parts: "list[SimResult]") -> "SimResult":
        """One result from `parts` that ran consecutive runs of the same study (run_offset of
        each = the previous one's plus its runs), e.g. the batches of `oslr run --until`."""
        first = parts[0]
        offset = first.run_offset
        for p in parts:
            if (p.learner, p.problem, p.horizon, p.seed, p.grid) != (
                    first.learner, first.problem, first.horizon, first.seed, first.grid):
                raise ValueError("concat_runs joins batches of one study: learner, problem, "
                                 "horizon, seed and grid must agree.")
            if p.run_offset != offset:
                raise ValueError(f"batches must follow each other: run_offset {p.run_offset} "
                                 f"where {offset} was expected.")
            offset += p.n_runs

        def join(name, which):
            return np.concatenate([getattr(p, which)[name] for p in parts], axis=1)

        return dataclasses.replace(
            first, n_runs=sum(p.n_runs for p in parts),
            final={n: join(n, "final") for n in first.final},
            curves={n: join(n, "curves") for n in first.curves}, _regret=None,
            info=dict(first.info))

    def curves_table(self):
        """pandas DataFrame: regret at every checkpoint with 95% bands (long format)."""
        from oslr.frames import curves_frame

        return curves_frame([self])

    def _compute_regret(self) -> dict[str, np.ndarray]:
        return families.family(self.family).regret(self)
