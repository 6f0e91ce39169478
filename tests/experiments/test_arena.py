"""The cross-paper arena: the tuning protocol (points chosen on their own runs, evaluated on
fresh ones), the leaderboard, the bound terms (golden values) and a tiny study's table."""

import dataclasses
import math
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

import oslr
from oslr.experiments import arena as A
from oslr.sim import simulate

matplotlib.use("Agg")

OGD = [e for e in A.ENTRANTS if e.label in ("ogd-full", "ogd-random-subset")]


def test_bounds__golden():
    info = {"radius": 1.0, "m": 20}
    # Thm 4: (1 + 1)^2 sqrt(8 * 10 / (5 - 1)) sqrt(99 + 1) = 4 * 4.472136 * 10 = 178.8854
    np.testing.assert_allclose(A._thm4(10, 2, 5, 99, info), 178.8854, rtol=1e-6)
    # Thm 8 (first term), m = 20, k' = k = 2: 4 sqrt(160 / 3) * 10 = 292.1187
    np.testing.assert_allclose(A._thm8(10, 2, 5, 99, info), 292.1187, rtol=1e-6)
    # the radius enters as (D + 1)^2: D = 12 multiplies Thm 4 by 169 / 4
    np.testing.assert_allclose(A._thm4(10, 2, 5, 99, {"radius": 12.0}), 178.8854 * 169 / 4,
                               rtol=1e-6)
    # Cor. 2 (q = 0): C(10, 2)^(1/3) 1000^(2/3) = 45^(1/3) * 100 = 355.689
    np.testing.assert_allclose(A._cor2(10, 2, 5, 1000, info), 355.689, rtol=1e-5)
    # dantzig's k0 is the budget minus k; online-greedy's k0 is the budget
    np.testing.assert_allclose(A._thm2(10, 2, 5, 100, info),
                               A.theorem_2_order(10, 2, 3, 100))
    np.testing.assert_allclose(A._thm9(10, 2, 5, 100, info),
                               A.theorem_9_order(10, 2, 5, 100))


def test_skip_reason():
    by = {e.label: e for e in A.ENTRANTS}
    assert A.skip_reason(by["foster-hedge"], 20, 2, 5, True) is None
    assert "k' >= k + 2" in A.skip_reason(by["foster-hedge"], 20, 2, 3, True)
    assert "subsets" in A.skip_reason(by["ito-block-bandit"], 123, 4, 10, True)
    assert A.skip_reason(by["ito-block-bandit"], 123, 2, 10, True) is None  # 7,503 subsets
    assert "k0 + k" in A.skip_reason(by["dantzig-poslr"], 20, 2, 2, True)
    assert A.skip_reason(by["ogd-full"], 123, 4, 2, False) is None
    assert "246 forms > 200" in A.skip_reason(by["ito-projection (Gaussian A)"], 123, 2, 31, False)
    assert A.skip_reason(by["ito-projection (Gaussian A)"], 100, 2, 31, False) is None
    assert A.skip_reason(by["ito-projection (A = I)"], 123, 2, 31, False) is None  # m = d


def test_entrants_are_held_to_the_budget():
    for e in A.ENTRANTS:
        _, params, observed = A._entrant_learner(e, 20, 2, 5, 1000, 3.0)
        want = {"ogd-full": 20, "ito-block-bandit": 2}.get(e.label, 5)
        assert observed == want, e.label
        if hasattr(params, "radius"):  # the problem's D reaches every learner that has one
            assert float(params.radius) == 3.0, e.label
        if e.learner == "ito-projection":  # predicts with k' = k features, explores with B - k
            assert int(params.k_prime) == 2
        if e.learner == "dantzig-poslr":
            assert int(params.k0) == 3


@pytest.mark.slow  # three compilations; behind -m slow to keep the default run under 5 min
def test_run_entrant__chooses_on_tuning_runs_and_evaluates_on_fresh_ones():
    problem, pp, _ = A.arena_problem("rip", 6, 2)
    factors = (0.1, 1.0, 10.0)
    summary, ckpts, curves, tuning, _ = A.run_entrant(OGD[1], problem, pp, 6, 2, 3, 60, 6,
                                                      seed=3, factors=factors)
    tmeans = [t["tuning_regret"] for t in tuning]
    best = int(np.argmin(tmeans))
    assert summary["factor"] == factors[best]
    # the same learner recomputed by hand: tuning on runs TUNE_OFFSET.., evaluation on 0..5
    learner, params = oslr.make("ogd-random-subset", d=6, k=3, horizon=60, radius=1.0)
    for i, f in enumerate(factors):
        p = dataclasses.replace(params, eta=params.eta * f)
        res = simulate(learner, problem, p, pp, horizon=60, n_runs=2, seed=3,
                       run_offset=A.TUNE_OFFSET, comparator_k=2)
        np.testing.assert_allclose(res.regret_curves()["regret"][0][:, -1].mean(), tmeans[i],
                                   rtol=1e-5)
    p = dataclasses.replace(params, eta=params.eta * factors[best])
    res = simulate(learner, problem, p, pp, horizon=60, n_runs=6, seed=3, comparator_k=2)
    np.testing.assert_allclose(curves, res.regret_curves()["regret"][0], rtol=1e-5, atol=1e-6)
    assert summary["regret"] == pytest.approx(curves[:, -1].mean())
    with pytest.raises(ValueError, match="multiple"):
        A.run_entrant(OGD[1], problem, pp, 6, 2, 3, 60, 7, factors=factors)


