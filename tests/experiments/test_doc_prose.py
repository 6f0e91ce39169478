"""Numbers in the docs' prose (outside the generated tables) recomputed from the shipped files:
a page regenerated at new run counts cannot keep a stale number in its text. Pages regenerated
at the current run counts are checked here; the others still carry hand-written numbers."""

from pathlib import Path

import numpy as np
import pandas as pd

DOCS = Path(__file__).resolve().parents[2] / "docs"
FIGURES = DOCS / "figures"


def _page(name: str) -> str:
    return " ".join((DOCS / name).read_text().split())  # line breaks as spaces


def test_kpm_prose__replay_speed_ratio_and_run_counts_follow_the_files():
    text = _page("kpm-results.md")
    men = pd.read_csv(FIGURES / "kpm-replay-men.csv").set_index("learner")
    sgd = men.drop(index="linucb")["wall_s"]
    low, high = men.loc["linucb", "wall_s"] / sgd.max(), men.loc["linucb", "wall_s"] / sgd.min()
    assert f"ran the same replay {low:.0f}-{high:.0f} times faster than exact LinUCB" in text
    assert f"kappa = 1, {int(men['runs'].iloc[0])} runs, with exact LinUCB" in text
    every = pd.read_csv(FIGURES / "kpm-replay-all.csv")
    assert f"{int(every['runs'].iloc[0])} runs per kappa" in text
    tracking = pd.read_parquet(FIGURES / "kpm-tracking-runs.parquet")
    orders = tracking["run"].nunique()
    assert f"mean of {orders} runs (event orders" in text
    assert f"paired over the {orders} event orders" in text
    accepted = every["accepted_mean"]
    assert (f"under replay only {accepted.min():.0f}-{accepted.max():.0f} would be accepted"
            in text)
    # "some of the 10 event orders click within the first 100 events, hence the non-zero means
    # at n = 100" (the per-run file keeps only the finals of the diagnostics: the curve's mean)
    curve = pd.read_csv(FIGURES / "kpm-tracking-all.csv")
    first = curve[curve["n"] == curve["n"][curve["n"] >= 100].min()]
    assert (first["tracking_error"] > 0).all()
    # "both variance-reduced trackers end closer ... than fRLS-GD in every event order"
    fin = tracking[(tracking["metric"] == "sum_tracking_error") & (tracking["t"] == 10_000)]
    err = fin.pivot(index="run", columns="learner", values="value")
    assert (err["flinucb-gd"] > err[["flinucb-svrg", "flinucb-sag"]].max(axis=1)).all()
    assert "than fRLS-GD in every event order" in text
    # "the log has 38 clicks in 10,000 events" (every event order holds all of them)
    clicks = tracking[(tracking["metric"] == "sum_reward") & (tracking["t"] == 10_000)]
    assert np.all(clicks["value"] == 38)


def test_findings__the_kpm_paragraph_follows_its_page_files():
    from doctools.tables import _sci

    text = _page("findings.md")
    curve = pd.read_csv(FIGURES / "kpm-tracking-all.csv")
    last = curve[curve["n"] == curve["n"].max()].set_index("learner")["tracking_error"]
    assert (f"final error {_sci(last['flinucb-gd'])} fRLS-GD, {_sci(last['flinucb-svrg'])} SVRG, "
            f"{_sci(last['flinucb-sag'])} SAG") in text
    accepted = pd.read_csv(FIGURES / "kpm-replay-all.csv")["accepted_mean"]
    assert f"{accepted.min():.0f}-{accepted.max():.0f} of 10,000 events are accepted" in text
    men = pd.read_csv(FIGURES / "kpm-replay-men.csv").set_index("learner")["wall_s"]
    sgd = men.drop(index="linucb")
    assert (f"replay {men['linucb'] / sgd.max():.0f}-{men['linucb'] / sgd.min():.0f} times "
            "faster than exact LinUCB") in text


def test_foster_prose__slopes_ratios_and_the_paired_counts_follow_the_files():
    from scipy import stats as st

    from doctools.tables import _foster_rate_runs
    from oslr.stats import pair_tests

    text = _page("foster-results.md")
    df = pd.read_csv(FIGURES / "foster-rate.csv")
    fh = {kq: g.set_index("horizon") for kq, g in df[df["learner"] == "foster-hedge"].groupby(
        "k_query")}
    local = [np.log(g["regret"][100_000] / g["regret"][30_000]) / np.log(100_000 / 30_000)
             for _, g in sorted(fh.items())]
    assert ("The local slope between T = 3e4 and 1e5 is "
            + " / ".join(f"{x:.2f}" for x in local) + " for k' = 4 / 5 / 6 / 8") in text
    ratio = {kq: g["regret"] / g["theorem_1_order"] for kq, g in fh.items()}
    assert (f"k' = 4: {ratio[4][1000]:.2f} at 1e3 to {ratio[4][100_000]:.2f} at 1e5; k' = 8: "
            f"{ratio[8][1000]:.2f} to {ratio[8][100_000]:.2f}") in text
    assert f"(k' = 8: {ratio[8][30_000]:.2f} -> {ratio[8][100_000]:.2f} over the last" in text
    for kq in (5, 6, 8):  # "passes the constant-1 line between T = 1e4 and 1e5"
        assert ratio[kq][10_000] < 1 < ratio[kq][100_000]
    exps = df.groupby(["learner", "k_query"])["exponent"].first()
    assert (f"slopes {exps['foster-hedge'].max():.2f}-{exps['foster-hedge'].min():.2f} that "
            "fall as k' grows") in text
    rs = exps["ogd-random-subset"].drop(index=8)
    assert f"its slope stays {rs.min():.2f}-{rs.max():.2f}" in text
    assert f"near-constant regret (slope {exps['ogd-full'].iloc[0]:.2f})" in text

    runs = _foster_rate_runs(FIGURES)
    n = len(runs[("foster-hedge", 6)])
    assert f"Each T is its own study of {n} runs" in text

    def pair(kq, t):
        return pair_tests(runs[("foster-hedge", kq)][t].to_numpy(),
                          runs[("ogd-random-subset", kq)][t].to_numpy())

    six = pair(6, 100_000)["pair"]
    assert six.diff < 0 and f"below in only {six.below} of the {n} runs" in text
    assert st.binomtest(six.below, six.below + six.above).pvalue > 0.05  # the sign test
    five = pair(5, 100_000)["pair"]
    assert f"above in {five.above} of {n}), and TOST puts them" in text


def test_findings__the_fkk_paragraph_follows_its_page_files():
    from doctools.tables import _foster_rate_runs, _integer
    from oslr.report import growth_exponent_interval
    from oslr.stats import paired

    text = _page("findings.md")
    df = pd.read_csv(FIGURES / "foster-rate.csv")
    exps = df[df["learner"] == "foster-hedge"].groupby("k_query")["exponent"].first()
    assert ("fitted exponents " + " / ".join(f"{e:.2f}" for e in exps)
            + " for k' = 4 / 5 / 6 / 8, each within +-0.01 by bootstrap") in text
    runs = _foster_rate_runs(FIGURES)
    for kq in exps.index:
        wide = runs[("foster-hedge", kq)]
        low, high = growth_exponent_interval(wide.columns.to_numpy(), wide.to_numpy())
        assert exps[kq] - low <= 0.01 + 5e-3 and high - exps[kq] <= 0.01 + 5e-3
    a, b = (runs[(name, 6)][100_000].to_numpy() for name in ("foster-hedge", "ogd-random-subset"))
    r = paired(a, b)
    assert (f"by {_integer(-r.diff)} ({_integer(-r.ci_high)}, {_integer(-r.ci_low)}) "
            f"({_integer(a.mean())} against {_integer(b.mean())}), though below it in only "
            f"{r.below} of {r.n} runs") in text


