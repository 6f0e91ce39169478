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
* `detectable_effect(n, family)`: the smallest mean difference, in sd of the differences, that
  a family's paired t test finds 80% of the time (what "indistinguishable" can rule out).
* `compare(values, reference)`: a table of every entry against a reference (the best mean, or a
  named one), with Holm-adjusted p-values over a family fixed before looking (all pairs for
  "best"), a verdict ("better", "worse", "indistinguishable"; "equivalent" by TOST within a
  margin) and the sign-flip test of the same mean beside it (`sign_flip_p`: distribution-free,
  exact for ties and zeros).
* `confidence_sequence(d, looks, alpha)`: an interval for mean(d) valid at every look at once
  (alpha spent over looks j = 1, 2, ... as 6 alpha / (pi^2 j^2), each look an exact t interval
  at its share; a union bound: valid when the differences are normal, not for skewed or
  discrete ones). `betting_sequence(d, bounds)`: an interval valid at every run for any
  differences within known bounds (Waudby-Smith & Ramdas 2023); `catoni_sequence(d, variance)`
  one valid for any differences of bounded variance (Wang & Ramdas 2023). `sequential_compare`
  applies the one whose assumption the caller names (none is refused: no interval for a mean
  holds for every distribution) to a table of entries (Bonferroni over the comparisons);
  `oslr run --until separated` adds runs in batches until every comparison is decided.
* `sign_flip_p(d)`: the sign-flip test of mean(d) = 0, exact for ties and zeros (the
  distribution-free companion of `compare`).
* `simultaneous_band(values)`: a band around a mean curve that holds at every checkpoint at once
  (bootstrap-t max), where the pointwise t band holds at each one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd
from scipy import optimize as _optimize
from scipy import special as _special
from scipy import stats as _st

#: the default confidence level of every interval and the family-wise error of every verdict
LEVEL = 0.95


def check_share(name: str, value, example: float = LEVEL) -> float:
    """`value` as a float strictly between 0 and 1 (a confidence level, a power); ValueError in
    one line for anything else (1.5 would give NaN intervals, 0 zero-width ones)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not (
            0.0 < float(value) < 1.0):
        raise ValueError(f"{name}={value!r} must lie strictly between 0 and 1 (e.g. "
                         f"{name}={example}).")
    return float(value)


def t_quantile(df, level: float = LEVEL):
    """Two-sided `level` quantile of Student's t with `df` degrees of freedom: the q with
    P(|T| <= q) = level (2.0452 for df = 29 at 95%). NaN for df < 1. Scalar or array."""
    level = check_share("level", level)
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
      when every d_r is 0 up to rounding, NaN for one run and for a constant nonzero difference,
      where a t test does not apply: see `constant`); below: runs with a_r < b_r; above: runs
      with a_r > b_r.
    """

    n: int
    diff: float
    sem: float
    ci_low: float
    ci_high: float
    p: float
    below: int
    above: int


#: A difference whose spread over the runs is at most this share of the values' magnitude is
#: constant (`constant`): rounding, not variation (b = a + 1 computed in floating point).
CONSTANT_RTOL = 1e-10


def constant(a, b) -> str | None:
    """"zero" when d = a - b is 0 in every run up to rounding, "constant" when it is one
    nonzero value in every run up to rounding, else None: the spread (and for "zero" the mean)
    of d at most CONSTANT_RTOL times the largest |a| or |b|. A t test needs a spread; these
    get no p-value from it."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    d = a - b
    if len(d) < 2 or not np.isfinite(d).all():
        return None
    tol = CONSTANT_RTOL * max(float(np.max(np.abs(a))), float(np.max(np.abs(b))))
    if float(np.max(d) - np.min(d)) > tol:
        return None
    return "zero" if abs(float(np.mean(d))) <= tol else "constant"


def paired(a, b, level: float = LEVEL) -> Paired:
    """Paired t comparison of a with b, both (R,) per-run values of the same runs."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired values must be two (runs,) arrays of one shape; got {a.shape} "
                         f"and {b.shape}.")
    d = a - b
    n = len(d)
    mean, sem, half = mean_ci(d, level=level)
    kind = constant(a, b)
    if n < 2 or kind == "constant":
        p = float("nan")
    elif kind == "zero":
        p = 1.0
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


