"""oslr.stats: exact t quantiles, paired comparisons, Holm, the anytime-valid sequence."""

import math

import numpy as np
import pytest

from oslr import stats


@pytest.mark.parametrize("df, q", [(1, 12.706204736), (9, 2.262157163), (29, 2.045229642),
                                   (30, 2.042272456), (60, 2.000297822), (1000, 1.962339081)])
def test_t_quantile__exact_to_1e6_beyond_the_old_table(df, q):
    # published 97.5% quantiles; the old table jumped to 1.96 above df = 30 (2% narrow at 60)
    assert stats.t_quantile(df) == pytest.approx(q, abs=1e-6)


def test_t_quantile__other_levels_and_no_interval_for_one_run():
    assert stats.t_quantile(10, 0.9) == pytest.approx(1.812461123, abs=1e-6)
    assert math.isnan(stats.t_quantile(0))
    mean, sem, half = stats.mean_ci(np.array([3.0]))
    assert mean == 3.0 and math.isnan(sem) and math.isnan(half)


def test_paired__by_hand():
    # d = (1, 2, 2, 3): mean 2, sd sqrt(2/3), sem 0.408248, t_3 = 3.182446, t = 4.899 -> p 0.01628
    pr = stats.paired([1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 1.0, 1.0])
    assert pr.n == 4 and pr.diff == 2.0
    assert pr.sem == pytest.approx(0.408248290, abs=1e-8)
    assert (pr.ci_low, pr.ci_high) == pytest.approx((2 - 1.299228264, 2 + 1.299228264), abs=1e-8)
    assert pr.p == pytest.approx(0.016276603, abs=1e-8)
    assert (pr.below, pr.above) == (0, 4)
    assert stats.paired([1.0, 2.0], [1.0, 2.0]).p == 1.0
    with pytest.raises(ValueError, match="same shape|one shape"):
        stats.paired([1.0, 2.0], [1.0, 2.0, 3.0])


def test_paired__separates_what_overlapping_unpaired_intervals_call_a_tie():
    # the runs share a large difficulty; b is worse by 1 in every run
    rng = np.random.default_rng(0)
    hard = rng.normal(0, 10, 10)
    a, b = 100 + hard, 101 + hard + rng.normal(0, 0.1, 10)
    ma, _, ha = stats.mean_ci(a)
    mb, _, hb = stats.mean_ci(b)
    assert ma + ha > mb - hb  # the unpaired intervals overlap
    pr = stats.paired(b, a)
    assert pr.ci_low > 0.8 and pr.above == 10 and pr.p < 1e-6


def test_holm__by_hand():
    # sorted 0.005 x 4 = 0.02, 0.01 x 3 = 0.03, 0.03 x 2 = 0.06, 0.04 x 1 -> max(0.06, 0.04)
    adj = stats.holm([0.01, 0.04, 0.03, 0.005])
    np.testing.assert_allclose(adj, [0.03, 0.06, 0.06, 0.02])
    adj = stats.holm([0.5, np.nan, 0.01])  # NaN is not in the family (m = 2)
    np.testing.assert_allclose(adj, [0.5, np.nan, 0.02])


def test_compare__verdicts_against_the_best_with_holm():
    rng = np.random.default_rng(1)
    hard = rng.normal(0, 5, 20)
    values = {"a": 10 + hard, "b": 12 + hard + rng.normal(0, 0.5, 20),
              "c": 10 + hard + rng.normal(0, 0.5, 20), "d": 10.05 + hard + rng.normal(0, 3, 20)}
    table = stats.compare(values, reference="a").set_index("name")
    assert table.loc["a", "verdict"] == "reference"
    assert table.loc["b", "verdict"] == "worse" and table.loc["b", "behind"] == 20
    assert table.loc[["c", "d"], "verdict"].tolist() == ["indistinguishable"] * 2
    assert (table["p_holm"].dropna() >= table["p"].dropna()).all()
    # "best": the lowest mean is the reference
    best = stats.compare(values).set_index("name")
    lowest = min(values, key=lambda n: values[n].mean())
    assert best.loc[lowest, "verdict"] == "reference" and (best["reference"] == lowest).all()
    # rewards: higher is better; a named reference
    table = stats.compare(values, reference="a", lower_is_better=False).set_index("name")
    assert table.loc["b", "verdict"] == "better" and table.loc["b", "ahead"] == 20
    # rewards with "best": the highest mean is the reference
    best = stats.compare(values, lower_is_better=False).set_index("name")
    highest = max(values, key=lambda n: values[n].mean())
    assert highest != lowest and (best["reference"] == highest).all()
    assert best.loc[highest, "verdict"] == "reference"
    with pytest.raises(ValueError, match="not among"):
        stats.compare(values, reference="z")


def test_look_level__shares_sum_to_alpha():
    assert stats.look_level(1) == pytest.approx(1 - 6 * 0.05 / math.pi**2)
    assert stats.look_level(2) == pytest.approx(0.992400911, abs=1e-9)
    spent = sum(1 - stats.look_level(j) for j in range(1, 100_000))
    assert spent == pytest.approx(0.05, abs=1e-5)


def _coverage(sequence: bool, reps: int, looks: int, batch: int, seed: int) -> float:
    """Share of repetitions whose intervals cover the true mean 0 at every look (heavy tails:
    t with 5 degrees of freedom, as regret differences can be)."""
    rng = np.random.default_rng(seed)
    d = rng.standard_t(5, size=(reps, looks * batch))
    covered = np.ones(reps, bool)
    for j in range(1, looks + 1):
        n = j * batch
        mean = d[:, :n].mean(1)
        sem = d[:, :n].std(1, ddof=1) / math.sqrt(n)
        level = stats.look_level(j) if sequence else 0.95
        half = stats.t_quantile(n - 1, level) * sem
        covered &= np.abs(mean) <= half
    return float(covered.mean())


def test_confidence_sequence__covers_at_every_look_where_repeated_intervals_do_not():
    # 4,000 repetitions of 20 looks of 10 runs under the null: repeated 95% intervals cover at
    # every look in 75.3% of them (peeking inflates the error), the sequence in 96.5%
    assert _coverage(True, 4000, 20, 10, 0) >= 0.95
    assert _coverage(False, 4000, 20, 10, 0) < 0.9
    low, high = stats.confidence_sequence(np.arange(10.0), 1)
    mean, _, half = stats.mean_ci(np.arange(10.0), level=stats.look_level(1))
    assert (low, high) == pytest.approx((mean - half, mean + half))


@pytest.mark.slow
def test_confidence_sequence__coverage_over_many_repetitions():
    # 40,000 repetitions of 50 looks of 4 runs (small batches: the t interval's own exactness
    # matters most there): 97.0% measured
    assert _coverage(True, 40_000, 50, 4, 1) >= 0.95


def test_compare__reference_row_and_columns_pinned():
    from oslr.stats import compare

    v = {"a": np.array([1.0, 2.0, 3.0, 4.0]), "b": np.array([1.5, 2.0, 3.5, 4.0])}
    t = compare(v, reference="b")
    assert list(t.columns) == ["name", "mean", "reference", "diff", "diff_low", "diff_high", "p",
                               "p_holm", "ahead", "behind", "verdict", "p_free", "p_free_holm",
                               "free_verdict", "p_equiv_holm", "family"]
    ref = t.set_index("name").loc["b"]
    assert (ref["diff"], ref["diff_low"], ref["diff_high"], ref["ahead"], ref["behind"]) == (
        0.0, 0.0, 0.0, 0, 0)
    assert np.isnan(ref["p"]) and np.isnan(ref["p_holm"]) and ref["verdict"] == "reference"
    a = t.set_index("name").loc["a"]
    assert (a["ahead"], a["behind"]) == (2, 0)  # two runs tied: neither ahead nor behind


def test_paired__ties_count_neither_above_nor_below():
    from oslr.stats import paired

    pr = paired([1.0, 2.0, 3.0, 5.0], [1.0, 1.0, 4.0, 5.0])
    assert (pr.below, pr.above, pr.n) == (1, 1, 4)