def _board_and_runs(finals: dict[str, np.ndarray], skipped: dict[str, str] | None = None):
    """A one-table board (problem p, budget 5) and its per-run frame from final regrets."""
    rows, runs = [], []
    for name, v in finals.items():
        mean, _, half = A.mean_ci(v)
        rows.append({"problem": "p", "budget": 5, "learner": name, "regret": mean,
                     "ci_low": mean - half, "ci_high": mean + half, "runs": len(v),
                     "skipped": ""})
        runs += [{"problem": "p", "budget": 5, "k": 2, "learner": name, "run": r, "n": n,
                  "regret": x * n / 100} for r, x in enumerate(v) for n in (10, 100)]
    rows += [{"problem": "p", "budget": 5, "learner": n, "regret": np.nan, "ci_low": np.nan,
              "ci_high": np.nan, "runs": np.nan, "skipped": why}
             for n, why in (skipped or {}).items()]
    return pd.DataFrame(rows), pd.DataFrame(runs, columns=A.RUNS_COLUMNS)


def test_rank__ties_by_a_paired_test_on_the_same_runs_not_by_overlapping_intervals():
    rng = np.random.default_rng(0)
    hard = rng.normal(0, 10, 10)  # each run's difficulty, shared by every learner
    finals = {"a": 100 + hard, "b": 103 + hard + rng.normal(0, 0.5, 10),  # worse in every run
              "c": 100.2 + hard + rng.normal(0, 2, 10), "d": 130 + hard}
    board, runs = _board_and_runs(finals, {"e": "too big"})
    out = A.rank(board, runs)
    assert out["rank"].tolist()[:4] == [1, 3, 2, 4] and np.isnan(out["rank"].iloc[4])
    b = out.set_index("learner").loc["b"]
    assert b["ci_low"] <= out.loc[0, "ci_high"]  # the unpaired intervals overlap: the old tie
    assert out["tied_with_best"].tolist() == [True, False, True, False, False]
    assert b["worse_runs"] == 10 and b["diff_low"] > 2
    # recomputed by hand from the per-run values: paired t, Holm over all six pairs (the best
    # is chosen after looking, so its family is every pair of the cell)
    from oslr import stats

    pairs = ["ba", "ca", "da", "bc", "bd", "cd"]
    p = [stats.paired(finals[x], finals[y]).p for x, y in pairs]
    np.testing.assert_allclose(out["p_holm"].iloc[1:4], stats.holm(p)[:3], rtol=1e-6,
                               atol=1e-12)
    pr = stats.paired(finals["b"], finals["a"])
    assert (b["diff_to_best"], b["diff_low"], b["diff_high"]) == pytest.approx(
        (pr.diff, pr.ci_low, pr.ci_high))
    text = A.leaderboard_markdown(out.assign(
        d=6, k=2, horizon=100, observed=3, tuned="eta=1", metric="regret", exponent=0.5,
        theory="sqrt T", bound=np.nan, bound_label="", run_rounds_per_s=1e5, reference=False))
    lines = text.splitlines()
    assert "| 1 | a " in lines[4] and "| best |" in lines[4]
    assert "| c " in lines[5] and "indistinguishable: +" in lines[5]
    assert "| b " in lines[6] and "behind: +" in lines[6] and "behind in 10/10 runs" in lines[6]
    assert "not run: too big" in lines[8]


def test_rank__a_tie_unless_the_sign_flip_test_separates_too_as_on_every_docs_table():
    """Behind the best in all 5 runs by 3 +- 0.1: the t test separates (p ~ 1e-6), the
    sign-flip test cannot (its smallest p at 5 runs is 2/32 = 0.0625): indistinguishable."""
    from oslr import stats

    rng = np.random.default_rng(3)
    hard = rng.normal(0, 10, 5)
    finals = {"a": 100 + hard, "b": 103 + hard + rng.normal(0, 0.1, 5)}
    out = A.rank(*_board_and_runs(finals)).set_index("learner")
    assert out.loc["b", "p_holm"] < 1e-4  # one pair: Holm changes nothing
    assert out.loc["b", "p_free_holm"] == pytest.approx(
        stats.sign_flip_p(finals["b"] - finals["a"])) == 0.0625
    assert out["tied_with_best"].tolist() == [True, True]
    assert A.vs_best(out.loc["b"]).startswith("indistinguishable: +3.0")
    # a diverged run (NaN): never a tie, whatever the tests could not say
    finals["c"] = np.where(np.arange(5) == 2, np.nan, finals["a"])
    out = A.rank(*_board_and_runs(finals)).set_index("learner")
    assert out["tied_with_best"].tolist() == [True, True, False]