#: the power at which `detectable_effect` states the smallest effect a table could find
POWER = 0.8


def detectable_effect(n: int, family: int = 1, level: float = LEVEL, power: float = POWER) -> float:
    """The minimum detectable effect of a paired comparison in a family: the mean difference,
    in standard deviations of the per-run differences, that the two-sided paired t test on `n`
    runs rejects with probability `power` at level (1 - level) / family (Bonferroni: a p below
    it is rejected by Holm's procedure too, so every pair of the family has at least this
    power). From the noncentral t distribution: T ~ t(n - 1, delta sqrt(n)) under mean delta.
    NaN below 2 runs."""
    level, power = check_share("level", level), check_share("power", power, POWER)
    if n < 2:
        return float("nan")
    if family < 1:
        raise ValueError(f"family must be at least 1 comparison; got {family!r}.")
    crit = _st.t.isf((1.0 - level) / (2.0 * family), n - 1)

    def short(delta: float) -> float:
        nc = delta * math.sqrt(n)  # P(T < -crit) written as P(-T > crit): scipy's cdf is NaN
        return _st.nct.sf(crit, n - 1, nc) + _st.nct.sf(crit, n - 1, -nc) - power  # far out

    if short(0.0) >= 0:  # a power at most the level needs no effect
        return 0.0
    high = 1.0
    while short(high) < 0:
        high *= 2.0
    return float(_optimize.brentq(short, 0.0, high, xtol=1e-10))


def _diverged(arrays: Mapping[str, np.ndarray]) -> set[str]:
    """The entries with a non-finite run (a diverged learner): never the reference, and outside
    every comparison's family. Raises ValueError when every entry diverged."""
    out = {n for n, a in arrays.items() if not np.isfinite(a).all()}
    if out and len(out) == len(arrays):
        raise ValueError(f"every entry has a NaN or inf run ({sorted(out)}): nothing to compare.")
    return out


#: `sign_flip_p` is exact while the sign patterns of the nonzero |d_r|, grouped by equal value
#: (prod of (count + 1)), number at most this; beyond, Monte-Carlo with SIGN_FLIP_DRAWS draws
SIGN_FLIP_EXACT = 2**20
#: Monte-Carlo draws of `sign_flip_p` beyond the exact range: its p-values are multiples of
#: 1 / (SIGN_FLIP_DRAWS + 1), the smallest 1e-4
SIGN_FLIP_DRAWS = 9999
#: the seed of the Monte-Carlo sign draws: the same differences always get the same p
SIGN_FLIP_SEED = 20261204


def sign_flip_p(d) -> float:
    """Two-sided p-value of the sign-flip (randomization) test of mean(d) = 0: the chance,
    over independent fair signs s_r, that |sum_r s_r |d_r|| >= |sum_r d_r| (a sum equal up to
    rounding counts). Exact, with no approximation and any ties or zeros, when the differences
    are symmetric about 0 (two exchangeable learners under common random numbers); otherwise a
    test of the mean that is valid as the runs grow (it orders samples as the paired t
    statistic does: sum(d^2) does not change with the signs). Zero differences add nothing to
    any sum and are left out.

    Exact (the distribution of the sum enumerated, equal values grouped with binomial weights)
    while the patterns number at most SIGN_FLIP_EXACT (20 distinct values, or any number of
    values of few distinct sizes); beyond, (1 + #{draws at least as extreme}) / (1 +
    SIGN_FLIP_DRAWS) over SIGN_FLIP_DRAWS seeded draws of the signs, a p-value that is valid
    at every level (resolution 1e-4), or where Hoeffding's bound on the exact p is below that
    resolution, the bound (a clear difference in a large family keeps its small p). 1.0 when
    every d_r is 0."""
    d = np.asarray(d, np.float64)
    x = np.abs(d[d != 0])
    if x.size == 0:
        return 1.0
    observed = abs(float(np.sum(d))) - 1e-12 * float(np.sum(x))  # rounding of the sums
    values, counts = np.unique(x, return_counts=True)
    if observed <= 0:  # every pattern reaches a zero sum
        return 1.0
    if np.prod(counts + 1.0) <= SIGN_FLIP_EXACT:
        return _sign_flip_exact(values, counts, observed)
    # beyond the draws' resolution: Hoeffding's bound 2 exp(-S^2 / (2 sum d^2)) on the exact
    # p (never below it), so that a family of many clear differences is not capped at 1e-4
    bound = 2.0 * math.exp(-max(observed, 0.0) ** 2 / (2.0 * float(np.sum(x * x))))
    if bound < 1.0 / (1 + SIGN_FLIP_DRAWS):
        return bound
    rng = np.random.default_rng(SIGN_FLIP_SEED)
    extreme, left = 0, SIGN_FLIP_DRAWS
    while left:
        block = min(left, 1000)
        signs = 2.0 * rng.integers(0, 2, (block, x.size), dtype=np.int8) - 1.0
        extreme += int(np.sum(np.abs(signs @ x) >= observed))
        left -= block
    return (1 + extreme) / (1 + SIGN_FLIP_DRAWS)


