"""The cross-paper arena (`oslr experiment arena`): every limited-feature regressor of the five
papers on the same streams, with common random numbers, the same exact comparator, the same
tuning budget, and each theorem's bound drawn over its curve.

Protocol, per problem and query budget B (observations per round):

* Every entrant is held to at most B observations per round (`foster.budgeted`); `ogd-full` sees
  all d (the upper reference) and `ito-block-bandit` observes the k features of a k-subset (its
  family is all C(d, k) subsets of the comparator's size, so it uses fewer than B).
* Equal tuning budget: the same five-point grid of factors (`TUNING_FACTORS`) times each
  entrant's step-size constants at their defaults (`Entrant.tune`, several constants move
  together), `tune_runs` runs per point on runs `TUNE_OFFSET`, `TUNE_OFFSET` + 1, ... (a seed
  range no evaluation uses). The point with the lowest mean final regret is kept. Its
  stability: the points two disjoint sets of those runs (the first half, A, and the rest, B)
  would each have chosen alone (`factor_set_a`, `factor_set_b`; NaN with one tuning run).
* Evaluation on fresh runs 0 .. runs - 1 of the same seed: every entrant sees the same streams
  (common random numbers). A dataset is split once into two disjoint halves of its rows
  (`oslr.problems.datasets.part_rows`): the tuning runs replay one, the evaluation runs the
  other, so no row that chose a step size is scored. runs = 5 x tune_runs, so the evaluation
  batch has the tuning batch's shape and reuses its compiled program; its wall time gives
  run-rounds/s.
* Streams in the unit ball by default (`normalise=True`; `--set normalise=false` for the raw
  ones): [FKK], [ITO] and [KKLP] assume ||x|| <= 1 and set their default rates for it, while
  the raw synthetic streams have ||x||_2 = sqrt(d) (4.5 at d = 20) and a9a's rows 3.7. Each
  problem's radius D is set above its best 2-sparse fit at that scale (`PROBLEMS`).
* Tuning without edge effects: where the best of the five factors is the largest (smallest),
  the next five above (below) are tuned too, at most MAX_EXTENSIONS windows each way; the
  board says how many points each entrant tried and whether its choice sits at that cap.
* Regret R1 against the best k-sparse least squares in hindsight on the prefix (exact where
  C(d, k) <= `oslr.families.ENUMERATION_LIMIT`, else R2, a greedy lower bound, labelled so).

Outputs (`arena`): a leaderboard (one row per problem x budget x entrant: regret at T with its
95% interval, rank, its paired difference to the best on the same runs with a Holm-corrected
test of "indistinguishable", observations per round, run-rounds/s, the fitted growth exponent
beside the theorem's), regret curves with bands, each learner's bound at the checkpoints, and
every evaluation run's regret at every checkpoint (NAME-runs.parquet: the board is recomputed
from it). `leaderboard_markdown`, `plot_arena` render them.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import jax
import numpy as np
import pandas as pd

from oslr import atomic
from oslr.checkpoint import forget_studies
from oslr.experiments.foster import budgeted
from oslr.experiments.kale import theorem_2_order, theorem_9_order
from oslr.experiments.tuning import (MAX_EXTENSIONS, TUNE_OFFSET, TUNING_FACTORS, extension,
                                     final_regret_runs, half_scores, lowest, scaled_points,
                                     tune)
from oslr.learners.foster import theorem_1_order
from oslr.program import clear_compiled
from oslr.registry import make_problem
from oslr.report import draw_bound, growth_exponent, mean_ci
from oslr.sim import simulate
from oslr.spec import ExperimentArgs, ExperimentSpec
from oslr.stats import compare

#: Columns of the per-run frame: the regret of every evaluation run at every checkpoint n.
RUNS_COLUMNS = ["problem", "budget", "k", "learner", "seed", "run", "n", "regret"]
#: Part of every cell's key: cells saved by an older protocol (2: datasets tuned on the rows they
#: are evaluated on; 3: no tuning stability) are rerun.
CELL_VERSION = 4
#: Entrants that enumerate C(d, k) subsets are skipped above this many.
MAX_SUBSETS = 20_000
#: ito-projection with a Gaussian A (m = 2 d forms) is skipped above this many forms: its OMP
#: works on the m x m Gram matrix per iteration and round (a9a, m = 246: over 10 minutes a cell
#: here when OMP still solved the whole masked m x m system; not remeasured since).
MAX_FORMS = 200


def _sqrt_order(d, k, budget, t, info):
    return np.sqrt(np.asarray(t, np.float64))


def _thm4(d, k, budget, t, info):
    """[ITO] Theorem 4 as printed: (D + 1)^2 sqrt(8 d / (k - 1)) sqrt(T + 1)."""
    return ((info["radius"] + 1) ** 2 * math.sqrt(8 * d / (budget - 1))
            * np.sqrt(np.asarray(t, np.float64) + 1))


def _thm8(d, k, budget, t, info):
    """[ITO] Theorem 8's first term: (D + 1)^2 sqrt(8 m / (k - k')) sqrt(T + 1); the bound adds
    2 (D + 1) sum_t E[eps_t] (OMP's approximation error), not drawn."""
    return ((info["radius"] + 1) ** 2 * math.sqrt(8 * info["m"] / (budget - k))
            * np.sqrt(np.asarray(t, np.float64) + 1))


def _cor2(d, k, budget, t, info):
    """[ITO] Corollary 2 with q = 0 (VAW): K^(1/3) T^(2/3), K = C(d, k) (order only)."""
    return math.comb(d, k) ** (1 / 3) * np.asarray(t, np.float64) ** (2 / 3)


def _thm2(d, k, budget, t, info):
    return theorem_2_order(d, k, budget - k, t)


def _thm9(d, k, budget, t, info):
    return theorem_9_order(d, k, budget, t)


def _thm1(d, k, budget, t, info):
    return theorem_1_order(d, k, budget, t)


@dataclass(frozen=True)
class Entrant:
    """One arena row: a registry learner, its options, the constants the tuning grid scales, and
    its theorem (a function (d, k, budget, t, info) -> bound at t, its label, whether the paper
    gives only the order, the theorem's growth in T and its exponent)."""

    label: str
    learner: str
    tune: tuple[str, ...]
    options: dict = field(default_factory=dict)
    bound: Callable | None = None
    bound_label: str = ""
    order_only: bool = True
    theory: str = "none"
    theory_exponent: float = float("nan")
    realizable_only: bool = False
    reference: bool = False


ENTRANTS = (
    Entrant("ogd-full", "ogd-full", ("eta",), bound=_sqrt_order, bound_label="OGD: O(sqrt T)",
            theory="sqrt T", theory_exponent=0.5, reference=True),
    Entrant("ogd-random-subset", "ogd-random-subset", ("eta",), theory="none (linear)",
            reference=True),
    Entrant("ito-dual-averaging", "ito-dual-averaging", ("lam_scale",), bound=_thm4,
            bound_label="[ITO] Thm 4 (lam_scale = 1)", order_only=False, theory="sqrt T",
            theory_exponent=0.5),
    Entrant("ito-projection (A = I)", "ito-projection", ("lam_scale",),
            {"projection": "identity"}, bound=_thm8,
            bound_label="[ITO] Thm 8 without its OMP-error term", order_only=False,
            theory="sqrt T", theory_exponent=0.5),
    Entrant("ito-projection (Gaussian A)", "ito-projection", ("lam_scale",),
            {"projection": "gaussian"}, bound=_thm8,
            bound_label="[ITO] Thm 8 without its OMP-error term", order_only=False,
            theory="sqrt T", theory_exponent=0.5),
    Entrant("ito-block-bandit", "ito-block-bandit", ("eta_scale",), bound=_cor2,
            bound_label="[ITO] Cor. 2 (q = 0)", theory="T^(2/3)", theory_exponent=2 / 3),
    Entrant("dantzig-poslr", "dantzig-poslr", ("c_lambda",), bound=_thm2,
            bound_label="[KKLP] Thm 2", theory="log T", theory_exponent=0.0,
            realizable_only=True),
    Entrant("online-greedy", "online-greedy", ("eta_scale",), bound=_thm9,
            bound_label="[KKLP] Thm 9", theory="T^(2/3)", theory_exponent=2 / 3),
    Entrant("foster-hedge", "foster-hedge", ("eta_hedge_scale", "eta_sgd_scale"), bound=_thm1,
            bound_label="[FKK] Thm 1", theory="sqrt T", theory_exponent=0.5),
)

@dataclass(frozen=True)
class ArenaProblem:
    """A registry problem with its options, whether the theorems' realizable assumption holds,
    the radius D given to every learner that has one (the theorems' known bound on ||w*||), and
    a description. Synthetic problems also take d, k and sigma = 0.1. `unit_options` and
    `unit_radius`: the options that put every x in the unit ball (||x||_2 <= 1, as [FKK],
    [ITO] and [KKLP] assume and their default rates are set for) and the radius D there (above
    the norm of the best k = 2-sparse fit, measured on 20,000 rounds or the whole data)."""

    registry: str
    options: dict
    realizable: bool
    radius: float
    text: str
    unit_options: dict = field(default_factory=dict)
    unit_radius: float | None = None

    def settings(self, normalise: bool) -> tuple[dict, float]:
        """(registry options, radius D) of the raw or the normalised stream."""
        if not normalise:
            return dict(self.options), self.radius
        return {**self.options, **self.unit_options}, (
            self.radius if self.unit_radius is None else self.unit_radius)


_UNIT = {"unit_x": True}
PROBLEMS = {
    "rip": ArenaProblem("sparse-linear", {"design": "rademacher"}, True, 1.0,
                        "realizable, Rademacher x (RIP), ||w*||_1 = 1, sigma = 0.1", _UNIT),
    "agnostic": ArenaProblem("agnostic", {"design": "rademacher"}, False, 1.0,
                             "y = sign(<w*, x>) with 10% flips, Rademacher x (best 2-sparse "
                             "fit: ||w|| = 0.80 raw, 3.6 with ||x|| = 1, D = 4)", _UNIT, 4.0),
    "drifting": ArenaProblem("drifting", {}, False, 1.0,
                             "w* random-walks on its support (drift 0.01), Gaussian x", _UNIT),
    "correlated": ArenaProblem("sparse-linear", {"design": "correlated"}, False, 1.0,
                               "realizable, correlated columns (not RIP)", _UNIT),
    "kegg": ArenaProblem("kegg", {"scale": "columns"}, False, 12.0,
                         "UCI KEGG, real target, columns scaled to max |x_j| = 1, ||x|| <= 1, "
                         "D = 12 (the best 2-sparse fit of the whole data has ||w|| = 10.7)"),
    "a9a": ArenaProblem("a9a", {}, False, 1.0,
                        "a9a, +-1 labels under the square loss (best 2-sparse fit: ||w|| = 1.1 "
                        "raw, where ||x|| = 3.7; 4.2 with ||x|| = 1, D = 5)",
                        {"scale": "columns"}, 5.0),
}
SYNTHETIC = ("rip", "agnostic", "drifting", "correlated")


def arena_problem(name: str, d: int, k: int, normalise: bool = True, part: str = "all"):
    """(problem, problem_params, number of rows or None) of arena problem `name` (`normalise`:
    its unit-ball variant, `ArenaProblem.settings`; `part`: a dataset's rows, all or the
    tuning or evaluation half, `oslr.problems.datasets.part_rows`; ignored by the synthetic
    streams, whose runs are independent draws)."""
    if name not in PROBLEMS:
        raise ValueError(f"unknown arena problem {name!r}; available: {', '.join(PROBLEMS)}.")
    spec = PROBLEMS[name]
    options, _ = spec.settings(normalise)
    if name in SYNTHETIC:
        problem, pp = make_problem(spec.registry, d=d, k=k, sigma=0.1, **options)
    else:
        problem, pp = make_problem(spec.registry, part=part, **options)
    return problem, pp, getattr(problem, "n_rows", None)


def skip_reason(entrant: Entrant, d: int, k: int, budget: int, realizable: bool) -> str | None:
    """Why `entrant` does not run at (d, k, budget), or None."""
    if entrant.learner in ("foster-hedge", "ito-block-bandit") and math.comb(d, k) > MAX_SUBSETS:
        return f"C({d}, {k}) = {math.comb(d, k):,} subsets > {MAX_SUBSETS:,}"
    if entrant.learner == "foster-hedge" and budget < k + 2:
        return f"needs a budget k' >= k + 2 = {k + 2}"
    if entrant.learner == "dantzig-poslr" and budget <= k:
        return f"needs a budget k0 + k > k = {k}"
    if entrant.learner == "ito-projection" and budget <= k:
        return f"needs k' = k < budget, k = {k}"
    if entrant.options.get("projection") == "gaussian" and 2 * d > MAX_FORMS:
        return f"m = 2d = {2 * d} forms > {MAX_FORMS} (an m x m OMP solve per round)"
    return None


def check_runs(runs: int, factors: Sequence[float] = TUNING_FACTORS) -> None:
    """Refuse evaluation runs that are not a multiple of the tuning points (the tuning batch,
    points x runs / points, must have the evaluation batch's shape to share its program)."""
    n = len(factors)
    if runs % n:
        raise ValueError(f"arena runs must be a multiple of {n} (the {n} tuning points share the "
                         f"evaluation batch); got {runs}.")


def _entrant_learner(entrant: Entrant, d: int, k: int, budget: int, horizon: int,
                     radius: float):
    options = dict(entrant.options, radius=radius)
    if entrant.learner == "ito-projection":  # OMP built for k' = k atoms, not budget - 1
        options.update(k_prime=k, max_observed=budget, max_k_prime=k)
    return budgeted(entrant.learner, d, k, budget, horizon, **options)


def _metric(reg: dict) -> str:
    return "regret" if "regret" in reg else "regret_lb_greedy"


def run_entrant(entrant: Entrant, problem, pp, d: int, k: int, budget: int, horizon: int,
                runs: int, seed: int = 0, factors: Sequence[float] = TUNING_FACTORS,
                progress: bool = False, radius: float = 1.0, tuning_stream=None):
    """Tune `entrant` on the tuning runs, evaluate the chosen point on runs 0 .. runs - 1.

    tuning_stream: (problem, params) the tuning runs play instead of (problem, pp) (a
    dataset's tuning half of the rows); it must have the same shapes.

    runs must be a multiple of len(factors) (the evaluation batch then has the tuning batch's
    shape). Where the best tuning point is the grid's largest (smallest) factor, the next
    window of factors above (below) it is tuned too (`extension`), until the best is interior
    or MAX_EXTENSIONS windows were added that way (then `at_cap` is True). Returns (summary
    dict, checkpoints (C,), regret curves of the evaluation (runs, C), tuning table (one dict
    per factor tried, by factor: mean final regret on the tuning runs, whether it was chosen,
    the solver warnings of the entrant's tuning studies)).
    """
    check_runs(runs, factors)
    tune_runs = runs // len(factors)
    learner, params, observed = _entrant_learner(entrant, d, k, budget, horizon, radius)
    common: dict[str, Any] = dict(horizon=horizon, seed=seed, comparator_k=k, progress=progress)

    solver_notes: list[str] = []
    tune_problem, tune_pp = tuning_stream or (problem, pp)

    def evaluate(window):
        labels, stacked = scaled_points(params, entrant.tune, window)
        # a learner's solver warnings at a tuning point (dantzig-poslr's unconverged LPs at an
        # extreme factor) go to the tuning log, not to the screen: the chosen point's
        # evaluation still warns
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RuntimeWarning)
            tuning = simulate(learner, tune_problem, stacked, tune_pp, grid=labels,
                              n_runs=tune_runs, run_offset=TUNE_OFFSET, **common)
        solver_notes.extend(str(w.message) for w in caught
                            if issubclass(w.category, RuntimeWarning))
        finals = final_regret_runs(tuning)
        return np.nanmean(finals, axis=1), (labels, stacked, finals)

    # the same tuning runs and batch shape in every window: the compiled program is reused
    tuned = tune(evaluate, factors)
    best, at_cap, tmeans = tuned.best, tuned.at_cap, tuned.scores
    labels = [lab for lab_window, _, _ in tuned.payloads for lab in lab_window]
    window, local = tuned.chosen()
    chosen = jax.tree.map(lambda a: a[local:local + 1], tuned.payloads[window][1])
    tuned_factors = tuned.factors
    # the choice's stability: what each of two disjoint sets of the tuning runs (the first
    # half, A, and the rest, B) would have chosen alone
    finals = np.concatenate([f for _, _, f in tuned.payloads])  # (points tried, tune_runs)
    sets = half_scores(finals) or (np.full(len(finals), np.nan),) * 2
    by_set = [np.nan if (i := lowest(h)) is None else tuned_factors[i] for h in sets]
    t0 = time.perf_counter()
    res = simulate(learner, problem, chosen, pp, grid=[labels[best]], n_runs=runs, **common)
    wall = time.perf_counter() - t0
    reg = res.regret_curves()
    metric = _metric(reg)
    curves = np.asarray(reg[metric][0], np.float64)  # (runs, C)
    mean, _, half = mean_ci(curves[:, -1])
    info = dict(learner.info or {}, radius=radius)
    summary = {
        "learner": entrant.label, "registry": entrant.learner, "d": d, "k": k, "budget": budget,
        "observed": observed, "horizon": horizon, "runs": runs, "metric": metric,
        "regret": mean, "ci_low": mean - half, "ci_high": mean + half,
        "tuned": ", ".join(f"{n}={labels[best][n]:.4g}" for n in entrant.tune),
        "factor": tuned_factors[best], "tuning_points": len(labels), "at_cap": at_cap,
        "factor_set_a": by_set[0], "factor_set_b": by_set[1],
        "run_rounds_per_s": runs * horizon / wall,
        "theory": entrant.theory, "theory_exponent": entrant.theory_exponent,
        "reference": entrant.reference,
    }
    tuning_rows = [{"learner": entrant.label, "factor": f, "tuning_regret": float(tmeans[i]),
                    "tuning_regret_set_a": float(sets[0][i]),
                    "tuning_regret_set_b": float(sets[1][i]),
                    "chosen": i == best, "solver_warnings": " | ".join(solver_notes)}
                   for i, f in sorted(enumerate(tuned_factors), key=lambda x: x[1])]
    return summary, res.ckpts, curves, tuning_rows, info


