"""Generated docs tables: every oslr-table block in docs/*.md equals what its files say, and a
change in a file shows in the table."""

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from oslr.cli import main
from oslr.experiments import doc_tables as dt

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_docs__every_generated_table_follows_its_files():
    blocks = 0
    for page in sorted(DOCS.glob("*.md")):
        text = page.read_text()
        blocks += text.count("<!-- oslr-table ")
        assert dt.render(text, DOCS / "figures") == text, (
            f"{page.name}: a generated table differs from docs/figures; run "
            "`oslr reproduce --tables docs`")
    assert blocks >= 3  # the arena's regret and exponent tables and arena-long's


def _figures_copy(tmp_path, *names: str) -> Path:
    """A figures folder holding copies of the docs' files `names`."""
    figures = tmp_path / "figures"
    figures.mkdir()
    for name in names:
        shutil.copy(DOCS / "figures" / name, figures / name)
    return figures


def _arena_copy(tmp_path) -> Path:
    return _figures_copy(tmp_path, "arena.csv")


def test_arena_regret__a_changed_number_rank_and_tie_show(tmp_path):
    figures = _arena_copy(tmp_path)
    board = pd.read_csv(figures / "arena.csv")
    row = board.index[(board["problem"] == "rip") & (board["budget"] == 5)
                      & (board["learner"] == "foster-hedge")][0]
    board.loc[row, ["regret", "rank", "tied_with_best"]] = [-12345.6, 1, True]
    board.loc[row, "metric"] = "regret_lb_greedy"
    board.to_csv(figures / "arena.csv", index=False)
    table = dt.arena_regret(figures)
    line = next(x for x in table.splitlines() if x.startswith("| foster-hedge |"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[1] == "**-12,346 (R2)** (1)"  # rounded, labelled R2, bold, rank 1
    header = table.splitlines()[0]
    assert header.startswith("| learner | rip 5 | rip 10 | agnostic 5 |")
    assert len(cells) == len(header.strip("|").split("|"))


def test_arena_exponents_and_skipped(tmp_path):
    figures = _figures_copy(tmp_path, "arena.csv", "arena-runs.parquet")
    board = pd.read_csv(figures / "arena.csv")
    board.loc[0, "exponent"] = 0.123456
    gone = board.index[board["learner"] == "ito-block-bandit"][0]
    board["skipped"] = board["skipped"].astype(object)
    board.loc[gone, "skipped"] = "C(123, 2) = 7,503 subsets > 5"
    board.to_csv(figures / "arena.csv", index=False)
    first = dt.arena_exponents(figures).splitlines()[2]
    assert first.startswith(f"| {board.loc[0, 'learner']} | {board.loc[0, 'theory']} | 0.12 (")
    # the interval: the bootstrap over that cell's runs in the per-run file, t >= T/100
    from oslr.report import growth_exponent_interval

    runs = pd.read_parquet(figures / "arena-runs.parquet")
    r = board.loc[0]
    cell = runs[(runs["problem"] == r["problem"]) & (runs["budget"] == r["budget"])
                & (runs["learner"] == r["learner"])].pivot(index="run", columns="n",
                                                            values="regret")
    low, high = growth_exponent_interval(cell.columns.to_numpy(), cell.to_numpy(),
                                         t_min=r["horizon"] / 100)
    assert first.split(" | ")[2] == f"0.12 ({low:.2f}, {high:.2f})"
    problem, budget = board.loc[gone, ["problem", "budget"]]
    assert (f"| {problem} | {budget} | ito-block-bandit | C(123, 2) = 7,503 subsets > 5 |"
            in dt.arena_skipped(figures))
    line = next(x for x in dt.arena_regret(figures).splitlines()
                if x.startswith("| ito-block-bandit |"))
    assert " - " in line  # a skipped cell shows no number


def test_render__rewrites_blocks_and_refuses_unknown_names(tmp_path):
    figures = _arena_copy(tmp_path)
    text = "intro\n<!-- oslr-table arena-skipped -->\nstale\n<!-- /oslr-table -->\nend\n"
    out = dt.render(text, figures)
    assert "stale" not in out and out.startswith("intro\n<!-- oslr-table arena-skipped -->\n|")
    assert out.endswith("<!-- /oslr-table -->\nend\n")
    assert dt.render(out, figures) == out
    with pytest.raises(ValueError, match="'nope' is not generated"):
        dt.render("<!-- oslr-table nope -->\n<!-- /oslr-table -->", figures)


def test_cli_tables(tmp_path, capsys):
    figures = _arena_copy(tmp_path)
    page = tmp_path / "page.md"
    page.write_text("<!-- oslr-table arena-skipped -->\nold\n<!-- /oslr-table -->\n")
    assert main(["reproduce", "--tables", str(tmp_path)]) == 0
    assert "rewrote the generated tables of page.md" in capsys.readouterr().out
    assert page.read_text() == dt.render(page.read_text(), figures)
    assert main(["reproduce", "--tables", str(figures)]) == 2  # not the docs folder
    assert "no figures folder there" in capsys.readouterr().err
    # a table whose file is missing (its step not rerun yet) is left as it was and named
    page.write_text("<!-- oslr-table arena-skipped -->\nold\n<!-- /oslr-table -->\n"
                    "<!-- oslr-table kpm-pege -->\nkept\n<!-- /oslr-table -->\n")
    assert main(["reproduce", "--tables", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert "left 1 tables as they were, their files missing: kpm-pege (kpm-pege.csv)" in err
    assert "kept" in page.read_text() and "old" not in page.read_text()
    with pytest.raises(FileNotFoundError):
        dt.render(page.read_text(), figures)  # strict by default (the docs test)


def test_wll_tables__a_changed_reward_and_a_missing_point_show(tmp_path):
    figures = _figures_copy(tmp_path, "wll-k-a9a-tuned.csv", "wll-k-a9a-runs.parquet",
                            "wll-rates-a9a.csv", "wll-rates-hi-a9a.csv",
                            "wll-rates-a9a-runs.parquet", "wll-rates-hi-a9a-runs.parquet")
    df = pd.read_csv(figures / "wll-k-a9a-tuned.csv")
    row = df.index[(df["learner"] == "ftpsl") & (df["k"] == 25)][0]
    df.loc[row, ["reward_mean", "reward_ci_low", "reward_ci_high"]] = [12345.4, -7.6, 99999.5]
    df.to_csv(figures / "wll-k-a9a-tuned.csv", index=False)
    table = dt.TABLES["wll-k-a9a-tuned"](figures)
    assert "| 25 (0.20) | **12,345 (-8, 100,000)** |" in table  # bold: the paired test
    df = df[~((df["learner"] == "ftpl-oracle-subset") & (df["k"] == 25))]  # a missing learner
    df.to_csv(figures / "wll-k-a9a-tuned.csv", index=False)
    row = next(r for r in dt.TABLES["wll-k-a9a-tuned"](figures).splitlines()
               if r.startswith("| 25 (0.20) |"))
    assert row.split(" | ")[3] == "-"  # its cell
    hi = pd.read_csv(figures / "wll-rates-hi-a9a.csv")
    hi = hi[~((hi["learner"] == "ftpsl") & (hi["eta_scale"] == 1000.0) & (hi["c0"] == 0.0))]
    hi.to_csv(figures / "wll-rates-hi-a9a.csv", index=False)
    rows = {r.split(" | ")[0]: r for r in dt.TABLES["wll-rates-a9a"](figures).splitlines()}
    assert rows["| 1000"].split(" | ")[3] == "–"  # the ftpsl c0=0 cell of eta x 1000
    assert rows["| 300"].split(" | ")[5] == "–"  # c0 = 0.1 was never run at eta x 300


def _final_reward(runs: pd.DataFrame, **match) -> pd.Series:
    """Row mask of the final sum_reward rows of a per-run frame matching `match`."""
    mask = (runs["metric"] == "sum_reward") & (runs["t"] == runs.groupby("study")["t"]
                                               .transform("max"))
    for col, value in match.items():
        mask &= np.isclose(runs[col], value) if isinstance(value, float) else runs[col] == value
    return mask


def test_wll_tables__paired_claims_follow_the_per_run_files(tmp_path):
    figures = _figures_copy(tmp_path, "wll-k-a9a-tuned.csv", "wll-k-a9a-runs.parquet",
                            "wll-rates-covtype.csv", "wll-rates-hi-covtype.csv",
                            "wll-rates-covtype-runs.parquet", "wll-rates-hi-covtype-runs.parquet",
                            "wll-redundant-a9a-tuned.csv", "wll-redundant-a9a-held.csv",
                            "wll-redundant-tuned-runs.parquet", "wll-redundant-held-runs.parquet")
    # k = 25: the random subset's runs made FTPSL's + 1000 (+-1): now it, not FTPSL, is bold
    runs = pd.read_parquet(figures / "wll-k-a9a-runs.parquet")
    ftpsl = runs[_final_reward(runs, learner="ftpsl", param_k=25)].sort_values("run")
    rand = runs[_final_reward(runs, learner="ftpl-random-subset", param_k=25)].sort_values("run")
    def row(table):
        return next(r for r in table.splitlines() if r.startswith("| 25 (0.20)"))

    before = row(dt.TABLES["wll-k-a9a-tuned"](figures)).split(" | ")
    assert before[1].startswith("**") and not before[2].startswith("**")
    jitter = np.tile([1.0, -1.0], len(ftpsl))[:len(ftpsl)]
    runs.loc[rand.index, "value"] = ftpsl["value"].to_numpy() + 1000.0 + jitter
    runs.to_parquet(figures / "wll-k-a9a-runs.parquet", index=False)
    after = row(dt.TABLES["wll-k-a9a-tuned"](figures)).split(" | ")
    assert not after[1].startswith("**") and after[2].startswith("**")
    n = len(ftpsl)
    assert after[5].startswith("-1,000 (") and f"ahead in 0/{n}" in after[5]
    # ahead by 100 in a fifth of the runs, behind by 1 in the rest: the t test separates the
    # two (mean +19.2), Wilcoxon's ranks do not: no bold, "t only"
    d = np.where(np.arange(n) < n // 5, 100.0, -1.0)
    runs.loc[rand.index, "value"] = ftpsl["value"].to_numpy() - d
    runs.to_parquet(figures / "wll-k-a9a-runs.parquet", index=False)
    t_only = row(dt.TABLES["wll-k-a9a-tuned"](figures)).split(" | ")
    assert not t_only[1].startswith("**") and not t_only[2].startswith("**")
    assert t_only[5].endswith("(t only) |"), t_only[5]
    # Holm over the table's rows, for the t and the Wilcoxon test alike: each a9a row's bold
    # recomputed from the shipped per-run file (bold only where both tests separate the two)
    from oslr.stats import holm, pair_tests

    (tmp_path / "a9a").mkdir()
    a9a = _figures_copy(tmp_path / "a9a", "wll-k-a9a-tuned.csv", "wll-k-a9a-runs.parquet")
    rows = {r.split(" | ")[0]: r.split(" | ") for r in
            dt.TABLES["wll-k-a9a-tuned"](a9a).splitlines()}
    runs = pd.read_parquet(a9a / "wll-k-a9a-runs.parquet")
    table = pd.read_csv(a9a / "wll-k-a9a-tuned.csv")
    ks = sorted(table["k"].unique())
    tests = [pair_tests(*(runs[_final_reward(runs, learner=name, param_k=k)]
                          .sort_values("run")["value"].to_numpy()
                          for name in ("ftpsl", "ftpl-random-subset"))) for k in ks]
    q_t, q_w = holm([t["pair"].p for t in tests]), holm([t["p_free"] for t in tests])
    bolds = 0
    for k, t, qt, qw in zip(ks, tests, q_t, q_w):
        d = int(table.loc[table["k"] == k, "d"].iloc[0])
        row = rows[f"| {k} ({k / d:.2f})"]
        both = qt <= 0.05 and qw <= 0.05
        assert row[1].startswith("**") == (both and t["pair"].diff > 0)
        assert row[2].startswith("**") == (both and t["pair"].diff < 0)
        bolds += both
    assert 0 < bolds < len(ks)  # the rule is exercised both ways on this table
    # rates: the oracle subset at the best FTPSL point's eta made that point's runs - 7
    text = dt.TABLES["wll-rates-covtype"](figures)
    said = text.split("the best FTPSL point (eta_scale ")[1]
    eta, c0 = float(said.split(",")[0]), float(said.split("c0 = ")[1].split(";")[0])
    step = "wll-rates-covtype" if eta <= 100 else "wll-rates-hi-covtype"
    r = pd.read_parquet(figures / f"{step}-runs.parquet")
    top = r[_final_reward(r, learner="ftpsl", param_eta_scale=eta, param_c0=c0)]
    oracle = r[_final_reward(r, learner="ftpl-oracle-subset", param_eta_scale=eta)]
    r.loc[oracle.sort_values("run").index, "value"] = top.sort_values("run")["value"].to_numpy() - 7
    r.to_parquet(figures / f"{step}-runs.parquet", index=False)
    changed = dt.TABLES["wll-rates-covtype"](figures)
    m = len(top)
    assert f"minus the oracle subset at eta_scale {eta:g}: +7 (+7, +7), ahead in {m}/{m}" in changed
    # redundant: the held random subset's runs at the largest rho made rho = 0's + 3
    r = pd.read_parquet(figures / "wll-redundant-held-runs.parquet")
    extra = r["info_n_redundant"].fillna(0)
    top_rho = r[_final_reward(r, learner="ftpl-random-subset") & (extra == extra.max())]
    zero = r[_final_reward(r, learner="ftpl-random-subset") & (extra == 0)]
    r.loc[top_rho.sort_values("run").index, "value"] = (
        zero.sort_values("run")["value"].to_numpy() + 3)
    r.to_parquet(figures / "wll-redundant-held-runs.parquet", index=False)
    assert "random subset, held +3 (+3, +3), ahead in" in dt.TABLES["wll-redundant"](figures)


def test_kpm_and_ito_tables__nearest_checkpoint_formats_and_bold_show(tmp_path):
    figures = _figures_copy(tmp_path, "kpm-tracking-all.csv", "ito-real.csv",
                            "ito-real-finals.csv")
    df = pd.read_csv(figures / "kpm-tracking-all.csv")
    gd = df["learner"] == "flinucb-gd"
    near = df.index[gd & (df["n"] == 1048)][0]  # the checkpoint nearest to n = 1,000
    df.loc[near, "tracking_error"] = 0.0123
    df.to_csv(figures / "kpm-tracking-all.csv", index=False)
    gd_row = dt.TABLES["kpm-tracking"](figures).splitlines()[2]
    assert gd_row.startswith("| flinucb-gd | ") and gd_row.split(" | ")[2] == "1.2e-2"
    ito = pd.read_csv(figures / "ito-real.csv")
    last = (ito["n"] == ito["n"].max()) & (ito["k"] == 4)
    row = ito.index[last & (ito["method"] == "kklp")][0]
    ito.loc[row, ["loss", "ci_low", "ci_high"]] = [4390.0, 4389.0, 4391.0]  # overlaps alg2
    alg2 = ito.index[last & (ito["method"] == "alg2")][0]
    ito.loc[alg2, ["loss", "ci_low", "ci_high"]] = [4389.9, 4389.5, 4390.3]
    last8 = (ito["n"] == ito["n"].max()) & (ito["k"] == 8)
    alg2_8 = ito.index[last8 & (ito["method"] == "alg2")][0]  # far below every other method
    ito.loc[alg2_8, ["loss", "ci_low", "ci_high"]] = [4377.8, 4377.0, 4378.6]
    ito.to_csv(figures / "ito-real.csv", index=False)
    # bold follows the paired test on the shuffles: at k = 4 KKLP's losses now straddle Alg
    # 2's, run by run (no bold); at k = 8 Alg 2 stays below every other method in every run
    fin = pd.read_csv(figures / "ito-real-finals.csv")
    k4 = fin["k"] == 4
    alg2_runs = fin.loc[k4 & (fin["method"] == "alg2")].sort_values("run")["loss"].to_numpy()
    kklp = fin.index[k4 & (fin["method"] == "kklp")]
    fin.loc[kklp, "loss"] = alg2_runs + np.resize([0.5, -0.5, 0.3, -0.3, 0.1], len(alg2_runs))
    fin.to_csv(figures / "ito-real-finals.csv", index=False)
    table = dt.TABLES["ito-real"](figures)
    assert "| 4 (3) | 4,389.9 |" in table and "4,390.0" in table  # no bold: not separated
    assert "| 8 (7) | **4,377.8** |" in table


def test_foster_and_ito_table1__selected_cells_and_number_formats_show(tmp_path):
    figures = _figures_copy(tmp_path, "foster-rate.csv", "foster-rate-runs.parquet",
                            "ito-table1.csv", "ito-table1-finals.csv")
    df = pd.read_csv(figures / "foster-rate.csv")
    row = df.index[(df["learner"] == "foster-hedge") & (df["k_query"] == 6)
                   & (df["horizon"] == 30_000)][0]
    df.loc[row, ["regret", "ci_low", "ci_high"]] = [999.94, 999.0, 1000.6]
    full = df.index[(df["learner"] == "ogd-full") & (df["horizon"] == 30_000)][0]
    df.loc[full, ["regret", "ci_low", "ci_high"]] = [55.55, 54.0, 57.04]
    df.loc[df["learner"] == "foster-hedge", "exponent"] = 0.6213
    df.to_csv(figures / "foster-rate.csv", index=False)
    table = dt.TABLES["foster-rate"](figures).splitlines()
    assert table[6].startswith("| 6 | 30,000 | 999.9 (999.0, 1,001) |")
    assert table[6].endswith(" | 55.5 (54.0, 57.0) |")  # ogd-full at the same T
    exponents = dt.TABLES["foster-exponents"](figures).splitlines()
    assert exponents[5].startswith("| 8 | 0.62 (") and exponents[5].endswith(" (= ogd-full) |")
    t1 = pd.read_csv(figures / "ito-table1.csv")
    t1.loc[(t1["k"] == 4) & (t1["method"] == "alg3"), ["regret", "ci_low", "ci_high"]] = [
        54.0, 40.0, 60.0]  # now the best, overlapping Alg 2: nothing is bold
    t1.to_csv(figures / "ito-table1.csv", index=False)
    fin = pd.read_csv(figures / "ito-table1-finals.csv")
    k4 = fin["k"] == 4
    alg2_runs = fin.loc[k4 & (fin["method"] == "alg2")].sort_values("run")["regret"].to_numpy()
    alg3 = fin.index[k4 & (fin["method"] == "alg3")]
    fin.loc[alg3, "regret"] = alg2_runs + np.tile([0.5, -0.5], 50)  # paired: not separated
    fin.to_csv(figures / "ito-table1-finals.csv", index=False)
    lines = dt.TABLES["ito-table1"](figures).splitlines()
    assert lines[2] == ("| (10, 2, 4) | Alg 2 (`ito-dual-averaging`) | 55.2 | 54.8 (54.1, 55.5) "
                        "| 427.0 | 4.0 |")
    assert "| | Alg 3 (`ito-projection`, OMP) | 303.3 | 54.0 (40.0, 60.0) |" in lines[3]
    assert "| (10, 2, 8) | Alg 2 | 30.1 | **29.9 (29.6, 30.1)** |" in lines[7]


def test_kale_tables__bold_follows_the_paired_test_on_the_runs(tmp_path):
    figures = _figures_copy(tmp_path, "kale-dantzig.csv", "kale-greedy.csv",
                            "kale-dantzig-runs.parquet", "kale-greedy-runs.parquet")
    # dantzig: ogd-full's runs made equal to k0 = 50's up to +-1: no longer below it
    runs = pd.read_parquet(figures / "kale-dantzig-runs.parquet")
    fin = (runs["metric"] == "regret_wstar") & (
        runs["t"] == runs.groupby("study")["t"].transform("max"))
    rad = runs["info_design"] == "rademacher"
    horizon = int(runs.loc[fin, "t"].max())
    k50 = fin & rad & (runs["learner"] == "dantzig-poslr") & (runs["param_k0"] == 50) & ~(
        runs["info_t0"] > horizon)
    full = fin & rad & (runs["learner"] == "ogd-full")
    ordered = runs[k50].sort_values("run")["value"].to_numpy()
    idx = runs[full].sort_values("run").index
    runs.loc[idx, "value"] = ordered + np.tile([1.0, -1.0], len(ordered) // 2 + 1)[:len(ordered)]
    runs.to_parquet(figures / "kale-dantzig-runs.parquet", index=False)
    (tmp_path / "orig").mkdir()
    before = dt.TABLES["kale-dantzig"](_figures_copy(tmp_path / "orig", "kale-dantzig.csv",
                                                     "kale-dantzig-runs.parquet"))
    table = dt.TABLES["kale-dantzig"](figures)
    row = next(line for line in table.splitlines() if line.startswith("| Rademacher | 50 (55) |"))
    assert "**" not in row.split("|")[3]
    assert table != before
    # greedy: online-greedy 100 below the random subset in every run at d = 20, T = 1,000
    g = pd.read_parquet(figures / "kale-greedy-runs.parquet")
    last = g["t"] == g.groupby("study")["t"].transform("max")
    cell = last & (g["info_d"] == 20) & (g["info_design"] == "rademacher") & (g["t"] == 1000) & (
        g["metric"] == "regret")
    rs = g[cell & (g["learner"] == "ogd-random-subset")].sort_values("run")["value"].to_numpy()
    og = g[cell & (g["learner"] == "online-greedy")].sort_values("run").index
    g.loc[og, "value"] = rs - 100.0
    g.to_parquet(figures / "kale-greedy-runs.parquet", index=False)
    lines = dt.TABLES["kale-greedy"](figures).splitlines()
    row = next(line for line in lines
               if line.startswith("| d=20, k=2, k0=4, Rademacher (R1) | 1,000"))
    assert row.split("|")[3].strip().startswith("**")
    assert "**" not in row.split("|")[4]


def test_foster_hard__per_instance_losses_where_some_runs_say_yes(tmp_path):
    figures = _figures_copy(tmp_path, "foster-hard.csv", "foster-hard-decisions.csv")
    table = dt.TABLES["foster-hard"](figures)
    assert "| ogd-full | 8 | 86.0 (123.3 / 38.9 / 95.6) | 33% (instance 1 only) | 199.6 | 0% |" \
        in table
    curves = pd.read_csv(figures / "foster-hard.csv")
    last = (curves["n"] == curves["n"].max()) & (curves["learner"] == "ogd-full")
    curves.loc[last & curves["satisfiable"] & (curves["instance"] == 2), "says_satisfiable"] = 1.0
    curves.to_csv(figures / "foster-hard.csv", index=False)
    assert "33% (instances 1, 2) |" in dt.TABLES["foster-hard"](figures)


def test_best_if_separated__paired_on_the_same_runs_not_overlapping_intervals():
    rng = np.random.default_rng(0)
    hard = rng.normal(0, 10, 20)  # shared by every method in run r
    finals = {"a": pd.Series(50 + hard), "b": pd.Series(52 + hard + rng.normal(0, 0.3, 20)),
              "c": pd.Series(60 + hard)}
    assert dt._best_if_separated(finals) == "a"  # b's interval overlaps a's unpaired
    finals["d"] = pd.Series(50.05 + hard + rng.normal(0, 2, 20))  # not separable from a
    assert dt._best_if_separated(finals) is None


def test_arena_caps__the_choice_at_the_cap_beside_its_inner_neighbour(tmp_path):
    figures = tmp_path / "figures"
    figures.mkdir()
    board = pd.DataFrame([
        {"problem": "rip", "budget": 5, "learner": "a", "skipped": "", "at_cap": True,
         "factor": 3000.0, "regret": 1234.4},
        {"problem": "rip", "budget": 5, "learner": "b", "skipped": "", "at_cap": False,
         "factor": 1.0, "regret": 10.0},
        {"problem": "rip", "budget": 5, "learner": "c", "skipped": "too big", "at_cap": False,
         "factor": np.nan, "regret": np.nan}])
    board.to_csv(figures / "arena.csv", index=False)
    factors = [0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 90.0, 300.0, 900.0, 3000.0]
    tuning = pd.DataFrame({"learner": "a", "problem": "rip", "budget": 5, "factor": factors,
                           "tuning_regret": np.linspace(200.0, 100.0, 10)})
    tuning.loc[8, "tuning_regret"] = 125.0  # 900, the next factor inwards
    tuning.to_csv(figures / "arena-tuning.csv", index=False)
    table = dt.TABLES["arena-caps"](figures)
    assert "| a | rip | 5 | 3000 | 100.0 | 900 | 125.0 | -20.0% | 1,234 |" in table
    assert "| b |" not in table and "| c |" not in table
    board["at_cap"] = False
    board.to_csv(figures / "arena.csv", index=False)
    assert dt.TABLES["arena-caps"](figures) == "No choice at the cap (2 tuned cells).\n"


@pytest.mark.parametrize("name", ["arena", "arena-long", "arena-k"])
def test_docs_arena_boards__every_tie_and_interval_recomputed_from_the_per_run_file(name):
    # the docs' leaderboard against a paired Holm test done here by hand on its per-run file:
    # Holm over every pair of the cell's entrants (the best is picked after looking)
    from itertools import combinations

    from scipy.stats import wilcoxon

    from oslr import stats

    board = pd.read_csv(DOCS / "figures" / f"{name}.csv")
    runs = pd.read_parquet(DOCS / "figures" / f"{name}-runs.parquet")
    ran = board[board["skipped"].isna()]
    for (problem, budget, k), part in ran.groupby(["problem", "budget", "k"]):
        cell = runs[(runs["problem"] == problem) & (runs["budget"] == budget) & (runs["k"] == k)]
        last = cell[cell["n"] == cell["n"].max()]
        finals = {n: g.sort_values("run")["regret"].to_numpy() for n, g in last.groupby("learner")}
        assert set(finals) == set(part["learner"])
        best = min(finals, key=lambda n: finals[n].mean())
        others = [n for n in finals if n != best]
        tests = [stats.paired(finals[n], finals[best]) for n in others]
        pairs = [(n, best) for n in others] + [
            (a, b) for a, b in combinations(others, 2)]
        p_all = stats.holm([stats.paired(finals[a], finals[b]).p for a, b in pairs])
        p_free = stats.holm([wilcoxon(finals[a] - finals[b]).pvalue for a, b in pairs])
        for n, t, q, q_free in zip(others, tests, p_all, p_free):
            row = part[part["learner"] == n].iloc[0]
            assert row["regret"] == pytest.approx(finals[n].mean(), rel=1e-9)
            assert (row["diff_to_best"], row["diff_low"], row["diff_high"]) == pytest.approx(
                (t.diff, t.ci_low, t.ci_high), rel=1e-9, abs=1e-9)
            assert row["p_holm"] == pytest.approx(q, rel=1e-9, abs=1e-15)
            assert row["p_free_holm"] == pytest.approx(q_free, rel=1e-9, abs=1e-15)
            # a tie unless both tests put it behind the best (the docs' rule for a "win")
            assert bool(row["tied_with_best"]) == (q > 0.05 or q_free > 0.05), (
                problem, budget, n)
            assert row["worse_runs"] == t.above
        assert bool(part[part["learner"] == best].iloc[0]["tied_with_best"])


def test_wll_k__rows_in_k_order_whatever_the_files_order(tmp_path):
    figures = _figures_copy(tmp_path, "wll-k-a9a-tuned.csv", "wll-k-a9a-runs.parquet")
    table = dt.wll_k(figures, "wll-k-a9a-tuned")
    df = pd.read_csv(figures / "wll-k-a9a-tuned.csv")
    df.iloc[::-1].to_csv(figures / "wll-k-a9a-tuned.csv", index=False)  # k descending
    assert dt.wll_k(figures, "wll-k-a9a-tuned") == table
    ks = [int(line.split()[1]) for line in table.splitlines()[2:] if line.startswith("| ")]
    assert ks == sorted(ks) and len(ks) > 1


def test_paired_text__both_p_values_and_which_test_alone_separates():
    from oslr.stats import paired

    r = paired(np.array([3.0, 4.0, 5.0, 6.0, 7.0]), np.zeros(5))
    assert dt._paired_text(r, 0.01, 0.3) == ("+5 (+3, +7), ahead in 5/5, p 0.01, Wilcoxon p 0.3 "
                                             "(t only)")
    assert dt._paired_text(r, 0.2, 0.04).endswith(", p 0.2, Wilcoxon p 0.04 (Wilcoxon only)")
    assert dt._paired_text(r, 0.0004, 0.05).endswith(", p < 0.001, Wilcoxon p 0.05")
    assert dt._paired_text(r, 0.06, 0.5).endswith(", p 0.06, Wilcoxon p 0.5")
    same = paired(np.array([1.0, 2.0]), np.array([1.1, 2.1]))  # every difference rounds to 0
    assert dt._paired_text(same, 1.0, 1.0) == "0 (0, 0): the same to rounding in all 2 runs"
    # the family: Holm over the keys, for the t test and the companion alike
    a, b = np.arange(6.0), np.arange(6.0) + [1, 2, 1, 2, 1, 2]
    cells = dt._paired_cells({"x": (a, b), "y": (b, a)})
    (rx, qx, fx), (ry, qy, fy) = cells["x"], cells["y"]
    assert rx.diff == -1.5 and ry.diff == 1.5 and qx == qy == min(1.0, 2 * rx.p)
    assert fx == fy == min(1.0, 2 * 0.03125)  # exact Wilcoxon, 6 runs all one way: 2 / 2^6


def _ctr_runs_file(path: Path, clicks: dict, accepted: dict, t: int = 50) -> None:
    """A kpm-replay per-run file: (learner, kappa) -> per-run clicks and accepted events at the
    last checkpoint `t` (and zeros at an earlier one, which the tables must ignore)."""
    rows = []
    for study, cell in enumerate(clicks):
        for metric, values in (("sum_reward", clicks[cell]), ("sum_accepted", accepted[cell])):
            for run, v in enumerate(values):
                for tt, vv in ((t // 2, 0.0), (t, float(v))):
                    rows.append({"study": study, "learner": cell[0], "param_kappa": cell[1],
                                 "metric": metric, "run": run, "t": tt, "value": vv})
    pd.DataFrame(rows).to_parquet(path)


def test_kpm_replay_pairs__ctr_per_run_paired_with_both_tests_and_holm(tmp_path):
    from scipy import stats as st

    acc = [100, 200, 100, 400, 100, 250]
    b_clicks = np.array([1, 2, 0, 3, 1, 2], float)
    a_clicks = b_clicks + [1, 1, 2, 1, 1, 3]  # a ahead in every run
    _ctr_runs_file(tmp_path / "kpm-replay-men-runs.parquet",
                   {("linucb", 1.0): a_clicks, ("flinucb-gd", 1.0): b_clicks},
                   {("linucb", 1.0): acc, ("flinucb-gd", 1.0): acc})
    d = 1e4 * (a_clicks - b_clicks) / np.array(acc, float)  # CTR = 10000 clicks / accepted
    half = st.t.ppf(0.975, 5) * d.std(ddof=1) / np.sqrt(6)
    p_t = st.ttest_1samp(d, 0.0).pvalue
    assert st.wilcoxon(d).pvalue == pytest.approx(2 / 64)  # exact: every run ahead
    table = dt.TABLES["kpm-replay-men-pairs"](tmp_path)
    assert table.splitlines()[2] == (
        f"| linucb - flinucb-gd | +{d.mean():,.0f} (+{d.mean() - half:,.0f}, "
        f"+{d.mean() + half:,.0f}), ahead in 6/6, p {p_t:.2g}, Wilcoxon p 0.031 |")
    assert len(table.splitlines()) == 3  # one pair: the header, its rule and one row

    # four cells, six pairs: one separated (after Holm over the six) by both tests
    rng = np.random.default_rng(0)
    base = rng.integers(0, 3, 12).astype(float)
    acc12 = np.full(12, 100.0)
    flip = np.tile([1.0, -1.0], 6)  # differences of mean 0: never separated
    clicks = {("gd", 0.1): base, ("gd", 1.0): base + flip,
              ("sag", 0.1): base + 5 + rng.random(12), ("sag", 1.0): base - flip}
    _ctr_runs_file(tmp_path / "kpm-replay-all-runs.parquet", clicks,
                   dict.fromkeys(clicks, acc12))
    text = dt.TABLES["kpm-replay-all-pairs"](tmp_path)
    ctr = {k: 1e4 * v / 100 for k, v in clicks.items()}
    cells = list(ctr)
    p_raw = [st.ttest_rel(ctr[a], ctr[b]).pvalue for i, a in enumerate(cells)
             for b in cells[i + 1:]]
    lines = text.splitlines()
    assert lines[0].startswith("6 pairs of the 4 cells, each on the same 12 runs: 3 separated "
                               "by the paired t test and 3 by Wilcoxon's")
    assert lines[0].endswith(f"t {min(p_raw):.2g}, Wilcoxon {2 / 4096:.2g}.")
    assert [ln.split(":")[0] for ln in lines[1:]] == [
        "- gd kappa 0.1 - sag kappa 0.1", "- gd kappa 1 - sag kappa 0.1",
        "- sag kappa 0.1 - sag kappa 1"]


def test_foster_rate_pairs_and_exponents__runs_matched_across_t_and_budgets(tmp_path):
    from oslr.report import growth_exponent_interval
    from oslr.stats import holm, pair_tests

    rng = np.random.default_rng(3)
    horizons, n = (100, 1000, 10_000), 8
    scale = {("foster-hedge", 4): 1.0 + 0.1 * rng.random(n), ("ogd-random-subset", 4):
             1.5 + 0.1 * rng.random(n), ("foster-hedge", 8): 2.0 + rng.random(n)}
    power = {("foster-hedge", 4): 0.5, ("ogd-random-subset", 4): 0.9, ("foster-hedge", 8): 0.6,
             ("ogd-random-subset", 8): 0.1}
    scale[("ogd-random-subset", 8)] = scale[("foster-hedge", 8)][::-1] * 30  # crosses over
    rows, csv = [], []
    for study, t in enumerate(horizons):
        for (learner, kq), s in scale.items():
            param = {"param_k_query": float(kq)} if learner == "foster-hedge" else {
                "param_k": float(kq)}
            for run in range(n):
                for tt, v in ((t // 2, -1.0), (t, s[run] * t ** power[(learner, kq)])):
                    rows.append({"study": study, "learner": learner, "metric": "regret",
                                 "run": run, "t": tt, "value": v, "info_d": 8, **param})
    for (learner, kq), s in scale.items():
        csv.append({"learner": learner, "k_query": kq, "d": 8,
                    "exponent": round(power[(learner, kq)], 2)})
    pd.DataFrame(rows).to_parquet(tmp_path / "foster-rate-runs.parquet")
    pd.DataFrame(csv).to_csv(tmp_path / "foster-rate.csv", index=False)

    lines = dt.TABLES["foster-exponents"](tmp_path).splitlines()
    wide = np.array([scale[("foster-hedge", 8)] * t ** 0.6 for t in horizons]).T
    low, high = growth_exponent_interval(np.array(horizons, float), wide)
    assert lines[3] == f"| 8 | 0.60 ({low:.2f}, {high:.2f}) | 0.10 (0.10, 0.10) |"
    assert lines[2].startswith("| 4 | 0.50 (0.50, 0.50) | 0.90 (0.90, 0.90) |")

    table = dt.TABLES["foster-rate-pairs"](tmp_path).splitlines()
    assert [r.split(" | ")[:2] for r in table[2:]] == [
        ["| 4", f"{t:,}"] for t in horizons] + [["| 8", f"{t:,}"] for t in horizons]
    pairs = [pair_tests(scale[("foster-hedge", kq)] * t ** power[("foster-hedge", kq)],
                        scale[("ogd-random-subset", kq)] * t ** power[("ogd-random-subset", kq)])
             for kq in (4, 8) for t in horizons]
    q_t = holm([p["pair"].p for p in pairs])
    q_free = holm([p["p_free"] for p in pairs])
    for row, p, a, b in zip(table[2:], pairs, q_t, q_free):
        r = p["pair"]
        assert f"above in {r.above}/{n}, " in row and row.endswith(
            f"{dt._p(a)}, Wilcoxon {dt._p(b)}" + ("" if (a <= 0.05) == (b <= 0.05) else
                                                  " (t only)" if a <= 0.05 else
                                                  " (Wilcoxon only)") + " |")


def test_kpm_tracking_pairs__every_pair_of_trackers_at_the_last_n(tmp_path):
    from oslr.stats import holm, pair_tests

    rng = np.random.default_rng(1)
    err = {"flinucb-gd": 5e-3 + 1e-4 * rng.random(7), "flinucb-svrg": 4e-4 + 1e-4 * rng.random(7),
           "flinucb-sag": 4e-4 + 1e-4 * rng.random(7)}
    rows = [{"study": i, "learner": name, "metric": "sum_tracking_error", "run": run, "t": t,
             "value": v if t == 2000 else 1.0}
            for i, (name, e) in enumerate(err.items()) for run, v in enumerate(e)
            for t in (1000, 2000)]
    pd.DataFrame(rows).to_parquet(tmp_path / "kpm-tracking-runs.parquet")
    lines = dt.TABLES["kpm-tracking-pairs"](tmp_path).splitlines()
    assert lines[0].startswith("| pair (a - b) | error difference at n = 2,000 (95% interval)")
    names = list(err)
    tests = [pair_tests(err[a], err[b]) for i, a in enumerate(names) for b in names[i + 1:]]
    q, q_free = holm([t["pair"].p for t in tests]), holm([t["p_free"] for t in tests])
    for line, t, a, b, pair in zip(lines[2:], tests, q, q_free, [
            "flinucb-gd - flinucb-svrg", "flinucb-gd - flinucb-sag",
            "flinucb-svrg - flinucb-sag"]):
        r = t["pair"]
        assert line.startswith(f"| {pair} | {r.diff:+.1e} ({r.ci_low:+.1e}, {r.ci_high:+.1e}), "
                               f"above in {r.above}/7, {dt._p(a)}, Wilcoxon {dt._p(b)}")
    assert lines[2].startswith("| flinucb-gd - flinucb-svrg | +4.") and "above in 7/7" in lines[2]


def test_kale_pairs__each_comparison_on_the_same_runs_with_holm_over_the_table(tmp_path):
    from oslr.stats import holm, pair_tests

    rng = np.random.default_rng(5)
    n, rows, want = 6, [], {}
    base = {"rademacher": 100 + rng.random(n), "correlated": 200 + rng.random(n)}
    for design in base:
        full = base[design]
        rows += [{"study": 0, "learner": "ogd-full", "info_design": design, "param_k0": np.nan,
                  "param_k": 100.0, "run": r, "value": v} for r, v in enumerate(full)]
        for k0, shift in ((10.0, 50.0), (50.0, -3.0)):
            mine = full + shift + rng.normal(0, 1, n)
            rs = full + 20 + rng.normal(0, 1, n)
            rows += [{"study": 1, "learner": "dantzig-poslr", "info_design": design,
                      "param_k0": k0, "param_k": np.nan, "run": r, "value": v}
                     for r, v in enumerate(mine)]
            rows += [{"study": 2, "learner": "ogd-random-subset", "info_design": design,
                      "param_k0": np.nan, "param_k": k0 + 5, "run": r, "value": v}
                     for r, v in enumerate(rs)]
            want[(design, int(k0))] = (pair_tests(mine, rs), pair_tests(mine, full))
    frame = pd.DataFrame(rows).assign(metric="regret_wstar", t=1000, info_t0=1000, info_k=5)
    # the comparison study with the LP never solved (t0 > T) stays out; t0 = T is solved
    never = frame[frame["study"] == 1].assign(study=3, info_t0=1001, value=-1e6)
    pd.concat([frame, never]).to_parquet(tmp_path / "kale-dantzig-runs.parquet")
    lines = dt.TABLES["kale-dantzig-pairs"](tmp_path).splitlines()[2:]
    tests = [t for pair in want.values() for t in pair]
    q, q_free = holm([t["pair"].p for t in tests]), holm([t["p_free"] for t in tests])
    for i, ((design, k0), (rs, full)) in enumerate(want.items()):
        cells = lines[i].split(" | ")
        assert cells[0] == "| " + ("Rademacher" if design == "rademacher" else "correlated")
        assert cells[1] == str(k0)
        for cell, t, a, b in ((cells[2], rs, q[2 * i], q_free[2 * i]),
                              (cells[3], full, q[2 * i + 1], q_free[2 * i + 1])):
            r = t["pair"]
            assert cell.startswith(f"{dt._signed(r.diff)} ({dt._signed(r.ci_low)}, "
                                   f"{dt._signed(r.ci_high)}), above in {r.above}/{n}, "
                                   f"{dt._p(a)}, Wilcoxon {dt._p(b)}")

    greedy = []
    for d, design in ((20, "correlated"), (100, "rademacher"), (20, "rademacher")):
        for t in (3000, 1000):
            og, rs = 5 + rng.random(n), 5 + rng.random(n) + (d == 20)
            for learner, values in (("online-greedy", og), ("ogd-random-subset", rs)):
                greedy += [{"study": len(greedy), "learner": learner, "info_d": d,
                            "info_design": design, "metric": "regret", "run": r, "t": t,
                            "value": v} for r, v in enumerate(values)]
    pd.DataFrame(greedy).to_parquet(tmp_path / "kale-greedy-runs.parquet")
    table = dt.TABLES["kale-greedy-pairs"](tmp_path).splitlines()[2:]
    # Rademacher settings first, the larger d first, T ascending; the setting named once
    assert [ln.split(" | ")[:2] for ln in table] == [
        ["| d=100, Rademacher", "1,000"], ["|", "3,000"], ["| d=20, Rademacher", "1,000"],
        ["|", "3,000"], ["| d=20, correlated", "1,000"], ["|", "3,000"]]
    assert all("above in 0/6" in ln for ln in table[2:4])  # d = 20: greedy below in every run


def test_ito_table1_pairs__every_pair_per_setting_in_the_papers_order(tmp_path):
    from oslr.stats import holm, pair_tests

    rng = np.random.default_rng(7)
    rows, want = [], {}
    for setting in ((10, 2, 4), (10, 5, 8)):
        values = {m: 100 * (i + 1) + rng.random(5) for i, m in enumerate(("kklp", "alg2", "alg3"))}
        for m, v in values.items():
            rows += [dict(zip(("d", "k_prime", "k"), setting), method=m, run=r, regret=x)
                     for r, x in reversed(list(enumerate(v)))]  # the file's order is not used
        for a, b in (("alg2", "alg3"), ("alg2", "kklp"), ("alg3", "kklp")):  # [ITO]'s order
            want[(setting, a, b)] = pair_tests(values[a], values[b])
    pd.DataFrame(rows).to_csv(tmp_path / "ito-table1-finals.csv", index=False)
    lines = dt.TABLES["ito-table1-pairs"](tmp_path).splitlines()[2:]
    q = holm([t["pair"].p for t in want.values()])
    q_free = holm([t["p_free"] for t in want.values()])
    names = {"alg2": "Alg 2", "alg3": "Alg 3", "kklp": "KKLP"}
    for i, ((setting, a, b), t) in enumerate(want.items()):
        r = t["pair"]
        head = f"({setting[0]}, {setting[1]}, {setting[2]})" if i % 3 == 0 else ""
        assert lines[i] == dt._row(head, f"{names[a]} - {names[b]}", (
            f"{r.diff:+,.1f} ({r.ci_low:+,.1f}, {r.ci_high:+,.1f}), above in {r.above}/5, "
            f"{dt._p(q[i])}, Wilcoxon {dt._p(q_free[i])}"
            + ("" if (q[i] <= 0.05) == (q_free[i] <= 0.05) else " (t only)")))
    assert all(ln.endswith("(t only) |") for ln in lines)  # 5 instances: Wilcoxon's p >= 0.0625


def _tiny_arena(figures: Path, finals: dict, extra: dict | None = None) -> None:
    """arena.csv and arena-runs.parquet of one cell (rip, B = 5, k = 2) whose entrants have
    the per-run final regrets `finals` (name -> (R,)); `extra`: name -> board columns."""
    figures.mkdir(exist_ok=True)
    board = pd.DataFrame([{"problem": "rip", "budget": 5, "k": 2, "learner": n, "skipped": "",
                           **(extra or {}).get(n, {})} for n in finals])
    board.to_csv(figures / "arena.csv", index=False)
    rows = [{"problem": "rip", "budget": 5, "k": 2, "learner": n, "seed": 0, "run": r, "n": t,
             "regret": v[r] * t / 100} for n, v in finals.items()
            for r in range(len(v)) for t in (10, 100)]
    pd.DataFrame(rows).to_parquet(figures / "arena-runs.parquet")


def test_arena_against__paired_difference_holm_over_every_pair_of_the_cell(tmp_path):
    from oslr.stats import holm, pair_tests

    rng = np.random.default_rng(0)
    base = rng.normal(100.0, 10.0, 20)
    finals = {"ogd-random-subset": base, "a": base - 5.0 + rng.normal(0, 0.5, 20),
              "b": base + rng.normal(0, 3.0, 20), "c": base + 0.4 + rng.normal(0, 1.0, 20)}
    figures = tmp_path / "figures"
    _tiny_arena(figures, finals)
    table = dt.arena_against(figures)
    cells = {line.split(" | ")[0].strip("| "): line.split(" | ")[1].strip(" |")
             for line in table.splitlines()[2:]}
    assert set(cells) == {"a", "b", "c"}  # the reference itself has no row
    # the family: all 6 pairs of the cell's 4 entrants, Holm over them for each test
    names = list(finals)
    pairs = [(x, y) for i, x in enumerate(names) for y in names[i + 1:]]
    tests = [pair_tests(finals[x], finals[y]) for x, y in pairs]
    q_t = dict(zip(pairs, holm([t["pair"].p for t in tests])))
    q_w = dict(zip(pairs, holm([t["p_free"] for t in tests])))
    for name in ("a", "b", "c"):
        key = ("ogd-random-subset", name)
        d = finals[name] - finals["ogd-random-subset"]
        pr = pair_tests(finals[name], finals["ogd-random-subset"])["pair"]
        text = f"{dt._signed_regret(d.mean())} ({dt._signed_regret(pr.ci_low)}, " \
               f"{dt._signed_regret(pr.ci_high)})"
        t_says, w_says = q_t[key] <= 0.05, q_w[key] <= 0.05
        want = (f"**{text}**" if t_says and w_says else
                text + (" (t)" if t_says else " (W)" if w_says else ""))
        assert cells[name] == want
    assert cells["a"].startswith("**-5.")  # a is below the random subset in every run
    assert "**" not in cells["b"] and "**" not in cells["c"]


def test_arena_against__oriented_whichever_entrant_comes_first(tmp_path):
    # the reference listed last: the pair is (ref, x) in the cell, shown as x - ref
    finals = {"x": np.arange(12.0), "y": np.arange(12.0) + 1.0,
              "ito-dual-averaging": np.arange(12.0) + 3.0 + 0.1 * np.sin(np.arange(12.0))}
    figures = tmp_path / "figures"
    _tiny_arena(figures, finals)
    rows = dt.arena_against(figures, against="ito-dual-averaging").splitlines()[2:]
    x = next(r for r in rows if r.startswith("| x |")).split(" | ")[1].rstrip(" |")
    assert x.startswith("**-3.0 (-3.") and x.endswith(")**")


def test_arena_long__each_row_minus_the_next_below_paired_with_holm_over_the_cell(tmp_path):
    from oslr.stats import holm, pair_tests

    rng = np.random.default_rng(4)
    base = rng.normal(100.0, 10.0, 12)
    # c is listed first but ranks last; a and b differ by noise only
    finals = {"c": base + 30.0 + rng.normal(0, 1.0, 12), "a": base + rng.normal(0, 1.0, 12),
              "b": base + 0.3 + rng.normal(0, 1.0, 12)}
    figures = tmp_path / "figures"
    _tiny_arena(figures, finals)
    for f in ("arena.csv", "arena-runs.parquet"):
        (figures / f).rename(figures / f.replace("arena", "arena-long"))
    board = pd.read_csv(figures / "arena-long.csv").assign(
        regret=[v.mean() for v in finals.values()], ci_low=0.0, ci_high=1.0, horizon=100_000,
        exponent=0.5, theory="sqrt T", tuned="eta=1", run_rounds_per_s=1e5)
    board.to_csv(figures / "arena-long.csv", index=False)
    pd.DataFrame([{"learner": n, "n": t, "mean": v.mean() * t / 1e5} for n, v in finals.items()
                  for t in (100, 1000, 10_000, 100_000)]).to_csv(
        figures / "arena-long-curves.csv", index=False)
    lines = dt.arena_long(figures).splitlines()
    assert lines[0].split(" | ")[4] == "minus the next below (paired)"
    rows = [line.split(" | ") for line in lines[2:]]
    assert [r[0].strip("| ") for r in rows] == ["a", "b", "c"]  # by regret
    names = list(finals)
    pairs = [(x, y) for i, x in enumerate(names) for y in names[i + 1:]]  # every pair: 3
    tests = [pair_tests(finals[x], finals[y]) for x, y in pairs]
    q_t = dict(zip(pairs, holm([t["pair"].p for t in tests])))
    q_w = dict(zip(pairs, holm([t["p_free"] for t in tests])))
    for row, (x, y) in zip(rows, (("a", "b"), ("b", "c"))):
        pr = pair_tests(finals[x], finals[y])["pair"]
        key = (x, y) if (x, y) in q_t else (y, x)
        text = (f"{dt._signed_regret(pr.diff)} ({dt._signed_regret(pr.ci_low)}, "
                f"{dt._signed_regret(pr.ci_high)})")
        both = q_t[key] <= 0.05 and q_w[key] <= 0.05
        one = " (t)" if q_t[key] <= 0.05 else " (W)" if q_w[key] <= 0.05 else ""
        assert row[4] == (f"**{text}**" if both else text + one)
    assert rows[1][4].startswith("**-") and "**" not in rows[0][4]  # b - c separated, a - b not
    assert rows[2][4] == "-"  # the last has none below


def test_arena_steps__each_entrant_minus_the_next_below_with_its_rank(tmp_path):
    from oslr.stats import holm, pair_tests

    rng = np.random.default_rng(6)
    base = rng.normal(100.0, 10.0, 20)
    # arena order b, c, a, d; by mean a (1), b (2), c (3), d (4); a and b differ by noise
    finals = {"b": base + 0.2 + rng.normal(0, 1.0, 20), "c": base + 10 + rng.normal(0, 1, 20),
              "a": base + rng.normal(0, 1.0, 20), "d": base + 50 + rng.normal(0, 1, 20)}
    figures = tmp_path / "figures"
    _tiny_arena(figures, finals)
    board = pd.read_csv(figures / "arena.csv")
    board.assign(regret=[v.mean() for v in finals.values()]).to_csv(figures / "arena.csv",
                                                                     index=False)
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ")[1].strip(" |")
            for line in dt.arena_steps(figures).splitlines()[2:]}
    names = list(finals)
    pairs = [(x, y) for i, x in enumerate(names) for y in names[i + 1:]]  # every pair: 6
    tests = [pair_tests(finals[x], finals[y]) for x, y in pairs]
    q_t = dict(zip(pairs, holm([t["pair"].p for t in tests])))
    q_w = dict(zip(pairs, holm([t["p_free"] for t in tests])))
    for x, y, rank in (("a", "b", 2), ("b", "c", 3), ("c", "d", 4)):
        pr = pair_tests(finals[x], finals[y])["pair"]
        key = (x, y) if (x, y) in q_t else (y, x)
        text = (f"{dt._signed_regret(pr.diff)} ({dt._signed_regret(pr.ci_low)}, "
                f"{dt._signed_regret(pr.ci_high)})")
        one = " (t)" if q_t[key] <= 0.05 else " (W)" if q_w[key] <= 0.05 else ""
        both = q_t[key] <= 0.05 and q_w[key] <= 0.05
        assert rows[x] == f"vs ({rank}): " + (f"**{text}**" if both else text + one)
    assert rows["d"] == "-"
    assert "**" not in rows["a"] and rows["b"].startswith("vs (3): **-")


def test_arena_stability__sets_that_agree_and_the_largest_ratio(tmp_path):
    figures = tmp_path / "figures"
    figures.mkdir()
    board = pd.DataFrame([
        {"problem": p, "budget": 5, "k": 2, "learner": n, "skipped": s, "factor": f,
         "factor_set_a": fa, "factor_set_b": fb}
        for p, n, s, f, fa, fb in [
            ("rip", "a", "", 1.0, 1.0, 1.0),        # stable
            ("agnostic", "a", "", 3.0, 3.0, 0.3),   # the sets disagree (x10)
            ("rip", "b", "", 1.0, 3.0, 3.0),        # the sets agree, not with the choice
            ("agnostic", "b", "", 10.0, np.nan, np.nan),  # one tuning run: not counted
            ("correlated", "b", "", 10.0, np.nan, 10.0),  # half a pair: not counted either
            ("drifting", "b", "skipped", np.nan, np.nan, np.nan)]])
    board.to_csv(figures / "arena.csv", index=False)
    board.iloc[:1].assign(problem="long").to_csv(figures / "arena-long.csv", index=False)
    lines = dt.arena_stability(figures).splitlines()
    assert lines[:2] == ["| learner | cells | A and B choose the same factor | both choose the "
                         "factor used | largest A / B ratio |", "|---|---|---|---|---|"]
    assert lines[2] == "| a | 3 | 2/3 | 2/3 | 10 |"  # arena-long's cell counts too
    assert lines[3] == "| b | 1 | 1/1 | 0/1 | 1 |"
    assert lines[4] == "| all | 4 | 3/4 | 2/4 | 10 |"


def test_arena_stability__every_choice_stable_is_a_largest_ratio_of_1(tmp_path):
    figures = tmp_path / "figures"
    figures.mkdir()
    pd.DataFrame([{"problem": "rip", "budget": 5, "k": 2, "learner": "a", "skipped": "",
                   "factor": 3.0, "factor_set_a": 3.0, "factor_set_b": 3.0}]).to_csv(
        figures / "arena.csv", index=False)
    assert dt.arena_stability(figures).splitlines()[-1] == "| all | 1 | 1/1 | 1/1 | 1 |"


@pytest.mark.parametrize("q_t, q_w, want", [
    (0.05, 0.05, "**+2.0 (+1.0, +3.0)**"),   # both tests at alpha exactly: bold
    (0.05, 0.0501, "+2.0 (+1.0, +3.0) (t)"),
    (0.0501, 0.05, "+2.0 (+1.0, +3.0) (W)"),
    (0.2, 0.3, "+2.0 (+1.0, +3.0)")])
def test_arena_against__the_marks_of_each_test_at_the_5_percent_edge(tmp_path, monkeypatch, q_t,
                                                                    q_w, want):
    from oslr.stats import Paired

    finals = {"x": np.arange(6.0) + 2.0, "ogd-random-subset": np.arange(6.0)}
    figures = tmp_path / "figures"
    _tiny_arena(figures, finals)
    pr = Paired(n=6, diff=2.0, sem=0.1, ci_low=1.0, ci_high=3.0, p=0.0, below=0, above=6)
    monkeypatch.setattr(dt, "_paired_cells", lambda pairs: {k: (pr, q_t, q_w) for k in pairs})
    row = dt.arena_against(figures).splitlines()[2]
    assert row == f"| x | {want} |"


def test_arena_against__a_cell_where_the_reference_did_not_run_shows_a_dash(tmp_path):
    figures = tmp_path / "figures"
    _tiny_arena(figures, {"x": np.arange(6.0), "y": np.arange(6.0) + 1.0})
    assert dt.arena_against(figures).splitlines()[2:] == ["| x | - |", "| y | - |"]