def _sign_sums(values: np.ndarray, counts: np.ndarray, whole: bool):
    """Every sum sum_r s_r |d_r| of the groups (value v taken c times: v (2k - c) for k of its
    c signs positive) with its weight: the patterns' count (exact in float64 up to 2^52
    patterns) when `whole`, else its chance."""
    sums, weights = np.zeros(1), np.ones(1)
    for v, c in zip(values, counts):
        k = np.arange(c + 1)
        w = _special.comb(c, k) if whole else _st.binom.pmf(k, c, 0.5)
        sums = (sums[:, None] + (v * (2 * k - c))[None, :]).ravel()
        weights = (weights[:, None] * w[None, :]).ravel()
    return sums, weights


def _sign_flip_exact(values: np.ndarray, counts: np.ndarray, observed: float) -> float:
    """The exact sign-flip p: the weight of the patterns with |sum| >= observed > 0, the groups
    split in two halves whose sums are enumerated apart and matched by sorting (a pair (a, b)
    reaches it where b >= observed - a or b <= -observed - a), so that 2^20 patterns cost
    about 2 x 2^10 sums."""
    n = int(np.sum(counts))
    whole = n <= 52
    size = np.cumprod(counts + 1.0)
    half = int(np.searchsorted(size, math.sqrt(size[-1])))  # the first groups' half
    a, wa = _sign_sums(values[:half], counts[:half], whole)
    b, wb = _sign_sums(values[half:], counts[half:], whole)
    order = np.argsort(b)
    b, cum = b[order], np.concatenate([[0.0], np.cumsum(wb[order])])
    above = cum[-1] - cum[np.searchsorted(b, observed - a, side="left")]
    below = cum[np.searchsorted(b, -observed - a, side="right")]
    p = float(np.sum(wa * (above + below)))
    return min(1.0, p / 2.0**n if whole else p)


def pair_tests(a: np.ndarray, b: np.ndarray, level: float = LEVEL,
               margin: float | None = None) -> dict:
    """The tests of one pair (d = a - b), as a dict: "pair" (`paired`), "p_free" (the
    sign-flip test of mean(d) = 0, `sign_flip_p`: distribution-free, exact under symmetry,
    with ties and zeros; 1.0 when every d_r is 0 up to rounding) and "p_equiv" (with a margin,
    the TOST p of |mean(d)| < margin: the larger of the two one-sided t tests' p-values; NaN
    without one) and "constant" (`constant`)."""
    pr = paired(a, b, level)
    kind = constant(a, b)
    d = a - b
    if pr.n < 2:
        p_free = float("nan")
    elif kind == "zero":
        p_free = 1.0
    else:
        p_free = sign_flip_p(d)
    p_equiv = float("nan")
    if margin is not None and pr.n >= 2:
        if kind is not None:
            p_equiv = 0.0 if abs(pr.diff) < margin else 1.0
        else:
            low = _st.t.sf((pr.diff + margin) / pr.sem, pr.n - 1)  # H0: mean <= -margin
            high = _st.t.cdf((pr.diff - margin) / pr.sem, pr.n - 1)  # H0: mean >= margin
            p_equiv = float(max(low, high))
    return {"pair": pr, "p_free": p_free, "p_equiv": p_equiv, "constant": kind}