def arena(problems: Sequence[str] = tuple(PROBLEMS), d: int = 20, k: int = 2,
          budgets: Sequence[int] = (5, 10), horizon: int = 20_000, runs: int = 20,
          seed: int = 0, entrants: Sequence[Entrant] = ENTRANTS,
          factors: Sequence[float] = TUNING_FACTORS, progress: bool = False,
          cells_dir: str | Path | None = None, normalise: bool = True):
    """Run every entrant on every problem and budget (see the module docstring).

    Args:
      problems: names in `PROBLEMS`; d applies to the synthetic ones (the datasets have theirs).
      k: sparsity of the comparator (and of w* on the synthetic streams).
      budgets: observations per round B; on a dataset B scales with its d (B / d as at `d`).
      horizon: rounds T; a dataset plays at most one pass.
      runs: evaluation runs (a multiple of len(factors); runs / len(factors) tune each point).
      progress: a bar over the problem x budget x entrant cells.
      cells_dir: a folder where each finished cell is saved (one JSON file per problem, budget
        and entrant, named by its settings) and from which a rerun with the same settings takes
        it instead of recomputing it: an interrupted study resumes where it stopped.
      normalise: every x in the unit ball, as the theorems assume (`ArenaProblem.settings`:
        ||x||_2 = 1 on the synthetic streams, a9a's rows scaled to ||x|| = 1, with the radius D
        of each); False: the raw streams (||x||_2 = sqrt(d) on the synthetic ones).

    Returns:
      (board, curves, tuning, runs) DataFrames: one row per problem x budget x entrant (skipped
      entrants with their reason; its paired comparison with the best, `rank`), one per
      checkpoint (mean, 95% band, bound), one per tuning point, one per evaluation run and
      checkpoint (RUNS_COLUMNS: the regret of every run, from which the board is recomputed).
    """
    unknown = [name for name in problems if name not in PROBLEMS]
    if unknown:  # before any work
        raise ValueError(f"unknown arena problems {unknown}; available: {', '.join(PROBLEMS)}.")
    check_runs(runs, factors)
    rows, curve_rows, tuning_rows, run_rows = [], [], [], []
    bar = _bar(len(problems) * len(budgets) * len(entrants), progress)
    for name in problems:
        # a dataset's tuning runs replay one half of its rows, its evaluation runs the other
        # (shuffles of the same rows would share about half of them between the two)
        held_out = name not in SYNTHETIC
        problem, pp, n_rows = arena_problem(name, d, k, normalise,
                                            "eval" if held_out else "all")
        tuning_stream = arena_problem(name, d, k, normalise, "tune")[:2] if held_out else None
        radius = PROBLEMS[name].settings(normalise)[1]
        realizable = PROBLEMS[name].realizable
        p_d = problem.d
        p_horizon = min(horizon, n_rows) if n_rows else horizon
        for b in budgets:
            budget = b if name in SYNTHETIC else max(k + 1, int(round(b * p_d / d)))
            for entrant in entrants:
                if bar is not None:
                    bar.set_description(f"{name} B={budget} {entrant.label}")
                base = {"problem": name, "learner": entrant.label, "d": p_d, "k": k,
                        "budget": budget, "horizon": p_horizon, "normalised": bool(normalise)}
                why = skip_reason(entrant, p_d, k, budget, realizable)
                if why is not None:
                    rows.append({**base, "skipped": why})
                    if bar is not None:
                        bar.update()
                    continue
                cell = _cell_path(cells_dir, name, budget, entrant, d, k, p_horizon, runs,
                                  seed, factors, normalise)
                if cell is not None and cell.exists():
                    saved = atomic.read_json(cell, "arena cell", "delete it to run that cell "
                                             "again.")
                else:
                    saved = _play_cell(entrant, base, problem, pp, k, budget, runs, seed,
                                       factors, radius, tuning_stream, realizable)
                    if cell is not None:
                        cell.parent.mkdir(parents=True, exist_ok=True)
                        atomic.write_json_atomic(cell, saved, default=_plain)
                        forget_studies()  # the cell file holds what its studies gave
                rows.append(saved["row"])
                curve_rows += saved["curves"]
                tuning_rows += saved["tuning"]
                run_rows += saved["runs"]
                if bar is not None:
                    bar.update()
    if bar is not None:
        bar.close()
    runs_frame = pd.DataFrame(run_rows, columns=RUNS_COLUMNS).assign(seed=seed)  # one seed
    board = rank(pd.DataFrame(rows), runs_frame)
    return board, pd.DataFrame(curve_rows), pd.DataFrame(tuning_rows), runs_frame