def test_holm__caps_at_one_and_is_float64_whatever_the_input():
    from oslr.stats import holm

    assert holm([0.5, 0.6]).tolist() == [1.0, 1.0]
    assert holm([0.4, 0.01, 0.3]).tolist() == pytest.approx([0.6, 0.03, 0.6], abs=1e-15)
    p32 = np.array([0.1, 0.7, 0.0133], np.float32)  # 3 x 0.0133f is not a float32
    assert holm(p32).dtype == np.float64
    np.testing.assert_array_equal(holm(p32), holm(p32.astype(np.float64)))


@pytest.mark.parametrize("n, family", [(8, 3), (30, 1), (12, 10), (2, 1)])
def test_detectable_effect__found_80_percent_of_the_time_by_holm_over_the_family(n, family):
    # 40,000 families of `family` independent pairs, every one at the stated effect: each pair
    # is rejected by Holm at 5% in at least 80% of them, and by Bonferroni (the level the
    # effect is computed at) in 80% up to Monte-Carlo error (sd 0.002)
    delta = stats.detectable_effect(n, family)
    rng = np.random.default_rng(11)
    d = rng.standard_normal((40_000, family, n)) + delta
    t = d.mean(-1) / (d.std(-1, ddof=1) / math.sqrt(n))
    from scipy import stats as st

    p = 2.0 * st.t.sf(np.abs(t), n - 1)
    bonferroni = float(np.mean(p <= 0.05 / family))
    assert bonferroni == pytest.approx(0.80, abs=0.01)
    holm_rate = float(np.mean([stats.holm(row) <= 0.05 for row in p[:4000]]))
    assert holm_rate >= 0.79


def test_detectable_effect__published_values_and_the_normal_limit():
    from scipy import stats as st

    # G*Power's paired-t sensitivity, two-sided 5%, 80% power: n = 20 -> dz 0.66
    assert stats.detectable_effect(20) == pytest.approx(0.6604, abs=5e-4)
    for n, family in [(10_000, 1), (20_000, 6)]:  # z-test limit (z_{a/2m} + z_{0.2}) / sqrt(n)
        z = (st.norm.isf(0.025 / family) + st.norm.isf(0.2)) / math.sqrt(n)
        assert stats.detectable_effect(n, family) == pytest.approx(z, rel=2e-3)
    assert stats.detectable_effect(20, 10) > stats.detectable_effect(20, 3)
    assert stats.detectable_effect(40, 3) < stats.detectable_effect(20, 3)
    assert stats.detectable_effect(20, power=0.9) > stats.detectable_effect(20)


def test_detectable_effect__zero_at_a_power_equal_to_the_level():
    # under no effect the two tails of the t test add up to the level exactly: each tail and
    # its degrees of freedom enter the power
    for n, family in [(10, 1), (3, 4)]:
        assert stats.detectable_effect(n, family, power=0.05 / family) == pytest.approx(0.0,
                                                                                       abs=1e-9)


@pytest.mark.parametrize("n, family, power", [(5, 1, 0.3), (4, 2, 0.5), (9, 3, 0.9)])
def test_detectable_effect__its_power_by_integration_over_the_variance(n, family, power):
    # the t statistic at mean delta is (Z + delta sqrt(n)) / sqrt(V / df), V ~ chi2(df): the
    # power is an integral over V of two normal tails, computed here without scipy's nct
    from scipy import integrate
    from scipy import stats as st

    delta, df = stats.detectable_effect(n, family, power=power), n - 1
    crit = st.t.isf(0.025 / family, df)
    nc = delta * math.sqrt(n)

    def tails(v):
        c = crit * math.sqrt(v / df)
        return (st.norm.sf(c - nc) + st.norm.cdf(-c - nc)) * st.chi2.pdf(v, df)

    assert integrate.quad(tails, 0.0, np.inf, epsabs=1e-12)[0] == pytest.approx(power, abs=1e-7)


def test_detectable_effect__no_effect_from_one_run_and_no_empty_family():
    assert math.isnan(stats.detectable_effect(1))
    with pytest.raises(ValueError, match="family must be at least 1"):
        stats.detectable_effect(10, 0)


def _cs_by_hand(d, look, m):
    """The anytime-valid interval of `sequential_compare` computed from its definition: look j
    at level 1 - 6 alpha_m / (pi^2 j^2), alpha_m = 0.05 / m, an exact t interval."""
    from scipy import stats as st

    a = 6 * (0.05 / m) / (np.pi**2 * look**2)
    q = st.t.ppf(1 - a / 2, len(d) - 1)
    half = q * np.std(d, ddof=1) / np.sqrt(len(d))
    return np.mean(d) - half, np.mean(d) + half


@pytest.mark.parametrize("reference,m", [("best", 3), ("c", 2)])
def test_sequential_compare__bonferroni_over_pairs_for_best_over_comparisons_when_named(
        reference, m):
    """E = 3 entries: "best" shares alpha over the E (E - 1) / 2 = 3 pairs, a named reference
    over its E - 1 = 2 comparisons (the best may change between looks)."""
    from oslr.stats import sequential_compare

    rng = np.random.default_rng(3)
    base = rng.normal(size=12)
    v = {"a": base + 0.9 + 0.3 * rng.normal(size=12), "b": base + 0.05 + 0.3 * rng.normal(size=12),
         "c": base + 0.3 * rng.normal(size=12)}
    ref = min(v, key=lambda n: v[n].mean()) if reference == "best" else reference
    t = sequential_compare(v, look=2, reference=reference, normal=True)
    assert list(t.columns) == ["name", "reference", "runs", "diff", "cs_low", "cs_high",
                               "decided", "verdict", "method", "assumes"]
    assert set(t["method"]) == {"t"}
    assert list(t["name"]) == [n for n in v if n != ref]
    for _, row in t.iterrows():
        d = v[row["name"]] - v[ref]
        lo, hi = _cs_by_hand(d, 2, m)
        assert (row["cs_low"], row["cs_high"]) == pytest.approx((lo, hi), rel=1e-12)
        assert row["reference"] == ref and row["runs"] == 12
        assert row["diff"] == pytest.approx(d.mean(), rel=1e-12)
        decided = lo > 0 or hi < 0
        assert row["decided"] == decided
        assert row["verdict"] == ("undecided" if not decided else "worse" if lo > 0 else "better")
    assert "worse" in set(t["verdict"]) and "undecided" in set(t["verdict"])


def test_sequential_compare__two_entries_suffice_one_does_not():
    from oslr.stats import sequential_compare

    rng = np.random.default_rng(0)
    a = rng.normal(size=12)
    t = sequential_compare({"a": a, "b": a + 1.0 + 0.01 * rng.normal(size=12)}, look=1, normal=True)
    assert list(t["name"]) == ["b"] and t["verdict"].item() == "worse"
    # fewer than min_runs runs, or every difference equal: no t interval, undecided
    few = sequential_compare({"a": a[:9], "b": a[:9] + 1.0 + rng.normal(size=9)}, look=1,
                             normal=True)
    whole = np.round(4 * a)  # whole numbers: b - a is exactly 1 in every run
    same = sequential_compare({"a": whole, "b": whole + 1.0}, look=1, min_runs=2, normal=True)
    for t in (few, same):
        assert t["verdict"].item() == "undecided"
        assert (t["cs_low"].item(), t["cs_high"].item()) == (-math.inf, math.inf)
    assert sequential_compare({"a": a[:9], "b": a[:9] + 1.0 + 0.01 * rng.normal(size=9)},
                              look=1, min_runs=9, normal=True)["verdict"].item() == "worse"
    with pytest.raises(ValueError, match="two entries or more"):
        sequential_compare({"a": np.arange(5.0)}, look=1)


def _holm_by_hand(p: np.ndarray) -> np.ndarray:
    order = np.argsort(p, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate((len(p) - np.arange(len(p))) * p[order]))
    out = np.empty_like(adj)
    out[order] = adj
    return out