@pytest.mark.slow
def test_tiny_arena__a_row_per_learner_and_problem(tmp_path, monkeypatch):
    kw = dict(problems=("rip", "kegg"), d=6, k=2, budgets=(4,), horizon=40, runs=5,
              entrants=OGD, cells_dir=tmp_path / "cells")
    board, curves, tuning, runs = A.arena(**kw)
    assert len(list((tmp_path / "cells").glob("*.json"))) == 4
    # the board's tie flags and intervals follow from the per-run frame
    pd.testing.assert_frame_equal(A.rank(board, runs), board)
    assert set(runs["run"]) == set(range(5)) and len(runs) == 5 * len(curves)
    # a rerun with the same settings takes every cell from disk: nothing is simulated
    monkeypatch.setattr(A, "run_entrant", lambda *a, **k: 1 / 0)
    again = A.arena(**kw)
    pd.testing.assert_frame_equal(again[0], board)
    pd.testing.assert_frame_equal(again[1], curves)
    pd.testing.assert_frame_equal(again[3], runs)
    with pytest.raises(ZeroDivisionError):  # other settings are other cells
        A.arena(**{**kw, "horizon": 41})
    assert len(board) == 4 and set(board["problem"]) == {"rip", "kegg"}
    assert set(board["learner"]) == {"ogd-full", "ogd-random-subset"}
    kegg = board[board["problem"] == "kegg"]
    assert kegg["d"].tolist() == [26, 26] and kegg["budget"].tolist() == [17, 17]  # 4/6 of 26
    assert set(board["rank"]) == {1, 2}
    # five factors each, and a window of five more past an edge where the best sat there
    assert len(tuning) == board["tuning_points"].sum() and tuning["chosen"].sum() == 4
    assert set(board["tuning_points"]) <= {5, 10, 15}
    full = board[board["learner"] == "ogd-full"]
    # the order-only sqrt(T) term at T = 40
    np.testing.assert_allclose(full["bound"], math.sqrt(40))
    fig = A.plot_arena(curves, "rip", 4, tmp_path / "a.png", "t")
    panels = {ax.get_title(): [line.get_label() for line in ax.get_lines()] for ax in fig.axes
              if ax.get_visible()}
    assert set(panels) == {"ogd-full", "ogd-random-subset"}
    assert "OGD: O(sqrt T) (order only, constant 1)" in panels["ogd-full"]
    assert not any("order only" in lab for lab in panels["ogd-random-subset"])  # no theorem
    assert "ogd-full" in panels["ogd-random-subset"]  # the references in grey
    assert (tmp_path / "a.png").exists()


@pytest.mark.slow
def test_quick_arena__every_entrant_runs(tmp_path):
    board, curves, _, _ = A.arena(problems=("rip",), d=8, k=2, budgets=(5,), horizon=100,
                                  runs=5)
    assert board["skipped"].eq("").all()
    assert len(board) == len(A.ENTRANTS)
    assert np.isfinite(board["regret"]).all()
    assert curves.groupby("learner")["n"].max().eq(100).all()



def _fake_entrant(calls):
    """run_entrant without simulating: regret = the budget, the same curve in every run."""
    def run(entrant, problem, pp, d, k, budget, horizon, runs, *rest):
        calls.append((entrant.label, budget))
        ckpts = np.array([10, horizon])
        curves = np.tile([1.0, float(budget)], (runs, 1)) + np.arange(runs)[:, None]
        summary = {"learner": entrant.label, "regret": float(curves[:, -1].mean()),
                   "ci_low": 0.0, "ci_high": 1.0, "metric": "regret"}
        return summary, ckpts, curves, [{"learner": entrant.label, "factor": 1.0,
                                         "tuning_regret": 1.0}], {}
    return run


def test_arena_cells__kill_while_saving_a_cell_resumes_with_the_same_board(tmp_path,
                                                                          monkeypatch):
    import os

    from oslr import atomic
    from tests.helpers import fake_os

    kw = dict(problems=("rip",), d=6, k=2, budgets=(4, 5), horizon=40, runs=5,
              entrants=OGD[:1], cells_dir=tmp_path / "cells")
    calls = []
    monkeypatch.setattr(A, "run_entrant", _fake_entrant(calls))
    whole = A.arena(**{**kw, "cells_dir": None})
    assert calls == [("ogd-full", 4), ("ogd-full", 5)]

    class Killed(BaseException):
        pass

    renames = []

    def replace(a, b):  # the second cell is complete in its temporary file, never renamed
        renames.append(b)
        if len(renames) == 2:
            raise Killed
        os.replace(a, b)

    monkeypatch.setattr(atomic, "os", fake_os(replace=replace))
    with pytest.raises(Killed):
        A.arena(**kw)
    monkeypatch.setattr(atomic, "os", os)
    cells = sorted(p.name for p in (tmp_path / "cells").iterdir())
    assert len(cells) == 2 and cells[0].startswith(".") and cells[0].endswith(".tmp")
    calls.clear()
    again = A.arena(**kw)
    assert calls == [("ogd-full", 5)]  # the saved cell is read, the torn one run again
    for a, b in zip(whole, again):
        pd.testing.assert_frame_equal(a, b)
    # a cell damaged outside oslr is refused, naming the file and the fix
    saved = sorted((tmp_path / "cells").glob("*.json"))[0]
    saved.write_text(saved.read_text()[:20])
    with pytest.raises(ValueError, match=r"arena cell .*\.json cannot be read .*delete it"):
        A.arena(**kw)


class _FakeResult:
    """What run_entrant reads of a SimResult: checkpoints and (G, R, C) regret curves."""

    def __init__(self, regret):
        self.ckpts = np.array([1, regret.shape[-1]])
        self._regret = np.stack([regret * 0.5, regret], axis=-1)

    def regret_curves(self):
        return {"regret": self._regret}