def test_kale_prose__the_paired_counts_follow_the_per_run_files():
    from doctools.tables import _final_runs, _runs_of
    from oslr.stats import pair_tests

    text = _page("kale-results.md")
    runs = _final_runs(FIGURES, "kale-dantzig", "regret_wstar")
    runs = runs[~(runs["info_t0"] > runs["t"].max())]

    def dantzig(design, k0, other):
        mine = _runs_of(runs, learner="dantzig-poslr", info_design=design, param_k0=k0)
        ref = (_runs_of(runs, learner="ogd-full", info_design=design) if other == "full" else
               _runs_of(runs, learner="ogd-random-subset", info_design=design, param_k=k0 + 5))
        return pair_tests(mine, ref)

    r = dantzig("rademacher", 50.0, "full")["pair"]
    assert r.diff < 0 and f"below it in {r.below} of {r.n} runs)" in text
    r = dantzig("rademacher", 10.0, "rs")["pair"]
    d = dantzig("rademacher", 10.0, "rs")
    assert (f"neither test separates the two ({r.diff:+,.0f} ({r.ci_low:+,.0f}, "
            f"{r.ci_high:+,.0f})), though `dantzig-poslr` is above it in {r.above} of {r.n} "
            "runs") in " ".join(text.split())
    assert d["p_free"] > 0.05 and r.p > 0.05  # before Holm, so after it too
    worse = [dantzig("correlated", k0, "rs")["pair"].above for k0 in (10.0, 20.0)]
    assert f"(worse in {worse[0]} and {worse[1]} of 100 runs)" in text
    r = dantzig("correlated", 50.0, "rs")["pair"]
    assert f"527 against 823, below in {r.below} of {r.n} runs" in text

    greedy = _final_runs(FIGURES, "kale-greedy", "regret", "regret_lb_greedy")
    cell = greedy[(greedy["info_d"] == 100) & (greedy["info_design"] == "rademacher")]
    above = [pair_tests(_runs_of(part, learner="online-greedy"),
                        _runs_of(part, learner="ogd-random-subset"))["pair"].above
             for _, part in cell.groupby("t")]
    assert f"above at every T by both tests (in {min(above)}-{max(above)} of 50 runs" in text
    df = pd.read_csv(FIGURES / "kale-greedy.csv")
    for d, low, high in ((100, "1.9", "18"), (20, "9.6", "91")):
        at = df[(df["d"] == d) & (df["design"] == "rademacher")].set_index(["horizon", "learner"])
        ratio = [at.loc[(t, "online-greedy"), "regret"] / at.loc[(t, "ogd-full"), "regret"]
                 for t in (1000, 30_000)]
        assert [f"{ratio[0]:.2g}", f"{ratio[1]:.2g}"] == [low, high]


def test_ito_prose__the_table1_differences_follow_the_finals():
    text = _page("ito-results.md")
    fin = pd.read_csv(FIGURES / "ito-table1-finals.csv")
    settings = [(10, 2, 4), (10, 2, 8), (10, 5, 8)]

    def diff(setting, a, b):
        part = fin[(fin["d"] == setting[0]) & (fin["k_prime"] == setting[1])
                   & (fin["k"] == setting[2])]
        values = {m: part[part["method"] == m].sort_values("run")["regret"].to_numpy()
                  for m in (a, b)}
        return values[a] - values[b]

    gaps = [diff(s, "kklp", "alg3") for s in settings]
    assert all((g > 0).all() for g in gaps)
    assert "(by " + ", ".join(f"{g.mean():.0f}" for g in gaps[:2]) + f" and {gaps[2].mean():.0f}" \
        " on average)" in text
    gaps = [diff(s, "kklp_a", "kklp") for s in settings]
    assert all((g > 0).all() for g in gaps)
    assert "(by " + ", ".join(f"{g.mean():.1f}" for g in gaps[:2]) + \
        f" and {gaps[2].mean():.1f} on average)" in text
    g = diff(settings[0], "kklp_a", "alg1")
    assert f"(by {g.mean():.1f} at (10, 2, 4), below in {(g > 0).sum()} of 100" in text
    k8 = [diff(s, "kklp_a", "alg1") for s in settings[1:]]
    assert f"by {k8[0].mean():.0f} and {k8[1].mean():.0f} at k = 8, in all 100" in text
    assert all((x > 0).all() for x in k8)
    around = [diff(s, "alg1", "kklp") for s in settings]
    assert (f"{around[0].mean():.0f} worse at (10, 2, 4), {-around[1].mean():.1f} better at "
            f"(10, 2, 8) ({(around[1] < 0).sum()} of 100), {around[2].mean():.0f} worse") in text


def test_ito_prose__the_ratios_of_table1_follow_its_file():
    text = _page("ito-results.md")
    df = pd.read_csv(FIGURES / "ito-table1.csv")
    last = df[df["n"] == df["n"].max()] if "n" in df else df
    mean = last.set_index(["d", "k_prime", "k", "method"])["regret"]
    settings = [(10, 2, 4), (10, 2, 8), (10, 5, 8)]
    alg3 = [mean[(*s, "alg3")] / mean[(*s, "alg2")] for s in settings]
    kklp = [mean[(*s, "kklp")] / mean[(*s, "alg2")] for s in settings]
    assert (f"Alg 2 has {min(alg3):.1f}-{max(alg3):.1f} times less regret than Alg 3 and "
            f"{min(kklp):.1f}-{max(kklp):.1f} times less than KKLP") in text
    zero = last.set_index(["d", "k_prime", "k", "method"])["zero_regret"]
    below = {m: [100 * (1 - mean[(*s, m)] / zero[(*s, m)]) for s in settings]
             for m in ("alg2", "alg3")}
    assert (f"{min(below['alg2']):.0f}-{max(below['alg2']):.0f}% below predicting 0. Alg 3 is "
            f"{min(below['alg3']):.0f}-{max(below['alg3']):.0f}% below it") in text


def test_ito_prose__fig1b_on_kegg_follows_its_files():
    from scipy import stats as st

    text = _page("ito-results.md")
    df = pd.read_csv(FIGURES / "ito-real.csv")
    final = df[df["n"] == df["n"].max()]
    fin = pd.read_csv(FIGURES / "ito-real-finals.csv")
    shuffles = fin["run"].nunique()
    assert set(final["runs"]) == {shuffles}
    assert f"one pass (T = {int(final['horizon'].iloc[0]):,}), {shuffles} shuffles" in text
    assert f"(mean of {shuffles} shuffles" in text
    half = float(((final["ci_high"] - final["ci_low"]) / 2).max())
    assert f"the 95% intervals are within +-{np.ceil(half * 10) / 10:.1f}" in text
    # Alg 2 below every other method in every shuffle, by the smallest to the largest gap
    gaps = []
    for k, part in fin.groupby("k"):
        alg2 = part[part["method"] == "alg2"].sort_values("run")["loss"].to_numpy()
        for m, g in part[part["method"] != "alg2"].groupby("method"):
            d = g.sort_values("run")["loss"].to_numpy() - alg2
            assert (d > 0).all()
            half = st.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
            gaps.append((d.mean(), d.mean() - half, d.mean() + half))
    lo, hi = min(gaps), max(gaps)
    assert (f"below every other method in all {shuffles} shuffles: by {lo[0]:.1f} ({lo[1]:.1f}, "
            f"{lo[2]:.1f}) to {hi[0]:.1f} ({hi[1]:.1f}, {hi[2]:.1f})") in text
    alg2 = final[final["method"] == "alg2"]
    removed = 100 * (1 - alg2["loss"] / alg2["zero_loss"])
    assert f"removes only {removed.min():.1f}-{removed.max():.1f}% of the loss" in text
    comp = 100 * (1 - final["comparator_loss"] / final["zero_loss"]).iloc[0]
    assert f"against a comparator that removes {comp:.0f}%" in text
    wall = final.groupby("method")["wall_s"]
    lo, hi = wall.min().round().astype(int), wall.max().round().astype(int)
    per_k = final[final["method"] == "alg3"].sort_values("k")["wall_s"].round().astype(int)
    assert (f"Alg 2 {lo['alg2']}-{hi['alg2']} s, Alg 3 " + " / ".join(map(str, per_k))
            + " s for") in text
    assert (f"{lo['alg3_identity']}-{hi['alg3_identity']} s with A = I, KKLP {lo['kklp']}-"
            f"{hi['kklp']} s, KKLP_A {lo['kklp_a']}-{hi['kklp_a']} s") in text