def _every_sign_pattern(d: np.ndarray) -> float:
    """The sign-flip p of mean(d) = 0 by brute force: the share of all 2^n sign patterns s
    with |sum s_r |d_r|| >= |sum d_r| (up to rounding)."""
    n = len(d)
    signs = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1) * 2.0 - 1.0
    sums = np.abs(signs @ np.abs(d))
    return float(np.mean(sums >= abs(d.sum()) - 1e-9 * np.abs(d).sum()))


def test_compare__random_tables_against_scipy_and_an_independent_holm():
    # seeded random tables (2-6 entries, 3-16 runs, a shared run effect, some real differences):
    # p = scipy's paired t test, p_free = every sign pattern enumerated here, p_holm and
    # p_free_holm = Holm's step-down written here over the family (a named reference: its
    # comparisons; "best": every pair of entries), and each verdict follows from its Holm p at
    # alpha = 0.05 and the sign of the mean difference
    from itertools import combinations

    from scipy import stats as st

    rng = np.random.default_rng(2024)
    for i in range(60):
        e, n = int(rng.integers(2, 7)), int(rng.integers(3, 17))
        shared = rng.normal(0, 3, n)
        values = {f"e{i}": shared + rng.normal(rng.choice([0.0, 0.0, 1.5]), 1.0, n)
                  for i in range(e)}
        lower = bool(rng.integers(0, 2))
        named = i % 3 == 0
        table = stats.compare(values, reference="e0" if named else "best",
                              lower_is_better=lower).set_index("name")
        ref = table["reference"].iloc[0]
        others = [k for k in values if k != ref]
        pairs = ([(k, ref) for k in others] if named else
                 list(combinations(values, 2)))
        tests = {frozenset(ab): (st.ttest_rel(values[ab[0]], values[ab[1]]).pvalue,
                                 _every_sign_pattern(values[ab[0]] - values[ab[1]]))
                 for ab in pairs}
        holm_t = dict(zip(tests, _holm_by_hand(np.array([t for t, _ in tests.values()]))))
        holm_w = dict(zip(tests, _holm_by_hand(np.array([w for _, w in tests.values()]))))
        assert table["family"].iloc[0].startswith(
            f"Holm over the {e - 1} comparison" if named else f"Holm over all {len(pairs)} pair")
        for k in others:
            key = frozenset((k, ref))
            row = table.loc[k]
            assert row["p"] == pytest.approx(tests[key][0], rel=1e-9, abs=1e-14)
            assert row["p_free"] == pytest.approx(tests[key][1], rel=1e-9, abs=1e-14)
            assert row["p_holm"] == pytest.approx(holm_t[key], rel=1e-9, abs=1e-14)
            assert row["p_free_holm"] == pytest.approx(holm_w[key], rel=1e-9, abs=1e-14)
            diff = values[k].mean() - values[ref].mean()
            good = diff < 0 if lower else diff > 0
            verdict = ("indistinguishable" if holm_t[key] > 0.05 else "better" if good
                       else "worse")
            assert row["verdict"] == verdict, (k, holm_t[key], diff)
            verdict = ("indistinguishable" if holm_w[key] > 0.05 else "better" if good
                       else "worse")
            assert row["free_verdict"] == verdict, (k, holm_w[key], diff)


def test_pair_tests__sign_flip_from_two_runs_on_and_nan_for_one():
    two = stats.pair_tests(np.array([1.0, 2.0]), np.zeros(2))
    assert two["p_free"] == 0.5 and np.isnan(two["p_equiv"])  # exact: 2 of the 4 sign patterns
    one = stats.pair_tests(np.array([1.0]), np.zeros(1))
    assert np.isnan(one["p_free"]) and np.isnan(one["pair"].p)


def test_compare__a_diverged_entry_has_its_own_verdict_and_is_never_the_reference():
    rng = np.random.default_rng(11)
    base = rng.normal(0.0, 1.0, 30)
    values = {"broken": np.concatenate([[np.nan], base[1:] - 5.0]),  # first and lowest otherwise
              "good": base, "worse": base + 1.0 + np.random.default_rng(12).normal(0, 0.1, 30),
              "noisy": base + rng.normal(0, 3, 30)}
    table = stats.compare(values).set_index("name")
    assert table.loc["good", "verdict"] == "reference" and (table["reference"] == "good").all()
    assert table.loc["broken", "verdict"] == "diverged"
    assert np.isnan(table.loc["broken", ["diff", "p", "p_holm"]].astype(float)).all()
    assert table.loc["worse", "verdict"] == "worse"
    # Holm's family is the two finite comparisons, not three
    finite = stats.compare({k: v for k, v in values.items() if k != "broken"}).set_index("name")
    np.testing.assert_allclose(table.loc[["worse", "noisy"], "p_holm"].astype(float),
                               finite.loc[["worse", "noisy"], "p_holm"].astype(float))
    with pytest.raises(ValueError, match=r"^reference 'broken' diverged \(a run is NaN or inf\)"):
        stats.compare(values, reference="broken")
    with pytest.raises(ValueError, match=r"^every entry has a NaN or inf run"):
        stats.compare({"a": np.array([np.inf, 1.0]), "b": np.array([np.nan, 2.0])})


def test_sequential_compare__a_diverged_entry_is_decided_at_once_and_never_the_reference():
    base = np.linspace(0.0, 1.0, 12)
    values = {"broken": np.r_[-100.0 * np.ones(11), np.inf], "a": base, "b": base + 5.0}
    table = stats.sequential_compare(values, look=1, normal=True).set_index("name")
    assert (table["reference"] == "a").all()
    assert table.loc["broken", "verdict"] == "diverged" and bool(table.loc["broken", "decided"])
    assert np.isnan(table.loc["broken", ["diff", "cs_low", "cs_high"]].astype(float)).all()
    assert list(table.index) == ["broken", "b"]  # the entries after it are compared too
    assert list(table.columns) == ["reference", "runs", "diff", "cs_low", "cs_high", "decided",
                                   "verdict", "method", "assumes"]
    with pytest.raises(ValueError, match=r"^reference 'broken' diverged"):
        stats.sequential_compare(values, look=1, reference="broken", normal=True)


def test_compare__the_level_reaches_each_paired_interval():
    rng = np.random.default_rng(2)
    base = rng.normal(0, 1, 20)
    values = {"a": base, "b": base + rng.normal(0.3, 1, 20)}
    wide = stats.compare(values, reference="a", level=0.95).set_index("name").loc["b"]
    narrow = stats.compare(values, reference="a", level=0.5).set_index("name").loc["b"]
    assert narrow["diff_high"] - narrow["diff_low"] < wide["diff_high"] - wide["diff_low"]
    want = stats.paired(values["b"], values["a"], 0.5)
    assert (narrow["diff_low"], narrow["diff_high"]) == pytest.approx((want.ci_low, want.ci_high))


def test_mean_ci_and_paired__float64_arithmetic_on_float32_input_and_one_run():
    v = np.full(10_001, 1.1, np.float32)
    v[::7] = 3.3
    mean, sem, _ = stats.mean_ci(v)
    wide = v.astype(np.float64)
    assert mean == wide.mean() and sem == pytest.approx(wide.std(ddof=1) / np.sqrt(len(v)),
                                                        rel=1e-13)
    one = stats.paired(np.array([1.0]), np.array([0.5]))
    assert one.n == 1 and np.isnan(one.p) and one.diff == 0.5


