"""A stand-in for `oslr.sim.simulate` / `sweep` where an experiment's bookkeeping is under test.

The experiments turn studies into tables and figures: which studies they ask for (horizon, runs,
seed, grid, comparator), and which numbers of each result go into which row. `FakeEngine`
records every call and returns a real `SimResult` whose per-run curves are random numbers drawn
from the call's index, so a test can recompute every row from `engine.results` by hand. The
engine itself (streams, learners, metrics) is tested in tests/test_sim.py and friends; the real
experiments run end to end with -m slow and in `oslr reproduce`.
"""

from __future__ import annotations

import itertools
import math
from types import SimpleNamespace

import numpy as np
from scipy import stats

from oslr.result import SimResult


def t_interval(x, axis=None):
    """(mean, half width) of the 95% t interval of `x` (over all of it, or along axis 0),
    computed here with scipy to check the experiments' own `oslr.report.mean_ci`."""
    x = np.asarray(x, np.float64)
    n = x.shape[0] if axis == 0 else x.size
    half = stats.t.ppf(0.975, n - 1) * x.std(ddof=1, axis=axis) / math.sqrt(n)
    return x.mean(axis=axis), half


class _Curves(dict):
    """name -> (G, R, C, *trailing) cumulative sums, drawn on first use (increasing in C)."""

    def __init__(self, rng, shape, trailing):
        super().__init__()
        self.rng, self.shape, self.trailing = rng, shape, trailing

    def __missing__(self, name):
        tail = tuple(self.trailing.get(name, ()))
        steps = self.rng.uniform(0.1, 1.0, self.shape + tail)
        self[name] = np.cumsum(steps, axis=2)
        return self[name]


class _Final(dict):
    """name -> (G, R, *trailing): the curves at the last checkpoint."""

    def __init__(self, curves):
        super().__init__()
        self.curves = curves

    def __missing__(self, name):
        self[name] = self.curves[name][:, :, -1]
        return self[name]


class FakeEngine:
    """`simulate` and `sweep` that record their calls and return results with known numbers.

    Args:
      n_checkpoints: C, the checkpoints (round counts) of each result, the last = horizon.
      trailing: metric name -> shape beyond (G, R, C) (e.g. {"w": (d,)}).
      regret: the quantities `regret_curves()` returns (each a fresh (G, R, C) array).
    """

    def __init__(self, n_checkpoints: int = 4, trailing: dict | None = None,
                 regret: tuple = ("regret", "regret_wstar")):
        self.n_checkpoints = n_checkpoints
        self.trailing = trailing or {}
        self.regret = regret
        self.calls: list[SimpleNamespace] = []
        self.results: list[SimResult] = []

    def simulate(self, learner, problem, params, problem_params, *, horizon, n_runs, seed=0,
                 grid=None, **kwargs):
        labels = list(grid) if grid else [{}]
        ckpts = np.unique(np.linspace(horizon / self.n_checkpoints, horizon,
                                      self.n_checkpoints).round().astype(np.int64))
        rng = np.random.default_rng(len(self.calls))
        shape = (len(labels), n_runs, len(ckpts))
        curves = _Curves(rng, shape, self.trailing)
        res = SimResult(learner=learner.name, problem=problem.name, family=learner.family,
                        horizon=horizon, n_runs=n_runs, seed=seed, ckpts=ckpts, grid=labels,
                        final=_Final(curves), curves=curves, params=params,
                        comparator_k=kwargs.get("comparator_k"),
                        comparator_radius=kwargs.get("comparator_radius"))
        res._regret = {q: rng.normal(5.0, 1.0, shape).cumsum(axis=2) for q in self.regret}
        self.calls.append(SimpleNamespace(learner=learner, problem=problem, params=params,
                                          problem_params=problem_params, horizon=horizon,
                                          n_runs=n_runs, seed=seed, grid=labels, kwargs=kwargs))
        self.results.append(res)
        return res

    def sweep(self, learner, problem, params, problem_params, grid, **kwargs):
        labels = [dict(zip(grid, combo)) for combo in itertools.product(*grid.values())]
        return self.simulate(learner, problem, params, problem_params, grid=labels or None,
                             **kwargs)


__all__ = ["FakeEngine", "t_interval"]
