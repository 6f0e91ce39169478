"""Statistics of per-run results: exact Student-t intervals, paired comparisons under common
random numbers, Holm's correction, and an anytime-valid confidence sequence.

Every learner of a study sees the same streams in run r (common random numbers: the stream's
keys depend on the run and round only), and so does every grid point. Two learners are then
compared on the per-run differences d_r = a_r - b_r, whose spread excludes the runs' shared
difficulty: a paired t interval on mean(d) is often far narrower than the two unpaired
intervals, and overlapping unpaired intervals do not make two learners indistinguishable.

* `t_quantile(df, level)`: the two-sided Student-t quantile (scipy.stats, exact).
* `paired(a, b)`: mean difference, its t interval, the p-value of "equal means", the runs where
  a is below b.
* `holm(p)`: Holm's step-down adjustment of a family of p-values (family-wise error <= alpha
  under any dependence; Holm 1979).
* `compare(values, reference)`: a table of every entry against a reference (the best mean, or a
  named one), with Holm-adjusted p-values and a verdict: "better", "worse" or
  "indistinguishable" at the family-wise level alpha.
* `confidence_sequence(d, looks, alpha)`: an interval for mean(d) valid at every look at once
  (alpha spent over looks j = 1, 2, ... as 6 alpha / (pi^2 j^2), each look an exact t interval
  at its share; a union bound, so looking after every batch keeps the error <= alpha when the
  differences are normal, and close to it otherwise). `sequential_compare` applies it to a
  table of entries (Bonferroni over the comparisons); `oslr run --until separated` adds runs
  in batches until every comparison is decided.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd
from scipy import stats as _st

#: the default confidence level of every interval and the family-wise error of every verdict
LEVEL = 0.95


def t_quantile(df, level: float = LEVEL):
    """Two-sided `level` quantile of Student's t with `df` degrees of freedom: the q with
    P(|T| <= q) = level (2.0452 for df = 29 at 95%). NaN for df < 1. Scalar or array."""
    df = np.asarray(df, np.float64)
    q = _st.t.ppf(0.5 + level / 2.0, np.where(df >= 1, df, 1.0))
    q = np.where(df >= 1, q, np.nan)
    return float(q) if q.ndim == 0 else q


def mean_ci(values, axis: int = 0, level: float = LEVEL):
    """Mean, standard error and half-width of the two-sided `level` t interval along `axis`
    (NaN, of the mean's shape, for a single run: no interval, written as null in JSON)."""
    v = np.asarray(values, np.float64)
    n = v.shape[axis]
    mean = v.mean(axis=axis)
    sem = v.std(axis=axis, ddof=1) / np.sqrt(n) if n > 1 else mean * np.nan
    return mean, sem, t_quantile(n - 1, level) * sem


@dataclass(frozen=True)
class Paired:
    """The paired comparison of a with b over the same runs (d_r = a_r - b_r).

    Attributes:
      n: runs; diff: mean of d; sem: its standard error; ci_low, ci_high: the two-sided t
      interval at the level asked; p: two-sided p-value of mean(d) = 0 (paired t test; 1.0
      when every d_r is 0, NaN for one run); below: runs with a_r < b_r; above: runs with
      a_r > b_r.
    """

    n: int
    diff: float
    sem: float
    ci_low: float
    ci_high: float
    p: float
    below: int
    above: int


def paired(a, b, level: float = LEVEL) -> Paired:
    """Paired t comparison of a with b, both (R,) per-run values of the same runs."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired values must be two (runs,) arrays of one shape; got {a.shape} "
                         f"and {b.shape}.")
    d = a - b
    n = len(d)
    mean, sem, half = mean_ci(d, level=level)
    if n < 2:
        p = float("nan")
    elif sem == 0:
        p = 1.0 if mean == 0 else 0.0
    else:
        p = float(2.0 * _st.t.sf(abs(mean) / sem, n - 1))
    return Paired(n=n, diff=float(mean), sem=float(sem), ci_low=float(mean - half),
                  ci_high=float(mean + half), p=p, below=int(np.sum(d < 0)),
                  above=int(np.sum(d > 0)))


def holm(p) -> np.ndarray:
    """Holm's step-down adjusted p-values of a family (same order as `p`; NaN stays NaN and
    does not count in the family): reject hypothesis i at family-wise level alpha iff its
    adjusted p-value is <= alpha."""
    p = np.asarray(p, np.float64)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = len(ok)
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    running = 0.0
    for i, j in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[j]))
        out[j] = running
    return out


def _diverged(arrays: Mapping[str, np.ndarray]) -> set[str]:
    """The entries with a non-finite run (a diverged learner): never the reference, and outside
    every comparison's family. Raises ValueError when every entry diverged."""
    out = {n for n, a in arrays.items() if not np.isfinite(a).all()}
    if out and len(out) == len(arrays):
        raise ValueError(f"every entry has a NaN or inf run ({sorted(out)}): nothing to compare.")
    return out