def _play_cell(entrant: Entrant, base: dict, problem, pp, k: int, budget: int, runs: int,
               seed: int, factors, radius, tuning_stream, realizable: bool) -> dict:
    """One arena cell (a problem, a budget, an entrant) tuned and played: its board row, its
    curve rows (mean, band and bound at each checkpoint), its tuning rows and every
    evaluation run's regret at every checkpoint, as a cell file keeps them."""
    name, p_d, p_horizon = base["problem"], base["d"], base["horizon"]
    summary, ckpts, curves, tuning, info = run_entrant(
        entrant, problem, pp, p_d, k, budget, p_horizon, runs, seed, factors, False, radius,
        tuning_stream)
    clear_compiled()  # each cell compiles its own programs; keep none alive
    has_bound = entrant.bound is not None and (realizable or not entrant.realizable_only)
    bound = (entrant.bound(p_d, k, budget, ckpts, info)  # type: ignore[misc]  # has_bound
             if has_bound
             else np.full(len(ckpts), np.nan))
    mean, _, half = mean_ci(curves, axis=0)
    exponent = growth_exponent(ckpts, mean, t_min=p_horizon / 100)
    bound_label = (entrant.bound_label + (" (order only, constant 1)" if entrant.order_only
                                          else "") if has_bound else "")
    row = {**base, **summary, "problem": name, "exponent": exponent, "bound": float(bound[-1]),
           "bound_label": bound_label, "skipped": ""}
    return {
        "row": row,
        "curves": [{"problem": name, "learner": entrant.label, "budget": budget, "n": int(n),
                    "mean": mean[c], "ci_low": mean[c] - half[c], "ci_high": mean[c] + half[c],
                    "bound": bound[c], "bound_label": bound_label}
                   for c, n in enumerate(ckpts)],
        "tuning": [{**t, "problem": name, "budget": budget} for t in tuning],
        "runs": [{"problem": name, "budget": budget, "k": k, "learner": entrant.label,
                  "run": r, "n": int(n), "regret": float(curves[r, c])}
                 for r in range(curves.shape[0]) for c, n in enumerate(ckpts)]}