def test_compare__five_runs_no_distribution_free_verdict_and_tost_equivalence_by_hand():
    # [WLL]'s "ahead in 5/5": the t test separates, but with 5 runs no signed-rank test can go
    # below p = 2 / 2^5 = 0.0625, so the companion cannot; the table shows both
    base = np.array([10.0, 20.0, 30.0, 40.0, 50.0])
    values = {"a": base, "b": base + np.array([1.0, 1.1, 0.9, 1.05, 0.95])}
    t = stats.compare(values, reference="a").set_index("name").loc["b"]
    assert t["verdict"] == "worse" and t["p_holm"] < 1e-4
    assert t["p_free"] == pytest.approx(0.0625) and t["free_verdict"] == "indistinguishable"
    assert np.isnan(t["p_equiv_holm"])  # no margin, no equivalence test
    # TOST with a margin: d = b - a has mean 0.05, sd s; p = max of the one-sided t tests
    rng = np.random.default_rng(3)
    d = rng.normal(0.05, 0.3, 40)
    values = {"a": base.mean() + rng.normal(0, 5, 40)}
    values["b"] = values["a"] + d
    m, se = d.mean(), d.std(ddof=1) / np.sqrt(40)
    from scipy import stats as st
    want = max(st.t.sf((m + 0.5) / se, 39), st.t.cdf((m - 0.5) / se, 39))
    row = stats.compare(values, reference="a", margin=0.5).set_index("name").loc["b"]
    assert row["p_equiv_holm"] == pytest.approx(want, rel=1e-9)
    # the other sign (d = a - b, mean -0.05): the test of H0 mean <= -margin gives the larger p
    want = max(st.t.sf((-m + 0.5) / se, 39), st.t.cdf((-m - 0.5) / se, 39))
    assert want == st.t.sf((-m + 0.5) / se, 39)
    row = stats.compare(values, reference="b", margin=0.5).set_index("name").loc["a"]
    assert row["p_equiv_holm"] == pytest.approx(want, rel=1e-9)
    with pytest.raises(ValueError, match=r"^every entry needs the same runs; got shapes "
                       r"\[\(3,\), \(40,\)\]\.$"):
        stats.compare({"a": values["a"], "c": np.zeros(3)})
    assert row["p_holm"] > 0.05 and row["verdict"] == "equivalent"
    # a margin too tight to show equivalence: indistinguishable, not equivalent
    row = stats.compare(values, reference="a", margin=0.02).set_index("name").loc["b"]
    assert row["p_equiv_holm"] > 0.05 and row["verdict"] == "indistinguishable"
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="margin must be a positive finite"):
            stats.compare(values, margin=bad)
    # a constant nonzero difference: no t test applies (no p, never a p of 0); TOST decides
    shifted = stats.paired(base + 1.0, base)
    assert np.isnan(shifted.p) and shifted.diff == pytest.approx(1.0)
    # equal runs: the companion's p is 1, TOST's is 0 within any margin
    same = stats.compare({"a": base, "b": base.copy()}, reference="a", margin=1.0)
    row = same.set_index("name").loc["b"]
    assert (row["p_free"], row["p_equiv_holm"], row["verdict"]) == (1.0, 0.0, "equivalent")


def test_compare__best_is_judged_over_all_pairs_not_its_own_comparisons():
    # three entries: the best's two comparisons alone (Holm over 2) would call c worse at 5%,
    # but the family of a reference picked after looking is all 3 pairs
    rng = np.random.default_rng(14)
    shared = rng.normal(0, 10, 12)
    noise = rng.normal(0, 1, (3, 12))
    values = {"a": shared + noise[0], "b": shared + 0.4 + noise[1], "c": shared + 0.95 + noise[2]}
    best = stats.compare(values).set_index("name")
    named = stats.compare(values, reference="a").set_index("name")
    assert best["reference"].iloc[0] == "a"
    assert best["family"].iloc[0] == ("Holm over all 3 pairs of 3 entries (the best chosen "
                                      "after looking)")
    assert named["family"].iloc[0] == "Holm over the 2 comparisons with a"
    two = stats.compare({"a": values["a"], "b": values["b"]}, reference="a")
    assert two["family"].iloc[0] == "Holm over the 1 comparison with a"
    p = best.loc[["b", "c"], "p"].to_numpy()
    np.testing.assert_allclose(named.loc[["b", "c"], "p_holm"], _holm_by_hand(p))
    p_bc = stats.paired(values["b"], values["c"]).p
    all3 = _holm_by_hand(np.array([p[0], p[1], p_bc]))
    np.testing.assert_allclose(best.loc[["b", "c"], "p_holm"], all3[:2])
    assert named.loc["c", "verdict"] == "worse" and named.loc["c", "p_holm"] == pytest.approx(
        0.0405, abs=1e-4)
    assert best.loc["c", "verdict"] == "indistinguishable" and best.loc[
        "c", "p_holm"] == pytest.approx(0.0607, abs=1e-4)


def _null_fwer(e: int, tables: int, n: int, seed: int) -> float:
    """Share of tables of e exchangeable entries (a shared run effect, the same law) in which
    compare(reference="best") gives any better / worse verdict."""
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(tables):
        shared = rng.normal(0, 3, n)
        values = {f"e{i}": shared + rng.normal(0, 1, n) for i in range(e)}
        verdicts = stats.compare(values)["verdict"]
        hits += bool(verdicts.isin(["better", "worse"]).any())
    return hits / tables


@pytest.mark.slow
@pytest.mark.parametrize("e", [2, 3, 5, 10])
def test_compare__best_controls_the_family_wise_error_under_the_global_null(e):
    # 2,000 tables of 20 runs a cell; the bound is 5% plus 3 Monte-Carlo standard errors (1.5%);
    # picking the best then Holm over its own E - 1 comparisons exceeded 5% (up to 14.6%)
    assert _null_fwer(e, 2000, 20, seed=e) <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 2000)


def test_simultaneous_band__the_bootstrap_t_max_by_hand_and_zero_spread_columns():
    rng = np.random.default_rng(8)
    v = np.cumsum(rng.normal(size=(12, 6)), axis=1)
    v[:, 0] = 3.0  # every run agrees at the first checkpoint: no spread, no band, not in the max
    mean, half = stats.simultaneous_band(v, level=0.9, n_boot=500, seed=4)
    # the same resamples drawn here, one at a time
    draw = np.random.default_rng(4)
    idx = np.concatenate([draw.integers(0, 12, size=(200, 12)), draw.integers(0, 12, (200, 12)),
                          draw.integers(0, 12, size=(100, 12))])
    sem = v.std(0, ddof=1) / np.sqrt(12)
    maxes = []
    for row in idx:
        b = v[row]
        b_sem = b.std(0, ddof=1) / np.sqrt(12)
        ok = b_sem > 0
        maxes.append(np.max(np.abs(b.mean(0) - v.mean(0))[ok] / b_sem[ok]))
    q = np.sort(maxes)[int(np.ceil(0.9 * 500)) - 1]  # the least m with F_500(m) >= 0.9
    np.testing.assert_allclose(mean, v.mean(0))
    np.testing.assert_allclose(half, q * sem, rtol=1e-12)
    assert half[0] == 0.0 and (half[1:] > 0).all()
    # wider than the pointwise interval at every checkpoint with spread (q > t_{0.95, 11})
    _, _, pointwise = stats.mean_ci(v, axis=0, level=0.9)
    assert (half[1:] > pointwise[1:]).all()
    for bad in (v[:1], v[:, 0]):
        with pytest.raises(ValueError, match="runs >= 2, checkpoints"):
            stats.simultaneous_band(bad)


def _band_coverage(simultaneous: bool, reps: int, runs: int, seed: int) -> float:
    """Share of repetitions whose band holds the true mean curve (0) at all 47 checkpoints;
    the curves are running sums of t4 steps, as regret curves are sums of rounds."""
    rng = np.random.default_rng(seed)
    hits = 0
    for i in range(reps):
        curves = np.cumsum(rng.standard_t(4, size=(runs, 47)), axis=1)
        if simultaneous:
            mean, half = stats.simultaneous_band(curves, n_boot=1000, seed=i)
        else:
            mean, _, half = stats.mean_ci(curves, axis=0)
        hits += bool(np.all(np.abs(mean) <= half))
    return hits / reps


def test_simultaneous_band__covers_the_curve_where_pointwise_bands_do_not():
    # 150 repetitions of 30 runs: pointwise 95% bands hold the whole curve in about 69% of them,
    # the simultaneous band in about 96%
    assert _band_coverage(False, 150, 30, seed=1) < 0.8
    assert _band_coverage(True, 150, 30, seed=1) >= 0.9


