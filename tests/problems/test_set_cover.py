"""The [FKK] Alg. 2 set-cover stream and its planted generator."""

import jax.numpy as jnp
import numpy as np
import pytest

import oslr
from oslr.problems.set_cover import decision_threshold, planted_instance
from oslr.testing import episode_fn
from tests.helpers import stream


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_planted_instance__yes_has_an_exact_cover_no_has_an_uncovered_element(seed):
    d, k, m = 9, 3, 14
    yes, cover = planted_instance(d, k, m, 0.4, True, seed)
    assert yes.shape == (m, d) and len(cover) == k
    np.testing.assert_array_equal(yes[:, cover].sum(1), np.ones(m))  # each element exactly once
    decoys = np.delete(yes, cover, axis=1)
    assert 0 < decoys.mean() < 1
    no, cover_no = planted_instance(d, k, m, 0.4, False, seed)
    np.testing.assert_array_equal(no[:m], yes)
    np.testing.assert_array_equal(cover_no, cover)
    assert no.shape == (m + 1, d) and not no[m].any()  # covered by no set


def test_set_cover__planted_w_has_zero_loss_every_round_of_a_yes_instance():
    problem, pp = oslr.make_problem("set-cover", d=8, k=2, m=10, rho=0.5)
    exs = stream(problem, pp, 3, 0, 2000)
    x, y = np.asarray(exs.x, np.float64), np.asarray(exs.y, np.float64)
    assert np.linalg.norm(x, axis=1).max() <= 1 + 1e-6
    w = np.asarray(pp.w_star, np.float64)
    assert np.count_nonzero(w) == 2 and np.linalg.norm(w) == pytest.approx(1.0)
    np.testing.assert_allclose(x @ w - y, 0.0, atol=1e-6)
    np.testing.assert_allclose(np.asarray(exs.y_clean, np.float64), x @ w, atol=1e-6)
    np.testing.assert_allclose(np.abs(y), 1 / np.sqrt(8 * 2), rtol=1e-6)
    assert 0.4 < (y > 0).mean() < 0.6
    # rows uniform over the m elements
    rows = {tuple(r) for r in np.round(np.abs(x) * np.sqrt(8)).astype(int)}
    assert len(rows) == len({tuple(r) for r in np.asarray(pp.matrix).astype(int)})


def test_set_cover__no_instance_costs_every_learner_on_the_uncovered_element():
    # Alg. 2's argument: on rounds whose queried coordinates are all 0, y is a fair sign
    # independent of the prediction, so E[y y-hat | x(S) = 0] = 0 and the loss is >= 1/(dk).
    d, k, m, T = 8, 2, 6, 4000
    problem, pp = oslr.make_problem("set-cover", d=d, k=k, m=m, rho=0.5, satisfiable=False)
    assert problem.info["rows"] == m + 1 and not problem.realizable
    exs = stream(problem, pp, 5, 0, T)
    x, y = np.asarray(exs.x), np.asarray(exs.y)
    blank = ~x.any(1)
    assert blank.mean() == pytest.approx(1 / (m + 1), abs=0.02)
    loss_w = (x @ np.asarray(pp.w_star) - y) ** 2
    np.testing.assert_allclose(loss_w[blank], 1 / (d * k), rtol=1e-5)
    assert np.allclose(loss_w[~blank], 0.0, atol=1e-10)
    learner, params = oslr.make("foster-hedge", d=d, k=k, horizon=T, eta_sgd_scale=30.0)
    _, recs = episode_fn(learner, problem, T)(jnp.uint32(5), 0, params, pp)
    seen = (np.asarray(recs.query) & (x != 0)).any(1)
    pred = np.asarray(recs.prediction)
    unseen = ~seen
    assert unseen.sum() > 200
    yy = y[unseen] * pred[unseen]
    assert abs(yy.mean()) < 3 * yy.std() / np.sqrt(unseen.sum()) + 1e-6
    assert ((pred[unseen] - y[unseen]) ** 2).mean() >= 1 / (d * k) - 1e-6


def test_decision_threshold__alg_2_line_10():
    # T / (2 m d k) with m = 10 rows, d = 8, k = 2, T = 3200: 3200 / 320 = 10
    assert decision_threshold(3200, 10, 8, 2) == pytest.approx(10.0)


def test_set_cover__bad_options_are_refused():
    with pytest.raises(ValueError, match="k=5"):
        oslr.make_problem("set-cover", d=8, k=5, m=4)
    with pytest.raises(ValueError, match="rho"):
        oslr.make_problem("set-cover", rho=1.5)
    with pytest.raises(ValueError, match=r"^problem 'set-cover': option m=0 is out of range "
                                         r"\[1, inf\) \(elements\)\.$"):
        oslr.make_problem("set-cover", m=0)
    with pytest.raises(ValueError, match=r"option satisfiable=1 must be of type bool"):
        oslr.make_problem("set-cover", satisfiable=1)


def test_set_cover__defaults_and_labels():
    problem, pp = oslr.make_problem("set-cover")  # d = 8, k = 2, m = 12, rho = 0.3, a yes
    matrix, cover = planted_instance(8, 2, 12, 0.3, True, 0)
    assert (problem.kind, problem.name, problem.d, problem.sparsity, problem.realizable) == (
        "stream", "set-cover", 8, 2, True)
    assert problem.info == {"satisfiable": True, "rows": 12, "rho": 0.3,
                            "cover": cover.tolist(), "instance_seed": 0}
    np.testing.assert_array_equal(np.asarray(pp.matrix), matrix)
    no, _ = oslr.make_problem("set-cover", satisfiable=False, instance_seed=3)
    assert no.info["rows"] == 13 and not no.realizable and no.info["instance_seed"] == 3


def test_planted_instance__every_cover_set_is_non_empty():
    # k - 1 cuts inside 1..m-1: the k groups of the partition each hold an element
    for seed in range(40):
        matrix, cover = planted_instance(6, 4, 5, 0.3, True, seed)
        assert (matrix[:, cover].sum(axis=0) >= 1).all(), seed
        np.testing.assert_array_equal(matrix[:, cover].sum(axis=1), 1.0)