def _bar(total: int, progress: bool):
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="learner")


def _cell_path(cells_dir, problem: str, budget: int, entrant: Entrant, d: int, k: int,
               horizon: int, runs: int, seed: int, factors, normalise: bool) -> Path | None:
    if cells_dir is None:
        return None
    key = json.dumps([CELL_VERSION, problem, budget, entrant.label, entrant.learner,
                      entrant.tune, sorted(entrant.options.items()), d, k, horizon, runs, seed,
                      list(factors), bool(normalise)])
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    safe = "".join(c if c.isalnum() else "-" for c in entrant.label)
    return Path(cells_dir) / f"{problem}-b{budget}-{safe}-{digest}.json"


def _plain(value):
    """JSON for numpy scalars."""
    return value.item() if hasattr(value, "item") else str(value)


def _skipped(board: pd.DataFrame) -> pd.Series:
    """Rows of entrants that did not run (a reason in `skipped`; read back from a CSV the column
    is NaN where they ran)."""
    return board["skipped"].astype("string").fillna("") != ""


def final_regrets(runs: pd.DataFrame, problem: str, budget: int) -> dict[str, np.ndarray]:
    """learner -> (runs,) regret at T of one problem x budget, from the per-run frame (in the
    order of the runs; every learner of a cell ran the same runs)."""
    part = runs[(runs["problem"] == problem) & (runs["budget"] == budget)]
    last = part[part["n"] == part.groupby("learner")["n"].transform("max")]
    return {name: grp.sort_values("run")["regret"].to_numpy(np.float64)
            for name, grp in last.groupby("learner", sort=False)}


