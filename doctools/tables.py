"""Tables in the docs pages generated from the files under docs/figures.

A block in a docs page

    <!-- oslr-table NAME -->
    | ... |
    <!-- /oslr-table -->

is rewritten by `render` with `TABLES[NAME](figures)`, a function of the figures folder that
returns the Markdown table. A value in the prose, `<!-- oslr-value KIND FILE -->...<!--
/oslr-value -->`, is rewritten with `VALUES[KIND](figures, FILE)`: a file's stamp in
figures/STAMPS.json (the commit, date and wall time of the step that made it). `oslr reproduce
--tables` rewrites every block and value of docs/*.md from docs/figures (after a reproduce into
docs/figures, so that the pages follow the new files), and a test checks that every block and
value in the docs equals what its files say. Other numbers in the prose are written by hand
(tests/experiments/test_doc_prose.py recomputes them).
"""

from __future__ import annotations

import functools
import json
import math
import re
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from oslr import atomic

_BLOCK = re.compile(r"(<!-- oslr-table (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /oslr-table -->)",
                    re.S)
_VALUE = re.compile(r"(<!-- oslr-value (?P<kind>[\w-]+) (?P<file>[\w.-]+) -->)(?P<body>[^<]*)"
                    r"(<!-- /oslr-value -->)")


#: Prose values: KIND -> f(the file's stamp in STAMPS.json) -> text.
VALUES: dict[str, Callable[[dict], str]] = {
    "seconds": lambda stamp: f"{stamp['seconds']:,.0f} s",
    "date": lambda stamp: stamp["date"][:10],
    "commit": lambda stamp: stamp["commit"][:7],
    "stamp": lambda stamp: (f"commit {stamp['commit'][:7]}, {stamp['date'][:10]}, "
                            f"{stamp['seconds']:,.0f} s"),
}


def _integer(x: float) -> str:
    """A regret rounded to an integer with thousands separators (-4,849)."""
    return f"{int(round(float(x))):,}"


def _ci(r: pd.Series, col: str, fmt: Callable[[float], str] = _integer, low: str = "ci_low",
        high: str = "ci_high") -> str:
    """`r[col]` with its 95% interval, "mean (low, high)", each number through `fmt`."""
    return f"{fmt(r[col])} ({fmt(r[low])}, {fmt(r[high])})"


def _best_if_separated(finals: dict[str, "pd.Series"]) -> str | None:
    """The entry with the lowest mean of `finals` (name -> per-run values over the same runs)
    when the paired t test and the sign-flip test, each with Holm's correction over
    every pair (`oslr.stats.compare`, family-wise 5%), both put it below every other, else None
    (nothing is bold)."""
    from oslr.stats import compare

    table = compare({n: v.to_numpy() for n, v in finals.items()}).set_index("name")
    best = table.index[table["verdict"] == "reference"][0]
    others = table.drop(index=best)
    return (best if ((others["verdict"] == "worse") & (others["free_verdict"] == "worse")).all()
            else None)


def _final_runs(figures: Path, step: str, *metrics: str) -> pd.DataFrame:
    """Every run's value of `metrics` at its study's last checkpoint, from STEP-runs.parquet
    (`oslr reproduce`'s per-run file: study, learner, params, run, value, param_*, info_*)."""
    runs = pd.read_parquet(figures / f"{step}-runs.parquet")
    runs = runs[runs["metric"].isin(metrics)]
    return runs[runs["t"] == runs.groupby("study")["t"].transform("max")]


def _paired_signs(pairs: dict, alpha: float = 0.05) -> dict:
    """key -> -1 where a is below b on the same runs, +1 where above, 0 where the paired t test
    and the sign-flip test (each with Holm over every key of `pairs`, family-wise
    `alpha`) do not both separate them, for `pairs` key -> (a, b) per-run value arrays: a "win"
    (bold) needs the distribution-free test as well as the t test."""
    return {k: _both_sign(r, q, q_free, alpha)
            for k, (r, q, q_free, _) in _paired_cells(pairs).items()}


def _both_sign(r, q: float, q_free: float, alpha: float = 0.05) -> int:
    """The sign of a paired difference where both its Holm-adjusted p-values (t, sign-flip) are
    at most `alpha`, else 0."""
    return int(np.sign(r.diff)) if q <= alpha and q_free <= alpha else 0


def _runs_of(frame: pd.DataFrame, **match) -> "np.ndarray":
    """The values of the rows matching `match` (column -> value; a float matches to a relative
    1e-6), ordered by run."""
    mask = pd.Series(True, index=frame.index)
    for col, value in match.items():
        if isinstance(value, (float, np.floating)):  # params may be stored in float32
            mask &= np.isclose(frame[col].astype(np.float64), value, rtol=1e-6, atol=0.0)
        else:
            mask &= frame[col] == value
    return frame[mask].sort_values("run")["value"].to_numpy(np.float64)


def _row(*cells) -> str:
    """A Markdown table row; an empty cell prints as "| |"."""
    return ("| " + " | ".join(str(c) for c in cells) + " |").replace("|  |", "| |")


def _read_board(figures: Path, name: str) -> pd.DataFrame:
    board = pd.read_csv(figures / f"{name}.csv")
    board["skipped"] = board["skipped"].astype("string").fillna("")
    return board


def _problem_budget(r: pd.Series) -> str:
    return f"{r['problem']} {r['budget']}"


def _pivot(board: pd.DataFrame, first: list[str], cell: Callable[[pd.Series], str],
           extra: Callable[[pd.Series], list[str]] = lambda r: [],
           column: Callable[[pd.Series], str] = _problem_budget) -> str:
    """One row per learner (arena order), one column per `column(row)` (default problem x
    budget), in the order the arena ran them."""
    cols = list(dict.fromkeys(column(r) for _, r in board.iterrows()))
    lines = ["| " + " | ".join(first + cols) + " |", "|" + "---|" * (len(first) + len(cols))]
    for learner, part in board.groupby("learner", sort=False):
        by_cell = {column(r): r for _, r in part.iterrows()}
        row = [learner] + extra(part.iloc[0])
        for c in cols:
            r = by_cell.get(c)
            row.append("-" if r is None or r["skipped"] else cell(r))
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def _regret_cell(r: pd.Series) -> str:
    text = f"{_integer(r['regret'])}"
    if r["metric"] != "regret":
        text += " (R2)"
    return (f"**{text}**" if bool(r["tied_with_best"]) else text) + f" ({int(r['rank'])})"


def arena_regret(figures: Path, name: str = "arena") -> str:
    """Final regret (integer) and rank per learner, problem and budget; bold where the board
    ties it with the best (`arena.rank`: a paired Holm test on the shared runs; boards made
    before 948d1e0 tied by overlapping intervals); "-" where the learner did not run."""
    return (_pivot(_read_board(figures, name), ["learner"], _regret_cell) + "\n"
            + _detectable(_arena_families(figures, name), _regret))


def _arena_families(figures: Path, name: str) -> list[dict]:
    """Every cell's family of NAME's board: each pair of the cell's entrants -> their final
    regrets on the cell's runs (`arena.final_regrets`)."""
    from oslr.experiments.arena import final_regrets

    if not (figures / f"{name}-runs.parquet").is_file():
        return []  # a board saved without its per-run file: no family to size
    runs = pd.read_parquet(figures / f"{name}-runs.parquet")
    board = _read_board(figures, name)
    cells = board[["problem", "budget", "k"]].drop_duplicates().itertuples(index=False)
    return [_every_pair(final_regrets(runs[runs["k"] == k], problem, budget))
            for problem, budget, k in cells]


def arena_k(figures: Path) -> str:
    """arena-k: final regret and rank per learner and comparator sparsity k (bold: tied with
    the best of its k), then the fitted exponents."""
    board = _read_board(figures, "arena-k")

    def column(r):
        return f"k = {r['k']} (k/d = {r['k'] / r['d']:.2f})"

    regret = (_pivot(board, ["learner"], _regret_cell, column=column) + "\n"
              + _detectable(_arena_families(figures, "arena-k"), _regret))
    exps = _pivot(board, ["learner"], _exponent_cell(figures, "arena-k"), column=column)
    steps = _pivot(board, ["learner"], _next_below_cell(figures, "arena-k", board),
                   column=column)
    return (regret + "\nGrowth exponents (t >= T/100; 95% bootstrap interval over the runs):\n\n"
            + exps + "\nEach learner minus the next below it in its column, whose rank is "
            "in brackets (paired at T; Holm over the column's pairs; bold: the t test and "
            "the sign-flip test both separate the two, \"(t)\" / \"(S)\": one of them only):\n\n"
            + steps)


def arena_steps(figures: Path, name: str = "arena") -> str:
    """Each entrant minus the next below it in its cell's ranking (`_next_below_cell`), per
    problem and budget: the ranking's steps, each with its paired test."""
    board = _read_board(figures, name)
    return (_pivot(board, ["learner"], _next_below_cell(figures, name, board)) + "\n"
            + _detectable(_arena_families(figures, name), _regret))