def test_run_entrant__tunes_on_runs_disjoint_from_the_evaluation_and_reports_the_t_interval(
        monkeypatch):
    # a fake simulate (no compilation): it records which runs each call plays; final regret of
    # run r at grid point g is a function of (g, r) only
    calls = []

    def fake_simulate(learner, problem, params, pp, *, n_runs, run_offset=0, grid=None, **kw):
        calls.append((run_offset, n_runs, len(grid)))
        runs = np.arange(run_offset, run_offset + n_runs, dtype=float)
        g = np.arange(len(grid), dtype=float)[:, None]
        final = np.where(run_offset >= A.TUNE_OFFSET, (g - 1.0) ** 2 + 1.0, 0.0) + (runs % 7)
        return _FakeResult(np.broadcast_to(final, (len(grid), n_runs)).astype(float))

    monkeypatch.setattr(A, "simulate", fake_simulate)
    problem, pp, _ = A.arena_problem("rip", 6, 2)
    factors = (0.1, 1.0, 10.0)
    summary, _, curves, tuning, _ = A.run_entrant(OGD[1], problem, pp, 6, 2, 3, 60, 6,
                                                  seed=3, factors=factors)
    (t_off, t_n, t_g), (e_off, e_n, e_g) = calls
    assert (t_g, e_g) == (3, 1) and (t_n, e_n) == (2, 6)
    tune_runs, eval_runs = set(range(t_off, t_off + t_n)), set(range(e_off, e_off + e_n))
    assert eval_runs == set(range(6)) and not tune_runs & eval_runs
    assert summary["factor"] == 1.0  # point g = 1 has the lowest tuning regret
    # evaluation finals are r % 7 = 0..5: mean 2.5, sd sqrt(3.5); the exact t quantile for
    # 5 degrees of freedom is 2.5705818: half width 2.5705818 * 1.8708287 / sqrt(6) = 1.963314
    assert summary["regret"] == pytest.approx(2.5)
    assert summary["ci_low"] == pytest.approx(2.5 - 1.963314, abs=1e-6)
    assert summary["ci_high"] == pytest.approx(2.5 + 1.963314, abs=1e-6)
    np.testing.assert_array_equal(curves[:, -1], np.arange(6.0))


def test_run_entrant__reports_what_each_of_two_disjoint_tuning_sets_would_choose(monkeypatch):
    # tuning runs 0, 1 (set A) favour factor 0.1, runs 2, 3 (set B) factor 10; over all four
    # runs factor 1 is lowest: the choice is 1.0, the sets disagree with it and each other
    by_run = np.array([[0.0, 0.0, 9.0, 9.0],    # factor 0.1: A 0, B 9, all 4.5
                       [3.0, 3.0, 3.0, 3.0],    # factor 1: 3 each
                       [9.0, 9.0, 0.5, 0.5]])   # factor 10: A 9, B 0.5, all 4.75

    def fake_simulate(learner, problem, params, pp, *, n_runs, run_offset=0, grid=None, **kw):
        if run_offset == A.TUNE_OFFSET:
            return _FakeResult(by_run[:, :n_runs])
        return _FakeResult(np.ones((len(grid), n_runs)))

    monkeypatch.setattr(A, "simulate", fake_simulate)
    problem, pp, _ = A.arena_problem("rip", 6, 2)
    summary, _, _, tuning, _ = A.run_entrant(OGD[1], problem, pp, 6, 2, 3, 60, 12,
                                             factors=(0.1, 1.0, 10.0))
    assert (summary["factor"], summary["factor_set_a"], summary["factor_set_b"]) == (
        1.0, 0.1, 10.0)
    assert [(t["factor"], t["tuning_regret"], t["tuning_regret_set_a"],
             t["tuning_regret_set_b"]) for t in tuning] == [
        (0.1, 4.5, 0.0, 9.0), (1.0, 3.0, 3.0, 3.0), (10.0, 4.75, 9.0, 0.5)]
    # one tuning run a point (runs = number of factors): no two sets, NaN
    summary, *_ = A.run_entrant(OGD[1], problem, pp, 6, 2, 3, 60, 3, factors=(0.1, 1.0, 10.0))
    assert summary["factor"] == 0.1
    assert np.isnan(summary["factor_set_a"]) and np.isnan(summary["factor_set_b"])


