"""The key schedule (`oslr.rollout`): every (seed, run) pair has its own streams, and the
problem's and the learner's streams are separate; every matrix product of a round is at HIGHEST
precision."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import oslr
from oslr.registry import LEARNERS
from oslr.rollout import (
    LEARNER_ROUNDS,
    PROBLEM_ROUNDS,
    episode_fn,
    learner_round_keys,
    run_keys,
    stream,
)
from oslr.testing import example_problem
from tests.helpers import dot_precisions as _precisions

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


# ------------------------------------------------ matrix products at HIGHEST precision (GPU TF32)



#: learners whose round has no matrix product at all (element-wise work only)
_NO_PRODUCT: set[str] = set()


#: the learners whose lowering is checked in the default run (the others with -m slow)
_PRECISION_DEFAULT = {"linucb", "flinucb-sag", "eps-greedy", "ogd-full", "ito-projection",
                      "foster-hedge", "pege"}


@pytest.mark.parametrize("name", [
    n if n in _PRECISION_DEFAULT else pytest.param(n, marks=pytest.mark.slow)
    for n in sorted(LEARNERS)])
def test_episode__every_float32_matrix_product_is_at_highest_precision(name):
    # on a GPU a float32 product runs at TF32 (10-bit mantissa) unless it says otherwise; the
    # harness states HIGHEST for every product of a round (rollout.exact_matmuls): learner,
    # problem and protocol, mpax's LP solver included. Lowered, not compiled (about 0.5 s each).
    spec = LEARNERS[name]
    learner, _ = spec.make(8)
    p, pp = example_problem(spec.family, learner.requires, 8)
    options = {"n_arms": p.n_arms} if "n_arms" in spec.option_names else {}
    learner, params = spec.make(p.d, **options)
    text = jax.jit(episode_fn(learner, p, 2)).lower(jnp.uint32(0), 0, params, pp).as_text()
    if name in _NO_PRODUCT:
        assert "dot_general" not in text
        return
    assert _precisions(text) == {("HIGHEST", "HIGHEST")}


def test_study_chunk__the_gram_sums_and_diagnostics_are_at_highest_precision():
    from oslr.metrics import checkpoint_rounds
    from oslr.program import make_run_fns

    p, pp = oslr.make_problem("linear-bandit", d=4, n_arms=5)
    learner, params = oslr.make("flinucb-gd", d=4, n_arms=5, horizon=8, track=True)
    ckpts = jnp.asarray(checkpoint_rounds(8), jnp.int32)
    init, chunk = make_run_fns(learner, p, len(ckpts), stats=False)
    carry = jax.eval_shape(init, jnp.uint32(0), 0, params, pp)
    text = jax.jit(chunk, static_argnames=("length",)).lower(
        carry, 0, 8, ckpts, jnp.uint32(0), 0, params, pp, length=4).as_text()
    assert _precisions(text) == {("HIGHEST", "HIGHEST")}




def test_play__the_problem_sees_the_round_index_and_the_learner_its_feature_lookup():
    from oslr.rollout import play
    from oslr.types import BANDIT, BanditExample, Learner, Problem

    seen = {}

    def sample(key, state, t, pp):  # the example carries the round index it was drawn for
        seen["problem"] = jax.random.key_data(key)
        return state, BanditExample(arms=jnp.eye(2), rewards=jnp.zeros(2) + t, means=jnp.zeros(2),
                                    arm_ids=jnp.array([0, 1]))

    problem = Problem(init=lambda k, pp: (), sample=sample, kind="bandit", d=2, n_arms=2,
                      features=lambda pp, ids: pp[ids])

    def step(key, state, rnd, params):  # learns the features of global arm 1 from the lookup
        seen["learner"] = jax.random.key_data(key)
        reward = rnd.pull(0)
        return (reward, rnd.features(jnp.array([1])))

    learner = Learner(init=lambda k, p: (), step=step, family=BANDIT,
                      budget=lambda p: jnp.int32(1), name="fake")
    pp = jnp.array([[1.0, 2.0], [3.0, 4.0]])
    ls, _, example, record = play(learner, problem, run_keys(0, 0), (), (), jnp.int32(7), None, pp)
    assert float(ls[0]) == 7.0 and np.asarray(ls[1]).tolist() == [[3.0, 4.0]]
    assert int(record.arm) == 0
    # the initial states from their own streams, round 7's keys from theirs folded with the round
    from oslr.rollout import LEARNER_INIT, PROBLEM_INIT, init_run

    inits = {}
    learner = learner._replace(init=lambda k, p: inits.setdefault("learner", k))
    problem = problem._replace(init=lambda k, pp: inits.setdefault("problem", k))
    keys = run_keys(0, 0)
    init_run(learner, problem, keys, (), pp)
    for who, key_stream in (("problem", PROBLEM_INIT), ("learner", LEARNER_INIT)):
        np.testing.assert_array_equal(jax.random.key_data(inits[who]),
                                      jax.random.key_data(keys[key_stream]))
    for who, key_stream in (("problem", PROBLEM_ROUNDS), ("learner", LEARNER_ROUNDS)):
        np.testing.assert_array_equal(
            seen[who], jax.random.key_data(jax.random.fold_in(keys[key_stream], 7)))


def test_episode_fn__n_active_freezes_the_states_after_that_many_rounds():
    problem, pp = oslr.make_problem("linear-bandit", d=3, n_arms=4)
    learner, params = oslr.make("eps-greedy", d=3)
    run = jax.jit(episode_fn(learner, problem, 6))
    frozen, _ = run(jnp.uint32(2), 1, params, pp, jnp.int32(2))
    two, _ = jax.jit(episode_fn(learner, problem, 2))(jnp.uint32(2), 1, params, pp)
    jax.tree.map(np.testing.assert_array_equal, frozen, two)
    assert int(frozen.t) == 2


def test_keys_and_streams__the_largest_seed_is_a_uint32():
    from oslr.rollout import root_key

    top = 2**32 - 1
    np.testing.assert_array_equal(jax.random.key_data(root_key(top)),
                                  jax.random.key_data(jax.random.key(jnp.uint32(top))))
    problem, pp = oslr.make_problem("sparse-linear", d=3, k=1)
    assert stream(problem, pp, top, 0, 2).x.shape == (2, 3)
    assert learner_round_keys(top, 0, 2).shape == (2,)
