"""The key schedule (`oslr.rollout`): every (seed, run) pair has its own streams, and the
problem's and the learner's streams are separate."""

import itertools

import jax
import numpy as np

import oslr
from oslr.rollout import LEARNER_ROUNDS, PROBLEM_ROUNDS, learner_round_keys, run_keys, stream

_PAIRS = [(0, 0), (0, 1), (1, 0), (1, 1), (0, 2), (2, 0), (3, 5), (5, 3)]


def test_streams__every_seed_run_pair_is_distinct():
    problem, pp = oslr.make_problem("sparse-linear", d=6, k=2)
    xs = {p: np.asarray(stream(problem, pp, *p, 3).x) for p in _PAIRS}
    for a, b in itertools.combinations(_PAIRS, 2):
        assert not np.any(xs[a] == xs[b]), (a, b)  # no shared draw, not just a different one


def test_keys__learner_and_problem_streams_are_separate_and_per_pair():
    data = {p: np.asarray(jax.random.key_data(run_keys(*p))) for p in _PAIRS}
    for p, d in data.items():  # the four streams of a run differ
        assert len({row.tobytes() for row in d}) == 4, p
    for a, b in itertools.combinations(_PAIRS, 2):
        assert not np.array_equal(data[a], data[b]), (a, b)
    # the learner's round keys are fold_in(LEARNER_ROUNDS stream, t), never the problem's
    keys = run_keys(1, 2)
    lk = np.asarray(jax.random.key_data(learner_round_keys(1, 2, 3)))
    for t in range(3):
        own = jax.random.key_data(jax.random.fold_in(keys[LEARNER_ROUNDS], t))
        other = jax.random.key_data(jax.random.fold_in(keys[PROBLEM_ROUNDS], t))
        np.testing.assert_array_equal(lk[t], own)
        assert not np.array_equal(lk[t], other)
    assert not np.array_equal(lk[0], lk[1])  # a new key each round