def compare(values: Mapping[str, np.ndarray], reference: str = "best",
            lower_is_better: bool = True, level: float = LEVEL,
            margin: float | None = None) -> pd.DataFrame:
    """Every entry of `values` (name -> (R,) per-run values over the same runs) against a
    reference, paired, with Holm's correction over a family fixed before looking at the data.

    The family: with a named reference, its E - 1 comparisons with the other entries; with
    "best" (a reference chosen after seeing the means), all E (E - 1) / 2 pairs of entries, so
    that picking the best cannot inflate the family-wise error (every verdict shown is a
    rejection of Holm's procedure over all pairs; the rows are the best against each other).
    Entries with a NaN or inf run stay outside the family.

    Args:
      values: per-run values, the same runs (common random numbers) for every name.
      reference: a name of `values`, or "best" (the lowest mean if lower_is_better, else the
        highest).
      lower_is_better: regret and loss (True) or reward (False).
      level: confidence level of the intervals; alpha = 1 - level is the family-wise error of
        the verdicts.
      margin: with a margin m > 0, an entry that is not separated from the reference but whose
        difference is shown within (-m, m) (TOST: two one-sided t tests, Holm over the family)
        is "equivalent" rather than "indistinguishable".

    Returns:
      DataFrame, one row per name in the order given: name, mean, reference, diff (name minus
      reference), its t interval (diff_low, diff_high), p (paired t), p_holm, ahead (runs where
      name beats the reference), behind, verdict, then the distribution-free companion
      p_free (the sign-flip test of the same mean, `sign_flip_p`) and p_free_holm (Holm over
      the same family), free_verdict (the verdict that companion gives: better or worse by the
      sign of the mean difference where p_free_holm <= alpha, else indistinguishable),
      p_equiv_holm (TOST, NaN without a margin) and family (the family's description).
      Verdicts: "reference", "better", "worse", "equivalent" (within the margin),
      "indistinguishable" (p_holm > alpha: no evidence either way, not equivalence), "constant"
      (the same nonzero difference in every run up to rounding, `constant`: no t test applies;
      no p-value, outside the t family) or "diverged" (a NaN or inf run: no difference, no
      p-value, outside the family, and never the reference).
    """
    names = list(values)
    if not names:
        raise ValueError("nothing to compare: give at least one entry.")
    check_share("level", level)
    if margin is not None and not (np.isfinite(margin) and margin > 0):
        raise ValueError(f"margin must be a positive finite number (the largest difference "
                         f"called equivalent); got {margin!r}.")
    arrays = {n: np.asarray(values[n], np.float64) for n in names}
    shapes = {a.shape for a in arrays.values()}
    if len(shapes) != 1:
        raise ValueError(f"every entry needs the same runs; got shapes {sorted(shapes)}.")
    means = {n: float(np.mean(a)) for n, a in arrays.items()}
    diverged = _diverged(arrays)
    live = [n for n in names if n not in diverged]
    best = reference == "best"
    reference = _pick_reference(reference, names, live, diverged, means, lower_is_better)
    family, family_text = _family(live, reference, best)
    tests = {ab: pair_tests(arrays[ab[0]], arrays[ab[1]], level, margin) for ab in family}
    adjusted = {key: holm([t[key] for t in tests.values()]) for key in
                ("p_free", "p_equiv")}
    adjusted["p"] = holm([t["pair"].p for t in tests.values()])
    holm_of = {key: dict(zip(tests, adjusted[key])) for key in adjusted}
    rows = [_compare_row(n, means[n], reference, n in diverged, tests, holm_of,
                         lower_is_better) for n in names]
    table = pd.DataFrame(rows)
    constants = {n for n in live if n != reference
                 and tests[(n, reference)]["constant"] == "constant"}
    _add_verdicts(table, reference, diverged, constants, lower_is_better, 1.0 - level)
    table["family"] = family_text
    cols = ["name", "mean", "reference", "diff", "diff_low", "diff_high", "p", "p_holm",
            "ahead", "behind", "verdict", "p_free", "p_free_holm", "free_verdict",
            "p_equiv_holm", "family"]
    return table[cols]


def _pick_reference(reference: str, names: list[str], live: list[str], diverged,
                    means: dict[str, float], lower_is_better: bool) -> str:
    """The reference's name: the best live mean for "best", else the named entry, refused
    when unknown or diverged."""
    if reference == "best":
        pick = min if lower_is_better else max
        return pick(live, key=lambda n: means[n])
    if reference not in names:
        raise ValueError(f"reference {reference!r} is not among {names}; give one of them or "
                         "'best'.")
    if reference in diverged:
        raise ValueError(f"reference {reference!r} diverged (a run is NaN or inf); compare with "
                         "another entry or 'best'.")
    return reference


