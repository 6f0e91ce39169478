"""Epsilon-greedy (oslr.learners.bandits) against a float64 NumPy reference with the same draws."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import oslr
from oslr.testing import episode_fn
from tests.helpers import learner_keys, stream, users_build
from tests.reference.eps_greedy import eps_greedy_reference


T = 200


@pytest.mark.parametrize("build", [jax.jit, users_build])  # an argmax: as users compile too
def test_eps_greedy__matches_float64_reference_with_same_draws(build):
    d, n_arms = 5, 6
    problem, pp = oslr.make_problem("linear-bandit", d=d, n_arms=n_arms)
    learner, params = oslr.make("eps-greedy", d=d, eps=0.2, lam=2.0)  # a ridge other than 1
    assert learner.name == "eps-greedy" and learner.requires.replay  # labels; OBD replay
    assert int(learner.budget(params)) == 1  # one arm a round
    _, recs = build(episode_fn(learner, problem, T))(jnp.uint32(4), 2, params, pp)
    exs = stream(problem, pp, 4, 2, T)
    keys = learner_keys(4, 2, T)

    def draws(key):  # the learner's own split of its round key
        k_coin, k_arm = jax.random.split(key)
        return jax.random.bernoulli(k_coin, 0.2), jax.random.randint(k_arm, (), 0, n_arms)

    explore, random_arm = jax.jit(jax.vmap(draws))(keys)
    pulled = eps_greedy_reference(exs.arms, exs.rewards, np.asarray(explore),
                                  np.asarray(random_arm), 2.0)
    np.testing.assert_array_equal(np.asarray(recs.arm), pulled)
    # float64 mode plays the same stream: the same draws, so the same arms
    from tests.helpers import x64

    with x64():
        learner, params = oslr.make("eps-greedy", d=d, eps=0.2, lam=2.0)
        _, recs64 = jax.jit(episode_fn(learner, problem, T))(jnp.uint32(4), 2, params, pp)
    np.testing.assert_array_equal(np.asarray(recs64.arm), pulled)


@pytest.mark.slow
def test_eps_greedy__pseudo_regret_grows_slower_than_random():
    problem, pp = oslr.make_problem("linear-bandit", d=5, n_arms=8)
    greedy, gp = oslr.make("eps-greedy", d=5, eps=0.05)
    random, rp = oslr.make("eps-greedy", d=5, eps=1.0)
    rg = oslr.simulate(greedy, problem, gp, pp, horizon=1000, n_runs=16).final["pseudo_regret"]
    rr = oslr.simulate(random, problem, rp, pp, horizon=1000, n_runs=16).final["pseudo_regret"]
    assert rg.mean() < 0.3 * rr.mean()


def test_eps_greedy__decaying_exploration_rate_matches_the_reference_with_the_same_draws():
    # eps_t = min(1, eps (t + 1)^-alpha): with eps = 0.8, alpha = 0.5 it is 0.8 at t = 0, 0.4 at
    # t = 3, 0.08 at t = 99 (the round index t counts from 0)
    d, n_arms, eps, alpha = 4, 5, 0.8, 0.5
    problem, pp = oslr.make_problem("linear-bandit", d=d, n_arms=n_arms)
    learner, params = oslr.make("eps-greedy", d=d, eps=eps, alpha=alpha)
    episode = jax.jit(episode_fn(learner, problem, T))
    rate = np.minimum(1.0, eps * (np.arange(T) + 1.0) ** -alpha)
    assert rate[[0, 3, 99]] == pytest.approx([0.8, 0.4, 0.08])
    # the schedule indexed from t instead of t + 1 (max(t, 1)^-alpha): one round late
    late = np.minimum(1.0, eps * np.maximum(np.arange(T), 1.0) ** -alpha)

    def draws(key, p):
        k_coin, k_arm = jax.random.split(key)
        return jax.random.bernoulli(k_coin, p), jax.random.randint(k_arm, (), 0, n_arms)

    draw = jax.jit(jax.vmap(draws))
    differs = 0
    for run in range(8):  # eight runs: a schedule one round late changes some run's pulls
        _, recs = episode(jnp.uint32(2), run, params, pp)
        exs = stream(problem, pp, 2, run, T)
        keys = learner_keys(2, run, T)
        pulls = {}
        for name, r in (("rate", rate), ("late", late)):
            explore, random_arm = draw(keys, jnp.asarray(r, jnp.float32))
            if name == "rate":
                assert 0 < int(np.sum(explore[T // 2:])) < int(np.sum(explore[:T // 2]))
            pulls[name] = eps_greedy_reference(exs.arms, exs.rewards, np.asarray(explore),
                                               np.asarray(random_arm), 1.0)
        np.testing.assert_array_equal(np.asarray(recs.arm), pulls["rate"])
        differs += not np.array_equal(pulls["rate"], pulls["late"])
    assert differs >= 1  # the check tells the two schedules apart


def test_eps_greedy__a_rejected_replay_event_leaves_the_state_as_it_was():
    from oslr.rollout import play_round
    from oslr.types import BanditExample

    learner, params = oslr.make("eps-greedy", d=3, eps=1.0)
    state = learner.init(jax.random.key(0), params)
    assert state.t.dtype == jnp.int32 and int(state.t) == 0
    ex = BanditExample(arms=jnp.eye(3), rewards=jnp.array([1.0, 2.0, 3.0]), means=jnp.zeros(3),
                       logged=jnp.int32(-1))  # no pull matches: every event is rejected
    new, rec = play_round(learner, jax.random.key(1), state, ex, params)
    assert not bool(rec.accepted)
    jax.tree.map(np.testing.assert_array_equal, new, state)
    ex = ex._replace(logged=rec.arm)  # the same pull, now the logged arm: it learns
    new, _ = play_round(learner, jax.random.key(1), state, ex, params)
    assert int(new.t) == 1 and float(new.b[int(rec.arm)]) == float(rec.arm) + 1.0
    # and it says so to the harness: a replayed problem is accepted (a learner that does not
    # skip rejected events is refused there)
    from oslr.problems.obd import obd_replay

    replay = obd_replay("men")
    learner.requires.check(replay, 100, "eps-greedy")
    with pytest.raises(ValueError, match="does not skip rejected events"):
        learner.requires.__class__().check(replay, 100)
