"""oslr.frames: the labelled tables of results (labels, the primary regret, per-run finals,
pieces of a long table), on hand-made results with known values."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from oslr import frames


def _result(learner="a", grid=({},), n_runs=3, ckpts=(1, 4), seed=0, run_offset=0,
            curves=None, sums=None):
    """A result of `len(grid)` points x `n_runs` runs whose regret at checkpoint c of run r of
    point g is 100 g + 10 r + c (or the `curves` given)."""
    g, r, c = np.meshgrid(np.arange(len(grid)), np.arange(n_runs), np.arange(len(ckpts)),
                          indexing="ij")
    regret = (100.0 * g + 10.0 * r + c)
    curves = {"regret": regret} if curves is None else curves
    sums = {"loss": np.ones((len(grid), n_runs))} if sums is None else sums
    return SimpleNamespace(learner=learner, grid=list(grid), n_runs=n_runs, seed=seed,
                           run_offset=run_offset, horizon=ckpts[-1], ckpts=np.asarray(ckpts),
                           regret_curves=lambda: curves, per_run_sums=lambda: sums)


def test_params_label__four_significant_digits_ints_as_given_and_default():
    assert frames.params_label({}) == "default"
    assert frames.params_label({"k": 3, "eta": 0.123456}) == "k=3, eta=0.1235"
    assert frames.params_label({"eta": 1e-5, "on": True}) == "eta=1e-05, on=True"


def test_primary_metric__the_first_in_order_and_a_refusal():
    res = _result()
    assert frames.primary_metric(res, {"regret_wstar": 0, "regret": 0}) == "regret"
    assert frames.primary_metric(res, {"regret_wstar": 0, "pseudo_regret": 0}) == "pseudo_regret"
    assert frames.primary_metric(res, {"regret_wstar": 0}) == "regret_wstar"
    with pytest.raises(ValueError, match="^no regret quantity available$"):
        frames.primary_metric(res, {"loss": 0})


def test_entry_name__the_learner_alone_for_one_point_else_with_its_label():
    assert frames.entry_name(_result(), {}) == "a"
    two = _result(grid=({"k": 2}, {"k": 3}))
    assert frames.entry_name(two, {"k": 3}) == "a [k=3]"


def test_per_run_finals__each_entrys_last_checkpoint_and_the_refusals():
    finals, metric = frames.per_run_finals([_result(grid=({"k": 2}, {"k": 3})),
                                            _result("b")])
    assert metric == "regret"
    np.testing.assert_array_equal(finals["a [k=3]"], [101.0, 111.0, 121.0])
    np.testing.assert_array_equal(finals["b"], [1.0, 11.0, 21.0])
    assert finals["b"].dtype == np.float64
    with pytest.raises(ValueError, match="^no results to compare"):
        frames.per_run_finals([])
    with pytest.raises(ValueError, match=r"need the same runs: .*\[\(0, 0, 3, 4\), \(1, 0, 3, 4\)"):
        frames.per_run_finals([_result(), _result("b", seed=1)])
    with pytest.raises(ValueError, match=r"two entries are named 'a'"):
        frames.per_run_finals([_result(), _result()])
    with pytest.raises(ValueError, match=r"^b has no 'regret' to compare \(it has "
                                         r"\['regret_wstar'\]\)"):
        frames.per_run_finals([_result(), _result("b", curves={"regret_wstar": np.ones(
            (1, 3, 2))})])


def test_run_slices__consecutive_pieces_of_at_most_a_piece_and_at_least_a_run(monkeypatch):
    monkeypatch.setattr(frames, "PIECE_ROWS", 10)
    assert [(s.start, s.stop) for s in frames._run_slices(7, 3)] == [(0, 3), (3, 6), (6, 7)]
    assert [(s.start, s.stop) for s in frames._run_slices(2, 25)] == [(0, 1), (1, 2)]
    assert [(s.start, s.stop) for s in frames._run_slices(10, 1)] == [(0, 10)]
    assert list(frames._run_slices(0, 4)) == []


def test_runs_tables__every_run_once_by_its_seed_index_in_pieces(monkeypatch):
    monkeypatch.setattr(frames, "PIECE_ROWS", 4)  # two runs of two checkpoints a piece
    res = _result(n_runs=5, run_offset=10)
    pieces = list(frames.runs_curves_pieces([res]))
    assert all(len(p) <= 4 for p in pieces)
    table = pd.concat(pieces, ignore_index=True)
    regret = table[table.metric == "regret"]
    assert regret["run"].tolist() == [10, 10, 11, 11, 12, 12, 13, 13, 14, 14]
    assert regret["t"].tolist() == [1, 4] * 5
    assert regret["value"].tolist() == [10.0 * r + c for r in range(5) for c in (0, 1)]
    sums = table[table.metric == "sum_loss"]
    assert sums["run"].tolist() == [10, 11, 12, 13, 14] and set(sums["t"]) == {4}
    finals = frames.runs_frame([res])
    assert finals["run"].tolist() == [10, 11, 12, 13, 14]
    assert finals["final"].tolist() == [1.0, 11.0, 21.0, 31.0, 41.0]
    assert (finals["params"] == "default").all() and (finals["learner"] == "a").all()


def test_full_table__prints_every_row_to_four_digits():
    table = frames.FullTable({"x": np.arange(200) + 0.123456})
    text = repr(table)
    assert "..." not in text and len(text.splitlines()) == 201 and "199.1" in text
    assert isinstance(table.head(3), frames.FullTable)