@pytest.mark.slow
@pytest.mark.parametrize("runs", [10, 30, 100])
def test_simultaneous_band__coverage_at_least_95_percent(runs):
    # 600 repetitions; measured 0.993 (10 runs), 0.963 (30), 0.957 (100) on 300 of them;
    # 3 Monte-Carlo standard errors (2.7%) below 95% is the bound
    assert _band_coverage(True, 600, runs, seed=runs) >= 0.95 - 3 * math.sqrt(0.0475 / 600)


def _capital_by_hand(x: np.ndarray, m: float, alpha: float, last: bool = False) -> float:
    """The largest hedged capital against mean m over the runs of x in [0, 1] (with `last`, the
    capital after the last run), one run at a time ([WSR23] eq. (26)-(27), predictable plug-in
    bets capped at 1/2 / m and 1/2 / (1 - m))."""
    up = down = 1.0
    best = 0.0
    s, ss = 0.0, 0.0
    s2_prev = 0.25
    for i, xi in enumerate(x, start=1):
        lam = math.sqrt(2 * math.log(2 / alpha) / (s2_prev * i * math.log(1 + i)))
        up *= 1 + min(lam, 0.5 / m) * (xi - m)
        down *= 1 - min(lam, 0.5 / (1 - m)) * (xi - m)
        best = max(best, (up + down) / 2)
        s += xi
        mu = (0.5 + s) / (i + 1)
        ss += (xi - mu) ** 2
        s2_prev = (0.25 + ss) / (i + 1)
    return (up + down) / 2 if last else best


def test_betting_sequence__rejects_exactly_the_means_whose_capital_reached_one_over_alpha():
    rng = np.random.default_rng(6)
    d = np.where(rng.random(40) < 0.2, 3.0, -0.5)  # skewed and discrete: a rare large loss
    low, high = stats.betting_sequence(d, (-1.0, 4.0), level=0.9, grid=200)
    m = (np.arange(200) + 0.5) / 200
    kept = [_capital_by_hand((d + 1.0) / 5.0, mi, 0.1) < 10.0 for mi in m]
    inside = m[np.array(kept)]
    assert low == pytest.approx(-1.0 + 5.0 * (inside.min() - 1 / 200), rel=1e-12)
    assert high == pytest.approx(-1.0 + 5.0 * (inside.max() + 1 / 200), rel=1e-12)
    assert low < d.mean() < high and high - low < 3.0
    # equal differences: an interval that narrows around them, never to zero width
    w = [np.subtract(*stats.betting_sequence(np.full(n, 0.3), (-1, 1))[::-1]) for n in (5, 50,
                                                                                         400)]
    assert w[0] > w[1] > w[2] > 0
    assert stats.betting_sequence([], (-1, 1)) == (-1.0, 1.0)
    # a grid so coarse that every candidate is rejected: the one whose capital after the last
    # run is least survives (here m = 3/4; the run before, the two were tied)
    d = np.r_[np.zeros(20), 0.6]
    x = (d + 1.0) / 2.0
    assert all(_capital_by_hand(x, mi, 0.05) >= 20.0 for mi in (0.25, 0.75))
    final = [_capital_by_hand(x, mi, 0.05, last=True) for mi in (0.25, 0.75)]
    before = [_capital_by_hand(x[:-1], mi, 0.05, last=True) for mi in (0.25, 0.75)]
    assert final[1] < final[0] and before[0] == pytest.approx(before[1], rel=1e-12)
    assert stats.betting_sequence(d, (-1, 1), grid=2) == pytest.approx((-0.5, 1.0), abs=1e-12)
    with pytest.raises(ValueError, match="outside bounds"):
        stats.betting_sequence([0.5, 2.0], (-1, 1))
    for bad in ((1, 1), (0, float("inf")), (2, 1)):
        with pytest.raises(ValueError, match="two finite numbers lo < hi"):
            stats.betting_sequence([0.0], bad)


def test_sequential_compare__bounds_use_the_betting_sequence_for_every_pair():
    rng = np.random.default_rng(2)
    base = rng.normal(size=30)
    v = {"a": base, "b": base + np.where(rng.random(30) < 0.1, 2.0, 0.0)}
    t = stats.sequential_compare(v, look=3, reference="a", bounds=(-1.0, 3.0)).iloc[0]
    assert t["method"] == "betting"
    assert (t["cs_low"], t["cs_high"]) == pytest.approx(
        stats.betting_sequence(v["b"] - v["a"], (-1.0, 3.0)), rel=1e-12)


def _null_draws(name: str, rng, shape):
    """Mean-zero differences of the issue-39 battery, with what is known of them: their bounds
    (bounded laws) or a bound on their variance (the centred lognormals: exactly it), else
    None, None."""
    if name == "normal":
        return rng.normal(size=shape), None, None
    if name == "t3":
        return rng.standard_t(3, size=shape), None, None
    if name.startswith("lognormal"):
        s = float(name.split("-")[1])
        variance = (math.exp(s * s) - 1) * math.exp(s * s)
        return rng.lognormal(0, s, size=shape) - math.exp(s * s / 2), None, variance
    if name == "pareto-2.5":  # Pareto(2.5) on [1, inf): mean 5/3, variance 2.5 / (1.5^2 0.5)
        return rng.pareto(2.5, size=shape) + 1.0 - 5.0 / 3.0, None, 2.5 / (1.5**2 * 0.5)
    if name == "t3-variance":  # Student t(3): variance 3
        return rng.standard_t(3, size=shape), None, 3.0
    if name.startswith("bernoulli"):
        p = float(name.split("-")[1])
        return (rng.random(shape) < p) - p, (-p, 1 - p), None
    # a rare spike: -1 in 99 runs of 100, +99 in one
    return np.where(rng.random(shape) < 0.01, 99.0, -1.0), (-1.0, 99.0), None


def _sequence_coverage(name: str, batch: int, looks: int, reps: int, seed: int,
                       known: bool = True) -> float:
    """Share of `reps` null studies whose interval holds the true mean 0 at every look
    (`sequential_compare`'s interval for one comparison: betting with the bounds when the law
    has them, Catoni-style with its variance bound when it has one, else t with its rules;
    known=False: t whatever is known)."""
    rng = np.random.default_rng(seed)
    d, bounds, variance = _null_draws(name, rng, (reps, batch * looks))
    if not known:
        bounds = variance = None
    covered = 0
    for row in d:
        if bounds is not None:  # valid at every run at once: the last look's interval is the
            low, high = stats.betting_sequence(row, bounds, grid=500)  # intersection of all
            covered += low <= 0 <= high
            continue
        ok = True
        for j in range(1, looks + 1):
            t = stats.sequential_compare({"a": np.zeros(j * batch), "b": row[:j * batch]},
                                         look=j, reference="a", variance=variance,
                                         normal=variance is None).iloc[0]
            ok &= t["cs_low"] <= 0 <= t["cs_high"]
            if not ok:
                break
        covered += ok
    return covered / reps


def test_sequence_coverage__bounded_rare_spike_and_bernoulli_nulls_in_the_default_run():
    # where the t sequence covered only 15-31% (rare spike) and 18-41% (Bernoulli 0.1)
    assert _sequence_coverage("spike", 5, 20, 150, seed=0) >= 0.95
    assert _sequence_coverage("bernoulli-0.1", 2, 20, 150, seed=1) >= 0.95


def test_sequence_coverage__lognormal_with_its_variance_bound_in_the_default_run():
    # the t sequence covers a centred lognormal(0, 2) in about half of the studies; with the
    # variance known, the Catoni-style sequence covers it
    assert _sequence_coverage("lognormal-2", 5, 20, 60, seed=3) >= 0.95
    assert _sequence_coverage("lognormal-2", 5, 20, 60, seed=3, known=False) < 0.8


_BATTERY = [(name, batch, looks) for name in ("normal", "t3", "lognormal-1", "lognormal-2",
                                              "bernoulli-0.5", "bernoulli-0.1",
                                              "bernoulli-0.02", "spike")
            for batch in (2, 5) for looks in (20, 100)]