def test_run_entrant__what_each_simulate_call_gets_and_what_the_summary_holds(monkeypatch):
    import warnings

    calls = []

    def fake_simulate(learner, problem, params, pp, *, n_runs, run_offset=0, grid=None, **kw):
        calls.append({"learner": learner, "params": params, "grid": grid, "n_runs": n_runs,
                      "run_offset": run_offset, **kw})
        if run_offset == A.TUNE_OFFSET:  # a solver warning while tuning, factor 1 best
            warnings.warn("LP not converged in 3 rounds", RuntimeWarning)
            warnings.warn("LP not converged in 1 round", RuntimeWarning)
            f = np.array([g["factor"] for g in grid])[:, None]
            return _FakeResult(np.abs(np.log10(f)) + np.zeros(n_runs))
        return _FakeResult(np.full((len(grid), n_runs), 4.0))

    monkeypatch.setattr(A, "simulate", fake_simulate)
    problem, pp, _ = A.arena_problem("rip", 6, 2)
    entrant = OGD[1]  # ogd-random-subset
    summary, ckpts, curves, tuning, info = A.run_entrant(
        entrant, problem, pp, 6, 2, 3, 60, 6, factors=(0.1, 1.0, 10.0))
    learner, params, observed = A._entrant_learner(entrant, 6, 2, 3, 60, 1.0)
    tune_call, eval_call = calls
    for call in calls:  # the entrant's learner, the comparator of size k
        assert call["learner"].name == learner.name == "ogd-random-subset"
        assert (call["comparator_k"], call["horizon"], call["seed"]) == (2, 60, 0)
    # the evaluation plays the chosen point: eta x 1 (one grid point, not the tuning scores)
    np.testing.assert_allclose(np.asarray(eval_call["params"].eta), [float(params.eta)],
                               rtol=1e-6)
    assert eval_call["grid"][0]["factor"] == 1.0 and eval_call["n_runs"] == 6
    assert info["radius"] == 1.0  # the default radius, recorded for the bounds
    assert {k: summary[k] for k in ("learner", "registry", "d", "k", "budget", "observed",
                                    "horizon", "runs", "metric", "tuned", "factor")} == {
        "learner": "ogd-random-subset", "registry": "ogd-random-subset", "d": 6, "k": 2,
        "budget": 3, "observed": observed, "horizon": 60, "runs": 6, "metric": "regret",
        "tuned": f"eta={float(params.eta):.4g}", "factor": 1.0}
    assert summary["run_rounds_per_s"] > 0 and summary["regret"] == 4.0
    assert {t["learner"] for t in tuning} == {"ogd-random-subset"}
    assert tuning[0]["solver_warnings"] == ("LP not converged in 3 rounds | LP not converged "
                                           "in 1 round")


def test_arena_sizes__20_evaluation_runs_4_tuning_runs_a_point_in_the_docs_studies():
    import inspect

    # 20 runs: the sign-flip test's smallest two-sided p, 2 / 2^20, survives Holm over a cell's
    # 36 pairs
    # (at 10 runs 2 / 1024 x 36 = 0.07 could not); 20 / 5 factors = 4 tuning runs a point, two
    # sets of 2 for the stability of the choice
    assert A.ARENA_FULL["runs"] == A.ARENA_LONG["runs"] == A.ARENA_K["runs"] == 20
    assert A.ARENA_QUICK["runs"] == 20 and len(A.TUNING_FACTORS) == 5  # quick as well
    assert inspect.signature(A.arena).parameters["runs"].default == 20


@pytest.mark.parametrize("optimum, chosen, points, at_cap", [
    (1.0, 1.0, 5, False),      # interior: the five points only
    (100.0, 90.0, 10, False),  # past 10: the window 30 .. 3000 is tried, 90 is interior there
    (1e6, 3000.0, 10, True),   # still the edge after one window: reported at the cap
    (1e-6, 0.0003, 10, True),  # the same below 0.1
])
def test_run_entrant__extends_the_grid_past_an_edge_until_interior_or_the_cap(
        monkeypatch, optimum, chosen, points, at_cap):
    # tuning regret (log10 factor - log10 optimum)^2, the same in every run
    calls = []

    def fake_simulate(learner, problem, params, pp, *, n_runs, run_offset=0, grid=None, **kw):
        calls.append((run_offset, n_runs, [g["factor"] for g in grid]))
        f = np.array([g["factor"] for g in grid])[:, None]
        final = (np.log10(f) - np.log10(optimum)) ** 2 + np.zeros(n_runs)
        return _FakeResult(final)

    monkeypatch.setattr(A, "simulate", fake_simulate)
    problem, pp, _ = A.arena_problem("rip", 6, 2)
    summary, _, _, tuning, _ = A.run_entrant(OGD[1], problem, pp, 6, 2, 3, 60, 10, seed=3)
    assert summary["factor"] == chosen
    assert (summary["tuning_points"], summary["at_cap"]) == (points, at_cap)
    assert [t["factor"] for t in tuning] == sorted(t["factor"] for t in tuning)
    assert [t["factor"] for t in tuning if t["chosen"]] == [chosen]
    # every tuning call: 5 points x 2 runs on the tuning runs (the batch shape of the
    # evaluation, 10 runs); the evaluation last
    assert all(c[:2] == (A.TUNE_OFFSET, 2) and len(c[2]) == 5 for c in calls[:-1])
    assert calls[-1][:2] == (0, 10) and calls[-1][2] == [chosen]
    if points == 10:
        assert sorted(calls[1][2]) == sorted(A.extension(A.TUNING_FACTORS, 10.0, 1)
                                             if chosen > 1 else
                                             A.extension(A.TUNING_FACTORS, 0.1, -1))


def test_extension__continues_the_grid_spacing():
    assert A.extension(A.TUNING_FACTORS, 10.0, +1) == (30.0, 90.0, 300.0, 900.0, 3000.0)
    assert A.extension(A.TUNING_FACTORS, 0.1, -1) == (0.0003, 0.0009, 0.003, 0.009, 0.03)
    assert A.extension((0.1, 1.0, 10.0), 10.0, +1) == (100.0, 1000.0, 10000.0)