def _ranking_steps(board: pd.DataFrame, runs: pd.DataFrame, problem: str, budget: int,
                   k: int) -> tuple[dict, dict]:
    """One arena cell's ranking (by mean regret): learner -> (the next learner below it, that
    one's rank), and the cell's pairs (`_arena_cell_pairs`)."""
    part = board[(board["problem"] == problem) & (board["budget"] == budget)
                 & (board["k"] == k) & (board["skipped"] == "")]
    order = part.sort_values("regret", kind="stable")["learner"].tolist()
    pairs = _arena_cell_pairs(runs[runs["k"] == k], problem, budget)
    return {a: (b, i + 2) for i, (a, b) in enumerate(zip(order, order[1:]))}, pairs


def _next_below_cell(figures: Path, name: str,
                     board: pd.DataFrame) -> Callable[[pd.Series], str]:
    """A `_pivot` cell over `board` (NAME's): the learner's final regret minus that of the next
    learner below it in its cell (`_ranking_steps`), paired on the cell's runs
    (`_arena_pair_text`: Holm over every pair of the cell), after that learner's rank:
    "vs (3): **-6.1 (-6.6, -5.6)**"; "-" for the last of a cell."""
    runs = pd.read_parquet(figures / f"{name}-runs.parquet")
    cells: dict = {}

    def cell(r: pd.Series) -> str:
        key = (r["problem"], r["budget"], r["k"])
        if key not in cells:
            cells[key] = _ranking_steps(board, runs, *key)
        below, pairs = cells[key]
        if r["learner"] not in below:
            return "-"
        name, rank = below[r["learner"]]
        return f"vs ({rank}): {_arena_pair_text(pairs, r['learner'], name)}"

    return cell


def _exponent_cell(figures: Path, name: str) -> Callable[[pd.Series], str]:
    """A board row's fitted growth exponent with its 95% bootstrap interval over the runs
    (`oslr.report.growth_exponent_interval` on NAME-runs.parquet, t >= T/100 as the board's
    exponent), "0.49 (0.48, 0.50)"."""
    from oslr.report import growth_exponent_interval

    runs = pd.read_parquet(figures / f"{name}-runs.parquet")
    cells = {key: g.pivot(index="run", columns="n", values="regret")
             for key, g in runs.groupby(["problem", "budget", "k", "learner"])}

    def cell(r: pd.Series) -> str:
        wide = cells[(r["problem"], r["budget"], r["k"], r["learner"])]
        low, high = growth_exponent_interval(wide.columns.to_numpy(), wide.to_numpy(),
                                             t_min=r["horizon"] / 100)
        return f"{r['exponent']:.2f} ({low:.2f}, {high:.2f})"

    return cell


def arena_exponents(figures: Path, name: str = "arena") -> str:
    """Fitted growth exponent per learner, problem and budget (with its 95% bootstrap interval
    over the runs), beside the theorem's rate."""
    return _pivot(_read_board(figures, name), ["learner", "theory"],
                  _exponent_cell(figures, name), lambda r: [str(r["theory"])])


def _signed_regret(x: float) -> str:
    """A signed regret difference, one decimal below 1,000 (+2.4, -145.0, +1,376)."""
    return ("+" if x > 0 else "") + _regret(x)


def arena_against(figures: Path, name: str = "arena", against: str = "ogd-random-subset") -> str:
    """Each entrant minus `against`, paired on a cell's shared runs: the mean difference of the
    final regrets with its (unadjusted) 95% t interval, per problem and budget. The family,
    fixed before looking: every pair of the cell's entrants (36 with nine), Holm over it for the
    paired t and for the sign-flip test alike (the family of the board's ties with the
    best, so any pair shown here can be claimed). Bold: both tests separate the two (negative:
    lower regret than `against`); "(t)" / "(S)": only the t / only the sign-flip test does;
    "(≈)": neither, and within 10% by TOST; plain: neither (indistinguishable). Below it, the
    smallest effect each cell's family detects (`_detectable`)."""
    board = _read_board(figures, name)
    runs = pd.read_parquet(figures / f"{name}-runs.parquet")
    cells: dict = {}

    def cell(r):
        key = (r["problem"], r["budget"], r["k"])
        if key not in cells:
            cells[key] = _arena_cell_pairs(runs[runs["k"] == r["k"]], r["problem"], r["budget"])
        return _arena_pair_text(cells[key], r["learner"], against)

    return (_pivot(board[board["learner"] != against], ["learner"], cell) + "\n"
            + _detectable(_arena_families(figures, name), _regret))


def _arena_cell_pairs(runs: pd.DataFrame, problem: str, budget: int) -> dict:
    """(a, b) -> (Paired a - b, Holm t p, Holm sign-flip p) for every pair of one arena cell's
    entrants (the family: all of the cell's pairs, fixed before looking)."""
    from oslr.experiments.arena import final_regrets

    finals = final_regrets(runs, problem, budget)
    return _paired_cells(_every_pair(finals, name=lambda a, b: (a, b)))


def _arena_pair_text(found: dict, a: str, b: str) -> str:
    """a - b from `_arena_cell_pairs`: "+2.4 (+1.2, +3.5)", bold where both tests separate
    them, "(t)" / "(S)" where only one does, "(≈)" where neither does and TOST puts them within
    `EQUIVALENCE` of the larger mean (Holm over the cell); "-" where either did not run."""
    if (a, b) in found:  # the pair as it ran, or the other way round
        pr, q_t, q_w, (_, q_eq) = found[(a, b)]
        diff, low, high = pr.diff, pr.ci_low, pr.ci_high
    elif (b, a) in found:
        pr, q_t, q_w, (_, q_eq) = found[(b, a)]
        diff, low, high = -pr.diff, -pr.ci_high, -pr.ci_low
    else:
        return "-"
    text = f"{_signed_regret(diff)} ({_signed_regret(low)}, {_signed_regret(high)})"
    if _both_sign(pr, q_t, q_w):
        return f"**{text}**"
    return text + (" (t)" if q_t <= 0.05 else " (S)" if q_w <= 0.05 else
                   " (≈)" if q_eq <= 0.05 else "")


def arena_stability(figures: Path, names: Sequence[str] = ("arena", "arena-k",
                                                            "arena-long")) -> str:
    """How stable each entrant's tuning choice is: over the cells of the boards `names`, in how
    many the two disjoint sets of tuning runs (`arena.run_entrant`: the first half, A, and the
    rest, B) would each have chosen the same factor, in how many both chose the factor the
    whole tuning set chose, and the largest ratio between A's and B's factors."""
    from oslr.experiments.arena import tuning_stability

    boards = [_read_board(figures, n) for n in names if (figures / f"{n}.csv").exists()]
    board = tuning_stability(pd.concat(boards, ignore_index=True))
    lines = ["| learner | cells | A and B choose the same factor | both choose the factor used "
             "| largest A / B ratio |", "|---|---|---|---|---|"]
    total, agree, both_all, ratio_all = 0, 0, 0, 1.0
    for learner, part in board.groupby("learner", sort=False):
        a, b = part["factor_set_a"].to_numpy(float), part["factor_set_b"].to_numpy(float)
        same, both = part["sets_agree"].to_numpy(), part["sets_chose_it"].to_numpy()
        ratio = np.max(np.maximum(a / b, b / a))
        lines.append(_row(learner, len(part), f"{same.sum()}/{len(part)}",
                          f"{both.sum()}/{len(part)}", f"{ratio:.3g}"))
        total, agree, both_all = total + len(part), agree + same.sum(), both_all + both.sum()
        ratio_all = max(ratio_all, ratio)
    lines.append(_row("all", total, f"{agree}/{total}", f"{both_all}/{total}", f"{ratio_all:.3g}"))
    return "\n".join(lines) + "\n"


def arena_skipped(figures: Path, name: str = "arena") -> str:
    """The entrants that did not run, with the reason."""
    board = _read_board(figures, name)
    gone = board[board["skipped"] != ""]
    lines = ["| problem | budget | learner | why not run |", "|---|---|---|---|"]
    lines += [f"| {r['problem']} | {r['budget']} | {r['learner']} | {r['skipped']} |"
              for _, r in gone.iterrows()]
    return "\n".join(lines) + "\n"


def arena_caps(figures: Path, name: str = "arena") -> str:
    """The tuning choices at the cap of the extended grid: the learner, cell, chosen factor,
    its mean tuning regret beside that of the next factor inwards (how steep the tuning curve
    still is at the cap), and the evaluation regret; "none" when every choice is interior."""
    board = _read_board(figures, name)
    tuning = pd.read_csv(figures / f"{name}-tuning.csv")
    ran = board[board["skipped"] == ""]
    capped = ran[ran["at_cap"].astype(bool)]
    if capped.empty:
        return f"No choice at the cap ({len(ran)} tuned cells).\n"
    lines = ["| learner | problem | budget | factor chosen | tuning regret there | next factor "
             "inwards | tuning regret there | change | evaluation regret |",
             "|---|---|---|---|---|---|---|---|---|"]
    for _, r in capped.iterrows():
        t = tuning[(tuning["learner"] == r["learner"]) & (tuning["problem"] == r["problem"])
                   & (tuning["budget"] == r["budget"])].sort_values("factor")
        factors = t["factor"].to_numpy()
        i = int(np.argmin(np.abs(np.log(factors / r["factor"]))))
        j = i - 1 if i == len(factors) - 1 else i + 1  # the neighbour inside the grid
        at, inner = t["tuning_regret"].iloc[i], t["tuning_regret"].iloc[j]
        lines.append(_row(r["learner"], r["problem"], r["budget"], f"{factors[i]:g}",
                          _regret(at), f"{factors[j]:g}", _regret(inner),
                          f"{(at - inner) / abs(inner):+.1%}", _regret(r["regret"])))
    return "\n".join(lines) + "\n"