@pytest.mark.slow
@pytest.mark.parametrize("name,batch,looks", _BATTERY)
def test_sequence_coverage__the_battery_of_nulls_at_least_95_percent(name, batch, looks):
    # the t sequence for normal and t3 nulls (10 runs before the first decision), the betting
    # sequence for bounded nulls (bounds given), the Catoni-style one for centred lognormals
    # with their variance (docs/statistics.md; the measured coverages: benchmarks/HISTORY.md)
    _, bounds, variance = _null_draws(name, np.random.default_rng(0), 1)
    reps = (1000 if looks == 20 else 400) if bounds is not None else (
        500 if looks == 20 else 250)
    assert _sequence_coverage(name, batch, looks, reps, seed=batch * looks) >= (
        0.95 - 3 * math.sqrt(0.0475 / reps))


def test_catoni_sequence__the_ends_where_the_capital_reaches_two_over_alpha():
    # recomputed here on a grid of candidate means from the definition: m is kept while
    # |sum_i phi(lam_i (x_i - m))| <= variance / 2 sum lam_i^2 + log(2 / alpha)
    rng = np.random.default_rng(8)
    d = rng.lognormal(0, 1, 30) - math.exp(0.5)
    var, alpha = 4.7, 0.1
    low, high = stats.catoni_sequence(d, var, level=0.9)
    i = np.arange(1, 31)
    lam = np.sqrt(2 * math.log(2 / alpha) / (var * i * np.log(1 + i)))
    cap = var / 2 * np.sum(lam ** 2) + math.log(2 / alpha)

    def phi(x):
        return np.where(x >= 0, np.log(1 + x + x * x / 2), -np.log(1 - x + x * x / 2))

    m = np.linspace(-5, 5, 20001)
    psi = np.array([np.sum(phi(lam * (d - mi))) for mi in m])
    kept = m[np.abs(psi) <= cap]
    assert low == pytest.approx(kept.min(), abs=1e-3) and high == pytest.approx(kept.max(),
                                                                                abs=1e-3)
    assert low < d.mean() < high
    # the interval narrows with runs and widens with the variance bound
    more = rng.lognormal(0, 1, 300) - math.exp(0.5)
    w = [np.subtract(*stats.catoni_sequence(x, v)[::-1]) for x, v in
         ((more[:30], 4.7), (more, 4.7), (more, 47.0))]
    assert w[1] < w[0] and w[2] > w[1]
    assert stats.catoni_sequence([], 1.0) == (-math.inf, math.inf)
    # float32 runs are summed in float64 (a float32 sum of phi would move the ends)
    np.testing.assert_allclose(stats.catoni_sequence(d.astype(np.float32), var, level=0.9),
                               stats.catoni_sequence(d.astype(np.float32).astype(np.float64),
                                                     var, level=0.9), rtol=1e-11)
    for bad in (0.0, -1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="variance must be a finite number > 0"):
            stats.catoni_sequence([0.0], bad)
    with pytest.raises(ValueError, match=r"^a difference is NaN or inf: a variance bound cannot "
                       r"hold for it\.$"):
        stats.catoni_sequence([0.0, float("nan")], 1.0)


def test_sequential_compare__t_intervals_from_the_tenth_run_by_default():
    rng = np.random.default_rng(5)
    v = {"a": np.zeros(10), "b": rng.normal(size=10)}
    ten = stats.sequential_compare(v, look=1, reference="a", normal=True).iloc[0]
    assert np.isfinite([ten["cs_low"], ten["cs_high"]]).all() and ten["method"] == "t"
    nine = stats.sequential_compare({n: x[:9] for n, x in v.items()}, look=1,
                                    reference="a", normal=True).iloc[0]
    assert (nine["cs_low"], nine["cs_high"]) == (-math.inf, math.inf)


def test_sequential_compare__a_variance_bound_uses_the_catoni_sequence():
    rng = np.random.default_rng(4)
    base = rng.normal(size=25)
    v = {"a": base, "b": base + rng.lognormal(0, 1, 25) - 1.0}
    t = stats.sequential_compare(v, look=5, reference="a", variance=5.0).iloc[0]
    assert t["method"] == "catoni"
    assert (t["cs_low"], t["cs_high"]) == pytest.approx(
        stats.catoni_sequence(v["b"] - v["a"], 5.0), rel=1e-12)
    # "best" over 3 entries: Bonferroni over the 3 pairs, level 1 - 0.05 / 3 for each
    v["c"] = base + 3.0
    rows = stats.sequential_compare(v, look=5, variance=5.0).set_index("name")
    want = stats.catoni_sequence(v["c"] - v["a"], 5.0, level=1 - 0.05 / 3)
    assert (rows.loc["c", "cs_low"], rows.loc["c", "cs_high"]) == pytest.approx(want, rel=1e-12)
    assert rows.loc["c", "verdict"] == "worse" and (rows["method"] == "catoni").all()
    with pytest.raises(ValueError, match=r"^a sequential comparison rests on one assumption "
                       r"about the differences, betting and catoni given: bounds=\(lo, hi\)"):
        stats.sequential_compare(v, look=1, bounds=(-9, 9), variance=5.0)
    with pytest.raises(ValueError, match=r"^reference 'z' is not among \['a', 'b', 'c'\]\.$"):
        stats.sequential_compare(v, look=1, reference="z", variance=5.0)


def test_stats__edges_a_mutant_would_move(monkeypatch):
    # t_quantile of an array stays an array
    np.testing.assert_allclose(stats.t_quantile(np.array([5.0, 10.0])),
                               [2.570582, 2.228139], rtol=1e-6)
    # one live entry and one diverged: the reference row and the diverged row alone, NaN p's
    ok = np.arange(6.0)
    t = stats.compare({"a": ok, "b": np.where(ok > 4, np.nan, ok)}).set_index("name")
    assert t["verdict"].tolist() == ["reference", "diverged"]
    assert t["p_equiv_holm"].isna().all() and t["p_holm"].isna().all()
    assert t["p_equiv_holm"].dtype == np.float64  # a float column (NaN), not None objects
    assert t["p_free"].dtype == np.float64
    # a p-value exactly at alpha rejects (p <= alpha), for TOST's "equivalent" as for the t test
    real = stats.pair_tests

    alpha = 1.0 - 0.95  # as compare computes it (0.05 + 4e-17)

    def at_alpha(a, b, level, margin):
        return {**real(a, b, level, margin), "p_equiv": alpha}

    monkeypatch.setattr(stats, "pair_tests", at_alpha)
    rng = np.random.default_rng(1)
    a = rng.normal(size=20)
    row = stats.compare({"a": a, "b": a + rng.normal(size=20)}, reference="a",
                        margin=1.0).set_index("name").loc["b"]
    assert row["p_holm"] > alpha and row["p_equiv_holm"] == alpha
    assert row["verdict"] == "equivalent"
    monkeypatch.undo()
    # decided worse with an upper end below 1: "worse", whatever the interval's scale
    d = 0.5 + 0.01 * rng.normal(size=30)
    row = stats.sequential_compare({"a": np.zeros(30), "b": d}, look=1, reference="a",
                                   normal=True).iloc[0]
    assert 0 < row["cs_low"] < row["cs_high"] < 1 and row["verdict"] == "worse"


def test_simultaneous_band__zero_spread_columns_do_not_enter_a_low_quantile():
    # at a low level the max over the spread columns is often below 1: a zero-spread column
    # counted as 1 (instead of left out) would raise q there
    rng = np.random.default_rng(2)
    v = rng.normal(size=(15, 2))
    v = np.column_stack([np.full(15, 4.0), v])
    _, half = stats.simultaneous_band(v, level=0.05, n_boot=400, seed=1)
    q = half[1:] / (v[:, 1:].std(0, ddof=1) / np.sqrt(15))
    assert half[0] == 0.0 and np.allclose(q, q[0]) and q[0] < 1.0