def test_arena_problems__unit_ball_by_default_raw_one_option_away():
    rip, pp, _ = A.arena_problem("rip", 9, 2)
    raw, _, _ = A.arena_problem("rip", 9, 2, normalise=False)
    assert rip.info["unit_x"] and not raw.info["unit_x"]
    assert A.PROBLEMS["agnostic"].settings(True) == ({"design": "rademacher", "unit_x": True},
                                                     4.0)
    assert A.PROBLEMS["agnostic"].settings(False) == ({"design": "rademacher"}, 1.0)
    # a9a: rows scaled to ||x|| = 1 (every row has 14 ones: 3.74 raw), D = 5 above the best
    # 2-sparse fit's 4.15 there
    assert A.PROBLEMS["a9a"].settings(True) == ({"scale": "columns"}, 5.0)
    a9a, app, _ = A.arena_problem("a9a", 20, 2)
    np.testing.assert_allclose(np.linalg.norm(np.asarray(app.x), axis=1).max(), 1.0, rtol=1e-5)
    assert A.PROBLEMS["kegg"].settings(True) == A.PROBLEMS["kegg"].settings(False)


def test_arena__a_dataset_is_tuned_on_one_half_of_its_rows_and_evaluated_on_the_other(
        monkeypatch):
    seen = []

    def fake_simulate(learner, problem, params, pp, *, n_runs, run_offset=0, grid=None, **kw):
        seen.append((run_offset, problem.info.get("part"), getattr(pp, "x", np.zeros(0)).shape))
        f = np.array([g["factor"] for g in grid])[:, None]
        return _FakeResult((np.log10(f)) ** 2 + np.zeros(n_runs))

    monkeypatch.setattr(A, "simulate", fake_simulate)
    A.arena(problems=("a9a",), budgets=(10,), horizon=50, runs=10, entrants=(OGD[1],))
    n = 48_842 // 2
    assert seen[0] == (A.TUNE_OFFSET, "tune", (n, 123))
    assert seen[-1] == (0, "eval", (n, 123))
    seen.clear()  # a synthetic stream has no halves: its runs are independent draws
    A.arena(problems=("rip",), d=6, budgets=(3,), horizon=50, runs=10, entrants=(OGD[1],))
    assert {part for _, part, _ in seen} == {None}


def test_run_entrant__plays_seed_0_by_default(monkeypatch):
    seeds = []

    def fake_simulate(learner, problem, params, pp, *, n_runs, run_offset=0, grid=None,
                      seed=None, **kw):
        seeds.append(seed)
        return _FakeResult(np.ones((len(grid), n_runs)))

    monkeypatch.setattr(A, "simulate", fake_simulate)
    problem, pp, _ = A.arena_problem("rip", 6, 2)
    A.run_entrant(OGD[0], problem, pp, 6, 2, 3, 60, 6, factors=(0.1, 1.0, 10.0))
    assert set(seeds) == {0}


def test_rank__adds_exactly_its_columns_and_plain_json_values():
    board, runs = _board_and_runs({"a": np.arange(5.0), "b": np.arange(5.0) + 1}, {"e": "no"})
    out = A.rank(board, runs)
    assert list(out.columns) == list(board.columns) + [
        "rank", "tied_with_best", "diff_to_best", "diff_low", "diff_high", "p_holm",
        "p_free_holm", "worse_runs", "better_runs"]
    assert np.isnan(out["worse_runs"].iloc[-1])  # the skipped row keeps the fill
    assert A._plain(np.float32(1.5)) == 1.5 and type(A._plain(np.int64(3))) is int
    assert A._plain(Path("a/b")) == "a/b"


def test_leaderboard_markdown__says_whether_x_was_normalised_and_the_radius():
    finals = {"a": np.arange(5.0), "b": np.arange(5.0) + 1}
    board, runs = _board_and_runs(finals)
    common = dict(d=6, k=2, horizon=100, observed=3, tuned="eta=1", metric="regret",
                  exponent=0.5, theory="sqrt T", bound=np.nan, bound_label="",
                  run_rounds_per_s=1e5, reference=False)
    for unit, want in ((True, "; x in the unit ball, D = 4"),
                       (False, "; raw x (not normalised), D = 1")):
        board = board.assign(problem="agnostic", normalised=unit)
        runs = runs.assign(problem="agnostic")
        text = A.leaderboard_markdown(A.rank(board, runs).assign(**common))
        head = text.splitlines()[0]
        assert head.startswith("### agnostic (d = 6, k = 2, budget 5, T = 100): y = sign")
        assert head.endswith(want)


def test_leaderboard_markdown__the_tuning_choices_stability_line():
    finals = {"a": np.arange(5.0), "b": np.arange(5.0) + 1, "c": np.arange(5.0) + 2}
    board, runs = _board_and_runs(finals)
    common = dict(d=6, k=2, horizon=100, observed=3, tuned="eta=1", metric="regret",
                  exponent=0.5, theory="sqrt T", bound=np.nan, bound_label="",
                  run_rounds_per_s=1e5, reference=False, at_cap=False)
    board = A.rank(board, runs).assign(**common, factor=[1.0, 3.0, 0.3],
                                       factor_set_a=[1.0, 10.0, np.nan],
                                       factor_set_b=[1.0, 10.0, np.nan])
    text = A.leaderboard_markdown(board)
    # c had one tuning run a point (NaN: no two sets): left out; b's sets agree, not with 3
    assert ("Tuning stability: in 2 of 2 cells the two disjoint sets of tuning runs would each "
            "have chosen the same factor (1 of them the factor all the tuning runs chose).") in text
    board["factor_set_b"] = [0.3, 10.0, np.nan]
    assert "in 1 of 2 cells" in A.leaderboard_markdown(board)
    assert "stability" not in A.leaderboard_markdown(board.drop(columns=["factor_set_a"]))