def _wll_k(stem: str):
    """{k: (ratio, Paired of FTPSL - random subset, sign by both tests after Holm)} and the
    table of a [WLL] k/d step, from its shipped files."""
    from doctools import tables as dt

    df = pd.read_csv(FIGURES / f"{stem}.csv")
    runs = dt._final_runs(FIGURES, dt._wll_step(stem), "sum_reward")
    ks = sorted(df["k"].unique())
    cells = dt._paired_cells({k: (dt._runs_of(runs, learner="ftpsl", param_k=k),
                                  dt._runs_of(runs, learner="ftpl-random-subset", param_k=k))
                              for k in ks})
    d = int(df["d"].iloc[0])
    return {k: (k / d, cells[k][0], dt._both_sign(*cells[k][:3])) for k in ks}, df


def _wll_within(stem: str) -> dict:
    """{k/d rounded to 0.01: TOST puts FTPSL - random subset within 10%} of a [WLL] k/d step,
    Holm over the table's k as the table."""
    from doctools import tables as dt

    df = pd.read_csv(FIGURES / f"{stem}.csv")
    runs = dt._final_runs(FIGURES, dt._wll_step(stem), "sum_reward")
    d = int(df["d"].iloc[0])
    cells = dt._paired_cells({k: (dt._runs_of(runs, learner="ftpsl", param_k=k),
                                  dt._runs_of(runs, learner="ftpl-random-subset", param_k=k))
                              for k in sorted(df["k"].unique())})
    return {round(k / d, 2): cell[3][1] <= 0.05 for k, cell in cells.items()}


def _triple(r, sign: int = 1) -> str:
    """'24,553 (21,209, 27,897)' for a paired difference (sign -1: its negative)."""
    lo, hi = (r.ci_low, r.ci_high) if sign > 0 else (-r.ci_high, -r.ci_low)
    return f"{sign * r.diff:,.0f} ({lo:,.0f}, {hi:,.0f})"


def test_wll_prose__the_k_over_d_claims_follow_the_files():
    text = _page("wll-results.md")
    a9a, a9a_df = _wll_k("wll-k-a9a-tuned")
    cov, cov_df = _wll_k("wll-k-covtype-tuned")
    c4, c4_df = _wll_k("wll-k-connect4-tuned")
    for df in (a9a_df, cov_df, c4_df):
        assert set(df["runs"]) == {50}
    assert "c0 = 0.01, one pass, 50 shuffles), every claim by both tests" in text

    def ahead_ratios(cells):
        return [round(r, 2) for r, _, s in cells.values() if s > 0]

    def none_ratios(cells):
        return [round(r, 2) for r, _, s in cells.values() if s == 0]

    # connect-4: ahead at every k/d <= 0.9, in every shuffle; the two quoted differences
    assert ahead_ratios(c4) == [round(r, 2) for r, _, _ in c4.values() if r <= 0.9]
    assert all(p.above == p.n for r, p, _ in c4.values() if r <= 0.9)
    by = {round(r, 2): p for r, p, _ in c4.values()}
    assert (f"(by {_triple(by[0.05])} at 0.05 and {_triple(by[0.5])} at 0.5, ahead in all "
            f"50 shuffles at every one of them)") in text
    c4_ratio = c4_df.pivot(index="k", columns="learner", values="reward_mean")
    share = 1 - c4_ratio["ftpsl"] / c4_ratio["ftpl-oracle-subset"]
    assert f"within {100 * share.min():.0f}-{100 * share.max():.0f}% of the oracle subset" in text
    # a9a: ahead at every k/d <= 0.8, indistinguishable at 0.9
    assert ahead_ratios(a9a) == [round(r, 2) for r, _, _ in a9a.values() if r <= 0.8]
    assert none_ratios(a9a) == [0.9]
    p9 = next(p for r, p, _ in a9a.values() if round(r, 2) == 0.9)
    assert (f"indistinguishable at 0.9 ({p9.diff:+,.0f} ({p9.ci_low:+,.0f}, {p9.ci_high:+,.0f}); "
            "within 10% by TOST)") in text
    assert _wll_within("wll-k-a9a-tuned")[0.9]
    cov_within = _wll_within("wll-k-covtype-tuned")
    assert cov_within[0.91] and not cov_within[0.06]
    assert "indistinguishable at 0.06 and 0.91 (within 10% by TOST at 0.91 only)" in text
    # covtype: ahead from 0.09 to 0.8, indistinguishable at 0.06 and 0.91
    assert ahead_ratios(cov) == [round(r, 2) for r, _, _ in cov.values() if 0.09 <= r <= 0.8]
    assert none_ratios(cov) == [0.06, 0.91]
    p2 = next(p for r, p, _ in cov.values() if round(r, 2) == 0.2)
    assert f"on covtype (d = 54) at every k/d from 0.09 to 0.8 (by {_triple(p2)} at 0.2)" in text
    low = cov_df[cov_df["k"] == min(cov)].set_index("learner")["reward_mean"]
    assert (f"FTPSL reaches only {100 * low['ftpsl'] / low['ftpl-oracle-subset']:.0f}% of the "
            "oracle subset at 0.06") in text
    # k = d: the random subset (= the oracle there) ahead of FTPSL on all three
    last = {name: cells[max(cells)] for name, cells in (("a9a", a9a), ("cov", cov), ("c4", c4))}
    assert all(s < 0 for _, _, s in last.values())
    assert (f"a9a by {_triple(last['a9a'][1], -1)}, connect-4 by {_triple(last['c4'][1], -1)}, "
            f"covtype by {_triple(last['cov'][1], -1)}") in text
    for ds in ("a9a", "covtype", "connect4"):  # wall times rendered from STAMPS.json
        assert f"<!-- oslr-value seconds wll-k-{ds}-tuned.csv -->" in text


def test_wll_prose__the_redundant_feature_claims_follow_the_files():
    from doctools import tables as dt
    from oslr.stats import paired

    text = _page("wll-results.md")
    tuned = pd.read_csv(FIGURES / "wll-redundant-a9a-tuned.csv")
    held = pd.read_csv(FIGURES / "wll-redundant-a9a-held.csv")
    assert set(tuned["runs"]) == set(held["runs"]) == {50}
    assert "a9a, k = 25 (0.2 d_orig), one pass, 50 shuffles" in text
    loss = {}
    for label, step, learner in (("eq1", "wll-redundant-tuned", "ftpsl"),
                                 ("held", "wll-redundant-held", "ftpsl"),
                                 ("random", "wll-redundant-held", "ftpl-random-subset")):
        runs = dt._final_runs(FIGURES, step, "sum_reward")
        extra = runs["info_n_redundant"].fillna(0)
        top = dt._runs_of(runs[extra == extra.max()], learner=learner)
        zero = dt._runs_of(runs[extra == 0], learner=learner)
        r = paired(zero, top)
        loss[label] = (r, zero.mean())
    r, base = loss["eq1"]
    assert (f"FTPSL loses {100 * r.diff / base:.0f}% of its reward at rho = 1.5 on a9a "
            f"({_triple(r)}, paired over the 50 shuffles") in text
    r, base = loss["held"]
    top = held[(held["learner"] == "ftpsl") & (held["rho"] == held["rho"].max())]["reward_mean"]
    assert (f"FTPSL loses {100 * r.diff / base:.0f}% ({_triple(r)}: {base:,.0f} -> "
            f"{top.iloc[0]:,.0f})") in text
    r, base = loss["random"]
    assert f"the random subset {100 * r.diff / base:.0f}% ({_triple(r)})" in text
    half = {n: ((df["reward_ci_high"] - df["reward_ci_low"]) / 2)[df["learner"] == n]
            for n in ("ftpsl", "ftpl-random-subset") for df in [pd.concat([tuned, held])]}
    f, rs = half["ftpsl"], half["ftpl-random-subset"]
    assert (f"(FTPSL's +-{f.min():,.0f}-{f.max():,.0f}, the random subset's "
            f"+-{rs.min():,.0f}-{rs.max():,.0f})") in text
    for kind in ("tuned", "held"):  # wall times rendered from STAMPS.json
        assert f"<!-- oslr-value seconds wll-redundant-a9a-{kind}.csv -->" in text


def test_wll_prose__theorem_3s_term_against_the_best_action_follows_the_files():
    from oslr.experiments.wll import theorem_3_order

    ratios = []
    for stem in ("wll-k-a9a-tuned", "wll-k-covtype-tuned", "wll-k-connect4-tuned",
                 "wll-k-mnist35-tuned", "wll-k-a9a-eq1"):
        df = pd.read_csv(FIGURES / f"{stem}.csv")
        ratios += list(theorem_3_order(df["d"], df["k"], df["horizon"])
                       / df["comparator_reward_mean"])
    said = f"{min(ratios):.1f}-{max(ratios):.0f} times the best action's reward at these T"
    assert said in _page("wll-results.md") and said in _page("findings.md")