def test_sequential_compare__an_interval_that_ends_at_zero_is_undecided(monkeypatch):
    d = np.linspace(0.0, 1.0, 12)
    for cs, verdict in (((-1.0, 0.0), "undecided"), ((0.0, 1.0), "undecided"),
                        ((-1.0, -1e-12), "better"), ((1e-12, 1.0), "worse")):
        monkeypatch.setattr(stats, "confidence_sequence", lambda d, look, level, cs=cs: cs)
        row = stats.sequential_compare({"a": d, "b": d ** 2 + 1.0}, look=1,
                                       reference="b", normal=True).iloc[0]
        assert (row["decided"], row["verdict"]) == (verdict != "undecided", verdict)


def test_sequential_compare__a_diverged_named_reference_is_refused_naming_the_fix():
    values = {"a": np.array([np.nan, 1.0, 2.0]), "b": np.array([1.0, 2.0, 3.0])}
    with pytest.raises(ValueError, match=r"^reference 'a' diverged \(a run is NaN or inf\); "
                                         r"compare with another entry or 'best'\.$"):
        stats.sequential_compare(values, look=1, reference="a", normal=True)


def test_t_quantile__a_fractional_df_between_one_and_two():
    from scipy import stats as st

    assert stats.t_quantile(1.5) == pytest.approx(st.t.ppf(0.975, 1.5), rel=1e-12)


def test_simultaneous_band__every_resample_counts_recomputed_here_and_no_warning():
    import warnings

    rng = np.random.default_rng(3)
    v = rng.normal(size=(2, 4))  # two runs: half the resamples draw one run twice (sem 0)
    for n_boot in (1, 3, 201):
        draws = np.random.default_rng(9)
        idx = np.concatenate([draws.integers(0, 2, size=(min(200, n_boot - lo), 2))
                              for lo in range(0, n_boot, 200)])
        boot = v[idx]
        b_sem = boot.std(1, ddof=1) / np.sqrt(2)
        t = np.abs(boot.mean(1) - v.mean(0)) / np.where(b_sem > 0, b_sem, 1.0)
        stat = np.where(b_sem > 0, t, 0.0).max(1)
        q = np.sort(stat)[int(np.ceil(0.95 * n_boot)) - 1]  # the inverted-CDF quantile
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a 0 / 0 or x / 0 of a one-run resample is silent
            mean, half = stats.simultaneous_band(v, n_boot=n_boot, seed=9)
        np.testing.assert_allclose(half, q * v.std(0, ddof=1) / np.sqrt(2), rtol=1e-12)
        np.testing.assert_allclose(mean, v.mean(0))


def test_constant__a_difference_made_in_floating_point_is_constant_not_significant():
    # b = a + 0.1 computed in floating point: a + 0.1 - a is not the same double in every run
    a = np.random.default_rng(3).normal(1000.0, 300.0, 40)
    b = a + 0.1
    assert np.ptp(b - a) > 0  # rounding spread, as regrets computed in float64 have
    assert stats.constant(b, a) == "constant" and stats.constant(a, a + 0.0) == "zero"
    assert stats.constant(a + np.random.default_rng(4).normal(0, 1e-3, 40), a) is None
    # the boundary: a mean difference of exactly the tolerance (1e-10 of 1e10) is still zero
    big = np.full(3, 1e10)
    assert stats.constant(big, big - 1.0) == "zero" and stats.constant(big, big - 2.0) == "constant"
    for n in (2, 10, 40):
        r = stats.paired(b[:n], a[:n])
        assert np.isnan(r.p) and r.diff == pytest.approx(0.1)
    table = stats.compare({"a": a, "b": b}, reference="a").set_index("name")
    assert table.loc["b", "verdict"] == "constant" and np.isnan(table.loc["b", "p_holm"])
    assert table.loc["b", "free_verdict"] == "constant"
    # the sign-flip test applies to a constant difference (every run one sign): 2 / 2^n, and
    # the rounding "zero" is 1.0
    assert stats.pair_tests(b[:10], a[:10])["p_free"] == pytest.approx(2 / 2**10, abs=1e-15)
    assert stats.pair_tests(a + 0.0, a)["p_free"] == 1.0
    # two runs: never "worse" from a t p of 1e-16
    two = stats.compare({"a": a[:2], "b": b[:2]}, reference="a").set_index("name")
    assert two.loc["b", "verdict"] == "constant"
    # --until: never decided on a zero-width t interval, whatever the look
    for look in (1, 5, 40):
        row = stats.sequential_compare({"a": a, "b": b}, look, reference="a", normal=True).iloc[0]
        assert not row["decided"] and row["verdict"] == "undecided"
    # a real spread, however small against the values, is tested as before
    c = a + 0.1 + np.random.default_rng(5).normal(0, 0.01, 40)
    assert stats.compare({"a": a, "c": c}, reference="a").set_index("name").loc[
        "c", "verdict"] == "worse"


def test_compare__messages_and_the_family_of_two_entries_in_full():
    rng = np.random.default_rng(21)
    a, b = rng.normal(0, 1, 8), rng.normal(1, 1, 8)
    assert stats.compare({"a": a, "b": b})["family"].iloc[0] == (
        "Holm over all 1 pair of 2 entries (the best chosen after looking)")
    with pytest.raises(ValueError, match=r"^nothing to compare: give at least one entry\.$"):
        stats.compare({})
    with pytest.raises(ValueError, match=r"^reference 'a' diverged \(a run is NaN or inf\); "
                                         r"compare with another entry or 'best'\.$"):
        stats.compare({"a": np.r_[np.nan, a[1:]], "b": b}, reference="a")


def test_pair_tests__tost_from_two_runs_and_a_constant_difference_at_the_margin():
    a = np.array([1.0, 3.0])
    two = stats.pair_tests(a + np.array([0.1, 0.2]), a, margin=1.0)
    assert np.isfinite(two["p_equiv"])  # two runs suffice for TOST
    at = stats.pair_tests(a + 0.5, a, margin=0.5)  # exactly 0.5 in both runs: not within
    assert at["constant"] == "constant" and at["p_equiv"] == 1.0
    assert stats.pair_tests(a + 0.25, a, margin=0.5)["p_equiv"] == 0.0


@pytest.mark.parametrize("n", [1, 2, 5, 13, 20])
def test_sign_flip_p__equals_every_sign_pattern_enumerated_up_to_twenty_runs(n):
    # continuous values (no ties: 2^n patterns), and the same with ties and zeros
    rng = np.random.default_rng(n)
    for d in (rng.normal(0.4, 1.0, n), np.round(rng.normal(0.4, 1.0, n)),
              np.where(rng.random(n) < 0.5, 0.0, rng.choice([-1.0, 2.0], n))):
        assert stats.sign_flip_p(d) == pytest.approx(_every_sign_pattern(d), abs=1e-15)


def test_sign_flip_p__four_of_twenty_nonzero_one_sign_is_not_significant():
    # the Wilcoxon normal approximation gave 0.046 here; the exact answer is 2 / 2^4
    d = np.array([0.0] * 16 + [1.0, 2.0, 1.5, 3.0])
    assert stats.sign_flip_p(d) == 0.125
    assert stats.sign_flip_p(np.zeros(7)) == 1.0


def _level_on_a_discrete_null(n: int, law: dict, alpha: float = 0.05) -> float:
    """The exact chance that sign_flip_p <= alpha for n runs of i.i.d. differences with the
    symmetric law {value: probability} (a null: mean 0), every outcome's counts enumerated."""
    from itertools import combinations_with_replacement

    from scipy import stats as st

    values = sorted(law)
    level = 0.0
    for draw in combinations_with_replacement(range(len(values)), n):
        counts = np.bincount(draw, minlength=len(values))
        d = np.repeat(values, counts)
        if stats.sign_flip_p(d) <= alpha:
            level += st.multinomial.pmf(counts, n, [law[v] for v in values])
    return level


@pytest.mark.parametrize("n", [14, 20, 30, 50])
def test_sign_flip_p__level_at_most_alpha_on_exactly_enumerated_discrete_nulls(n):
    # ties and many zeros, where Wilcoxon's normal approximation exceeded 0.05 (0.0531 at 50)
    for zero in (0.0, 0.5, 0.9):
        law = {-1.0: (1 - zero) / 2, 0.0: zero, 1.0: (1 - zero) / 2}
        assert _level_on_a_discrete_null(n, {v: p for v, p in law.items() if p > 0}) <= 0.05
    if n <= 20:  # two sizes of difference: (n + 4 choose 4) outcomes
        law = {-2.0: 0.1, -1.0: 0.2, 0.0: 0.4, 1.0: 0.2, 2.0: 0.1}
        assert _level_on_a_discrete_null(n, law) <= 0.05