def compare(values: Mapping[str, np.ndarray], reference: str = "best",
            lower_is_better: bool = True, level: float = LEVEL) -> pd.DataFrame:
    """Every entry of `values` (name -> (R,) per-run values over the same runs) against a
    reference, paired, with Holm's correction over the comparisons of the table.

    Args:
      values: per-run values, the same runs (common random numbers) for every name.
      reference: a name of `values`, or "best" (the lowest mean if lower_is_better, else the
        highest).
      lower_is_better: regret and loss (True) or reward (False).
      level: confidence level of the intervals; alpha = 1 - level is the family-wise error of
        the verdicts.

    Returns:
      DataFrame, one row per name in the order given: name, mean, reference, diff (name minus
      reference), its t interval (diff_low, diff_high), p, p_holm, ahead (runs where name
      beats the reference), behind, and verdict: "reference", "better", "worse",
      "indistinguishable" (p_holm > alpha) or "diverged" (a NaN or inf run: no difference, no
      p-value, outside Holm's family, and never the reference).
    """
    names = list(values)
    if not names:
        raise ValueError("nothing to compare: give at least one entry.")
    arrays = {n: np.asarray(values[n], np.float64) for n in names}
    shapes = {a.shape for a in arrays.values()}
    if len(shapes) != 1:
        raise ValueError(f"every entry needs the same runs; got shapes {sorted(shapes)}.")
    means = {n: float(np.mean(a)) for n, a in arrays.items()}
    diverged = _diverged(arrays)
    if reference == "best":
        pick = min if lower_is_better else max
        reference = pick([n for n in names if n not in diverged], key=lambda n: means[n])
    elif reference not in arrays:
        raise ValueError(f"reference {reference!r} is not among {names}; give one of them or "
                         "'best'.")
    elif reference in diverged:
        raise ValueError(f"reference {reference!r} diverged (a run is NaN or inf); compare with "
                         "another entry or 'best'.")
    alpha = 1.0 - level
    rows = []
    for n in names:
        if n == reference:
            rows.append({"name": n, "mean": means[n], "reference": reference, "diff": 0.0,
                         "diff_low": 0.0, "diff_high": 0.0, "p": np.nan, "ahead": 0,
                         "behind": 0})
            continue
        if n in diverged:  # its own verdict, outside the Holm family (p NaN)
            rows.append({"name": n, "mean": means[n], "reference": reference, "diff": np.nan,
                         "diff_low": np.nan, "diff_high": np.nan, "p": np.nan, "ahead": 0,
                         "behind": 0})
            continue
        pr = paired(arrays[n], arrays[reference], level)
        ahead, behind = (pr.below, pr.above) if lower_is_better else (pr.above, pr.below)
        rows.append({"name": n, "mean": means[n], "reference": reference, "diff": pr.diff,
                     "diff_low": pr.ci_low, "diff_high": pr.ci_high, "p": pr.p,
                     "ahead": ahead, "behind": behind})
    table = pd.DataFrame(rows)
    table["p_holm"] = holm(table["p"].to_numpy())
    better = table["diff"] < 0 if lower_is_better else table["diff"] > 0
    table["verdict"] = np.where(
        table["name"] == reference, "reference",
        np.where(table["name"].isin(diverged), "diverged",
                 np.where(~(table["p_holm"] <= alpha), "indistinguishable",
                          np.where(better, "better", "worse"))))
    cols = ["name", "mean", "reference", "diff", "diff_low", "diff_high", "p", "p_holm",
            "ahead", "behind", "verdict"]
    return table[cols]


