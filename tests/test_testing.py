"""The contract suite's own parts (`oslr.testing`): what each check compares, with which inputs,
and the messages it raises. The suite run on every learner, and cheaters caught by it, are in
tests/test_contract.py."""

from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import oslr
from oslr import testing
from oslr.registry import LEARNERS
from oslr.testing import ContractError
from oslr.types import BANDIT, Requirements


def test_assert_trees_close__names_the_leaf_and_the_largest_difference():
    a = {"w": jnp.array([1.0, 2.0]), "n": jnp.array([1, 2])}
    testing._assert_trees_close("same", a, a, 1e-6, 1e-6)
    with pytest.raises(ContractError, match=r"^x: leaf 1 differs \(max abs diff 0\.5\)\.$"):
        testing._assert_trees_close("x", a, {**a, "w": jnp.array([1.0, 2.5])}, 1e-6, 1e-6)
    with pytest.raises(ContractError, match=r"^x: leaf 0 differs\.$"):
        testing._assert_trees_close("x", a, {**a, "n": jnp.array([1, 3])}, 1e-6, 1e-6)
    with pytest.raises(ContractError, match=r"leaf 1 shapes differ: \(2,\) vs \(3,\)"):
        testing._assert_trees_close("x", a, {**a, "w": jnp.ones(3)}, 1e-6, 1e-6)
    with pytest.raises(ContractError, match="pytree structures differ"):
        testing._assert_trees_close("x", a, {"w": a["w"]}, 1e-6, 1e-6)


def test_unseen_perturbation__moves_only_what_no_observation_sees():
    key = jax.random.key(0)
    x = jnp.arange(1.0, 7.0)
    query = jnp.array([True, False, False, False, False, False])
    plain = np.asarray(testing._unseen_perturbation(key, x, query, None))
    assert plain[0] == 1.0 and (plain[1:] != np.asarray(x)[1:]).all()
    # forms that reveal nothing: the same move as without forms
    zero = np.asarray(testing._unseen_perturbation(key, x, query, jnp.zeros((2, 6))))
    np.testing.assert_allclose(zero, plain, rtol=1e-6)
    # a form of all ones (the sum) and a zero row: every revealed value is kept
    forms = np.zeros((3, 6))
    forms[0] = 1.0
    forms[2, 1:3] = [1.0, -2.0]
    out = np.asarray(testing._unseen_perturbation(key, x, query, jnp.asarray(forms)), np.float64)
    np.testing.assert_allclose(forms @ out, forms @ np.asarray(x, np.float64), atol=1e-4)
    assert out[0] == 1.0 and np.abs(out - np.asarray(x)).max() > 0.1


def test_check_budget__counts_revealed_forms_even_when_the_protocol_does_not(monkeypatch):
    # the backstop behind the protocol's own count: one coordinate and two non-zero forms (and
    # a zero form, which reveals nothing) is three observations against a budget of 2
    learner, params = oslr.make("ogd-random-subset", d=4, k=2)
    problem, pp = oslr.make_problem("sparse-linear", d=4, k=2)
    forms = np.zeros((1, 3, 4))
    forms[0, 0, 1], forms[0, 1, 2] = 1.0, 1.0
    recs = SimpleNamespace(n_queried=np.array([1]), over_budget=np.array([False]),
                           query=np.array([[True, False, False, False]]), forms=forms)
    monkeypatch.setattr(testing, "_runner", lambda *a, **k: (lambda *b: (None, recs), [1]))
    with pytest.raises(ContractError, match=r"^budget: 3 features revealed > budget 2\.$"):
        testing.check_budget(learner, params, problem, pp)
    recs.forms = forms[:, :1]  # one coordinate and one form: within the budget
    testing.check_budget(learner, params, problem, pp)


def test_vmap_checks__compare_three_rows_batched_with_a_loop(monkeypatch):
    seen = []
    monkeypatch.setattr(testing, "_batched_vs_loop",
                        lambda name, learner, problem, pp, ids, points, n, rtol, atol:
                        seen.append((name, ids, points, n)))
    testing.check_vmap_seeds("L", "P", None, None, n_rounds=5)
    testing.check_vmap_params("L", "P", "A", None, None, n_rounds=6)
    assert seen == [("vmap over seeds vs loop", [0, 1, 2], ["P"] * 3, 5),
                    ("vmap over params vs loop", [2, 2, 2], ["P", "A", "P"], 6)]