def rank(board: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """Rank the entrants of each problem x budget by mean regret (1 = lowest) and compare each
    with the best one on the same runs (`oslr.stats.compare`: paired t on the per-run
    differences, Holm's correction over all pairs of the cell's entrants, a family fixed
    before the best is picked, family-wise 5%; the sign-flip test of the same mean beside it,
    Holm over the same family):
    `tied_with_best` unless both tests put it behind the best (indistinguishable from it: the
    rule of every docs table, where a "win" needs the distribution-free test too),
    `diff_to_best` with its 95% interval (`diff_low`, `diff_high`, unadjusted), `p_holm` (t),
    `p_free_holm` (sign-flip), and `worse_runs` / `better_runs`: the runs where it is behind /
    ahead of the best."""
    board = board.copy()
    for col, fill in (("rank", np.nan), ("tied_with_best", False), ("diff_to_best", np.nan),
                      ("diff_low", np.nan), ("diff_high", np.nan), ("p_holm", np.nan),
                      ("p_free_holm", np.nan), ("worse_runs", np.nan), ("better_runs", np.nan)):
        board[col] = fill
    ran = ~_skipped(board)
    for (problem, budget), part in board[ran].groupby(["problem", "budget"]):
        board.loc[part.index, "rank"] = part["regret"].rank(method="min")
        finals = final_regrets(runs, problem, budget)
        names = [n for n in part["learner"] if n in finals]
        table = compare({n: finals[n] for n in names}).set_index("name")
        for i, r in part.iterrows():
            t = table.loc[r["learner"]]
            board.loc[i, ["diff_to_best", "diff_low", "diff_high", "p_holm", "p_free_holm",
                          "worse_runs", "better_runs"]] = [
                t["diff"], t["diff_low"], t["diff_high"], t["p_holm"], t["p_free_holm"],
                t["behind"], t["ahead"]]
            # behind only where both tests say so; a diverged run is never a tie
            board.loc[i, "tied_with_best"] = t["verdict"] in ("reference", "indistinguishable") \
                or (t["verdict"] == "worse" and t["free_verdict"] != "worse")
    return board


def rerank_saved(folder: Path, name: str = "arena") -> pd.DataFrame:
    """Recompute the comparisons of a finished arena's leaderboard (`rank`, each k apart) from
    its per-run file and rewrite NAME.csv / .json / .md in `folder`: for a board written by an
    older comparison rule; no run is simulated and no other file changes."""
    folder = Path(folder)
    board = pd.read_csv(folder / f"{name}.csv")  # numbers to the last digit
    cells = pd.DataFrame(json.loads((folder / f"{name}.json").read_text()))
    for col in cells.columns:  # text and flags from the JSON, where "" and null differ
        text = not pd.api.types.is_numeric_dtype(cells[col]) and cells[col].notna().any()
        if text or cells[col].dtype == bool:
            board[col] = cells[col]
    runs = pd.read_parquet(folder / f"{name}-runs.parquet")
    parts = [rank(board[board["k"] == k], runs[runs["k"] == k]) for k in board["k"].unique()]
    board = pd.concat(parts).loc[board.index]
    atomic.write_frame_atomic(folder / f"{name}.csv", board)
    atomic.write_frame_atomic(folder / f"{name}.json", board, orient="records", indent=1)
    atomic.write_text_atomic(folder / f"{name}.md", leaderboard_markdown(board))
    return board


def vs_best(r) -> str:
    """The leaderboard's "vs best" cell: the paired difference to the best with its interval and
    the runs behind it; "indistinguishable" unless the paired t test and the sign-flip test, each
    after Holm, both put it behind."""
    if r["diff_to_best"] == 0 and r["rank"] == 1:
        return "best"
    n = int(r["runs"])
    diff = (f"{r['diff_to_best']:+,.1f} ({r['diff_low']:+,.1f}, {r['diff_high']:+,.1f}), "
            f"behind in {int(r['worse_runs'])}/{n} runs")
    return f"indistinguishable: {diff}" if r["tied_with_best"] else f"behind: {diff}"


def leaderboard_markdown(board: pd.DataFrame) -> str:
    """The leaderboard as Markdown: one table per problem x budget (x k), best first."""
    out = []
    for (name, budget, _), part in board.groupby(["problem", "budget", "k"], sort=False):
        first = part.iloc[0]
        desc = PROBLEMS[name].text if name in PROBLEMS else ""
        if "normalised" in part and name in PROBLEMS:
            unit = bool(part["normalised"].iloc[0])
            desc += ("; x in the unit ball" if unit else "; raw x (not normalised)") + (
                f", D = {PROBLEMS[name].settings(unit)[1]:g}")
        out.append(f"### {name} (d = {first['d']}, k = {first['k']}, budget {budget}, "
                   f"T = {int(first['horizon']):,}): {desc}\n")
        out.append("| rank | learner | obs/round | tuned | regret at T (95% CI) | vs best "
                   "(paired, 95% CI; t and sign-flip, Holm) | exponent (theory) | bound at T | "
                   "run-rounds/s |")
        out.append("|---|---|---|---|---|---|---|---|---|")
        ran = part[~_skipped(part)].sort_values("regret")
        for _, r in ran.iterrows():
            metric = "" if r["metric"] == "regret" else " (R2 lower bound)"
            vs = vs_best(r)
            bound = (f"{r['bound']:,.0f} ({r['bound_label']})" if np.isfinite(r["bound"])
                     else "-")
            theory = r["theory"]
            out.append(
                f"| {int(r['rank'])} | {r['learner']}{' (reference)' if r['reference'] else ''}"
                f" | {int(r['observed'])} | {r['tuned']} | {r['regret']:,.1f} "
                f"({r['ci_low']:,.1f}, {r['ci_high']:,.1f}){metric} | {vs} | "
                f"{r['exponent']:.2f} ({theory}) | {bound} | {r['run_rounds_per_s']:.3g} |")
        for _, r in part[_skipped(part)].iterrows():
            out.append(f"| - | {r['learner']} | - | - | not run: {r['skipped']} | | | | |")
        out.append("")
    if "at_cap" in board:
        ran = board[~_skipped(board)]
        capped = ran[ran["at_cap"].astype(bool)]
        out.append(f"Tuning: {len(capped)} of {len(ran)} chosen factors at the cap of the "
                   f"extended grid (one window of {len(TUNING_FACTORS)} factors past each edge)"
                   + (": " + ", ".join(f"{r['learner']} on {r['problem']} B={r['budget']} "
                                       f"(factor {r['factor']:g})"
                                       for _, r in capped.iterrows()) if len(capped) else "")
                   + ".\n")
    stable = tuning_stability(board)
    if len(stable):
        out.append(f"Tuning stability: in {stable['sets_agree'].sum()} of {len(stable)} cells the "
                   "two disjoint sets of tuning runs would each have chosen the same factor "
                   f"({stable['sets_chose_it'].sum()} of them the factor all the tuning runs "
                   "chose).\n")
    return "\n".join(out)


def tuning_stability(board: pd.DataFrame) -> pd.DataFrame:
    """The board's rows that ran with two sets of tuning runs (`run_entrant`: factor_set_a and
    factor_set_b not NaN; none for a board without them), with `sets_agree` (A and B chose the
    same factor) and `sets_chose_it` (both chose the factor used)."""
    if "factor_set_a" not in board:
        return board.iloc[:0].assign(sets_agree=False, sets_chose_it=False)
    ran = board[~_skipped(board) & board["factor_set_a"].notna() & board["factor_set_b"].notna()]
    a, b = ran["factor_set_a"].to_numpy(float), ran["factor_set_b"].to_numpy(float)
    same = np.isclose(a, b, rtol=1e-9)
    return ran.assign(sets_agree=same,
                      sets_chose_it=same & np.isclose(a, ran["factor"].to_numpy(float), rtol=1e-9))


def plot_arena(curves: pd.DataFrame, problem: str, budget: int, path: str | Path | None = None,
               title: str = ""):
    """Small multiples, one panel per learner, on shared log-log axes: its regret against t with
    the 95% band, its theorem's bound dashed (labelled; "order only" where the paper gives no
    constant) and the two references in grey (`ogd-full` solid, `ogd-random-subset` dotted).
    Non-positive regrets are not drawn on the log axis."""
    import matplotlib

    if path is not None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    part = curves[(curves["problem"] == problem) & (curves["budget"] == budget)]
    learners = list(dict.fromkeys(part["learner"]))
    ncols = min(3, len(learners))
    nrows = -(-len(learners) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.2 * nrows), sharex=True,
                             sharey=True, squeeze=False)
    refs = {name: part[part["learner"] == name] for name in ("ogd-full", "ogd-random-subset")}
    for ax, label in zip(axes.flat, learners):
        for name, style in (("ogd-full", "-"), ("ogd-random-subset", ":")):
            ref = refs[name]
            if len(ref) and name != label:
                pos = ref[ref["mean"] > 0]
                ax.plot(pos["n"], pos["mean"], style, color="0.6", lw=1, label=name)
        one = part[part["learner"] == label]
        pos = one[one["mean"] > 0]
        (line,) = ax.plot(pos["n"], pos["mean"], color="C0", label=label)
        ax.fill_between(pos["n"], np.maximum(pos["ci_low"], pos["mean"] * 1e-2), pos["ci_high"],
                        color="C0", alpha=0.2, linewidth=0)
        if one["bound"].notna().any():
            keep = one["bound"] > 0
            draw_bound(ax, one["n"][keep], one["bound"][keep], one["bound_label"].iloc[0],
                       color="C3")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(label, fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6, loc="upper left")
    for ax in axes.flat[len(learners):]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("round t")
    for ax in axes[:, 0]:
        ax.set_ylabel("regret (best k-sparse LS)")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    if path is not None:
        atomic.save_figure_atomic(fig, path, 110)
    return fig