def look_level(look: int, level: float = LEVEL) -> float:
    """The confidence level of look j = 1, 2, ... of `confidence_sequence`:
    1 - 6 (1 - level) / (pi^2 j^2) (the shares sum to 1 - level over all looks)."""
    if look < 1:
        raise ValueError(f"looks are numbered from 1; got {look}.")
    return 1.0 - 6.0 * (1.0 - level) / (math.pi**2 * look * look)


def confidence_sequence(d, look: int, level: float = LEVEL) -> tuple[float, float]:
    """An interval for the mean of the per-run differences `d` (all runs so far) at look number
    `look` (1 for the first batch, 2 after the second, ...), such that with probability >=
    `level` every look's interval covers the true mean, however many looks are taken (the union
    bound over looks of exact t intervals at `look_level`; exact for normal differences)."""
    d = np.asarray(d, np.float64)
    mean, _, half = mean_ci(d, level=look_level(look, level))
    return float(mean - half), float(mean + half)


def sequential_compare(values: Mapping[str, np.ndarray], look: int, reference: str = "best",
                       level: float = LEVEL) -> pd.DataFrame:
    """Look number `look` of a study that adds runs until its comparisons are decided: the
    anytime-valid interval (`confidence_sequence`) of every entry's mean difference to the
    reference (lower is better), simultaneous over the comparisons by Bonferroni: with a named
    reference the E - 1 comparisons with it share 1 - level; with "best" every one of the
    E (E - 1) / 2 pairs does (the best by mean may change between looks, and every pair's
    interval holds at every look), and the rows are the best against each other entry.

    Returns:
      DataFrame, one row per entry other than the reference: name, reference, runs, diff,
      cs_low, cs_high, decided (the interval excludes 0), verdict ("better", "worse",
      "undecided", or "diverged" for an entry with a NaN or inf run, decided at once and never
      the reference).
    """
    names = list(values)
    if len(names) < 2:
        raise ValueError("a sequential comparison needs two entries or more.")
    arrays = {n: np.asarray(values[n], np.float64) for n in names}
    diverged = _diverged(arrays)
    if reference == "best":
        reference = min([n for n in names if n not in diverged],
                        key=lambda n: float(np.mean(arrays[n])))
        m = len(names) * (len(names) - 1) // 2
    elif reference in diverged:
        raise ValueError(f"reference {reference!r} diverged (a run is NaN or inf); compare with "
                         "another entry or 'best'.")
    elif reference in arrays:
        m = len(names) - 1
    else:
        raise ValueError(f"reference {reference!r} is not among {names}.")
    share = 1.0 - (1.0 - level) / m
    rows = []
    for n in names:
        if n == reference:
            continue
        if n in diverged:  # known at once: decided, with a verdict of its own
            rows.append({"name": n, "reference": reference, "runs": len(arrays[n]),
                         "diff": np.nan, "cs_low": np.nan, "cs_high": np.nan, "decided": True,
                         "verdict": "diverged"})
            continue
        d = arrays[n] - arrays[reference]
        low, high = confidence_sequence(d, look, share)
        decided = bool(low > 0 or high < 0)
        rows.append({"name": n, "reference": reference, "runs": len(d),
                     "diff": float(np.mean(d)), "cs_low": low, "cs_high": high,
                     "decided": decided,
                     "verdict": "undecided" if not decided else "better" if high < 0 else "worse"})
    return pd.DataFrame(rows)


__all__ = ["LEVEL", "Paired", "compare", "confidence_sequence", "holm", "look_level", "mean_ci",
           "paired", "sequential_compare", "t_quantile"]