def test_wll_prose__eq1_as_printed_follows_its_files():

    eq1, df = _wll_k("wll-k-a9a-eq1")
    assert set(df["runs"]) == {50}
    text, findings = _page("wll-results.md"), _page("findings.md")
    signs = {round(r, 2): (p, s) for r, p, s in eq1.values()}
    behind = [r for r, (_, s) in signs.items() if s < 0]
    assert behind == [0.05] and all(s == 0 for r, (_, s) in signs.items() if r > 0.05)
    p = signs[0.05][0]
    assert (f"on a9a FTPSL is behind the random subset at k/d = 0.05 (by {_triple(p, -1)}, both "
            "tests, 50 shuffles) and indistinguishable from it at 0.1-0.5 (none shown within 10% "
            "by TOST)") in text
    within = _wll_within("wll-k-a9a-eq1")
    assert not any(v for r, v in within.items() if 0.1 <= r <= 0.5)
    assert ("on a9a FTPSL is behind the random subset at k/d = 0.05 and indistinguishable from "
            "it at 0.1-0.5") in findings
    assert ("At 50 shuffles (rerun <!-- oslr-value date wll-k-a9a-eq1.csv -->"
            in text)  # the date and seconds rendered from STAMPS.json


def test_wll_prose__the_mnist_claims_follow_its_files():
    cells, df = _wll_k("wll-k-mnist35-tuned")
    assert set(df["runs"]) == {50}
    text = _page("wll-results.md")
    by = {round(r, 2): (p, s) for r, p, s in cells.values()}
    assert [r for r, (_, s) in by.items() if s > 0] == [0.1, 0.2, 0.3, 0.5, 0.7]
    assert [r for r, (_, s) in by.items() if s < 0] == [0.05, 1.0]
    p = by[0.1][0]
    assert (f"FTPSL is behind the random subset at k/d = 0.05 (by {_triple(by[0.05][0], -1)}) "
            f"and ahead from 0.1 to 0.7 (by {p.diff:+,.0f} ({p.ci_low:,.0f}, {p.ci_high:,.0f}) "
            f"at 0.1 and {_triple(by[0.2][0])} at 0.2)") in " ".join(text.split())
    means = df.pivot(index="k", columns="learner", values="reward_mean")
    share = (means["ftpsl"] / means["ftpl-oracle-subset"])[means.index < max(means.index)]
    assert f"at {100 * share.min():.0f}-{100 * share.max():.0f}% of the oracle subset" in text
    assert f"the random subset wins by {_triple(by[1.0][0], -1)}" in text


def _arena(name: str, k: int | None = None):
    """The board of arena NAME (one k) by learner, and a function (a, b) -> (a - b: mean,
    low, high; both tests separate, t only, sign-flip only) paired on the cell's runs, Holm
    over the cell's pairs (one problem and budget)."""
    from doctools.tables import _arena_cell_pairs

    board = pd.read_csv(FIGURES / f"{name}.csv")
    runs = pd.read_parquet(FIGURES / f"{name}-runs.parquet")
    if k is not None:
        board, runs = board[board["k"] == k], runs[runs["k"] == k]
    (problem, budget), = board[["problem", "budget"]].drop_duplicates().itertuples(index=False)
    found = _arena_cell_pairs(runs, problem, budget)
    return board.set_index("learner"), lambda a, b: _oriented(found, a, b)


def _oriented(found: dict, a: str, b: str):
    """a - b from `_arena_cell_pairs`' `found` (stored either way round): mean, low, high; both
    tests separate, t only, sign-flip only."""
    pr, q_t, q_w, _ = found[(a, b)] if (a, b) in found else found[(b, a)]
    s = 1 if (a, b) in found else -1
    low, high = sorted((s * pr.ci_low, s * pr.ci_high))
    t, w = q_t <= 0.05, q_w <= 0.05
    return s * pr.diff, low, high, t and w, t and not w, w and not t


def test_arena_prose__the_arena_long_claims_follow_the_files():
    text = _page("arena.md")
    board, pair = _arena("arena-long")
    order = board.sort_values("regret").index.tolist()
    assert all(pair(a, b)[3] for a, b in zip(order, order[1:]))  # "a strict ranking"
    assert order == ["ogd-full", "ito-projection (A = I)", "ito-dual-averaging", "dantzig-poslr",
                     "foster-hedge", "online-greedy", "ito-projection (Gaussian A)",
                     "ogd-random-subset", "ito-block-bandit"]
    r = board["regret"]
    d, lo, hi, *_ = pair("ito-dual-averaging", "ito-projection (A = I)")
    assert (f"`ogd-full` ({r['ogd-full']:.1f}), Alg. 3 with A = I "
            f"({r['ito-projection (A = I)']:.0f}, ahead of Alg. 2 by {d:.1f} ({lo:.1f}, "
            f"{hi:.1f})), Alg. 2 ({r['ito-dual-averaging']:.0f}), the Dantzig selector "
            f"({r['dantzig-poslr']:.0f}), `foster-hedge` ({r['foster-hedge']:.0f}), "
            f"`online-greedy` ({r['online-greedy']:,.0f}), the Gaussian Alg. 3 "
            f"({r['ito-projection (Gaussian A)']:,.0f}), the random subset "
            f"({r['ogd-random-subset']:,.0f}) and the block bandit "
            f"({r['ito-block-bandit']:,.0f})") in text
    curves = pd.read_csv(FIGURES / "arena-long-curves.csv")
    from oslr.report import growth_exponent

    def wide(name):
        c = curves[curves["learner"] == name].sort_values("n")
        return growth_exponent(c["n"].to_numpy(), c["mean"].to_numpy(), t_min=100)

    e = board["exponent"]
    assert (f"its exponent falls from {wide('foster-hedge'):.2f} over t >= 100 to "
            f"{e['foster-hedge']:.2f}") in text
    assert (f"`online-greedy` {wide('online-greedy'):.2f} -> {e['online-greedy']:.2f} and the "
            f"block bandit {wide('ito-block-bandit'):.2f} -> {e['ito-block-bandit']:.2f}") in text
    b = board["bound"]
    assert (f"{r['online-greedy']:,.0f} against {b['online-greedy']:,.0f} and "
            f"{r['ito-block-bandit']:,.0f} against {b['ito-block-bandit']:,.0f}") in text
    c = curves[curves["learner"] == "dantzig-poslr"].sort_values("n")
    at = np.interp(10_000, c["n"], c["mean"])
    assert (f"({wide('dantzig-poslr'):.2f} -> {e['dantzig-poslr']:.2f}; {at:.0f} at t = 10,000, "
            f"{r['dantzig-poslr']:.0f} at 1e5)") in text
    from oslr.experiments.arena import final_regrets

    runs = final_regrets(pd.read_parquet(FIGURES / "arena-long-runs.parquet"), "rip", 5)
    dz = runs["dantzig-poslr"]
    assert (f"its {len(dz)} runs are skewed (median {np.median(dz):.0f}, from {dz.min():.0f} to "
            f"{dz.max():.0f})") in text
    assert (f"the Gaussian Alg. 3 stay linear ({e['ogd-random-subset']:.2f})" in text
            and f"{e['ito-projection (Gaussian A)']:.2f}" == f"{e['ogd-random-subset']:.2f}")
    assert not board["at_cap"].any() and "No choice is at the cap." in text
    assert f"{int(board['runs'].iloc[0])} evaluation runs" in text