# ----------------------------------------------------------------------------- experiments

#: The arena's sizes: full (docs/arena.md; 20 evaluation runs, so that the sign-flip test can
#: decide a pair after Holm over a cell's 36, and 4 tuning runs a point, two disjoint sets of 2
#: for the choice's stability), --quick (the nine entrants on `rip`, 20 runs too, since at 10 no
#: pair could be decided; small enough to check the chain, most of its time compiling) and
#: arena-long.
ARENA_FULL = dict(problems=("rip", "agnostic", "drifting", "correlated", "kegg", "a9a"), d=20,
                  k=2, budgets=(5, 10), horizon=20_000, runs=20)
ARENA_QUICK = dict(problems=("rip",), d=10, k=2, budgets=(5,), horizon=1000, runs=20)
ARENA_LONG = dict(problems=("rip",), d=20, k=2, budgets=(5,), horizon=100_000, runs=20)
#: The k/d grid: one arena per comparator sparsity k (`ks`), k = 2 as in ARENA_FULL.
ARENA_K = dict(problems=("rip",), d=20, ks=(1, 2, 4), budgets=(10,), horizon=20_000, runs=20)


def run_arena(runs: int | None, seed: int, out: Path, quick: bool, progress: bool,
              name: str = "arena", sizes: dict | None = None,
              normalise: bool = True) -> pd.DataFrame:
    """`oslr experiment arena`: write NAME.csv / .json / .md, NAME-curves.csv, NAME-tuning.csv,
    NAME-runs.parquet (every evaluation run's regret at every checkpoint) and one
    NAME-PROBLEM-bB.png per problem and budget into `out` (NAME: arena, arena-long or
    arena-k; arena-k runs one arena per k in sizes["ks"], its figures named
    NAME-PROBLEM-bB-kK.png)."""
    kw = dict(sizes or (ARENA_QUICK if quick else ARENA_FULL))
    if runs is not None:
        kw["runs"] = runs
    check_runs(kw["runs"])  # before the output folder is made
    out.mkdir(parents=True, exist_ok=True)
    ks, k_one = kw.pop("ks", None), kw.pop("k", 2)
    parts = []
    for k in ks or (k_one,):
        # finished cells are kept under out/NAME-cells: a rerun after an interruption resumes
        parts.append(arena(seed=seed, progress=progress, k=k, normalise=normalise,
                           cells_dir=out / f"{name}-cells", **kw))
    board, curves, tuning, runs_frame = (pd.concat(frames, ignore_index=True)
                                         for frames in zip(*parts))
    if ks is not None:
        curves["k"] = np.concatenate([np.full(len(p[1]), k) for p, k in zip(parts, ks)])
    # each file replaced whole (oslr.atomic): a kill leaves none that reads as complete
    atomic.write_frame_atomic(out / f"{name}.csv", board)
    atomic.write_frame_atomic(out / f"{name}.json", board, orient="records", indent=1)
    atomic.write_text_atomic(out / f"{name}.md", leaderboard_markdown(board))
    atomic.write_frame_atomic(out / f"{name}-curves.csv", curves)
    atomic.write_frame_atomic(out / f"{name}-tuning.csv", tuning)
    atomic.write_frame_atomic(out / f"{name}-runs.parquet", runs_frame)
    try:
        import matplotlib.pyplot as plt

        for (problem, budget, k), part in board[~_skipped(board)].groupby(
                ["problem", "budget", "k"], sort=False):
            first = part.iloc[0]
            title = (f"{problem}: d={first['d']}, k={k}, budget {budget}, "
                     f"{first['runs']} runs, 95% bands; dashed: bounds")
            own = curves if ks is None else curves[curves["k"] == k]
            stem = f"{name}-{problem}-b{budget}" + ("" if ks is None else f"-k{k}")
            plt.close(plot_arena(own, problem, budget, out / f"{stem}.png", title))
    except ImportError:  # pragma: no cover - plotting is optional
        pass
    return board


