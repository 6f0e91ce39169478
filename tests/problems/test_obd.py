"""Open Bandit Dataset replay (oslr.problems.obd; docs/algorithms.md sections 5 and E2)."""

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


@pytest.mark.parametrize("mode", ["replay", "stream"])
def test_obd__logged_order_examples_from_the_tables(mode):
    # shuffle=False: round t shows event t; replay mode rewards only the logged item's click,
    # stream mode shows the logged item (features, click) as every arm
    from oslr.problems.obd import arm_features, obd_params

    problem, pp = oslr.make_problem("obd", campaign="men", stream=mode == "stream",
                                    shuffle=False)
    tabs, T = load_obd("men"), 6
    K = tabs["items"].shape[0]
    assert (problem.kind, problem.name, problem.n_arms, problem.changing_arms) == (
        "bandit", "obd", K, True)
    assert problem.replay == (mode == "replay")
    assert problem.info == {"campaign": "men", "stream": mode == "stream",
                            "replay": mode == "replay", "events": 10_000, "changing": True}
    exs = stream(problem, pp, 0, 0, T)
    for t in range(T):
        full = np.asarray(arm_features(jnp.asarray(tabs["users"][t]), jnp.asarray(tabs["items"]),
                                       jnp.asarray(tabs["affinity"][t])))
        item, click = tabs["item"][t], tabs["click"][t]
        np.testing.assert_array_equal(np.asarray(exs.means[t]), np.zeros(K))
        if mode == "replay":
            np.testing.assert_allclose(np.asarray(exs.arms[t]), full, rtol=1e-6)
            want = np.zeros(K, np.float32)
            want[item] = click
            np.testing.assert_array_equal(np.asarray(exs.rewards[t]), want)
            assert int(exs.logged[t]) == item
            np.testing.assert_array_equal(np.asarray(exs.arm_ids[t]), t * K + np.arange(K))
        else:
            np.testing.assert_allclose(np.asarray(exs.arms[t]), np.tile(full[item], (K, 1)),
                                       rtol=1e-6)
            np.testing.assert_array_equal(np.asarray(exs.rewards[t]), np.full(K, click))
            np.testing.assert_array_equal(np.asarray(exs.arm_ids[t]), np.full(K, t * K + item))
    if mode == "stream":
        assert exs.logged is None
    np.testing.assert_array_equal(np.asarray(obd_params().item), load_obd("all")["item"])


def test_obd__shuffled_replay_visits_events_in_the_runs_permutation():
    problem, pp = oslr.make_problem("obd", campaign="women")
    K = problem.n_arms
    exs = stream(problem, pp, 0, 0, 8)
    rows = np.asarray(exs.arm_ids)[:, 0] // K
    assert rows.tolist() != list(range(8)) and len(set(rows.tolist())) == 8
    from oslr.problems.obd import obd_replay

    assert obd_replay("women").info == problem.info  # replay and shuffled by default
    other = np.asarray(stream(problem, pp, 0, 1, 8).arm_ids)[:, 0] // K  # run 1: its own order
    assert other.tolist() != rows.tolist()
    np.testing.assert_array_equal(np.asarray(exs.logged), load_obd("women")["item"][rows])