def test_arena_prose__the_arena_k_claims_follow_the_files():
    text = _page("arena.md")
    boards = {k: _arena("arena-k", k) for k in (1, 2, 4)}
    r = {k: b["regret"] for k, (b, _) in boards.items()}
    e = {k: b["exponent"] for k, (b, _) in boards.items()}
    b1, pair1 = boards[1]
    d, lo, hi, both, *_ = pair1("dantzig-poslr", "ogd-full")
    assert not both and b1["tied_with_best"]["dantzig-poslr"]
    assert (f"({r[1]['dantzig-poslr']:.1f} against {r[1]['ogd-full']:.1f}: {d:+.2f} "
            f"({lo:+.2f}, {hi:+.2f}), behind in {b1['worse_runs']['dantzig-poslr']:.0f} of "
            f"{b1['runs'].iloc[0]:.0f} runs; not shown within 10%") in text
    assert f"(exponent {e[1]['dantzig-poslr']:.2f})" in text
    assert (f"A = I is 3rd ({r[1]['ito-projection (A = I)']:.1f}), `foster-hedge` 4th "
            f"({r[1]['foster-hedge']:.0f})") in text
    assert b1.loc[["ito-projection (A = I)", "foster-hedge"], "rank"].tolist() == [3, 4]
    # the steps the tests cannot order (every other step separated by both)
    loose = {}
    for k, (b, pair) in boards.items():
        order = b.sort_values("regret").index.tolist()
        for a, c in zip(order, order[1:]):
            d, lo, hi, both, t_only, w_only = pair(a, c)
            if not both:
                loose[(k, a, c)] = (d, lo, hi, t_only, w_only)
    assert set(loose) == {(1, "ogd-full", "dantzig-poslr"),
                          (2, "dantzig-poslr", "ito-projection (A = I)"),
                          (2, "ito-projection (Gaussian A)", "online-greedy"),
                          (4, "ito-dual-averaging", "ito-projection (A = I)"),
                          (4, "ito-projection (Gaussian A)", "ogd-random-subset")}
    for (k, a, c), (d, lo, hi, t_only, w_only) in loose.items():
        if k == 1:
            continue
        assert not t_only and not w_only  # the prose names each as one neither test orders
        fmt = ".0f" if r[k][a] > 100 else ".1f"
        assert (f"({r[k][a]:{fmt}} and {r[k][c]:{fmt}}: {d:.1f} ({lo:.1f}, {hi:+.1f}))"
                in text), (k, a, c)
    fh, dz = [r[k]["foster-hedge"] for k in (1, 2, 4)], [r[k]["dantzig-poslr"] for k in (1, 4)]
    assert (f"`foster-hedge` grows from {fh[0]:.0f} to {fh[1]:.0f} to {fh[2]:.0f} and its "
            f"exponent from " + " to ".join(f"{e[k]['foster-hedge']:.2f}" for k in (1, 2, 4))
            ) in text
    assert (f"Dantzig selector from {dz[0]:.1f} to {dz[1]:.0f} (k0 = B - k shrinks from 9 to 6; "
            f"exponent {e[1]['dantzig-poslr']:.2f} -> {e[4]['dantzig-poslr']:.2f})") in text
    assert (f"`online-greedy`'s exponent {e[1]['online-greedy']:.2f} -> "
            f"{e[4]['online-greedy']:.2f}") in text
    bb = [e[k]["ito-block-bandit"] for k in (1, 2, 4)]
    assert f"the block bandit stays linear ({min(bb):.2f}-{max(bb):.2f})" in text
    da = [r[k]["ito-dual-averaging"] for k in (1, 2, 4)]
    assert "(18 -> 13 -> 9.3; 2nd at k = 4" in text and [f"{x:.2g}" for x in da] == [
        "18", "13", "9.3"] and boards[4][0]["rank"]["ito-dual-averaging"] == 2
    full = [r[k]["ogd-full"] for k in (1, 2, 4)]
    rs = [r[k]["ogd-random-subset"] for k in (1, 2, 4)]
    assert (f"`ogd-full` {min(full):.1f}-{max(full):.1f}, the random subset "
            + " -> ".join(f"{x:.0f}" for x in rs)) in text
    capped = pd.read_csv(FIGURES / "arena-k.csv").query("at_cap")
    assert sorted(capped["learner"]) == ["ito-projection (A = I)", "ito-projection (Gaussian A)"]
    assert set(capped["k"]) == {1} and set(capped["factor"]) == {0.0003}
    assert "Two choices are at the cap, both at k = 1 and lam_scale 0.0003" in text
    # "the k = 2 column repeats the main table's `rip 10`: the same numbers"
    main = pd.read_csv(FIGURES / "arena.csv").query("problem == 'rip' and budget == 10")
    k2 = r[2].sort_index()
    np.testing.assert_array_equal(k2, main.set_index("learner")["regret"].sort_index())
    assert "k = 2 column repeats the main table's `rip 10`: the same numbers" in text


def _arena_main():
    """The main arena's board indexed by (problem, budget, learner), and pair(problem, budget,
    a, b) as `_arena`'s (a - b, paired on the cell's runs, Holm over the cell's pairs)."""
    from doctools.tables import _arena_cell_pairs

    board = pd.read_csv(FIGURES / "arena.csv")
    runs = pd.read_parquet(FIGURES / "arena-runs.parquet")
    cells: dict = {}

    def pair(problem, budget, a, b):
        if (problem, budget) not in cells:
            cells[(problem, budget)] = _arena_cell_pairs(runs, problem, budget)
        return _oriented(cells[(problem, budget)], a, b)

    ran = board[board["skipped"].isna()].set_index(["problem", "budget", "learner"]).sort_index()
    return ran, pair


_SYNTH = [(p, b) for p in ("rip", "agnostic", "drifting", "correlated") for b in (5, 10)]
_ALL = _SYNTH + [("kegg", 6), ("kegg", 13), ("a9a", 31), ("a9a", 62)]
A2, A3, G3, RS = ("ito-dual-averaging", "ito-projection (A = I)",
                  "ito-projection (Gaussian A)", "ogd-random-subset")


def _by(d, lo, hi, fmt):
    """"2.6 (1.2, 4.0)" for a claim "ahead by" / "behind by" (the magnitude, low to high)."""
    lo, hi = sorted((abs(lo), abs(hi)))
    return f"{abs(d):{fmt}} ({lo:{fmt}}, {hi:{fmt}})"


def _equivalent(runs: pd.DataFrame, problem: str, budget: int, a: str, b: str):
    """(TOST's Holm p within 10% of the larger mean, the margin) of a - b in an arena cell."""
    from doctools.tables import _arena_cell_pairs

    found = _arena_cell_pairs(runs, problem, budget)
    _, _, _, (margin, q) = found[(a, b)] if (a, b) in found else found[(b, a)]
    return q, margin


def test_arena_prose__the_tost_claims_follow_the_files():
    text = _page("arena.md")
    runs = pd.read_parquet(FIGURES / "arena-runs.parquet")
    k_runs = pd.read_parquet(FIGURES / "arena-k-runs.parquet")
    dz, full, fh = "dantzig-poslr", "ogd-full", "foster-hedge"
    claims = [  # (runs, problem, budget, a, b, within 10%, what the page says)
        (runs, "agnostic", 10, dz, full, False, "behind in 11 of 20 runs; not shown within 10%, "
         "+-12, by TOST"),
        (runs, "drifting", 5, A2, A3, True, "within 10% of each other by TOST on `drifting` "
         "only"),
        (runs, "agnostic", 5, A2, A3, False, "within 10% of each other by TOST on `drifting` "
         "only"),
        (runs, "rip", 10, dz, A3, False, "indistinguishable from Alg. 3 with A = I, not shown "
         "within 10%"),
        (runs, "correlated", 5, fh, RS, False, "on `correlated` B = 5 (not shown within 10%); "
         "at `agnostic`"),
        (runs, "agnostic", 10, fh, A2, True, "+0.3)) and within 10% of it by TOST"),
        (runs, "kegg", 13, fh, RS, False, "indistinguishable at B = 13 (not shown within 10%)"),
        (runs, "rip", 5, "online-greedy", RS, True, "indistinguishable on `rip` B = 5, and "
         "within 10% of it by TOST"),
        (runs, "correlated", 5, G3, RS, False, "indistinguishable on `correlated` B = 5 (not "
         "shown within 10%)."),
        (k_runs[k_runs["k"] == 1], "rip", 10, dz, full, False, "not shown within 10%, +-0.47, "
         "by TOST, a margin narrower than the interval")]
    for frame, problem, budget, a, b, within, said in claims:
        q, margin = _equivalent(frame, problem, budget, a, b)
        assert (q <= 0.05) == within, (problem, budget, a, b, q)
        assert said in text, said
    assert f"+-{_equivalent(runs, 'agnostic', 10, dz, full)[1]:.0f}," in text
    assert f"+-{_equivalent(k_runs[k_runs['k'] == 1], 'rip', 10, dz, full)[1]:.2f}," in text


