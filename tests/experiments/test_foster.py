"""[FKK] experiments (`oslr.experiments.foster`): the E5 stream, budgets held at k', the decision
table of the hardness runs (the studies themselves run in the slow suite and `oslr reproduce`)."""

import numpy as np
import pandas as pd
import pytest

from oslr.experiments.foster import budgeted, hard_decisions, rate_problem


def test_rate_problem__unit_x_unit_wstar_clipped_labels():
    problem, pp = rate_problem(d=6, k=2, sigma=0.2)
    assert problem.d == 6 and problem.info["design"] == "sphere"
    assert float(pp.sigma) == pytest.approx(0.2) and int(pp.k) == 2


@pytest.mark.parametrize("name,k_query,want", [
    ("foster-hedge", 5, 5),        # static k, k' = k_query
    ("ogd-random-subset", 4, 4),   # its k is its query count
    ("online-greedy", 4, 4),       # exploration size k0 = k'
    ("ogd-full", 3, 8),            # reads every feature whatever k'
])
def test_budgeted__every_learner_held_to_k_prime_features_a_round(name, k_query, want):
    learner, params, budget = budgeted(name, d=8, k=2, k_query=k_query, horizon=100)
    assert budget == want == int(np.asarray(learner.budget(params)))


def test_hard_decisions__final_round_means_per_learner_budget_and_instance_type():
    rows = []
    for learner, sat, losses, says in [("a", True, (1.0, 3.0), (1, 0)),
                                       ("a", False, (5.0, 7.0), (0, 0)),
                                       ("b", True, (2.0, 2.0), (1, 1))]:
        for run, (loss, said) in enumerate(zip(losses, says)):
            for n in (10, 20):
                rows.append(dict(learner=learner, budget=4, satisfiable=sat, run=run, n=n,
                                 horizon=20, loss=loss * n / 20, threshold=4.0,
                                 says_satisfiable=said))
    got = hard_decisions(pd.DataFrame(rows))
    assert got[["learner", "satisfiable"]].values.tolist() == [["a", True], ["a", False],
                                                               ["b", True]]
    assert got["loss"].tolist() == [2.0, 6.0, 2.0]  # the final round only
    assert got["says_satisfiable"].tolist() == [0.5, 0.0, 1.0]
    assert got["threshold"].tolist() == [4.0] * 3 and set(got["budget"]) == {4}
