"""A study's inputs checked before anything is traced (`oslr.validation`): each refusal names
the value, the reason and the fix."""

import dataclasses

import numpy as np
import pytest

import oslr
from oslr.types import Requirements
from oslr.validation import check_types, validate
from tests.helpers import study_setup


def test_validate__counts_horizon_comparator_and_dataset_rows_named_in_one_line():
    learner, params, problem, pp = study_setup()
    with pytest.raises(ValueError, match=r"^n_runs must be a positive integer, got 0\.$"):
        validate(learner, problem, params, pp, 10, 0)
    with pytest.raises(ValueError, match=r"^horizon=2147483648 must be below 2\^31 = "
                                         r"2147483648 \(rounds are counted in int32\)"):
        validate(learner, problem, params, pp, 2**31, 2)
    validate(learner, problem, params, pp, 10, 2, comparator_k=1)  # the smallest k is fine
    with pytest.raises(ValueError, match=r"comparator_k=0 must satisfy 1 <= k <= d=8"):
        validate(learner, problem, params, pp, 10, 2, comparator_k=0)
    data, dpp = oslr.make_problem("kegg")
    lrn, lp = oslr.make("ogd-full", d=data.d)
    with pytest.raises(ValueError, match=r"rows of dataset 'kegg'; lower the horizon or allow "
                                         r"cycling \(cycle=True / --cycle\)\.$"):
        validate(lrn, data, lp, dpp, data.n_rows + 1, 2)


def test_validate__the_learner_is_named_and_each_non_finite_value_located():
    learner, params, problem, pp = study_setup()
    short = learner._replace(requires=Requirements(capacity=9), name="mine")
    with pytest.raises(ValueError, match=r"^learner 'mine' keeps a history of 9 samples"):
        validate(short, problem, params, pp, 10, 2)
    with pytest.raises(ValueError, match=r"^learner params\.eta contains NaN or inf"):
        validate(learner, problem, dataclasses.replace(params, eta=np.float32("nan")), pp, 10, 2)
    with pytest.raises(ValueError, match=r"^problem params\.sigma contains NaN or inf"):
        validate(learner, problem, params, dataclasses.replace(pp, sigma=np.float32("inf")),
                 10, 2)
    with pytest.raises(ValueError, match=r"^params is a Learner, not a params pytree"):
        validate(learner, problem, learner, pp, 10, 2)


def test_check_types__swapped_only_when_both_are_swapped():
    learner, params, problem, pp = study_setup()
    with pytest.raises(ValueError, match=r"^the learner and the problem are swapped"):
        check_types(problem, learner, params, pp)
    with pytest.raises(ValueError, match=r"^the first argument must be a Learner"):
        check_types(problem, problem, params, pp)
    with pytest.raises(ValueError, match=r"^the second argument must be a Problem"):
        check_types(learner, learner, params, pp)


def test_check_comparator__a_prediction_study_needs_labels_a_sparsity_or_comparator_k():
    from oslr.validation import check_comparator

    learner, _ = oslr.make("ogd-full", d=6)
    problem, pp = oslr.make_problem("sparse-linear", d=6, k=2)
    bare = problem._replace(sparsity=None)
    check_comparator(learner, problem, pp, None)  # a declared sparsity
    check_comparator(learner, bare, pp, None)  # realizable: regret against w*
    check_comparator(learner, bare._replace(realizable=False), pp, 3)  # comparator_k given
    with pytest.raises(ValueError, match=r"^problem 'sparse-linear' declares no sparsity .* "
                                         r"\(e\.g\. --comparator-k 5\)\.$"):
        check_comparator(learner, bare._replace(realizable=False), pp, None,
                         "--comparator-k 5")
    bandit, _ = oslr.make("linucb", d=6, n_arms=4)  # a bandit's regret needs no comparator
    check_comparator(bandit, bare._replace(realizable=False), pp, None)