def test_arena_prose__the_main_arena_claims_follow_the_files():
    text = _page("arena.md")
    ran, pair = _arena_main()
    r = ran["regret"]

    def verdict(p, b, a, c):  # a - c: "ahead" / "behind" by both tests, "t" / "S", "same"
        d, _, _, both, t_only, w_only = pair(p, b, a, c)
        return ("ahead" if d < 0 else "behind") if both else (
            "t" if t_only else "S" if w_only else "same")

    def by(p, b, a, c, fmt=".1f"):
        d, lo, hi, *_ = pair(p, b, a, c)
        return _by(d, lo, hi, fmt)

    # ogd-full best everywhere; only the Dantzig selector on agnostic B = 10 tied with it
    tied = ran[ran["tied_with_best"]].reset_index()
    assert sorted(zip(tied["problem"], tied["budget"], tied["learner"])) == sorted(
        [(p, b, "ogd-full") for p, b in _ALL] + [("agnostic", 10, "dantzig-poslr")])
    assert (ran.xs("ogd-full", level="learner")["rank"] == 1).all()
    d, lo, hi, *_ = pair("agnostic", 10, "dantzig-poslr", "ogd-full")
    worse = ran.loc[("agnostic", 10, "dantzig-poslr"), "worse_runs"]
    assert (f"(124 against 116: {d:+.1f} ({lo:+.1f}, {hi:+.1f}), behind in {worse:.0f} of 20 "
            "runs;") in text and f"{r['agnostic', 10, 'dantzig-poslr']:.0f}" == "124"
    others = ran.drop(index="ogd-full", level="learner").drop(("agnostic", 10, "dantzig-poslr"))
    assert (others["worse_runs"] == 20).all() and (ran["runs"] == 20).all()
    # [ITO] Alg. 2 and Alg. 3 (A = I)
    for p in ("rip", "agnostic", "drifting"):
        part = ran.loc[(p, 5)]
        assert set(part.index[part["rank"].isin([2, 3])]) == {A2, A3}
    assert (f"(`rip`: {r['rip', 5, A2]:.0f} and {r['rip', 5, A3]:.0f} against "
            f"{r['rip', 5, RS]:.0f} for a random subset") in text
    for cells, snippet in (((("rip", 5), ("rip", 10)), "on `rip` at both budgets (by {} and {})"),
                           ((("agnostic", 10),), "on `agnostic` ({})"),
                           ((("drifting", 10),), "and `drifting` ({})")):
        assert all(verdict(p, b, A3, A2) == "ahead" for p, b in cells)
        assert snippet.format(*(by(p, b, A3, A2) for p, b in cells)) in text
    assert verdict("agnostic", 5, A3, A2) == verdict("drifting", 5, A3, A2) == "same"
    assert all(verdict(p, b, A3, A2) == "behind" for p, b in _ALL[6:])
    assert (f"(by {by('correlated', 5, A3, A2, '.0f')} and {by('correlated', 10, A3, A2, '.0f')}"
            f"), on kegg ({-pair('kegg', 6, A2, A3)[0]:.0f} and {-pair('kegg', 13, A2, A3)[0]:.0f})"
            f" and on a9a ({-pair('a9a', 31, A2, A3)[0]:,.0f} and "
            f"{-pair('a9a', 62, A2, A3)[0]:,.0f})") in text
    assert all(ran.loc[(p, b, A2), "rank"] == 2 for p, b in _ALL[6:])
    assert (f"correlated design ({r['correlated', 5, A2]:.0f} / {r['correlated', 10, A2]:.0f}), "
            f"on kegg ({r['kegg', 6, A2]:.0f} / {r['kegg', 13, A2]:.0f}" in text)
    assert f"a9a ({r['a9a', 31, A2]:,.0f} / {r['a9a', 62, A2]:,.0f})" in text
    # the Dantzig selector
    dz = "dantzig-poslr"
    assert ran.loc[("rip", 5, dz), "rank"] == 4 and ran.loc[("rip", 10, dz), "rank"] == 2
    assert ran.loc[("agnostic", 10, dz), "rank"] == 2
    assert verdict("rip", 5, dz, A2) == "behind" and verdict("rip", 10, dz, A2) == "ahead"
    assert verdict("rip", 10, dz, A3) == "same" and verdict("agnostic", 10, dz, A2) == "ahead"
    assert (f"4th on `rip` ({r['rip', 5, dz]:.0f}, behind Alg. 2 by {by('rip', 5, dz, A2)})"
            in text)
    assert (f"2nd on `rip` ({r['rip', 10, dz]:.1f}, ahead of Alg. 2 by {by('rip', 10, dz, A2)}"
            in text)
    assert f"ahead of Alg. 2 by {by('agnostic', 10, dz, A2, '.0f')})" in text
    assert all(verdict(p, b, dz, A2) == "behind" for p in ("drifting", "correlated")
               for b in (5, 10))
    assert (f"`drifting` at both budgets (by {by('drifting', 5, dz, A2, '.0f')} and "
            f"{by('drifting', 10, dz, A2, '.0f')})") in text
    assert (f"correlated design at both ({by('correlated', 5, dz, A2, '.0f')} and "
            f"{by('correlated', 10, dz, A2)})") in text
    # foster-hedge
    fh = "foster-hedge"
    assert {ran.loc[(p, b, fh), "rank"] for p, b in _SYNTH} == {3, 4, 5}
    assert all(verdict(p, b, fh, RS) == "ahead" for p, b in _SYNTH[:6] + [("correlated", 10)])
    assert verdict("correlated", 5, fh, RS) == "same" == verdict("agnostic", 10, fh, A2)
    d, lo, hi, *_ = pair("agnostic", 10, fh, A2)
    assert f"indistinguishable from dual averaging ({d:+.1f} ({lo:+.1f}, {hi:+.1f}))" in text
    assert verdict("kegg", 6, fh, RS) == "ahead" and verdict("kegg", 13, fh, RS) == "same"
    assert f"ahead of the random subset at B = 6 (by {by('kegg', 6, fh, RS, '.0f')})" in text
    assert ran.loc[("a9a", 31, fh), "rank"] == 3 and verdict("a9a", 31, fh, RS) == "ahead"
    assert (f"3rd at B = 31 ({r['a9a', 31, fh]:.0f}, ahead of the random subset by "
            f"{by('a9a', 31, fh, RS, ',.0f')})") in text
    assert verdict("a9a", 62, fh, RS) == "behind"
    assert f"behind the random subset at B = 62 (by {by('a9a', 62, fh, RS, '.0f')})" in text
    # behind the random subset or near it
    bb, og = "ito-block-bandit", "online-greedy"
    assert all(verdict(p, b, bb, RS) == "behind" for p, b in _ALL)
    n_ran = ran.groupby(level=["problem", "budget"]).size()
    assert all(ran.loc[(p, b, bb), "rank"] == n_ran[(p, b)] for p, b in _ALL)
    exps = ran.xs(bb, level="learner")["exponent"]
    assert f"exponent {exps.min():.2f}-{exps.max():.2f})" in text
    assert all(verdict(p, 10, og, RS) == "behind" for p in ("rip", "agnostic", "drifting",
                                                               "correlated"))
    assert all(verdict(p, b, og, RS) == "behind" for p, b in _ALL[7:])
    assert verdict("agnostic", 5, og, RS) == verdict("drifting", 5, og, RS) == "ahead"
    assert verdict("rip", 5, og, RS) == "same"
    assert (f"`agnostic` B = 5 by {by('agnostic', 5, og, RS, '.0f')} and on `drifting` B = 5 "
            f"by {by('drifting', 5, og, RS)}") in text
    assert f"{r['rip', 5, G3]:.0f} against {r['rip', 5, A3]:.0f} on `rip` B = 5" in text
    assert all(verdict(p, 10, G3, RS) == "behind" for p in ("rip", "agnostic", "drifting",
                                                               "correlated"))
    assert verdict("kegg", 13, G3, RS) == "behind"
    assert verdict("rip", 5, G3, RS) == verdict("kegg", 6, G3, RS) == "ahead"
    assert (f"`rip` B = 5 (by {by('rip', 5, G3, RS, '.0f')}) and kegg B = 6 (by "
            f"{by('kegg', 6, G3, RS, '.0f')})") in text
    assert verdict("agnostic", 5, G3, RS) == verdict("drifting", 5, G3, RS) == "ahead"
    assert (f"on `agnostic` B = 5 (by {by('agnostic', 5, G3, RS, ',.0f')}) and on `drifting` "
            f"B = 5 (by {by('drifting', 5, G3, RS, '.0f')})") in text
    assert verdict("correlated", 5, G3, RS) == "same"
    # a9a
    full = "ogd-full"
    assert (f"`ogd-full` ({r['a9a', 31, full]:,.0f}) then dual averaging "
            f"({r['a9a', 31, A2]:,.0f} / {r['a9a', 62, A2]:,.0f}, behind it by "
            f"{pair('a9a', 31, A2, full)[0]:.0f} and {pair('a9a', 62, A2, full)[0]:.0f} in "
            "every run)") in text
    assert ran.loc[("a9a", 31, A2), "worse_runs"] == ran.loc[("a9a", 62, A2), "worse_runs"] == 20
    assert ran.loc[("a9a", 62, RS), "rank"] == 3 and f"features ({r['a9a', 62, RS]:.0f})" in text
    assert all(verdict("a9a", 62, RS, x) == "ahead" for x in (fh, dz, A3, og, bb))
    e3 = ran.xs(A3, level="learner")["exponent"]
    assert (f"({r['a9a', 31, A3]:,.0f} / {r['a9a', 62, A3]:,.0f}) grows almost linearly here "
            f"(exponent {min(e3['a9a']):.2f}-{max(e3['a9a']):.2f})") in text
    # budget
    assert (f"(Dantzig {r['rip', 5, dz]:.0f} -> {r['rip', 10, dz]:.1f}, Hedge "
            f"{r['rip', 5, fh]:.0f} -> {r['rip', 10, fh]:.0f}, dual averaging "
            f"{r['rip', 5, A2]:.0f} -> {r['rip', 10, A2]:.0f} on `rip`)") in text
    assert (f"`online-greedy` ({r['rip', 5, og]:.0f} -> {r['rip', 10, og]:.0f}) or the "
            f"Gaussian Alg. 3 ({r['rip', 5, G3]:.0f} -> {r['rip', 10, G3]:.0f})") in text