def _run_spec(name: str):
    def run(a: ExperimentArgs) -> pd.DataFrame:
        sizes = {"arena": None,
                 "arena-long": ARENA_LONG if not a.quick else dict(ARENA_QUICK, horizon=3000),
                 "arena-k": ARENA_K if not a.quick else dict(ARENA_QUICK, ks=(1, 2))}[name]
        return run_arena(a.runs, a.seed, a.out, a.quick, a.progress, name=name, sizes=sizes,
                         normalise=bool(a.options.get("normalise", True)))

    return run


def _files(name: str, figures: str) -> tuple[str, ...]:
    return (f"{name}.csv", f"{name}.json", f"{name}.md", f"{name}-curves.csv",
            f"{name}-tuning.csv", f"{name}-runs.parquet", figures)


ARENA_SPEC = ExperimentSpec(
    "arena", "every limited-feature regressor on the same streams, equal tuning budget: "
    "leaderboard, regret curves with the theorems' bounds, growth exponents", _run_spec("arena"),
    sizes="6 problems x 2 budgets, d = 20, T = 20,000, 20 runs (4 tuning runs a point); "
    "quick: rip, d = 10, T = 1,000", files=_files("arena", "arena-PROBLEM-bBUDGET.png"),
    docs="docs/arena.md", summary=leaderboard_markdown, records_runs=False,
    extra_options=("normalise",))