def test_leaderboard_markdown__the_whole_text_of_a_small_board():
    row = dict(d=6, k=2, horizon=100, observed=3, tuned="eta=1", metric="regret", exponent=0.5,
               theory="sqrt T", bound=np.nan, bound_label="", run_rounds_per_s=1e5,
               reference=False, at_cap=False, factor=1.0, skipped="", runs=4, rank=1,
               diff_to_best=0.0, diff_low=0.0, diff_high=0.0, tied_with_best=True,
               worse_runs=0, better_runs=0)
    board = pd.DataFrame([
        dict(row, problem="toy", budget=5, learner="a", regret=1.0, ci_low=0.5, ci_high=1.5),
        dict(row, problem="toy", budget=5, learner="b", regret=2.0, ci_low=1.5, ci_high=2.5,
             metric="regret_lb_greedy", bound=123.4, bound_label="Thm 1", rank=2,
             diff_to_best=1.0, diff_low=0.5, diff_high=1.5, tied_with_best=False, worse_runs=4,
             at_cap=True, factor=3000.0),
        dict(row, problem="toy", budget=5, learner="c", skipped="too big", regret=np.nan)])
    assert A.leaderboard_markdown(board) == "\n".join([
        "### toy (d = 6, k = 2, budget 5, T = 100): \n",
        "| rank | learner | obs/round | tuned | regret at T (95% CI) | vs best (paired, 95% CI; "
        "t and sign-flip, Holm) | exponent (theory) | bound at T | run-rounds/s |",
        "|---|---|---|---|---|---|---|---|---|",
        "| 1 | a | 3 | eta=1 | 1.0 (0.5, 1.5) | best | 0.50 (sqrt T) | - | 1e+05 |",
        "| 2 | b | 3 | eta=1 | 2.0 (1.5, 2.5) (R2 lower bound) | behind: +1.0 (+0.5, +1.5), "
        "behind in 4/4 runs | 0.50 (sqrt T) | 123 (Thm 1) | 1e+05 |",
        "| - | c | - | - | not run: too big | | | | |",
        "",
        "Tuning: 1 of 2 chosen factors at the cap of the extended grid (one window of 5 factors "
        "past each edge): b on toy B=5 (factor 3000).\n"])
    none = A.leaderboard_markdown(board.assign(at_cap=False)).splitlines()[-1]
    assert none == ("Tuning: 0 of 2 chosen factors at the cap of the extended grid (one window "
                    "of 5 factors past each edge).")  # no colon and empty list


def _arena_curves():
    rows = []
    for label, scale, bound in (("ogd-full", 1.0, np.nan), ("ogd-random-subset", 2.0, np.nan),
                                ("foster-hedge", 0.5, 100.0), ("online-greedy", 3.0, np.nan)):
        for n in (10, 100, 1000):
            mean = scale * math.sqrt(n) - (20.0 if label == "online-greedy" and n == 10 else 0)
            rows.append(dict(problem="rip", budget=5, learner=label, n=n, mean=mean,
                             ci_low=0.5 * mean, ci_high=1.5 * mean, bound=bound * math.sqrt(n),
                             bound_label="[FKK] Thm 1 (order only, constant 1)"))
    rows.append(dict(problem="rip", budget=10, learner="ogd-full", n=10, mean=1.0, ci_low=0.5,
                     ci_high=1.5, bound=np.nan, bound_label=""))  # another budget: not drawn
    return pd.DataFrame(rows)


def test_plot_arena__a_panel_per_learner_with_the_references_in_grey(tmp_path):
    fig = A.plot_arena(_arena_curves(), "rip", 5, tmp_path / "a.png", "rip title")
    assert (tmp_path / "a.png").stat().st_size > 0
    axes = fig.axes
    assert len(axes) == 6 and [ax.get_visible() for ax in axes] == [True] * 4 + [False] * 2
    assert [ax.get_title() for ax in axes[:4]] == ["ogd-full", "ogd-random-subset",
                                                   "foster-hedge", "online-greedy"]
    assert fig._suptitle.get_text() == "rip title"
    hedge = {ln.get_label(): ln for ln in axes[2].get_lines()}
    assert set(hedge) == {"ogd-full", "ogd-random-subset", "foster-hedge",
                          "[FKK] Thm 1 (order only, constant 1)"}
    assert hedge["ogd-full"].get_linestyle() == "-" and hedge["ogd-full"].get_color() == "0.6"
    assert hedge["ogd-random-subset"].get_linestyle() == ":"
    assert hedge["foster-hedge"].get_color() == "C0"
    bound = hedge["[FKK] Thm 1 (order only, constant 1)"]
    assert bound.get_linestyle() == "--" and bound.get_color() == "C3"
    np.testing.assert_allclose(bound.get_ydata(), 100 * np.sqrt([10, 100, 1000]))
    band = axes[2].collections[0]
    assert matplotlib.colors.same_color(band.get_facecolor()[0][:3], "C0")
    assert band.get_alpha() == pytest.approx(0.2)
    # a reference's own panel does not draw it twice; a non-positive mean is left out
    assert [ln.get_label() for ln in axes[0].get_lines()] == ["ogd-random-subset", "ogd-full"]
    greedy = {ln.get_label(): ln for ln in axes[3].get_lines()}
    np.testing.assert_allclose(greedy["online-greedy"].get_xdata(), [100, 1000])
    for ax in axes[:4]:
        assert ax.get_xscale() == ax.get_yscale() == "log"
    assert axes[0].get_ylabel() == "regret (best k-sparse LS)"
    assert axes[3].get_xlabel() == "round t"
    matplotlib.pyplot.close(fig)