def test_arena_prose__theory_tuning_and_throughput_follow_the_files():
    text = _page("arena.md")
    ran, _ = _arena_main()
    e = ran["exponent"]
    synth = e[e.index.get_level_values("problem").isin(["rip", "agnostic", "drifting",
                                                        "correlated"])]
    sqrt_t = pd.concat([synth.xs(n, level="learner") for n in ("ogd-full", A2)]
                       + [synth.xs(A3, level="learner").drop(index="correlated")])
    assert f"(exponents {sqrt_t.min():.2f} to {sqrt_t.max():.2f}, Alg. 3" in text
    for n in ("ogd-full", A2):
        x = e.xs(n, level="learner")
        assert (x[["drifting", "kegg", "a9a"]] < 0).all()
    c3 = e.xs(A3, level="learner")["correlated"]
    assert f"correlated design grows at {c3.min():.2f}-{c3.max():.2f}" in text
    rip5 = ran.loc["rip", 5]
    assert (f"is {rip5.loc[A2, 'bound']:,.0f} at `rip` B = 5 against a measured "
            f"{rip5.loc[A2, 'regret']:.0f}") in text and rip5.loc[A2, "tuned"] == "lam_scale=0.3"
    assert (f"Theorem 8 without its OMP term ({rip5.loc[G3, 'bound']:,.0f} at B = 5) stays above "
            f"the Gaussian variant ({rip5.loc[G3, 'regret']:.0f})") in text
    t23 = pd.concat([e.xs(n, level="learner") for n in ("ito-block-bandit", "online-greedy")])
    assert f"exponents {t23.min():.2f}-{t23.max():.2f}. Their order terms" in text
    for n in ("ito-block-bandit", "online-greedy"):
        x = ran.xs(n, level="learner")
        for p in ("rip", "drifting", "correlated"):
            assert (x.loc[p, "bound"] > x.loc[p, "regret"]).all()
        assert (x.loc["agnostic", "bound"] < x.loc["agnostic", "regret"]).all()
    ag = ran.loc["agnostic", 5]
    assert (f"({ag.loc['ito-block-bandit', 'regret']:,.0f} and "
            f"{ag.loc['online-greedy', 'regret']:,.0f} against "
            f"{ag.loc['ito-block-bandit', 'bound']:,.0f} and "
            f"{ag.loc['online-greedy', 'bound']:,.0f} at B = 5)") in text
    dz = e.xs("dantzig-poslr", level="learner")["rip"]
    assert f"exponents {dz[10]:.2f} (B = 10) and {dz[5]:.2f} (B = 5) on `rip`" in text
    assert f"Its order term (constant 1) is {rip5.loc['dantzig-poslr', 'bound']:,.0f}" in text
    fh = synth.xs("foster-hedge", level="learner")
    assert f"grows at {fh.min():.2f}-{fh.max():.2f} on the synthetic streams" in text
    assert "(0.65 and 0.80;" in text and [f"{fh['rip', 5]:.2f}", f"{fh['correlated', 5]:.2f}"] \
        == ["0.65", "0.80"]
    # tuning
    board = pd.read_csv(FIGURES / "arena.csv")
    tuned = board[board["skipped"].isna()]
    wide = (tuned["tuning_points"] > 5).sum()
    assert (f"{wide} of the {len(tuned)} tuned cells extended their grid past an edge (10 points "
            f"tried), {len(tuned) - wide}") in text
    capped = tuned[tuned["at_cap"]]
    assert f"{len(capped)} choices ended at the cap" in text
    assert sorted(zip(capped["learner"], capped["problem"])) == sorted([
        (G3, "agnostic"), (G3, "agnostic"), (G3, "drifting"), ("foster-hedge", "kegg"),
        ("ogd-random-subset", "kegg")])
    log = pd.read_csv(FIGURES / "arena-tuning.csv")

    def plateau_end(problem, budget):
        t = log[(log["learner"] == G3) & (log["problem"] == problem)
                & (log["budget"] == budget)].sort_values("factor")
        same = np.isclose(t["tuning_regret"], t["tuning_regret"].iloc[0], rtol=1e-9, atol=0)
        return t["factor"][same].max()

    assert plateau_end("agnostic", 5) == plateau_end("agnostic", 10) == 0.03
    assert plateau_end("drifting", 10) == 0.009
    for learner, pct in (("ogd-random-subset", "8%"), ("foster-hedge", "43%")):
        t = log[(log["learner"] == learner) & (log["problem"] == "kegg")].set_index(
            ["budget", "factor"])["tuning_regret"]
        budget = int(capped[capped["learner"] == learner]["budget"].iloc[0])
        gain = 1 - t[(budget, 3000.0)] / t[(budget, 900.0)]
        assert f"{gain:.0%}" == pct
    assert "still improve on 900 (by 8% for the random subset, 43% for `foster-hedge`)" in text
    # tuning stability over the three boards
    from oslr.experiments.arena import tuning_stability

    st = tuning_stability(pd.concat([pd.read_csv(FIGURES / f"{n}.csv")
                                     for n in ("arena", "arena-k", "arena-long")]))
    apart = (~st["sets_agree"]).sum()
    assert f"in {apart} of the {len(st)} cells the two halves" in text
    by = st.groupby("learner")["sets_agree"].agg(["size", "sum"])
    apart_of = by["size"] - by["sum"]
    assert (f"`online-greedy` ({apart_of['online-greedy']} of 16) and the block bandit "
            f"({apart_of['ito-block-bandit']} of 16)") in text
    assert apart_of.sort_values().index[-2:].tolist() == ["ito-block-bandit", "online-greedy"]
    steady = apart_of[["ogd-full", "ogd-random-subset", A2]]
    assert f"({steady.min()}-{steady.max()} of 16 apart)" in text
    assert (st["sets_agree"] == st["sets_chose_it"]).all()  # "agree with the factor ... chose"
    # throughput
    rr = tuned.set_index("problem")["run_rounds_per_s"]
    other, a9a = rr.drop(index="a9a"), rr["a9a"]
    assert (f"{other.min():.1e}-{other.max():.1e} on the synthetic streams and kegg, "
            f"{a9a.min():.1e}-{a9a.max():.1e} on a9a").replace("e+0", "e") in text