@pytest.mark.slow  # compiles an episode (6 s); keeps the default run under 5 min
def test_check_jit_matches_eager__the_eager_side_starts_from_the_same_runs_init():
    # a learner whose initial state is random: the eager run must draw it from run 1's key too
    learner, params = oslr.make("ogd-full", d=4)
    problem, pp = oslr.make_problem("sparse-linear", d=4, k=2)
    base_init = learner.init
    noisy = learner._replace(init=lambda key, p: base_init(key, p)._replace(
        w=0.1 * jax.random.normal(key, (4,))))
    testing.check_jit_matches_eager(noisy, params, problem, pp, n_rounds=2, n_eager=1)


def test_check_state_stable__hands_the_problems_lookup_to_the_round():
    # a learner that rebuilds arms from their ids needs the problem's lookup inside the round
    problem, pp = oslr.make_problem("linear-bandit", d=6, n_arms=5)

    def sample(key, state, t, params):  # the same arms, with global ids
        state, ex = problem.sample(key, state, t, params)
        return state, ex._replace(arm_ids=jnp.arange(5, dtype=jnp.int32))

    with_ids = problem._replace(sample=sample,
                                features=lambda params, ids: jnp.ones(ids.shape + (6,)) / 6)
    learner, params = oslr.make("flinucb-gd", d=6, n_arms=5, horizon=10, history="id")
    testing.check_state_stable(learner, params, with_ids, pp)


def test_check_learner__runs_the_eight_checks_in_order(monkeypatch):
    order = []
    for name in ("state_stable", "jit_matches_eager", "vmap_seeds", "vmap_params", "no_retrace",
                 "finite", "budget", "blind"):
        monkeypatch.setattr(testing, f"check_{name}",
                            lambda *a, _n=name, **k: order.append(_n))
    learner, params = oslr.make("ogd-full", d=4)
    problem, pp = oslr.make_problem("sparse-linear", d=4, k=2)
    passed = testing.check_learner(learner, params, params, problem, pp)
    assert passed == order == ["state_stable", "jit_matches_eager", "vmap_seeds", "vmap_params",
                               "no_retrace", "finite", "budget", "blind"]
    bandit, bpp = oslr.make_problem("linear-bandit", d=4, n_arms=3)
    with pytest.raises(ValueError, match="cannot host a prediction learner"):
        testing.check_learner(learner, params, params, bandit, bpp)


def test_example_problem__sizes():
    sphere, _ = testing.example_problem(BANDIT, Requirements(continuous_actions=True), d=8)
    arms, _ = testing.example_problem(BANDIT, d=8)
    tiny, _ = testing.example_problem(BANDIT, d=3)
    stream, spp = testing.example_problem("prediction", d=7)
    assert (sphere.d, arms.d, arms.n_arms, tiny.d) == (6, 6, 5, 2)
    assert (stream.name, stream.d, int(spp.k)) == ("sparse-linear", 7, 2)
    assert LEARNERS["ogd-full"].family == "prediction"


def _toy_learner():
    """A learner whose initial state is drawn from its key and scaled by its params (a ()
    float), queries nothing and predicts w[0]."""
    from oslr.types import PREDICTION, Learner

    def init(key, p):
        return {"w": p * jax.random.normal(key, (2,))}

    def step(key, state, rnd, p):
        rnd.observe(jnp.zeros(2, bool))
        rnd.commit(state["w"][0])
        return state

    return Learner(init=init, step=step, family=PREDICTION, budget=lambda p: 0, name="toy")


def test_check_state_stable__builds_the_init_state_from_the_params():
    problem, pp = oslr.make_problem("sparse-linear", d=2, k=1)
    testing.check_state_stable(_toy_learner(), jnp.float32(2.0), problem, pp)  # (eval_shape)


def test_check_jit_matches_eager__the_eager_init_draws_from_run_1s_key(monkeypatch):
    """The jitted episode is run 1 of seed 0: the eager side's init gets run 1's init key (the
    compiled side is faked here; the slow test above runs it)."""
    from oslr.rollout import LEARNER_INIT, run_keys
    from oslr.types import StreamExample

    seen = []
    toy = _toy_learner()
    spy = toy._replace(init=lambda key, p: seen.append(np.asarray(jax.random.key_data(key)))
                       or toy.init(key, p))
    example = StreamExample(x=jnp.ones((1, 2)), y=jnp.ones(1), y_clean=jnp.ones(1))
    monkeypatch.setattr(testing, "stream", lambda *a: example)
    monkeypatch.setattr(testing, "_runner", lambda *a, **k: (lambda *args: (None, None),))
    with pytest.raises(Exception):  # the faked compiled side cannot match
        testing.check_jit_matches_eager(spy, jnp.float32(1.0), None, None, n_rounds=1, n_eager=1)
    want = jax.random.key_data(run_keys(jnp.uint32(0), 1)[LEARNER_INIT])
    assert len(seen) == 1 and np.array_equal(seen[0], np.asarray(want))