def test_sign_flip_p__monte_carlo_beyond_the_exact_range_seeded_and_valid():
    rng = np.random.default_rng(8)
    d = rng.normal(0.3, 1.0, 40)  # 2^40 patterns: Monte-Carlo
    p = stats.sign_flip_p(d)
    assert p == stats.sign_flip_p(d.copy())  # the same differences, the same p
    draws = stats.SIGN_FLIP_DRAWS + 1
    assert round(p * draws) == pytest.approx(p * draws, abs=1e-9) and p >= 1 / draws
    # all one sign: only the observed pattern and its mirror reach the observed sum
    assert stats.sign_flip_p(np.abs(d)) < 5 / draws
    # a symmetric null: rejections at 5% within 3 standard errors of at most 5%
    nulls = rng.standard_t(3, (300, 30))
    rate = np.mean([stats.sign_flip_p(x) <= 0.05 for x in nulls])
    assert rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 300)


def test_compare__the_companion_tests_the_mean_and_its_verdict_follows_the_mean():
    # 16 runs +0.1 and 8 runs -5: the median says "worse", the mean (and both tests) "better"
    d = np.array([0.1] * 16 + [-5.0] * 8)
    row = stats.compare({"a": np.zeros(24), "b": d}, reference="a").set_index("name").loc["b"]
    # |sum| >= 38.4 needs the eight -5s of one sign (+-40), whatever the 0.1s: 2 / 2^8
    assert row["p_free"] == pytest.approx(2 / 2**8, abs=1e-15)
    assert row["verdict"] == row["free_verdict"] == "better"


def test_sequential_compare__refused_without_one_named_assumption():
    v = {"a": np.zeros(12), "b": np.linspace(0.0, 1.0, 12)}
    with pytest.raises(ValueError, match=r"^a sequential comparison rests on one assumption "
                       r"about the differences, none given: bounds=\(lo, hi\) \(any distribution "
                       r"within them\), variance=V \(any with variance <= V\), or normal=True "
                       r"\(t intervals; not valid for skewed regrets\)\.$"):
        stats.sequential_compare(v, look=1)
    with pytest.raises(ValueError, match="catoni and t given"):
        stats.sequential_compare(v, look=1, variance=1.0, normal=True)
    assert stats.sequential_compare(v, look=1, normal=True)["assumes"].item() == (
        "normal differences (not valid for skewed or heavy-tailed regrets)")


@pytest.mark.slow
def test_sign_flip_p__level_at_most_alpha_at_every_run_count_from_14_to_50():
    for n in range(14, 51):
        for zero in (0.0, 0.5, 0.9):
            law = {-1.0: (1 - zero) / 2, 0.0: zero, 1.0: (1 - zero) / 2}
            assert _level_on_a_discrete_null(n, {v: p for v, p in law.items() if p > 0}) <= 0.05


_ISSUE_CELLS = [(name, batch) for name in ("lognormal-1", "lognormal-2", "pareto-2.5",
                                           "t3-variance", "bernoulli-0.05", "bernoulli-0.5")
                for batch in (2, 10)]


@pytest.mark.slow
@pytest.mark.parametrize("name,batch", _ISSUE_CELLS)
def test_sequence_coverage__skewed_nulls_with_the_assumption_named_at_least_94_percent(name,
                                                                                       batch):
    # what --until separated runs once an assumption is named (none is refused): Catoni with
    # the true variance for the unbounded laws, betting with the true range for the Bernoulli
    # ones; 1,000 null studies of 20 looks a cell, every look's interval holding the mean 0
    assert _sequence_coverage(name, batch, 20, 1000, seed=batch) >= 0.94


def test_sign_flip_p__below_the_draws_resolution_hoeffdings_bound_never_below_the_exact_p():
    # 200 runs of one sign: the exact p is 2 / 2^200; the bound 2 exp(-S^2 / (2 sum d^2)) is
    # reported (no draw reaches S: the draws alone would give 1e-4)
    d = np.random.default_rng(9).uniform(1.0, 2.0, 200)
    bound = 2 * math.exp(-d.sum() ** 2 / (2 * np.sum(d * d)))
    assert stats.sign_flip_p(d) == pytest.approx(bound, rel=1e-8, abs=0)  # (approx: abs 1e-12)
    assert 2 / 2.0**200 <= bound < 1 / (1 + stats.SIGN_FLIP_DRAWS)
    # at 40 runs of one sign and equal size the bound 2 e^-20 and the exact 2 / 2^40 (grouped)
    assert stats.sign_flip_p(np.ones(40)) == pytest.approx(2 / 2**40, rel=1e-12, abs=0)


def test_sign_flip_p__exact_beyond_52_runs_when_the_differences_take_few_values():
    # 60 runs of +-1 and 3 of +2 (and zeros): exact by grouping, from the binomial chances
    # (beyond 2^52 patterns the counts are not exact in float64); here from the two binomials
    from scipy import stats as st

    d = np.array([1.0] * 40 + [-1.0] * 20 + [2.0] * 3 + [0.0] * 5)
    want = sum(st.binom.pmf(k1, 60, 0.5) * st.binom.pmf(k2, 3, 0.5)
               for k1 in range(61) for k2 in range(4)
               if abs((2 * k1 - 60) + 2 * (2 * k2 - 3)) >= 26)
    assert stats.sign_flip_p(d) == pytest.approx(want, rel=1e-12, abs=0)
    assert stats.sign_flip_p(d[:60]) == pytest.approx(2 * st.binom.sf(39, 60, 0.5), rel=1e-12,
                                                      abs=0)


def test_detectable_effect__the_numbers_docs_statistics_md_states():
    from pathlib import Path

    text = " ".join((Path(__file__).parents[1] / "docs" / "statistics.md").read_text().split())
    assert (f"{stats.detectable_effect(20):.2f} sd at 20 runs alone, "
            f"{stats.detectable_effect(20, 36):.2f} sd at 20 runs in a family of 36 pairs, "
            f"{stats.detectable_effect(200, 20):.2f} sd at 200 runs in a family of 20") in text


@pytest.mark.parametrize("level", [1.5, 1.0, 0.0, -0.1, float("nan"), True, "0.95"])
def test_levels__outside_zero_one_refused_in_one_line(level):
    # a level of 1.5 gave NaN intervals and turned a decided difference into
    # "indistinguishable"; 0 gave zero-width intervals with verdicts
    finals = {"a": np.arange(10.0), "b": np.arange(10.0) + 1.0}
    for call in (lambda: stats.compare(finals, level=level),
                 lambda: stats.mean_ci(np.arange(5.0), level=level),
                 lambda: stats.t_quantile(9, level=level),
                 lambda: stats.detectable_effect(10, level=level),
                 lambda: stats.look_level(2, level=level)):
        with pytest.raises(ValueError, match=r"^level=.* must lie strictly between 0 and 1 "
                                             r"\(e\.g\. level=0\.95\)\.$"):
            call()
    with pytest.raises(ValueError, match=r"^power=1\.0 must lie strictly between 0 and 1"):
        stats.detectable_effect(10, power=1.0)
    assert stats.t_quantile(9, level=0.5) > 0 and stats.check_share("level", 0.999) == 0.999


@pytest.mark.parametrize("diff,equivalent", [(-2.0, False), (-1.0, False), (-0.5, True),
                                             (0.5, True), (1.0, False), (2.0, False)])
def test_pair_tests__a_constant_difference_is_equivalent_only_inside_the_margin_on_both_sides(
        diff, equivalent):
    a = np.arange(8.0)
    p_equiv = stats.pair_tests(a + diff, a, margin=1.0)["p_equiv"]
    assert p_equiv == (0.0 if equivalent else 1.0)