ARENA_K_SPEC = ExperimentSpec(
    "arena-k", "the arena's RIP stream over a k/d grid (k = 1, 2, 4 at d = 20, budget 10)",
    _run_spec("arena-k"), sizes="k = 1, 2, 4, T = 20,000, 20 runs; quick: k = 1, 2 at quick sizes",
    files=_files("arena-k", "arena-k-rip-bBUDGET-kK.png"), docs="docs/arena.md",
    summary=leaderboard_markdown, records_runs=False,
    extra_options=("normalise",))
ARENA_LONG_SPEC = ExperimentSpec(
    "arena-long", "the arena's RIP stream at T = 1e5 (budget 5): growth exponents over three "
    "decades beside the theorems'", _run_spec("arena-long"),
    sizes="T = 100,000, budget 5, 20 runs; quick: T = 3,000",
    files=_files("arena-long", "arena-long-rip-b5.png"), docs="docs/arena.md",
    summary=leaderboard_markdown, records_runs=False,
    extra_options=("normalise",))


__all__ = ["ARENA_FULL", "ARENA_K", "ARENA_K_SPEC", "ARENA_LONG", "ARENA_LONG_SPEC", "ARENA_QUICK",
           "ARENA_SPEC", "ENTRANTS", "MAX_EXTENSIONS", "PROBLEMS", "TUNING_FACTORS",
           "ArenaProblem", "Entrant", "extension",
           "RUNS_COLUMNS", "arena", "run_arena", "arena_problem", "check_runs", "final_regrets",
           "leaderboard_markdown", "plot_arena", "rank", "rerank_saved", "vs_best",
           "run_entrant", "skip_reason", "tuning_stability"]
