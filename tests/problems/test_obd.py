"""Open Bandit Dataset replay (oslr.problems.obd; ALGORITHMS.md sections 5 and E2)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import oslr
from oslr.problems.obd import load_obd
from oslr.testing import episode_fn
from tests.helpers import stream


def test_obd__feature_map_has_the_documented_sizes_and_unit_rows():
    tabs = load_obd("all")
    assert tabs["users"].shape == (10_000, 28) and tabs["items"].shape == (80, 42)
    assert int(tabs["click"].sum()) == 38
    problem, pp = oslr.make_problem("obd")
    assert (problem.d, problem.n_arms, problem.n_rows) == (1177, 80, 10_000)
    exs = stream(problem, pp, 0, 0, 5)
    np.testing.assert_allclose(np.linalg.norm(np.asarray(exs.arms), axis=-1), 1.0, rtol=1e-5)
    # the lookup rebuilds the arms of any round from global ids
    again = problem.features(pp, exs.arm_ids)
    np.testing.assert_allclose(np.asarray(again), np.asarray(exs.arms), rtol=1e-5, atol=1e-6)


@pytest.mark.slow  # behind -m slow to keep the default run under 5 min
def test_obd_replay__rejected_events_leave_the_learner_unchanged():
    problem, pp = oslr.make_problem("obd", campaign="men")
    learner, params = oslr.make("flinucb-gd", d=problem.d, n_arms=problem.n_arms, horizon=400,
                                history="id")
    run = jax.jit(episode_fn(learner, problem, 400))
    _, recs = run(jnp.uint32(0), 0, params, pp)
    exs = stream(problem, pp, 0, 0, 400)
    accepted = np.asarray(recs.accepted)
    np.testing.assert_array_equal(accepted, np.asarray(recs.arm) == np.asarray(exs.logged))
    assert 0 < accepted.sum() < 400 / 34 * 3  # about 1 in K = 34 events
    # the state after T rounds equals the state after the last accepted round
    last = int(np.flatnonzero(accepted)[-1]) + 1
    s_full, _ = run(jnp.uint32(0), 0, params, pp)
    s_last, _ = jax.jit(episode_fn(learner, problem, last))(jnp.uint32(0), 0, params, pp)
    for a, b in zip(jax.tree.leaves(s_full), jax.tree.leaves(s_last)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.slow
def test_obd_stream_mode__every_event_is_accepted_with_the_logged_click():
    # logged order (shuffle=False): the first T events, so the clicks are known in advance
    problem, pp = oslr.make_problem("obd", campaign="women", stream=True, shuffle=False)
    T = 3000
    learner, params = oslr.make("flinucb-sag", d=problem.d, n_arms=problem.n_arms, horizon=T,
                                history="id")
    res = oslr.simulate(learner, problem, params, pp, horizon=T, n_runs=2)
    np.testing.assert_array_equal(res.final["accepted"], T)
    clicks = load_obd("women")["click"][:T].sum()
    assert clicks > 0
    np.testing.assert_array_equal(res.final["reward"], clicks)