def test_run_arena__writes_every_file_one_arena_per_k(tmp_path, monkeypatch):
    calls, fake = [], _fake_entrant([])

    def entrant(*args):  # with the fields the board, its Markdown and the bounds read
        e, budget, horizon, runs = args[0], args[5], args[6], args[7]
        calls.append((e.label, budget))
        summary, ckpts, curves, tuning, _ = fake(*args)
        summary.update(registry=e.learner, observed=budget, horizon=horizon, runs=runs,
                       tuned="eta=1", factor=1.0, tuning_points=5, at_cap=False,
                       run_rounds_per_s=1e5, theory=e.theory, reference=e.reference)
        return summary, ckpts, curves, tuning, {"radius": 1.0, "m": 12}

    monkeypatch.setattr(A, "run_entrant", entrant)
    sizes = dict(problems=("rip",), d=6, ks=(1, 2), budgets=(4,), horizon=40, runs=5,
                 entrants=OGD)
    board = A.run_arena(None, 0, tmp_path, False, False, name="arena-k", sizes=sizes)
    assert sorted(set(board["k"])) == [1, 2]
    for f in ("arena-k.csv", "arena-k.json", "arena-k.md", "arena-k-curves.csv",
              "arena-k-tuning.csv", "arena-k-runs.parquet", "arena-k-rip-b4-k1.png",
              "arena-k-rip-b4-k2.png"):
        assert (tmp_path / f).stat().st_size > 0, f
    cols = ["problem", "learner", "k", "budget", "regret", "rank", "skipped"]
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "arena-k.csv", keep_default_na=False,
                                              na_values=[""])[cols[:-1]], board[cols[:-1]],
                                  check_dtype=False)
    curves = pd.read_csv(tmp_path / "arena-k-curves.csv")
    assert sorted(set(curves["k"])) == [1, 2]
    assert (tmp_path / "arena-k.md").read_text() == A.leaderboard_markdown(board)
    runs = pd.read_parquet(tmp_path / "arena-k-runs.parquet")
    assert list(runs.columns) == A.RUNS_COLUMNS and set(runs["run"]) == set(range(5))
    assert (runs["seed"] == 0).all()  # a run is named by (seed, run)
    assert sorted((tmp_path / "arena-k-cells").iterdir())  # finished cells kept for a resume
    # the quick sizes: k = 2, d = 10, budget 5, T = 1,000 on rip
    assert A.ARENA_QUICK == dict(problems=("rip",), d=10, k=2, budgets=(5,), horizon=1000,
                                 runs=20)
    # sizes without k: the arena's k = 2
    board = A.run_arena(None, 0, tmp_path / "n", False, False, sizes=dict(
        problems=("rip",), d=6, budgets=(4,), horizon=40, runs=5, entrants=OGD[:1]))
    assert set(board["k"]) == {2}
    with pytest.raises(ValueError, match="multiple of 5"):
        A.run_arena(7, 0, tmp_path / "bad", True, False)
    assert not (tmp_path / "bad").exists()


def test_rerank_saved__recomputes_the_comparisons_of_each_k_and_keeps_every_other_cell(tmp_path):
    import json

    rng = np.random.default_rng(5)
    hard = rng.normal(0, 10, 8)
    parts, all_runs = [], []
    for k, shift in ((1, 0.0), (2, 5.0)):  # two arenas of one board, each k its own runs
        finals = {"a": 100 + hard, "b": 100 + shift + hard + rng.normal(0, 1, 8)}
        board, runs = _board_and_runs(finals, {"e": "too big"})
        parts.append(board.assign(k=k))
        all_runs.append(runs.assign(k=k))
    board = pd.concat(parts, ignore_index=True).assign(
        d=6, horizon=100, observed=3, tuned="eta=1", metric="regret", exponent=0.5,
        theory="sqrt T", bound=np.nan, bound_label="", run_rounds_per_s=1e5, reference=False)
    runs = pd.concat(all_runs, ignore_index=True)
    want = pd.concat([A.rank(board[board["k"] == k], runs[runs["k"] == k]) for k in (1, 2)])
    stale = want.assign(p_holm=0.5, tied_with_best=True)  # an older rule's verdicts
    stale.to_csv(tmp_path / "arena.csv", index=False)
    stale.to_json(tmp_path / "arena.json", orient="records", indent=1)
    runs.to_parquet(tmp_path / "arena-runs.parquet")
    out = A.rerank_saved(tmp_path, "arena")
    np.testing.assert_allclose(out["p_holm"], want["p_holm"], rtol=1e-12)
    assert out["tied_with_best"].tolist() == want["tied_with_best"].tolist()
    assert not out["tied_with_best"].iloc[4]  # k = 2: b is 5 worse, separated
    back = pd.read_csv(tmp_path / "arena.csv")
    np.testing.assert_allclose(back["regret"], want["regret"], rtol=0)  # every digit kept
    cells = json.loads((tmp_path / "arena.json").read_text())
    assert [c["skipped"] for c in cells] == ["", "", "too big"] * 2  # "" stays "", not null
    assert (tmp_path / "arena.md").read_text() == A.leaderboard_markdown(out)