def arena_long(figures: Path) -> str:
    """arena-long: mean regret at T/100, T/10 and T (95% interval at T), the paired difference
    at T to the next learner down the ranking (`_arena_pair_text`: Holm over all the cell's
    pairs, bold where both tests separate them), exponents over [T/100, T] and [T/1000, T], the
    theorem's rate, the tuned constant and run-rounds/s."""
    board = _read_board(figures, "arena-long")
    curves = pd.read_csv(figures / "arena-long-curves.csv")
    horizon = int(board["horizon"].max())
    marks = [horizon // 100, horizon // 10]
    lines = [f"| learner | regret at {marks[0]:,} | at {marks[1]:,} | at {horizon:,} (95% interval)"
             " | minus the next below (paired) "
             f"| exponent t >= {horizon // 1000:,} | t >= {horizon // 100:,} | theory | tuned "
             "| run-rounds/s |", "|" + "---|" * 10]
    from oslr.report import growth_exponent

    ran = board[board["skipped"] == ""].sort_values("regret", kind="stable")
    (cell,) = ran[["problem", "budget", "k"]].drop_duplicates().itertuples(index=False)
    below, pairs = _ranking_steps(board, pd.read_parquet(figures / "arena-long-runs.parquet"),
                                  *cell)
    for _, r in ran.iterrows():
        c = curves[curves["learner"] == r["learner"]].sort_values("n")
        n, mean = c["n"].to_numpy(), c["mean"].to_numpy()
        at = [_integer(np.interp(m, n, mean)) for m in marks]
        wide = growth_exponent(n, mean, t_min=horizon / 1000)
        step = (_arena_pair_text(pairs, r["learner"], below[r["learner"]][0])
                if r["learner"] in below else "-")
        lines.append(
            f"| {r['learner']} | {at[0]} | {at[1]} | {_ci(r, 'regret')} | {step} | {wide:.2f} | "
            f"{r['exponent']:.2f} | {r['theory']} | {r['tuned']} | {r['run_rounds_per_s']:.2g} |")
    return "\n".join(lines) + "\n"


def kpm_runtime(figures: Path) -> str:
    """kpm-runtime: milliseconds per round against d, one column per learner (3 decimals), and
    the log-log slope of each learner from d = 100 on."""
    df = pd.read_csv(figures / "kpm-runtime.csv")
    learners = list(dict.fromkeys(df["learner"]))
    lines = ["| d | " + " | ".join(learners) + " |", "|" + "---|" * (len(learners) + 1)]
    for d, part in df.groupby("d", sort=True):
        ms = dict(zip(part["learner"], part["ms_per_round"]))
        lines.append(f"| {d} | " + " | ".join(f"{ms[n]:.3f}" for n in learners) + " |")
    slopes = df.groupby("learner", sort=False)["slope"].first()
    lines.append("| slope (d >= 100) | " + " | ".join(f"{slopes[n]:.2f}" for n in learners)
                 + " |")
    return "\n".join(lines) + "\n"


_WLL_LEARNERS = ("ftpsl", "ftpl-random-subset", "ftpl-oracle-subset")


def _signed(x: float) -> str:
    """A signed integer with thousands separators (+1,970; -38)."""
    return ("+" if round(float(x)) > 0 else "") + _integer(x)


def _paired_cells(pairs: dict) -> dict:
    """key -> (Paired, Holm-adjusted t p, Holm-adjusted sign-flip p, (margin, Holm-adjusted
    TOST p)) for `pairs` key -> (a, b) per-run arrays of the same runs (`oslr.stats.paired`,
    its distribution-free companion the sign-flip test, and the equivalence test within
    `_margin`, each with Holm over every key: the family)."""
    return _holm_cells(_pair_tests(pairs))


#: the docs' equivalence margin, a share of the larger of a pair's two mean magnitudes: a pair
#: is "within 10%" where TOST puts its mean difference inside +-EQUIVALENCE of that
EQUIVALENCE = 0.1


def _margin(a, b) -> float:
    return EQUIVALENCE * max(abs(float(np.mean(a))), abs(float(np.mean(b))))


def _pair_tests(pairs: dict) -> dict:
    """key -> `oslr.stats.pair_tests` of key -> (a, b), with the margin `_margin(a, b)` (also
    under "margin")."""
    from oslr.stats import pair_tests

    margins = {k: _margin(a, b) for k, (a, b) in pairs.items()}
    return {k: {**pair_tests(a, b, margin=margins[k]), "margin": margins[k]}
            for k, (a, b) in pairs.items()}


def _holm_cells(tests: dict) -> dict:
    """key -> (Paired, Holm-adjusted t p, Holm-adjusted sign-flip p, (margin, Holm-adjusted
    TOST p)) for `tests` key -> `_pair_tests` result, Holm over every key (the family)."""
    from oslr.stats import holm

    t_holm = holm([v["pair"].p for v in tests.values()])
    free_holm = holm([v["p_free"] for v in tests.values()])
    equiv_holm = holm([v["p_equiv"] for v in tests.values()])
    return {k: (v["pair"], q, q_free, (v["margin"], q_equiv))
            for (k, v), q, q_free, q_equiv in zip(tests.items(), t_holm, free_holm, equiv_holm)}


def _two_digits(x: float) -> str:
    """A magnitude to two significant digits, thousands separated (1,200; 3.5; 0.035)."""
    if x == 0 or not np.isfinite(x):
        return f"{x:g}"
    digits = 1 - int(np.floor(np.log10(abs(x))))
    return f"{round(x, digits):,.{max(digits, 0)}f}"


def _range(values: Sequence[float], fmt: Callable[[float], str]) -> str:
    low, high = fmt(min(values)), fmt(max(values))
    return low if low == high else f"{low}-{high}"


def _detectable(families: Sequence[dict], fmt: Callable[[float], str] = _two_digits) -> str:
    """The sentence under a table of paired comparisons: the smallest mean difference its
    paired t test finds 80% of the time (`oslr.stats.detectable_effect`, at 5% over each
    family), in sd of a pair's per-run differences and in the table's units, for `families`
    (each a dict key -> (a, b) per-run arrays of the same runs: one Holm family; the pairs
    constant up to rounding are outside it, as in `compare`); and where the sign-flip test
    cannot reach the family's level at all (its smallest p is 2^(1 - n)), that no pair can be
    separated by both tests."""
    from oslr.stats import constant, detectable_effect

    effects, units, runs, cannot = [], [], set(), False
    for family in families:
        live = [(np.asarray(a, np.float64), np.asarray(b, np.float64))
                for a, b in family.values() if constant(a, b) is None]
        for a, b in live:
            n = len(a)
            effect = detectable_effect(n, len(live))
            effects.append(effect)
            units.append(effect * float(np.std(a - b, ddof=1)))
            runs.add(n)
            cannot |= 2.0 ** (1 - n) > 0.05 / len(live)
    if not effects:
        return ""  # every pair constant up to rounding: nothing for a test to detect
    sizes = sorted({len(f) for f in families})
    text = (f"Detectable: a mean difference of {_range(effects, '{:.2f}'.format)} sd of a pair's "
            f"per-run differences ({_range(units, fmt)} in this table's units) is found 80% of "
            f"the time (paired t at 5% / m, m = {_range(sizes, str)} "
            f"{'pair' if sizes == [1] else 'pairs'} in a family, "
            f"{_range(sorted(runs), str)} runs; Holm's correction rejects at least as often); "
            "a smaller one can go unseen.")
    if cannot:
        n = min(runs)
        text += (f" At {n} runs the sign-flip test's smallest p, {2.0 ** (1 - n):.2g}, is above "
                 "5% / m: no pair there can be separated by both tests.")
    return text + "\n"


def _every_pair(values: dict, name: Callable = lambda a, b: f"{a} - {b}") -> dict:
    """name(a, b) -> (values[a], values[b]) for every pair a before b of `values`' entries, in
    their order."""
    keys = list(values)
    return {name(a, b): (values[a], values[b]) for i, a in enumerate(keys) for b in keys[i + 1:]}


def _p(p: float) -> str:
    return "p < 0.001" if p < 1e-3 else f"p {p:.2g}"


def _paired_text(r, p_holm: float, p_free_holm: float, equiv: tuple | None = None,
                 alpha: float = 0.05, above: str = "ahead",
                 fmt: Callable[[float], str] | None = None) -> str:
    """"+1,970 (1,900, 2,040), ahead in 97/100, p 0.003, sign-flip p 0.004" for a paired a - b
    (the interval unadjusted, both p after Holm; `above` names the runs where a > b: "ahead"
    for a reward, "above" for a regret), with "t only" or "sign-flip only" where one of the two
    separates at `alpha` and the other does not, and where neither does, what the equivalence
    test says (`equiv`: the margin and its Holm-adjusted TOST p). The numbers are signed
    integers, and "the same to rounding" where every difference rounds to 0, unless `fmt`
    formats them."""
    if fmt is None and max(abs(r.ci_low), abs(r.ci_high)) < 0.5:
        return f"0 (0, 0): the same to rounding in all {r.n} runs"
    fmt = fmt or _signed
    t_says, free_says = p_holm <= alpha, p_free_holm <= alpha
    only = ("" if t_says == free_says else " (t only)" if t_says else " (sign-flip only)")
    if equiv is not None and not (t_says or free_says):
        within = f"+-{fmt(equiv[0]).lstrip('+')} ({EQUIVALENCE:.0%})"
        only = (f"; within {within} by TOST, {_p(equiv[1])}" if equiv[1] <= alpha else
                f"; not shown within {within}, TOST {_p(equiv[1])}")
    return (f"{fmt(r.diff)} ({fmt(r.ci_low)}, {fmt(r.ci_high)}), "
            f"{above} in {r.above}/{r.n}, {_p(p_holm)}, sign-flip {_p(p_free_holm)}{only}")


def _wll_step(stem: str) -> str:
    """The `oslr reproduce` step that wrote docs/figures/STEM.csv (wll-k-a9a-tuned ->
    wll-k-a9a)."""
    return stem.removesuffix("-tuned")


def wll_k(figures: Path, stem: str) -> str:
    """[WLL] Fig. 1a-d: mean cumulative reward (95% interval) of the three learners per k, the
    best k-sparse action's reward on the same streams, and FTPSL minus the random subset paired
    on the same shuffles (Holm over the table's k; bold: the higher of the two where the t and
    the sign-flip test both separate them at family-wise 5%, from the step's per-run file)."""
    df = pd.read_csv(figures / f"{stem}.csv")
    runs = _final_runs(figures, _wll_step(stem), "sum_reward")
    pairs = {k: (_runs_of(runs, learner="ftpsl", param_k=k),
                 _runs_of(runs, learner="ftpl-random-subset", param_k=k))
             for k in sorted(df["k"].unique())}
    tests = _paired_cells(pairs)
    lines = ["| k (k/d) | " + " | ".join(_WLL_LEARNERS) + " | best | ftpsl - random subset, "
             "paired (ahead in, Holm p of the t and sign-flip tests) |",
             "|---|---|---|---|---|---|"]
    for k, part in df.groupby("k", sort=True):
        by = {r["learner"]: r for _, r in part.iterrows()}
        cells = {n: _ci(by[n], "reward_mean", low="reward_ci_low", high="reward_ci_high")
                 if n in by else "-" for n in _WLL_LEARNERS}
        r, q, q_free, equiv = tests[k]
        if _both_sign(r, q, q_free):
            bold = "ftpsl" if r.diff > 0 else "ftpl-random-subset"
            cells[bold] = f"**{cells[bold]}**"
        lines.append(f"| {k} ({part['ratio'].iloc[0]:.2f}) | "
                     + " | ".join(cells[n] for n in _WLL_LEARNERS)
                     + f" | {_integer(part['comparator_reward_mean'].iloc[0])} | "
                     + _paired_text(r, q, q_free, equiv) + " |")
    return "\n".join(lines) + "\n\n" + _detectable([pairs])


def _rate_runs(figures: Path, dataset: str) -> pd.DataFrame:
    """Final per-run rewards of the rate sweep (with the high-eta call, when there is one)."""
    steps = [f"wll-rates-{dataset}", f"wll-rates-hi-{dataset}"]
    return pd.concat([_final_runs(figures, s, "sum_reward") for s in steps
                      if (figures / f"{s}-runs.parquet").is_file()], ignore_index=True)


def wll_rates(figures: Path, dataset: str) -> str:
    """eta x gamma sweep: mean reward per eta_scale, the baselines and FTPSL per c0 (with the
    high-eta second call, when there is one; "–" where a point was not run); below it the best
    FTPSL point against the best with c0 > 0, the oracle subset at its eta and the random
    subset at its best eta, paired on the same shuffles (Holm over the three)."""
    parts = [pd.read_csv(figures / f"wll-rates-{dataset}.csv")]
    if (figures / f"wll-rates-hi-{dataset}.csv").is_file():
        parts.append(pd.read_csv(figures / f"wll-rates-hi-{dataset}.csv"))
    df = pd.concat(parts, ignore_index=True)
    ftpsl = df[df["learner"] == "ftpsl"]
    c0s = sorted(parts[0].loc[parts[0]["learner"] == "ftpsl", "c0"].unique())
    heads = ["ftpl-oracle-subset", "ftpl-random-subset"] + [f"ftpsl c0={c:g}" for c in c0s]
    lines = ["| eta_scale | " + " | ".join(heads) + " |", "|" + "---|" * (len(heads) + 1)]
    for eta in sorted(df["eta_scale"].unique()):
        at = df[df["eta_scale"] == eta]
        cells = []
        for n in heads[:2]:
            v = at.loc[at["learner"] == n, "reward_mean"]
            cells.append(_integer(v.iloc[0]) if len(v) else "–")
        for c in c0s:
            v = ftpsl.loc[(ftpsl["eta_scale"] == eta) & (ftpsl["c0"] == c), "reward_mean"]
            cells.append(_integer(v.iloc[0]) if len(v) else "–")
        lines.append(f"| {eta:g} | " + " | ".join(cells) + " |")

    best = ftpsl.loc[ftpsl["reward_mean"].idxmax()]
    explore = ftpsl[ftpsl["c0"] > 0]
    best_c0 = explore.loc[explore["reward_mean"].idxmax()]
    rand = df[df["learner"] == "ftpl-random-subset"]
    best_rand = rand.loc[rand["reward_mean"].idxmax()]
    runs = _rate_runs(figures, dataset)

    def of(learner, eta, c0=None):
        match = {"learner": learner, "param_eta_scale": eta}
        return _runs_of(runs, **match, **({} if c0 is None else {"param_c0": c0}))

    top = of("ftpsl", best["eta_scale"], best["c0"])
    pairs = {
        f"the best with c0 > 0 (eta_scale {best_c0['eta_scale']:g}, c0 = {best_c0['c0']:g})":
            (top, of("ftpsl", best_c0["eta_scale"], best_c0["c0"])),
        f"the oracle subset at eta_scale {best['eta_scale']:g}":
            (top, of("ftpl-oracle-subset", best["eta_scale"])),
        f"the random subset at its best eta_scale ({best_rand['eta_scale']:g})":
            (top, of("ftpl-random-subset", best_rand["eta_scale"]))}
    said = "; ".join(f"minus {name}: {_paired_text(*cell)}"
                     for name, cell in _paired_cells(pairs).items())
    lines += ["", f"Paired on the same {len(top)} shuffles (Holm over these three): the best "
              f"FTPSL point (eta_scale {best['eta_scale']:g}, c0 = {best['c0']:g}; "
              f"{_integer(best['reward_mean'])}) {said}.", "", _detectable([pairs])]
    return "\n".join(lines)


def wll_redundant(figures: Path) -> str:
    """[WLL] Fig. 1e: mean reward per rho, FTPSL with eq. (1) at the augmented d and, with the
    rates held at their d_orig values, the three learners; below it each column's largest rho
    minus rho = 0, paired on the same shuffles (Holm over the four)."""
    tuned = pd.read_csv(figures / "wll-redundant-a9a-tuned.csv")
    held = pd.read_csv(figures / "wll-redundant-a9a-held.csv")

    def mean(df, learner, rho):
        v = df.loc[(df["learner"] == learner) & (df["rho"] == rho), "reward_mean"]
        return _integer(v.iloc[0]) if len(v) else "–"

    lines = ["| rho (extra) | ftpsl, eq. (1) rates | ftpsl, rates held | random subset, held "
             "| oracle subset, held |", "|---|---|---|---|---|"]
    for rho, part in held.groupby("rho", sort=True):
        lines.append(f"| {rho:g} ({int(part['n_redundant'].iloc[0])}) | "
                     f"{mean(tuned, 'ftpsl', rho)} | {mean(held, 'ftpsl', rho)} | "
                     f"{mean(held, 'ftpl-random-subset', rho)} | "
                     f"{mean(held, 'ftpl-oracle-subset', rho)} |")
    top = float(held["rho"].max())
    pairs = {}
    for label, step, learner in (("ftpsl, eq. (1) rates", "wll-redundant-tuned", "ftpsl"),
                                 ("ftpsl, rates held", "wll-redundant-held", "ftpsl"),
                                 ("random subset, held", "wll-redundant-held",
                                  "ftpl-random-subset"),
                                 ("oracle subset, held", "wll-redundant-held",
                                  "ftpl-oracle-subset")):
        runs = _final_runs(figures, step, "sum_reward")
        extra = runs["info_n_redundant"].fillna(0)
        pairs[label] = (_runs_of(runs[extra == extra.max()], learner=learner),
                        _runs_of(runs[extra == 0], learner=learner))
    said = "; ".join(f"{name} {_paired_text(*cell)}" for name, cell in _paired_cells(pairs).items())
    lines += ["", f"rho = {top:g} minus rho = 0, paired on the same shuffles (Holm over the "
              f"four): {said}.", "", _detectable([pairs])]
    return "\n".join(lines)


def _sci(x: float) -> str:
    """A small positive number in short scientific notation (4.3e-3; 0 stays 0)."""
    if x == 0:
        return "0"
    mant, exp = f"{x:.1e}".split("e")
    return f"{mant}e{int(exp)}"


def _at(df: pd.DataFrame, n: int) -> pd.Series:
    """The row of `df` (one learner's curve) at the checkpoint nearest to n (the checkpoints are
    log-spaced: 910 stands for 1,000 on a 1e5 horizon)."""
    return df.iloc[int(np.argmin(np.abs(df["n"].to_numpy() - n)))]


def kpm_pege(figures: Path) -> str:
    """kpm-pege: regret / sqrt(n) at n = 1e3, 1e4 and 1e5 (95% interval at 1e5) per d, and the
    fpege-gd / pege ratio at 1e5."""
    df = pd.read_csv(figures / "kpm-pege.csv")
    n_max = int(df["n"].max())
    marks = [n_max // 100, n_max // 10, n_max]
    lines = ["| d | pege | fpege-gd | ratio |", "|---|---|---|---|"]
    for d, part in df.groupby("d", sort=True):
        cells, last = [], {}
        for name in ("pege", "fpege-gd"):
            curve = part[part["learner"] == name]
            vals = [_at(curve, m)["regret_over_sqrt_n"] for m in marks]
            end = _at(curve, n_max)
            last[name] = vals[-1]
            cells.append(" / ".join(f"{v:.2f}" for v in vals)
                         + f" ({end['ci_low']:.2f}, {end['ci_high']:.2f})")
        lines.append(f"| {d} | {cells[0]} | {cells[1]} | {last['fpege-gd'] / last['pege']:.2f} |")
    return "\n".join(lines) + "\n"


def kpm_tracking(figures: Path) -> str:
    """kpm-tracking: ||theta_n - theta~_n|| at n = 100, 1,000 and the last n (95% interval)."""
    df = pd.read_csv(figures / "kpm-tracking-all.csv")
    n_max = int(df["n"].max())
    lines = [f"| learner | n = 100 | n = 1,000 | n = {n_max:,} (95% interval) |",
             "|---|---|---|---|"]
    for name, curve in df.groupby("learner", sort=False):
        end = _at(curve, n_max)
        lines.append(f"| {name} | {_sci(_at(curve, 100)['tracking_error'])} | "
                     f"{_sci(_at(curve, 1000)['tracking_error'])} | "
                     f"{_sci(end['tracking_error'])} ({_sci(end['ci_low'])}, "
                     f"{_sci(end['ci_high'])}) |")
    return "\n".join(lines) + "\n"


def kpm_tracking_pairs(figures: Path) -> str:
    """kpm-tracking: every pair of trackers at the last n, ||theta_n - theta~_n|| a - b on the
    same runs (event orders) with its 95% interval, the runs where a is above, and the t and
    sign-flip p after Holm over the pairs (from kpm-tracking-runs.parquet)."""
    fin = _final_runs(figures, "kpm-tracking", "sum_tracking_error")
    err = {name: _runs_of(part) for name, part in fin.groupby("learner", sort=False)}
    family = _every_pair(err)
    pairs = _paired_cells(family)
    lines = [f"| pair (a - b) | error difference at n = {int(fin['t'].max()):,} (95% interval), "
             "runs a above, Holm p |", "|---|---|"]
    for k, (r, q, q_free, equiv) in pairs.items():
        lines.append(_row(k, _paired_text(r, q, q_free, equiv, above="above",
                                          fmt=lambda x: f"{x:+.1e}")))
    return "\n".join(lines) + "\n\n" + _detectable([family], lambda x: f"{x:.1e}")


def _ctr(r: pd.Series) -> str:
    return _ci(r, "ctr_mean", "{:.0f}".format, "ctr_ci_low", "ctr_ci_high")


def kpm_replay_all(figures: Path) -> str:
    """kpm-replay on random/all: CTR score (95% interval) per learner and kappa, the range of the
    mean accepted events over kappa, and the study's wall time."""
    df = pd.read_csv(figures / "kpm-replay-all.csv")
    kappas = sorted(df["kappa"].unique())
    lines = ["| learner | " + " | ".join(f"kappa {k:g}" for k in kappas)
             + " | accepted (mean) | wall |", "|" + "---|" * (len(kappas) + 3)]
    for name, part in df.groupby("learner", sort=False):
        by = {r["kappa"]: r for _, r in part.iterrows()}
        acc = part["accepted_mean"]
        lines.append(f"| {name} | " + " | ".join(_ctr(by[k]) for k in kappas)
                     + f" | {acc.min():.0f}-{acc.max():.0f} | {part['wall_s'].iloc[0]:.0f} s |")
    return "\n".join(lines) + "\n"


def kpm_replay_men(figures: Path) -> str:
    """kpm-replay on random/men: CTR score (95% interval), clicks and accepted events per run and
    the wall time, per learner."""
    df = pd.read_csv(figures / "kpm-replay-men.csv")
    lines = [f"| learner | CTR | clicks per run | accepted per run | wall ({df['runs'].iloc[0]} "
             "runs) |", "|---|---|---|---|---|"]
    for _, r in df.iterrows():
        lines.append(f"| {r['learner']} | {_ctr(r)} | {r['clicks_mean']:.1f} | "
                     f"{r['accepted_mean']:.0f} | {r['wall_s']:.0f} s |")
    return "\n".join(lines) + "\n"


def _ctr_runs(figures: Path, step: str) -> dict[tuple[str, float], np.ndarray]:
    """(learner, kappa) -> every run's CTR score, 10000 clicks / accepted events after the last
    event (as `kpm_replay` computes it), ordered by run, from STEP-runs.parquet."""
    fin = _final_runs(figures, step, "sum_reward", "sum_accepted")
    out = {}
    for (learner, kappa), part in fin.groupby(["learner", "param_kappa"], sort=False):
        clicks = _runs_of(part, metric="sum_reward")
        accepted = _runs_of(part, metric="sum_accepted")
        out[(learner, float(kappa))] = 1e4 * clicks / np.maximum(accepted, 1.0)
    return out


def _ctr_pairs(ctr: dict[tuple[str, float], np.ndarray]) -> dict:
    """"a - b" -> (a's, b's per-run CTR) for every pair of `_ctr_runs`' (learner, kappa) cells,
    in the order they ran (the learner alone names a cell where there is one kappa)."""
    one_kappa = len({k for _, k in ctr}) == 1

    def name(cell):
        return cell[0] if one_kappa else f"{cell[0]} kappa {cell[1]:g}"

    return _every_pair(ctr, lambda a, b: f"{name(a)} - {name(b)}")


def kpm_replay_all_pairs(figures: Path) -> str:
    """kpm-replay on random/all: how many of the pairs of (learner, kappa) cells the paired t
    test and the sign-flip test separate on the same runs (Holm over every pair), the
    separated ones each with its interval, and the smallest p-values before any correction."""

    ctr = _ctr_runs(figures, "kpm-replay-all")
    family = _ctr_pairs(ctr)
    raw = _pair_tests(family)
    pairs = _holm_cells(raw)
    n = next(iter(pairs.values()))[0].n
    t_sep = [k for k, (_, q, _, _) in pairs.items() if q <= 0.05]
    free_sep = [k for k, (_, _, q, _) in pairs.items() if q <= 0.05]
    text = (f"{len(pairs)} pairs of the {len(ctr)} cells, each on the same {n} runs: "
            f"{len(t_sep)} separated by the paired t test and {len(free_sep)} by the "
            f"sign-flip test (Holm over the {len(pairs)} pairs, family-wise 5%); the smallest "
            f"p-values before any correction: t {min(r['pair'].p for r in raw.values()):.2g}, "
            f"sign-flip {min(r['p_free'] for r in raw.values()):.2g}.\n")
    for k in dict.fromkeys(t_sep + free_sep):
        text += f"- {k}: {_paired_text(*pairs[k])}\n"
    return text + "\n" + _detectable([family])


def kpm_replay_men_pairs(figures: Path) -> str:
    """kpm-replay on random/men: every pair of learners, CTR score a - b on the same runs with
    its 95% interval, the runs where a is ahead, and the t and sign-flip p after Holm over the
    pairs."""
    family = _ctr_pairs(_ctr_runs(figures, "kpm-replay-men"))
    pairs = _paired_cells(family)
    lines = ["| pair (a - b) | CTR difference (95% interval), runs a ahead, Holm p |", "|---|---|"]
    for k, cell in pairs.items():
        lines.append(_row(k, _paired_text(*cell)))
    return "\n".join(lines) + "\n\n" + _detectable([family])


_ITO_METHODS = (("alg2", "Alg 2"), ("alg3", "Alg 3 (Gaussian A)"),
                ("alg3_identity", "Alg 3 (A = I)"), ("kklp", "KKLP"), ("kklp_a", "KKLP_A"))


def ito_real(figures: Path) -> str:
    """ito-real: cumulative square loss after the last round per k and method (bold: the lowest,
    where a paired test on the same shuffles with Holm's correction separates it from every
    other method, from ito-real-finals.csv), predicting 0, the comparator."""
    df = pd.read_csv(figures / "ito-real.csv")
    runs = pd.read_csv(figures / "ito-real-finals.csv")
    final = df[df["n"] == df["n"].max()]
    lines = ["| k (k') | " + " | ".join(label for _, label in _ITO_METHODS)
             + " | predicting 0 | comparator |", "|" + "---|" * (len(_ITO_METHODS) + 3)]
    families = []
    for k, part in final.groupby("k", sort=True):
        by = {r["method"]: r for _, r in part.iterrows()}
        mine = runs[runs["k"] == k]
        finals = {m: g.sort_values("run")["loss"] for m, g in mine.groupby("method", sort=False)}
        best = _best_if_separated(finals)
        families.append(_every_pair(finals))
        cells = []
        for method, _ in _ITO_METHODS:
            r = by.get(method)
            text = "-" if r is None else f"{r['loss']:,.1f}"
            cells.append(f"**{text}**" if r is not None and method == best else text)
        first = part.iloc[0]
        kind = "best" if first["metric"] == "regret" else "greedy"
        lines.append(f"| {k} ({int(first['k_prime'])}) | " + " | ".join(cells)
                     + f" | {first['zero_loss']:,.1f} | {first['comparator_loss']:,.1f} "
                     f"({kind} {k}-sparse LS) |")
    return "\n".join(lines) + "\n\n" + _detectable(families)


_ITO_TABLE1 = {"alg2": ("Alg 2", "`ito-dual-averaging`"),
               "alg3": ("Alg 3", "`ito-projection`, OMP"),
               "kklp": ("KKLP", "`online-greedy` on x"),
               "kklp_a": ("KKLP_A", "`online-greedy`, A^T x"),
               "alg1": ("Alg 1", "`ito-block-bandit`; not in the paper's table")}


def ito_table1(figures: Path, stem: str = "ito-table1") -> str:
    """[ITO] Table 1: final regret per setting and method, mean of the first 5 instances and of
    all (95% interval; bold: the lowest, where a paired test on the same instances with Holm's
    correction separates it from every other, from STEM-finals.csv), the paper's value and
    the observations per round. The first setting names each method's learner. `stem`:
    ito-table1 (x on the unit sphere), ito-table1-raw (x ~ N(0, I) as drawn) or
    ito-table1-tuned (raw, every method tuned with the same budget: its choice is shown)."""
    df = pd.read_csv(figures / f"{stem}.csv")
    finals = pd.read_csv(figures / f"{stem}-finals.csv")
    tuned = "tuned" in df  # ito-table1-tuned: what each method's tuning chose
    lines = ["| (d, k', k) | method | 5 inst. | 100 inst. (95% interval) | paper "
             "| observations / round |" + (" tuned (points tried) |" if tuned else ""),
             "|---|---|---|---|---|---|" + ("---|" if tuned else "")]
    families = []
    for i, (key, part) in enumerate(df.groupby(["d", "k_prime", "k"], sort=False)):
        runs = finals[(finals["d"] == key[0]) & (finals["k_prime"] == key[1])
                      & (finals["k"] == key[2])]
        regrets = {m: g.sort_values("run")["regret"] for m, g in runs.groupby("method", sort=False)}
        best = _best_if_separated(regrets)
        families.append(_every_pair(regrets))
        for j, (_, r) in enumerate(part.iterrows()):
            short, learner = _ITO_TABLE1[r["method"]]
            cell = _ci(r, "regret", "{:.1f}".format)
            lines.append(_row(f"({key[0]}, {key[1]}, {key[2]})" if j == 0 else "",
                              f"{short} ({learner})" if i == 0 else short,
                              f"{r['regret_5']:.1f}",
                              f"**{cell}**" if r["method"] == best else cell,
                              "" if pd.isna(r["paper"]) else f"{r['paper']:.1f}",
                              f"{r['queries_per_round']:.1f}",
                              *([f"{r['tuned']} ({int(r['tuning_points'])}"
                                 + (", at the cap)" if r["at_cap"] else ")")] if tuned else [])))
    return "\n".join(lines) + "\n\n" + _detectable(families, _regret)


def ito_table1_pairs(figures: Path, stem: str = "ito-table1") -> str:
    """[ITO] Table 1's paired comparisons: every pair of methods per setting, a - b on the same
    instances (from STEM-finals.csv) with its 95% interval, the instances where a is above, and
    the t and sign-flip p after Holm over the setting's pairs (the family of Table 1's bold)."""
    fin = pd.read_csv(figures / f"{stem}-finals.csv")
    families, cells = [], {}
    for (d, kp, k), part in fin.groupby(["d", "k_prime", "k"], sort=False):
        methods = [m for m in _ITO_TABLE1 if m in set(part["method"])]
        regret = {m: part[part["method"] == m].sort_values("run")["regret"].to_numpy(np.float64)
                  for m in methods}
        families.append(_every_pair(regret, lambda a, b, s=(d, kp, k): (s, a, b)))
        cells.update(_paired_cells(families[-1]))  # Holm per setting, as the bold of Table 1
    lines = ["| (d, k', k) | a - b | regret difference (95% interval), instances a above, Holm p |",
             "|---|---|---|"]
    last = None
    for (setting, a, b), cell in cells.items():
        lines.append(_row(f"({setting[0]}, {setting[1]}, {setting[2]})" if setting != last else "",
                          f"{_ITO_TABLE1[a][0]} - {_ITO_TABLE1[b][0]}",
                          _paired_text(*cell, above="above", fmt=lambda x: f"{x:+,.1f}")))
        last = setting
    return "\n".join(lines) + "\n\n" + _detectable(families, _regret)


def _regret(x: float) -> str:
    """A regret with one decimal below 1,000 and none above (96.5, 1,068)."""
    return f"{x:.1f}" if abs(x) < 1000 else _integer(x)


#: The (k', T) cells of docs/foster-results.md's table (the CSV holds all 45).
FOSTER_RATE_ROWS = ((4, 1000), (4, 10_000), (4, 100_000), (5, 100_000), (6, 30_000),
                    (6, 100_000), (8, 100_000))


def foster_rate(figures: Path) -> str:
    """foster-rate: final regret (95% interval) of foster-hedge, Theorem 1's order term, the
    random subset of the same budget and ogd-full (all d features, outside the budget) at the
    (k', T) cells of `FOSTER_RATE_ROWS`."""
    df = pd.read_csv(figures / "foster-rate.csv")
    lines = ["| k' | T | foster-hedge | Thm 1 order (constant 1) | ogd-random-subset | ogd-full |",
             "|---|---|---|---|---|---|"]
    for kq, horizon in FOSTER_RATE_ROWS:
        at = df[(df["k_query"] == kq) & (df["horizon"] == horizon)]
        fh = at[at["learner"] == "foster-hedge"].iloc[0]
        rs = at[at["learner"] == "ogd-random-subset"].iloc[0]
        full = df[(df["learner"] == "ogd-full") & (df["horizon"] == horizon)].iloc[0]
        cells = [_ci(r, "regret", _regret) for r in (fh, rs, full)]
        lines.append(f"| {kq} | {horizon:,} | {cells[0]} | {_integer(fh['theorem_1_order'])} | "
                     f"{cells[1]} | {cells[2]} |")
    return "\n".join(lines) + "\n"


def _foster_rate_runs(figures: Path) -> dict[tuple[str, int], pd.DataFrame]:
    """(learner, budget k') -> every run's final regret R1, runs x T (one column per T study;
    run r of every T is the same seed's run r), from foster-rate-runs.parquet."""
    fin = _final_runs(figures, "foster-rate", "regret")
    budget = fin["param_k_query"].fillna(fin["param_k"]).fillna(fin["info_d"])
    return {(learner, int(kq)): part.pivot(index="run", columns="t", values="value")
            for (learner, kq), part in fin.groupby([fin["learner"], budget], sort=False)}


def foster_exponents(figures: Path) -> str:
    """foster-rate: growth exponent in T per k' of foster-hedge and the random subset, each with
    its 95% bootstrap interval over the runs (`oslr.report.growth_exponent_interval`: the runs
    resampled together across the T studies)."""
    from oslr.report import growth_exponent_interval

    df = pd.read_csv(figures / "foster-rate.csv")
    exp = df.groupby(["learner", "k_query"])["exponent"].first()
    runs = _foster_rate_runs(figures)
    d = int(df["d"].iloc[0])

    def cell(learner: str, kq: int) -> str:
        wide = runs[(learner, kq)]
        low, high = growth_exponent_interval(wide.columns.to_numpy(), wide.to_numpy())
        return f"{exp[(learner, kq)]:.2f} ({low:.2f}, {high:.2f})"

    lines = ["| k' | foster-hedge | ogd-random-subset |", "|---|---|---|"]
    for kq in sorted(df.loc[df["learner"] == "foster-hedge", "k_query"].unique()):
        note = " (= ogd-full)" if ("ogd-full", d) in exp.index and kq == d else ""
        lines.append(f"| {kq} | {cell('foster-hedge', kq)} | "
                     f"{cell('ogd-random-subset', kq)}{note} |")
    return "\n".join(lines) + "\n"


def foster_rate_pairs(figures: Path) -> str:
    """foster-rate: foster-hedge minus ogd-random-subset of the same budget on the same runs,
    per budget k' and T: the paired difference (95% interval), the runs where foster-hedge is
    above, and the t and sign-flip p after Holm over every (k', T) cell (the family)."""
    runs = _foster_rate_runs(figures)
    keys = sorted((kq, int(t)) for (learner, kq), wide in runs.items()
                  if learner == "foster-hedge" for t in wide.columns)
    family = {(kq, t): (runs[("foster-hedge", kq)][t].to_numpy(np.float64),
                        runs[("ogd-random-subset", kq)][t].to_numpy(np.float64))
              for kq, t in keys}
    pairs = _paired_cells(family)
    lines = ["| k' | T | foster-hedge - ogd-random-subset (95% interval), runs above, Holm p |",
             "|---|---|---|"]
    for (kq, t), cell in pairs.items():
        lines.append(_row(kq, f"{t:,}", _paired_text(*cell, above="above")))
    return "\n".join(lines) + "\n\n" + _detectable([family], _regret)


def kale_calibrate(figures: Path) -> str:
    """kale-calibrate: the 95% quantile of the smallest feasible C per k0, over every solve after
    t0 and at the first and last solves."""
    df = pd.read_csv(figures / "kale-calibrate.csv")
    first, last = int(df.loc[df["solved"], "n"].min()), int(df["n"].max())
    lines = [f"| k0 | C_95 (every solve after t0) | C_95 at n = {first:,} | at n = {last:,} |",
             "|---|---|---|---|"]
    for k0, part in df.groupby("k0", sort=True):
        at = dict(zip(part["n"], part["c_quantile"]))
        lines.append(f"| {k0} | {part['c_all'].iloc[0]:.3f} | {at[first]:.3f} | {at[last]:.3f} |")
    return "\n".join(lines) + "\n"


_DESIGN = {"rademacher": "Rademacher"}  # a name; "correlated" stays an adjective


def _kale_dantzig_solved(figures: Path) -> pd.DataFrame:
    """kale-dantzig's final per-run regrets against w* of the studies whose LP was solved
    (t0 <= T; the LP-share study with t0 > T left out)."""
    runs = _final_runs(figures, "kale-dantzig", "regret_wstar")
    return runs[~(runs.get("info_t0", pd.Series(0, index=runs.index)) > runs["t"].max())]


def kale_dantzig(figures: Path) -> str:
    """kale-dantzig: final regret against w* (95% interval) per design and k0 of the Dantzig
    learner, the random subset of the same budget and ogd-full (bold: a budgeted learner below
    ogd-full on the same runs, paired t and sign-flip tests both, Holm over the page's family,
    `_kale_dantzig_pairs`), and the final l1 error."""
    df = pd.read_csv(figures / "kale-dantzig.csv")
    final = df[df["n"] == df["n"].max()]
    reg = final[final["metric"] == "regret_wstar"]
    pairs = _kale_dantzig_pairs(figures)
    sign = _paired_signs(pairs)

    def cell(r, full):
        text = _ci(r, "mean")
        if full is None:  # ogd-full itself
            return text
        kind = "full" if r["learner"] == "dantzig-poslr" else "rs-full"
        return f"**{text}**" if sign[(r["design"], int(r["k0"]), kind)] < 0 else text

    d = int(final["d"].iloc[0])
    lines = ["| design | k0 (budget) | dantzig-poslr | ogd-random-subset (same budget) | "
             f"ogd-full ({d}) | ‖w_T − w*‖₁ |", "|---|---|---|---|---|---|"]
    for design, part in reg.groupby("design", sort=False):
        full = part[part["learner"] == "ogd-full"].iloc[0]
        ds = part[part["learner"] == "dantzig-poslr"].sort_values("k0")
        for i, (_, r) in enumerate(ds.iterrows()):
            rs = part[(part["learner"] == "ogd-random-subset") & (part["k0"] == r["k0"])].iloc[0]
            l1 = final[(final["learner"] == "dantzig-poslr") & (final["design"] == design)
                       & (final["k0"] == r["k0"]) & (final["metric"] == "l1_error")].iloc[0]
            full_cell = cell(full, None) if i == 0 else ""
            lines.append(_row(_DESIGN.get(design, design), f"{int(r['k0'])} ({int(r['budget'])})",
                              cell(r, full), cell(rs, full), full_cell, f"{l1['mean']:.3f}"))
    return "\n".join(lines) + "\n\n" + _detectable([pairs])


#: The (d, design, T) rows of docs/kale-results.md's online-greedy table (the CSV holds all T).
KALE_GREEDY_ROWS = ((100, "rademacher", (1000, 30_000)),
                    (20, "rademacher", (1000, 10_000, 30_000)),
                    (100, "correlated", (30_000,)), (20, "correlated", (30_000,)))


def kale_greedy(figures: Path) -> str:
    """kale-greedy: final regret (95% interval) of online-greedy, the random subset of k0
    features and ogd-full at the `KALE_GREEDY_ROWS` cells (bold: the lower of the two budgeted
    learners where the paired t and sign-flip tests on the same runs both separate them, Holm
    over every cell of the study, the pairs table's family, from kale-greedy-runs.parquet),
    and Theorem 9's order term
    (Rademacher only)."""
    df = pd.read_csv(figures / "kale-greedy.csv")
    pairs = _kale_greedy_pairs(figures)
    sign = _paired_signs(pairs)
    lines = ["| setting | T | online-greedy | ogd-random-subset (k0) | ogd-full (d) | "
             "Thm 9 order term |", "|---|---|---|---|---|---|"]
    for d, design, horizons in KALE_GREEDY_ROWS:
        part = df[(df["d"] == d) & (df["design"] == design)]
        first = part.iloc[0]
        metric = "R2" if first["metric"] == "regret_lb_greedy" else "R1"
        setting = (f"d={d}, k={first['k']}, k0={first['k0']}, Rademacher ({metric})"
                   if design == "rademacher" else f"d={d}, correlated ({metric})")
        for j, horizon in enumerate(horizons):
            at = part[part["horizon"] == horizon].set_index("learner")
            og, rs, full = at.loc["online-greedy"], at.loc["ogd-random-subset"], at.loc["ogd-full"]
            cells = {name: _ci(r, "regret") for name, r in (("og", og), ("rs", rs), ("full", full))}
            if sign[(d, design, horizon)] < 0:
                cells["og"] = f"**{cells['og']}**"
            elif sign[(d, design, horizon)] > 0:
                cells["rs"] = f"**{cells['rs']}**"
            bound = _integer(og["bound"]) if design == "rademacher" else ""
            lines.append(_row(setting if j == 0 else "", f"{horizon:,}", cells["og"], cells["rs"],
                              cells["full"], bound))
    return "\n".join(lines) + "\n\n" + _detectable([pairs])


def _kale_dantzig_pairs(figures: Path) -> dict:
    """The one family of kale-dantzig's two tables: per design and k0 (the LP solved: t0 <= T),
    (design, k0, kind) -> (a's, b's final regrets on the same runs) for kind "rs"
    (dantzig-poslr - the random subset of the same budget), "full" (dantzig-poslr - ogd-full)
    and "rs-full" (that random subset - ogd-full)."""
    solved = _kale_dantzig_solved(figures)
    k = int(solved["info_k"].iloc[0])
    ds = solved[solved["learner"] == "dantzig-poslr"]
    pairs = {}
    for design in ds["info_design"].unique():
        full = _runs_of(solved, learner="ogd-full", info_design=design)
        for k0 in sorted(ds.loc[ds["info_design"] == design, "param_k0"].unique()):
            mine = _runs_of(ds, info_design=design, param_k0=k0)
            subset = _runs_of(solved, learner="ogd-random-subset", info_design=design,
                              param_k=k0 + k)
            pairs[(design, int(k0), "rs")] = (mine, subset)
            pairs[(design, int(k0), "full")] = (mine, full)
            pairs[(design, int(k0), "rs-full")] = (subset, full)
    return pairs


def kale_dantzig_pairs(figures: Path) -> str:
    """kale-dantzig: dantzig-poslr minus the random subset of the same budget and minus ogd-full
    on the same runs, per design and k0, each with its 95% interval, the runs where
    dantzig-poslr is above, and the t and sign-flip p after Holm over the page's family
    (`_kale_dantzig_pairs`, with the random subset - ogd-full comparisons of the bold)."""
    pairs = _kale_dantzig_pairs(figures)
    cells = _paired_cells(pairs)
    lines = ["| design | k0 | dantzig-poslr - ogd-random-subset (same budget) | "
             "dantzig-poslr - ogd-full |", "|---|---|---|---|"]
    for design, k0, _ in [key for key in pairs if key[2] == "rs"]:
        lines.append(_row(_DESIGN.get(design, design), k0, *(
            _paired_text(*cells[(design, k0, other)], above="above") for other in ("rs", "full"))))
    return "\n".join(lines) + "\n\n" + _detectable([pairs])


def _kale_greedy_pairs(figures: Path) -> dict:
    """(d, design, T) -> (online-greedy's, the random subset's final regrets on the same runs)
    for every cell of kale-greedy: the one family of the page's two tables (Rademacher first,
    larger d first, then T)."""
    runs = _final_runs(figures, "kale-greedy", "regret", "regret_lb_greedy")
    pairs = {}
    for (d, design, t), part in runs.groupby(["info_d", "info_design", "t"], sort=False):
        pairs[(int(d), design, int(t))] = (_runs_of(part, learner="online-greedy"),
                                           _runs_of(part, learner="ogd-random-subset"))
    order = sorted(pairs, key=lambda key: (key[1] != "rademacher", -key[0], key[2]))
    return {key: pairs[key] for key in order}


def kale_greedy_pairs(figures: Path) -> str:
    """kale-greedy: online-greedy minus the random subset of k0 features on the same runs, per
    setting (d, design) and T, each with its 95% interval, the runs where online-greedy is
    above, and the t and sign-flip p after Holm over every cell (the family)."""
    pairs = _kale_greedy_pairs(figures)
    order = list(pairs)
    cells = _paired_cells(pairs)
    lines = ["| setting | T | online-greedy - ogd-random-subset (95% interval), runs above, "
             "Holm p |", "|---|---|---|"]
    for i, (d, design, t) in enumerate(order):
        first = i == 0 or order[i - 1][:2] != (d, design)
        lines.append(_row(f"d={d}, {_DESIGN.get(design, design)}" if first else "", f"{t:,}",
                          _paired_text(*cells[(d, design, t)], above="above")))
    return "\n".join(lines) + "\n\n" + _detectable([pairs])


def foster_hard(figures: Path) -> str:
    """foster-hard: mean final loss and the share of runs for which Alg. 2 says "satisfiable",
    on yes and no instances, per learner; where some runs say yes, the per-instance losses and
    which instances they were."""
    dec = pd.read_csv(figures / "foster-hard-decisions.csv")
    curves = pd.read_csv(figures / "foster-hard.csv")
    final = curves[curves["n"] == curves["n"].max()]
    says = 'runs saying "satisfiable"'
    lines = [f"| learner | budget | yes: mean loss | yes: {says} | no: mean loss | no: {says} |",
             "|---|---|---|---|---|---|"]
    for learner, part in dec.groupby("learner", sort=False):
        cells = []
        for sat in (True, False):
            r = part[part["satisfiable"] == sat].iloc[0]
            loss, says = f"{r['loss']:,.1f}", f"{r['says_satisfiable']:.0%}"
            inst = final[(final["learner"] == learner) & (final["satisfiable"] == sat)]
            inst = inst.sort_values("instance")
            if r["says_satisfiable"] > 0:
                loss += " (" + " / ".join(f"{v:,.1f}" for v in inst["loss"]) + ")"
                yes = inst.loc[inst["says_satisfiable"] > 0, "instance"].tolist()
                if len(yes) < len(inst):
                    says += (f" (instance {yes[0]} only)" if len(yes) == 1 else
                             " (instances " + ", ".join(map(str, yes)) + ")")
            cells += [loss, says]
        lines.append(f"| {learner} | {part['budget'].iloc[0]} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


#: Table name (as in the docs' markers) -> function of the figures folder.
def _centred_draws(law: str, rng, n: int) -> tuple[np.ndarray, float, float]:
    """n mean-zero differences of `law`, their standard deviation and their range's half
    width (inf where unbounded)."""
    if law == "bernoulli-0.5":
        return (rng.random(n) < 0.5) - 0.5, 0.5, 0.5
    if law == "bernoulli-0.05":
        return (rng.random(n) < 0.05) - 0.05, math.sqrt(0.05 * 0.95), 0.95
    return rng.lognormal(0, 1, n) - math.exp(0.5), math.sqrt((math.e - 1) * math.e), math.inf


def sequential_widths(figures: Path, reps: int = 10, batch: int = 10) -> str:
    """The width of each sequential interval of `oslr.stats` at 100 and 1,000 runs (looks of
    `batch` runs, one comparison, 95%), in units of the differences' sd and as a multiple of
    the fixed-sample t interval's: the median over `reps` seeded samples of each law (no
    file of `figures` is read)."""
    from oslr import stats

    def span(interval: tuple[float, float]) -> float:
        return interval[1] - interval[0]

    # label -> the interval's width for differences d of sd `sd` within +-`half`
    widths = {
        "fixed t (one look)": lambda d, sd, half: 2 * stats.mean_ci(d)[2],
        "t spent over looks": lambda d, sd, half: span(
            stats.confidence_sequence(d, len(d) // batch)),
        "betting, bounds the range": lambda d, sd, half: span(
            stats.betting_sequence(d, (-half, half))),
        "betting, bounds 10x the range": lambda d, sd, half: span(
            stats.betting_sequence(d, (-10 * half, 10 * half))),
        "Catoni, the true variance": lambda d, sd, half: span(stats.catoni_sequence(d, sd**2)),
        "Catoni, 4x the variance": lambda d, sd, half: span(
            stats.catoni_sequence(d, 4 * sd**2)),
    }
    rows = [_row("law", "interval", "width at 100 runs (sd)", "x fixed t",
                 "width at 1,000 runs (sd)", "x fixed t"), "|---|---|---|---|---|---|"]
    for law in ("bernoulli-0.5", "bernoulli-0.05", "lognormal-1"):
        rng = np.random.default_rng(7)
        samples = [_centred_draws(law, rng, 1000) for _ in range(reps)]
        got = {m: [np.median([width(d[:n], sd, half) / sd for d, sd, half in samples])
                   for n in (100, 1000)]
               for m, width in widths.items()
               if not (m.startswith("betting") and math.isinf(samples[0][2]))}
        fixed = got["fixed t (one look)"]
        for m, (w100, w1000) in got.items():
            rows.append(_row(law, m, f"{w100:.3f}", f"{w100 / fixed[0]:.1f}", f"{w1000:.3f}",
                             f"{w1000 / fixed[1]:.1f}"))
    return "\n".join(rows) + "\n"


TABLES: dict[str, Callable[[Path], str]] = {
    "arena-regret": arena_regret,
    "arena-exponents": arena_exponents,
    "arena-skipped": arena_skipped,
    "arena-vs-random-subset": arena_against,
    "arena-vs-dual-averaging": lambda figures: arena_against(figures,
                                                             against="ito-dual-averaging"),
    "arena-steps": arena_steps,
    "arena-stability": arena_stability,
    "arena-caps": arena_caps,
    "arena-long": arena_long,
    "arena-k": arena_k,
    "kpm-runtime": kpm_runtime,
    "kpm-pege": kpm_pege,
    "kpm-tracking": kpm_tracking,
    "kpm-replay-all": kpm_replay_all,
    "kpm-replay-men": kpm_replay_men,
    "kpm-tracking-pairs": kpm_tracking_pairs,
    "kpm-replay-all-pairs": kpm_replay_all_pairs,
    "kpm-replay-men-pairs": kpm_replay_men_pairs,
    "ito-real": ito_real,
    "ito-table1": ito_table1,
    "ito-table1-raw": functools.partial(ito_table1, stem="ito-table1-raw"),
    "ito-table1-tuned": functools.partial(ito_table1, stem="ito-table1-tuned"),
    "ito-table1-pairs": ito_table1_pairs,
    "foster-rate": foster_rate,
    "foster-exponents": foster_exponents,
    "foster-rate-pairs": foster_rate_pairs,
    "foster-hard": foster_hard,
    "kale-calibrate": kale_calibrate,
    "kale-dantzig": kale_dantzig,
    "kale-greedy": kale_greedy,
    "kale-dantzig-pairs": kale_dantzig_pairs,
    "kale-greedy-pairs": kale_greedy_pairs,
    **{f"wll-k-{stem}": functools.partial(wll_k, stem=f"wll-k-{stem}")
       for stem in ("a9a-tuned", "covtype-tuned", "connect4-tuned", "mnist35-tuned", "a9a-eq1")},
    **{f"wll-rates-{ds}": functools.partial(wll_rates, dataset=ds)
       for ds in ("a9a", "covtype", "connect4", "mnist35")},
    "wll-redundant": wll_redundant,
    "sequential-widths": sequential_widths,
}


def render(text: str, figures: str | Path, missing: list[str] | None = None) -> str:
    """`text` with every oslr-table block rewritten from `figures`; unknown names refused.

    missing: None (a block whose file is missing raises FileNotFoundError), or a list: such a
    block is left as it was and "NAME (FILE)" appended (a partial regeneration, the other
    steps still running)."""
    figures = Path(figures)

    def fill(m: re.Match) -> str:
        name = m.group("name")
        if name not in TABLES:
            raise ValueError(f"docs table {name!r} is not generated by oslr; known tables: "
                             f"{', '.join(TABLES)}.")
        try:
            return m.group(1) + TABLES[name](figures) + m.group(4)
        except FileNotFoundError as e:
            if missing is None:
                raise
            missing.append(f"{name} ({Path(str(e.filename or e)).name})")
            return m.group(0)

    stamps: dict = {}  # figures/STAMPS.json, read once, on the first value

    def value(m: re.Match) -> str:
        kind, name = m.group("kind"), m.group("file")
        if kind not in VALUES:
            raise ValueError(f"docs value {kind!r} is not generated by oslr; known values: "
                             f"{', '.join(VALUES)}.")
        if not stamps:
            stamps.update(json.loads((figures / "STAMPS.json").read_text()))
        if name not in stamps:
            raise KeyError(f"{name} has no stamp in {figures / 'STAMPS.json'}")
        return m.group(1) + VALUES[kind](stamps[name]) + m.group(5)

    return _VALUE.sub(value, _BLOCK.sub(fill, text))


def update(docs: str | Path, missing: list[str] | None = None) -> list[str]:
    """Rewrite the generated tables of every docs/*.md page from docs/figures; returns the names
    of the pages that changed. `missing`: see `render` (a table whose file is missing is left
    as it was and named there)."""
    docs = Path(docs)
    changed = []
    for page in sorted(docs.glob("*.md")):
        text = page.read_text()
        new = render(text, docs / "figures", missing)
        if new != text:
            atomic.write_text_atomic(page, new)
            changed.append(page.name)
    return changed


__all__ = ["TABLES", "VALUES", "render", "update"]