def _family(live: list[str], reference: str, best: bool) -> tuple[list, str]:
    """The pairs Holm's correction runs over, and their description: the comparisons with a
    named reference, or every pair of live entries when the reference was picked as the best.
    Every pair with the reference is oriented (entry, reference), so its tests are the row's."""
    vs_ref = [(n, reference) for n in live if n != reference]
    if not best:
        return vs_ref, (f"Holm over the {len(vs_ref)} comparison{'s' * (len(vs_ref) != 1)} "
                        f"with {reference}")
    others = [n for n in live if n != reference]
    family = vs_ref + [(a, b) for i, a in enumerate(others) for b in others[i + 1:]]
    return family, (f"Holm over all {len(family)} pair{'s' * (len(family) != 1)} of "
                    f"{len(live)} entries (the best chosen after looking)")


def _compare_row(name: str, mean: float, reference: str, diverged: bool, tests: dict,
                 holm_of: dict, lower_is_better: bool) -> dict:
    """One entry's row of `compare` before its verdicts: the reference and a diverged entry
    have no comparison of their own (a zero and a NaN difference)."""
    row = {"name": name, "mean": mean, "reference": reference}
    if name == reference or diverged:
        fill = 0.0 if name == reference else np.nan
        row.update(diff=fill, diff_low=fill, diff_high=fill, p=np.nan, p_holm=np.nan,
                   ahead=0, behind=0, p_free=np.nan, p_free_holm=np.nan, p_equiv_holm=np.nan)
        return row
    key = (name, reference)
    pr = tests[key]["pair"]
    ahead, behind = (pr.below, pr.above) if lower_is_better else (pr.above, pr.below)
    row.update(diff=pr.diff, diff_low=pr.ci_low, diff_high=pr.ci_high, p=pr.p,
               p_holm=holm_of["p"][key], ahead=ahead, behind=behind,
               p_free=tests[key]["p_free"], p_free_holm=holm_of["p_free"][key],
               p_equiv_holm=holm_of["p_equiv"][key])
    return row


def _add_verdicts(table: pd.DataFrame, reference: str, diverged, constants,
                  lower_is_better: bool, alpha: float) -> None:
    """`verdict` (the t test's, with TOST's "equivalent"; "constant" for a difference that is
    one nonzero value in every run, `constant`) and `free_verdict` (the sign-flip test's, its
    direction the mean difference's too) as columns of `table`."""
    better = table["diff"] < 0 if lower_is_better else table["diff"] > 0
    fixed = np.where(table["name"] == reference, "reference",
                     np.where(table["name"].isin(diverged), "diverged",
                              np.where(table["name"].isin(constants), "constant", "")))
    table["verdict"] = np.where(
        fixed != "", fixed,
        np.where(table["p_holm"] <= alpha, np.where(better, "better", "worse"),
                 np.where(table["p_equiv_holm"] <= alpha, "equivalent", "indistinguishable")))
    table["free_verdict"] = np.where(
        fixed != "", fixed,
        np.where(table["p_free_holm"] <= alpha, np.where(better, "better", "worse"),
                 "indistinguishable"))