def test_findings__the_arena_paragraph_follows_its_page_files():
    text = _page("findings.md")
    ran, pair = _arena_main()
    r, e = ran["regret"], ran["exponent"]
    d, lo, hi, *_ = pair("agnostic", 10, "dantzig-poslr", "ogd-full")
    assert (f"indistinguishable from it ({d:+.1f} ({lo:+.1f}, {hi:+.1f}); not shown within 10% by "
            "TOST)") in text
    runs = pd.read_parquet(FIGURES / "arena-runs.parquet")
    assert _equivalent(runs, "agnostic", 10, "dantzig-poslr", "ogd-full")[0] > 0.05
    assert (f"(`rip`: {r['rip', 5, A2]:.0f} and {r['rip', 5, A3]:.0f} against "
            f"{r['rip', 5, RS]:.0f} for a random subset)") in text

    def behind(learner):
        cells = [(p, b) for p, b in _ALL if (p, b, learner) in ran.index]
        out = [pair(p, b, learner, RS) for p, b in cells]
        return sum(x[3] and x[0] > 0 for x in out), len(cells)

    assert behind("ito-block-bandit") == (12, 12)
    assert ("`online-greedy` in {} of {} and Gaussian-A Alg. 3 in {} of {}".format(
        *behind("online-greedy"), *behind(G3))) in text
    t23 = pd.concat([e.xs(n, level="learner") for n in ("ito-block-bandit", "online-greedy")])
    long = pd.read_csv(FIGURES / "arena-long.csv").set_index("learner")["exponent"]
    long23 = long[["ito-block-bandit", "online-greedy"]]
    assert (f"exponents {t23.min():.2f}-{t23.max():.2f} at T = 2e4 and "
            f"{long23.min():.2f}-{long23.max():.2f} over the last decades") in text
    assert f"`foster-hedge` bends to {long['foster-hedge']:.2f} (sqrt T)" in text
    board = pd.read_csv(FIGURES / "arena.csv")
    tuned = board[board["skipped"].isna()]
    assert f"{tuned['at_cap'].sum()} of {len(tuned)} tuning choices end at the cap" in text
    from oslr.experiments.arena import tuning_stability

    st = tuning_stability(pd.concat([pd.read_csv(FIGURES / f"{n}.csv")
                                     for n in ("arena", "arena-k", "arena-long")]))
    assert f"different factors in {(~st['sets_agree']).sum()} of {len(st)} cells" in text


def test_ito_prose__against_the_paper_on_5_and_on_100_instances_follows_the_finals():
    from oslr.experiments.ito import PAPER
    from oslr.stats import mean_ci

    page, findings = _page("ito-results.md"), _page("findings.md")
    f = pd.read_csv(FIGURES / "ito-table1-raw-finals.csv")
    for m, name in (("alg3", "Alg 3"), ("kklp", "KKLP"), ("kklp_a", "KKLP_A")):
        v = f[(f["k"] == 4) & (f["method"] == m)].sort_values("run")["regret"].to_numpy()
        mean, _, half = mean_ci(v)
        paper = PAPER[(10, 2, 4)][m]
        on100 = (f"{mean / paper - 1:+.1%} ({(mean - half) / paper - 1:+.1%}, "
                 f"{(mean + half) / paper - 1:+.1%})")
        five = v[:5].mean()
        assert (f"{name} {five:,.1f} against {paper:,.1f} ({five / paper - 1:+.1%}; on 100 "
                f"instances {on100})" if m == "alg3" else f"on 100 {on100}") in page, m
        assert on100.lstrip("+") in findings or on100 in findings, m
    assert len(v) == 100


def test_ito_prose__table1_runtimes_follow_the_csv():
    text = _page("ito-results.md")
    walls = pd.read_csv(FIGURES / "ito-table1.csv").groupby("method")["wall_s"]
    lo, hi = walls.min(), walls.max()

    def span(m):
        a, b = f"{lo[m]:.1f}", f"{hi[m]:.1f}"
        return f"{a} s" if a == b else f"{a}-{b} s"

    assert (f"Alg 2 {span('alg2')}, Alg 3 {span('alg3')}, KKLP {span('kklp')}, KKLP_A "
            f"{span('kklp_a')}, Alg 1 {span('alg1')} (on the sphere stream") in text
    assert f"took {np.floor(lo.min()):.0f}-{np.ceil(hi.max()):.0f} s per method" in text


def test_tost_prose__the_kale_ito_and_kpm_equivalence_claims_follow_the_files():
    from doctools import tables as dt

    # kale: the correlated k0 = 50 row of the pairs table (rendered from the files, checked by
    # test_docs) is not within 10% of ogd-full, and the page says so
    kale = (DOCS / "kale-results.md").read_text()
    row = next(line for line in kale.splitlines() if line.startswith("| correlated | 50 |"))
    assert row.split(" | ")[3].count("not shown within") == 1
    assert "from `ogd-full` (502) by both tests, and not shown within 10% of it by TOST" in _page(
        "kale-results.md")
    # ito, tuned: KKLP_A - KKLP at (10, 5, 8), Holm over the setting's pairs
    fin = pd.read_csv(FIGURES / "ito-table1-tuned-finals.csv")
    part = fin[(fin["d"] == 10) & (fin["k_prime"] == 5) & (fin["k"] == 8)]
    regret = {m: g.sort_values("run")["regret"].to_numpy() for m, g in part.groupby("method")}
    r, q, q_free, (_, q_eq) = dt._paired_cells(dt._every_pair(regret))["kklp - kklp_a"]
    assert min(q, q_free) > 0.05 and q_eq > 0.05
    said = f"({-r.diff:+.0f} ({-r.ci_high:+.0f}, {-r.ci_low:+.0f}); not shown within 10% of it"
    assert said + " by TOST)" in _page("ito-results.md")
    # kpm: on random/all no pair separated, and how many TOST puts within 10%
    cells = dt._paired_cells(dt._ctr_pairs(dt._ctr_runs(FIGURES, "kpm-replay-all")))
    within = sum(c[3][1] <= 0.05 for c in cells.values())
    assert not any(min(c[1], c[2]) <= 0.05 for c in cells.values())
    assert (f"(and TOST puts only {within} of the {len(cells)} within 10% of each other)"
            in _page("kpm-results.md"))


def test_findings__each_claim_names_the_family_it_was_tested_in():
    from doctools import tables as dt

    text = _page("findings.md")
    eq1 = pd.read_csv(FIGURES / "wll-k-a9a-eq1.csv")
    assert f"0.1-0.5 (Holm over the table's {eq1['k'].nunique()} k)" in text
    assert f"Holm over the {len(dt._kale_greedy_pairs(FIGURES))} (d, design, T) cells" in text
    tracking = dt._final_runs(FIGURES, "kpm-tracking", "sum_tracking_error")
    n = tracking["learner"].nunique()
    assert f"by both tests, Holm over the {n * (n - 1) // 2} pairs)" in text
    ito = pd.read_csv(FIGURES / "ito-table1-finals.csv")
    sizes = set(ito.groupby(["d", "k_prime", "k"])["method"].nunique())
    m = sizes.pop()
    assert not sizes and f"Holm over each setting's {m * (m - 1) // 2} pairs)" in text
    assert f"the setting's {m * (m - 1) // 2} pairs" in _page("ito-results.md")
    n_kale = len(dt._kale_dantzig_pairs(FIGURES))
    assert f"Holm over the page's {n_kale} comparisons)" in text
    assert f"(Holm over {n_kale} comparisons, the family of this table" in _page("kale-results.md")


def test_tost_prose__foster_k5_is_within_10_percent_as_its_table_row_says():
    page = (DOCS / "foster-results.md").read_text()
    block = page.split("oslr-table foster-rate-pairs")[1].split("/oslr-table")[0].splitlines()
    rows = [line for line in block if line.startswith("| ") and not line.startswith("| k'")]
    row = next(line for line in rows if line.startswith("| 5 | 100,000 |"))
    margin = row.split("within +-", 1)[1].split(" ", 1)[0]
    assert "(10%) by TOST" in row and "sign-flip only" not in row and "t only" not in row
    assert (f"and TOST puts them within 10% of each other (+-{margin}, Holm over the "
            f"{len(rows)} cells)") in _page("foster-results.md")
    assert ("at k' = 5 neither test separates them and TOST puts them within 10% of each "
            "other") in _page("findings.md")
