import jax
import jax.numpy as jnp
import numpy as np
import pytest

from oslr.protocol import BanditRound, LinearRound, PredictionRound, ProtocolError, play_round
from oslr.types import PREDICTION, BanditExample, Learner, StreamExample


def _example(d=5):
    x = jnp.arange(1.0, d + 1.0)
    return StreamExample(x=x, y=jnp.float32(7.0), y_clean=jnp.float32(6.5))


def test_prediction_round__reveals_only_queried_features_then_label():
    rnd = PredictionRound(_example(), budget=2)
    x = rnd.observe(jnp.array([True, False, False, True, False]))
    assert np.asarray(x).tolist() == [1.0, 0.0, 0.0, 4.0, 0.0]
    assert float(rnd.commit(0.5)) == 7.0
    rec = rnd._record
    assert float(rec.prediction) == 0.5 and int(rec.n_queried) == 2 and not bool(rec.over_budget)


def test_prediction_round__truncates_over_budget_request_and_flags_it():
    rnd = PredictionRound(_example(), budget=2)
    x = rnd.observe(jnp.ones(5, bool))
    assert np.asarray(x).tolist() == [1.0, 2.0, 0.0, 0.0, 0.0]
    rnd.commit(0.0)
    assert bool(rnd._record.over_budget) and int(rnd._record.n_queried) == 5


def test_prediction_round__linear_forms_count_against_budget():
    rnd = PredictionRound(_example(), budget=2)
    forms = jnp.array([[1.0, 1.0, 0.0, 0.0, 0.0], [0.0] * 5])
    x, vals = rnd.observe(jnp.array([False, False, True, True, False]), forms=forms)
    assert np.asarray(vals).tolist() == [3.0, 0.0]  # one nonzero form = one observation
    assert np.asarray(x).tolist() == [0.0, 0.0, 3.0, 0.0, 0.0]  # one coordinate left
    rnd.commit(0.0)
    assert bool(rnd._record.over_budget)


@pytest.mark.parametrize("order", ["commit-observe", "observe-twice", "commit-twice"])
def test_prediction_round__wrong_order_fails_at_trace_time(order):
    rnd = PredictionRound(_example(), budget=5)
    with pytest.raises(ProtocolError):
        if order == "commit-observe":
            rnd.commit(0.0)
            rnd.observe(jnp.ones(5, bool))
        elif order == "observe-twice":
            rnd.observe(jnp.ones(5, bool))
            rnd.observe(jnp.ones(5, bool))
        else:
            rnd.commit(0.0)
            rnd.commit(0.0)


def test_play_round__missing_commit_is_an_error():
    lazy = Learner(init=lambda k, p: (), step=lambda k, s, r, p: s, family=PREDICTION,
                   budget=lambda p: jnp.int32(1), name="lazy")
    with pytest.raises(ProtocolError, match="without committing"):
        play_round(lazy, jax.random.key(0), (), _example(), None)


def test_linear_round__feedback_on_support_only_and_w_outside_support_dropped():
    rnd = LinearRound(_example(), budget=2)
    w = jnp.array([0.5, 0.0, -0.5, 0.0, 0.2])
    theta = rnd.play(w, support=jnp.array([True, False, True, False, False]))
    assert np.asarray(theta).tolist() == [-7.0, 0.0, -21.0, 0.0, 0.0]
    rec = rnd._record
    assert np.asarray(rec.w).tolist() == [0.5, 0.0, -0.5, 0.0, 0.0]
    assert bool(rec.over_budget)  # w had mass outside its declared support
    with pytest.raises(ProtocolError):
        rnd.play(w)


def test_bandit_round__reveals_only_the_pulled_reward():
    ex = BanditExample(arms=jnp.eye(3), rewards=jnp.array([0.1, 0.9, 0.3]),
                       means=jnp.array([0.0, 1.0, 0.0]))
    rnd = BanditRound(ex)
    assert float(rnd.pull(2)) == pytest.approx(0.3)
    with pytest.raises(ProtocolError):
        rnd.pull(1)


def test_linear_round__over_budget_request_reveals_only_the_truncated_support():
    # budget 2, a request for 3 coordinates: theta comes back on the first 2 (index order) only
    rnd = LinearRound(_example(), budget=2)
    w = jnp.array([0.5, 0.0, -0.5, 0.0, 0.2])
    theta = rnd.play(w)
    assert np.flatnonzero(np.asarray(theta)).tolist() == [0, 2]
    assert np.flatnonzero(np.asarray(rnd._record.query)).tolist() == [0, 2]
    assert bool(rnd._record.over_budget) and int(rnd._record.n_queried) == 3


def test_prediction_round__over_budget_forms_and_coordinates_reveal_within_the_budget():
    rnd = PredictionRound(_example(), budget=2)
    forms = jnp.array([[1.0, 1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 1.0]])
    x, values = rnd.observe(jnp.array([False, False, True, True, False]), forms)
    # the 2 forms use the whole budget: no coordinate is revealed
    assert np.asarray(x).tolist() == [0.0] * 5 and np.asarray(values).tolist() == [3.0, 5.0]
    rnd.commit(0.0)
    assert bool(rnd._record.over_budget) and int(rnd._record.n_queried) == 4