def simultaneous_band(values, level: float = LEVEL, n_boot: int = 2000,
                      seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A band around a mean curve that covers the whole curve at once: mean +- q * sem at every
    checkpoint, q the `level` quantile of max_c |mean*_c - mean_c| / sem*_c over bootstrap
    resamples of the runs (the bootstrap-t max band, Efron & Tibshirani 1993 ch. 12; the
    pointwise t band covers each checkpoint, not the curve: with ~50 checkpoints it misses
    somewhere far more often than 5% of the time).

    Args:
      values: (R, C) per-run values at C checkpoints (R >= 2 runs).
      level: simultaneous coverage.
      n_boot: bootstrap resamples (seeded: the band is a function of `values` and `seed`).

    Returns:
      (mean, half), each (C,): half = q * sem; 0 where every run agrees (sem = 0), and such a
      checkpoint does not enter the max.
    """
    v = np.asarray(values, np.float64)
    if v.ndim != 2 or v.shape[0] < 2:
        raise ValueError(f"a simultaneous band needs (runs >= 2, checkpoints) values; got shape "
                         f"{v.shape}.")
    r = v.shape[0]
    mean = v.mean(0)
    sem = v.std(0, ddof=1) / math.sqrt(r)
    rng = np.random.default_rng(seed)
    stat = np.empty(n_boot)
    for lo in range(0, n_boot, 200):  # resamples in blocks: memory 200 x R x C
        idx = rng.integers(0, r, size=(min(200, n_boot - lo), r))
        boot = v[idx]
        b_sem = boot.std(1, ddof=1) / math.sqrt(r)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.abs(boot.mean(1) - mean) / b_sem
        stat[lo:lo + len(idx)] = np.max(np.where(b_sem > 0, t, 0.0), axis=1)
    q = float(np.quantile(stat, level, method="inverted_cdf"))  # least x: F_n(x) >= level
    return mean, q * sem


def look_level(look: int, level: float = LEVEL) -> float:
    """The confidence level of look j = 1, 2, ... of `confidence_sequence`:
    1 - 6 (1 - level) / (pi^2 j^2) (the shares sum to 1 - level over all looks)."""
    if look < 1:
        raise ValueError(f"looks are numbered from 1; got {look}.")
    return 1.0 - 6.0 * (1.0 - check_share("level", level)) / (math.pi**2 * look * look)


def confidence_sequence(d, look: int, level: float = LEVEL) -> tuple[float, float]:
    """An interval for the mean of the per-run differences `d` (all runs so far) at look number
    `look` (1 for the first batch, 2 after the second, ...), such that with probability >=
    `level` every look's interval covers the true mean, however many looks are taken (the union
    bound over looks of exact t intervals at `look_level`; exact for normal differences)."""
    mean, _, half = mean_ci(d, level=look_level(look, level))
    return float(mean - half), float(mean + half)


def betting_sequence(d, bounds: tuple[float, float], level: float = LEVEL,
                     grid: int = 2000) -> tuple[float, float]:
    """An anytime-valid interval for the mean of differences known to lie in `bounds` (lo, hi):
    no normality, no minimum sample, valid at every run however the runs are looked at and
    whenever the study stops (Waudby-Smith & Ramdas 2023, JRSS-B 86(1), the hedged capital
    process with predictable plug-in bets, Thm 3 and eq. (26)-(27)).

    The runs are rescaled to x in [0, 1]; a candidate mean m is rejected once the capital of
    betting against it, max(K+_t(m), K-_t(m)) / 2 with K+-_t(m) = prod_i (1 +- lam+-_i (x_i -
    m)), reaches 1 / (1 - level) at any run so far (Ville's inequality); lam_i =
    sqrt(2 log(2 / alpha) / (s2_{i-1} i log(1 + i))) from the runs before i (s2 their shrunk
    variance), capped at 1/2 / m (K+) and 1/2 / (1 - m) (K-). The interval is the range of the
    candidates on a grid of `grid` points that no run has rejected, widened by one grid step.

    Args:
      d: (n,) differences in run order (the order is the one the runs were drawn in).
      bounds: (lo, hi) with lo < hi: every difference lies in it (e.g. +- horizon x the
        loss range for a difference of regrets); a difference outside raises ValueError.

    Returns:
      (low, high) in the units of d; (lo, hi) for no runs. A sample of equal differences
      narrows around them as runs accrue (about (hi - lo) log(1/alpha) / n), never to zero.
    """
    lo, hi = (float(b) for b in bounds)
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"bounds must be two finite numbers lo < hi; got {bounds!r}.")
    d = np.asarray(d, np.float64)
    if d.size and (d.min() < lo or d.max() > hi or not np.isfinite(d).all()):
        raise ValueError(f"a difference lies outside bounds {bounds!r} (min {d.min():.6g}, "
                         f"max {d.max():.6g}): give bounds every run's difference respects.")
    if d.size == 0:
        return lo, hi
    alpha = 1.0 - level
    x = (d - lo) / (hi - lo)
    n = len(x)
    i = np.arange(1, n + 1)
    mu = (0.5 + np.cumsum(x)) / (i + 1)
    s2 = (0.25 + np.cumsum((x - mu) ** 2)) / (i + 1)
    s2_prev = np.concatenate([[0.25], s2[:-1]])  # predictable: from the runs before i
    lam = np.sqrt(2.0 * math.log(2.0 / alpha) / (s2_prev * i * np.log1p(i)))
    m = (np.arange(grid) + 0.5) / grid  # candidate means in (0, 1)
    up = np.minimum(lam[:, None], 0.5 / m[None, :])
    down = np.minimum(lam[:, None], 0.5 / (1.0 - m[None, :]))
    step = x[:, None] - m[None, :]
    log_up = np.cumsum(np.log1p(up * step), axis=0)
    log_down = np.cumsum(np.log1p(-down * step), axis=0)
    capital = np.logaddexp(log_up, log_down) - math.log(2.0)  # log of the hedged capital
    kept = ~(capital >= math.log(1.0 / alpha)).any(axis=0)
    if not kept.any():  # every candidate rejected between grid points: the nearest survives
        kept = capital[-1] == capital[-1].min()
    low = max(0.0, m[kept].min() - 1.0 / grid)
    high = min(1.0, m[kept].max() + 1.0 / grid)
    return float(lo + (hi - lo) * low), float(lo + (hi - lo) * high)


def _catoni_phi(x: np.ndarray) -> np.ndarray:
    """Catoni's influence function: log(1 + x + x^2/2) for x >= 0, -log(1 - x + x^2/2) below;
    increasing, and -log(1 - x + x^2/2) <= phi(x) <= log(1 + x + x^2/2) everywhere."""
    a = np.abs(x)
    return np.sign(x) * np.log1p(a + 0.5 * a * a)


def catoni_sequence(d, variance: float, level: float = LEVEL) -> tuple[float, float]:
    """An anytime-valid interval for the mean of differences whose variance is at most
    `variance`: no bound on the values and no normality (skewed, heavy-tailed), valid at every
    run however the runs are looked at and whenever the study stops (the Catoni-style
    confidence sequence of Wang & Ramdas 2023, Stoch. Proc. Appl. 163, with their predictable
    rates).

    With lam_i = sqrt(2 log(2 / alpha) / (variance i log(1 + i))) and Catoni's phi
    (`_catoni_phi`), at the true mean mu both prod_i exp(+-phi(lam_i (x_i - mu)) - lam_i^2
    variance / 2) are nonnegative supermartingales (E exp(+-phi(lam Y)) <= E(1 +- lam Y +
    lam^2 Y^2 / 2) <= exp(lam^2 variance / 2) for E Y = 0, E Y^2 <= variance), so by Ville's
    inequality, with probability >= level neither ever reaches 2 / alpha. The interval at n runs
    is {m : |sum_i phi(lam_i (x_i - m))| <= variance / 2 sum_i lam_i^2 + log(2 / alpha)} (the
    sum falls as m grows: its two ends by Brent's method, `scipy.optimize.brentq`).

    Args:
      d: (n,) differences in run order.
      variance: an upper bound on the differences' variance (> 0, finite): a wrong (too small)
        bound voids the guarantee.

    Returns:
      (low, high) in the units of d; (-inf, inf) for no runs.
    """
    from scipy.optimize import brentq

    variance = float(variance)
    if not (np.isfinite(variance) and variance > 0):
        raise ValueError(f"variance must be a finite number > 0; got {variance!r}.")
    d = np.asarray(d, np.float64)
    if not np.isfinite(d).all():
        raise ValueError("a difference is NaN or inf: a variance bound cannot hold for it.")
    if d.size == 0:
        return -math.inf, math.inf
    alpha = 1.0 - level
    i = np.arange(1, d.size + 1)
    lam = np.sqrt(2.0 * math.log(2.0 / alpha) / (variance * i * np.log1p(i)))
    cap = 0.5 * variance * np.sum(lam * lam) + math.log(2.0 / alpha)

    def psi(m: float) -> float:  # falls as m grows
        return float(np.sum(_catoni_phi(lam * (d - m))))

    def solve(target: float) -> float:  # the m where psi(m) = target
        width = math.sqrt(variance) + float(np.ptp(d)) + 1.0
        lo, hi = float(d.min()) - width, float(d.max()) + width
        while psi(lo) < target:  # widen until the bracket holds the root
            lo -= 2 * (hi - lo)
        while psi(hi) > target:
            hi += 2 * (hi - lo)
        return float(brentq(lambda m: psi(m) - target, lo, hi, xtol=1e-12, rtol=1e-14))

    return solve(cap), solve(-cap)


#: what each sequential interval assumes about the per-run differences, as `until.csv` and
#: `oslr run --until separated` name it
ASSUMES = {"betting": "every difference within the bounds given",
           "catoni": "the differences' variance at most the bound given",
           "t": "normal differences (not valid for skewed or heavy-tailed regrets)"}


def sequential_method(bounds=None, variance=None, normal: bool = False) -> str:
    """The interval of a sequential comparison from the one assumption named: "betting" with
    `bounds`, "catoni" with a `variance` bound, "t" with `normal`; ValueError for none (no
    interval for a mean is valid without one: regret differences are skewed) or several."""
    named = [m for m, given in (("betting", bounds is not None),
                                ("catoni", variance is not None), ("t", bool(normal))) if given]
    if len(named) != 1:
        raise ValueError(
            f"a sequential comparison rests on one assumption about the differences, "
            f"{'none' if not named else ' and '.join(named)} given: bounds=(lo, hi) (any "
            "distribution within them), variance=V (any with variance <= V), or normal=True "
            "(t intervals; not valid for skewed regrets).")
    return named[0]


def sequential_compare(values: Mapping[str, np.ndarray], look: int, reference: str = "best",
                       level: float = LEVEL, bounds: tuple[float, float] | None = None,
                       min_runs: int = 10, variance: float | None = None,
                       normal: bool = False) -> pd.DataFrame:
    """Look number `look` of a study that adds runs until its comparisons are decided: the
    anytime-valid interval of every entry's mean difference to the reference (lower is
    better), simultaneous over the comparisons by Bonferroni: with a named reference the E - 1
    comparisons with it share 1 - level; with "best" every one of the E (E - 1) / 2 pairs does
    (the best by mean may change between looks, and every pair's interval holds at every look),
    and the rows are the best against each other entry.

    The interval rests on one assumption the caller names (`sequential_method`; none is
    refused): with `bounds` (lo, hi) that every run's difference respects, `betting_sequence`
    (valid for skewed, discrete and rare-spike differences alike); with a bound on their
    `variance`, `catoni_sequence` (unbounded, skewed and heavy-tailed differences); with
    `normal`, `confidence_sequence` (t intervals spent over looks: valid for normal
    differences only, undecided before `min_runs` runs and while every difference is equal,
    where a t interval would have zero width).

    Returns:
      DataFrame, one row per entry other than the reference: name, reference, runs, diff,
      cs_low, cs_high, decided (the interval excludes 0), verdict ("better", "worse",
      "undecided", or "diverged" for an entry with a NaN or inf run, decided at once and never
      the reference), method ("betting", "catoni" or "t") and assumes (`ASSUMES`).
    """
    names = list(values)
    if len(names) < 2:
        raise ValueError("a sequential comparison needs two entries or more.")
    method = sequential_method(bounds, variance, normal)
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
                         "verdict": "diverged", "method": method, "assumes": ASSUMES[method]})
            continue
        d = arrays[n] - arrays[reference]
        if method == "betting":
            assert bounds is not None  # checked with the method
            low, high = betting_sequence(d, bounds, share)
        elif method == "catoni":
            assert variance is not None
            low, high = catoni_sequence(d, variance, share)
        elif len(d) < min_runs or constant(arrays[n], arrays[reference]) is not None:
            low, high = -math.inf, math.inf
        else:
            low, high = confidence_sequence(d, look, share)
        decided = bool(low > 0 or high < 0)
        rows.append({"name": n, "reference": reference, "runs": len(d),
                     "diff": float(np.mean(d)), "cs_low": low, "cs_high": high,
                     "decided": decided,
                     "verdict": "undecided" if not decided else "better" if high < 0 else "worse",
                     "method": method, "assumes": ASSUMES[method]})
    return pd.DataFrame(rows)


__all__ = ["ASSUMES", "LEVEL", "Paired", "betting_sequence", "catoni_sequence", "compare",
           "confidence_sequence", "holm", "look_level", "mean_ci", "pair_tests", "paired",
           "sequential_compare", "sequential_method", "sign_flip_p", "simultaneous_band",
           "t_quantile"]
