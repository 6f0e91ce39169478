import jax
import jax.numpy as jnp
import numpy as np
import pytest

from oslr.protocol import BanditRound, LinearRound, PredictionRound, ProtocolError
from oslr.rollout import play_round
from oslr.types import BANDIT, PREDICTION, BanditExample, Learner, StreamExample


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
    with pytest.raises(ProtocolError, match=r"^learner 'lazy' returned without committing a "
                       r"decision \(call round\.commit / round\.play / round\.pull exactly "
                       r"once\)\.$"):
        play_round(lazy, jax.random.key(0), (), _example(), None)


def test_rounds__the_index_is_int32_zero_outside_a_harness_and_the_lookup_reaches_the_round():
    for rnd in (PredictionRound(_example(), budget=2), LinearRound(_example(), budget=2),
                BanditRound(BanditExample(arms=jnp.eye(3), rewards=jnp.zeros(3),
                                          means=jnp.zeros(3)))):
        assert rnd.t.dtype == jnp.int32 and int(rnd.t) == 0
    assert int(PredictionRound(_example(), budget=2, t=jnp.int32(4)).t) == 4

    # play_round hands the problem's feature lookup to the bandit round
    seen = {}

    def step(key, state, rnd, params):
        seen["x"] = rnd.features(jnp.array([1]))
        rnd.pull(0)
        return state

    learner = Learner(init=lambda k, p: (), step=step, family=BANDIT,
                      budget=lambda p: jnp.int32(1), name="looker")
    ex = BanditExample(arms=jnp.eye(2), rewards=jnp.zeros(2), means=jnp.zeros(2))
    play_round(learner, jax.random.key(0), (), ex, None, lookup=lambda ids: 10.0 * ids)
    assert np.asarray(seen["x"]).tolist() == [10.0]


def test_prediction_round__forms_dropped_by_the_budget_are_zero_rows_in_the_record():
    rnd = PredictionRound(_example(), budget=1)
    forms = jnp.array([[1.0, 1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 2.0]])
    rnd.observe(jnp.zeros(5, bool), forms)
    rnd.commit(0.0)
    assert np.asarray(rnd._record.forms).tolist() == [[1.0, 1.0, 0.0, 0.0, 0.0], [0.0] * 5]


def test_linear_round__feedback_on_support_only_and_w_outside_support_dropped():
    rnd = LinearRound(_example(), budget=2)
    w = jnp.array([0.5, 0.0, -0.5, 0.0, 0.2])
    theta = rnd.play(w, support=jnp.array([True, False, True, False, False]))
    assert np.asarray(theta).tolist() == [-7.0, 0.0, -21.0, 0.0, 0.0]
    rec = rnd._record
    assert np.asarray(rec.w).tolist() == [0.5, 0.0, -0.5, 0.0, 0.0]
    assert bool(rec.over_budget)  # w had mass outside its declared support
    with pytest.raises(ProtocolError, match=r"^play\(\) may be called once per round\.$"):
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


# ----------------------------------------------------------- invariants on seeded random rounds


def _recorder(family, act):
    """A learner of `family` that records its round's index t in its state and acts by `act`."""
    return Learner(init=lambda k, p: jnp.int32(-1),
                   step=lambda k, s, rnd, p: (act(rnd), rnd.t)[1], family=family,
                   budget=lambda p: jnp.int32(2), name="recorder")


@pytest.mark.parametrize("family", ["prediction", "linear", "bandit"])
def test_play_round__the_round_knows_its_index_t(family):
    ex = (_example() if family != "bandit" else BanditExample(
        arms=jnp.eye(3), rewards=jnp.zeros(3), means=jnp.zeros(3)))
    act = {"prediction": lambda r: r.commit(0.0), "linear": lambda r: r.play(jnp.zeros(5)),
           "bandit": lambda r: r.pull(0)}[family]
    learner = _recorder(family, act)
    state, _ = play_round(learner, jax.random.key(0), jnp.int32(-1), ex, None, jnp.int32(41))
    assert int(state) == 41 and state.dtype == jnp.int32
    state, _ = play_round(learner, jax.random.key(0), jnp.int32(-1), ex, None)  # outside a harness
    assert int(state) == 0


def test_prediction_round__a_commit_without_observing_records_nothing_queried():
    rnd = PredictionRound(_example(), budget=2)
    rnd.commit(1.5)
    rec = rnd._record
    assert rec.query.dtype == jnp.bool_ and rec.query.shape == (5,) and not rec.query.any()
    assert rec.n_queried.dtype == jnp.int32 and int(rec.n_queried) == 0
    assert rec.over_budget.dtype == jnp.bool_ and not bool(rec.over_budget)
    assert rec.forms is None


def test_prediction_round__integer_forms_are_recorded_in_the_features_dtype():
    rnd = PredictionRound(_example(), budget=3)
    _, values = rnd.observe(jnp.zeros(5, bool), jnp.array([[1, 0, 0, 0, 2], [0, 1, 0, 0, 0]]))
    assert np.asarray(values).tolist() == [11.0, 2.0]
    rnd.commit(0.0)
    assert rnd._record.forms.dtype == rnd._x.dtype


def test_prediction_round__random_requests_invariants():
    # seeded random masks, forms and budgets: revealed = the first `budget` observations in
    # index order (forms first), n_queried = everything asked, over_budget iff asked > budget
    # (two sizes of x and of the forms, so that the eager ops compile for 4 shapes, not 24;
    # forms rows are zeroed at random: 0 to 3 nonzero forms)
    rng = np.random.default_rng(3)
    for _ in range(40):
        d, m, budget = int(rng.choice([1, 6])), int(rng.choice([0, 3])), int(rng.integers(0, 6))
        x = rng.normal(size=d).astype(np.float32)
        mask = rng.random(d) < 0.5
        forms = (rng.normal(size=(m, d)) * (rng.random((m, 1)) < 0.7)).astype(np.float32)
        rnd = PredictionRound(StreamExample(x=jnp.asarray(x), y=jnp.float32(1.0),
                                            y_clean=jnp.float32(1.0)), budget)
        out = rnd.observe(mask, forms if m else None)
        x_obs, values = out if m else (out, None)
        rnd.commit(0.0)
        rec = rnd._record
        nonzero = np.flatnonzero(np.any(forms != 0, axis=1)) if m else np.array([], int)
        kept_forms = nonzero[:budget]
        kept = np.flatnonzero(mask)[:budget - len(kept_forms)]
        assert np.flatnonzero(np.asarray(rec.query)).tolist() == kept.tolist()
        np.testing.assert_array_equal(np.asarray(x_obs), np.where(np.isin(np.arange(d), kept),
                                                                  x, 0.0))
        if m:
            want = np.where(np.isin(np.arange(m), kept_forms), forms @ x, 0.0)
            np.testing.assert_allclose(np.asarray(values), want, rtol=1e-5, atol=1e-6)
        asked = int(mask.sum()) + len(nonzero)
        assert int(rec.n_queried) == asked and bool(rec.over_budget) == (asked > budget)
        assert len(kept) + len(kept_forms) <= budget


def test_linear_round__asking_more_than_the_budget_is_over_even_with_w_inside_it():
    # support of 3 with budget 2, w nonzero on the first coordinate only (kept)
    rnd = LinearRound(_example(), budget=2)
    rnd.play(jnp.array([1.0, 0, 0, 0, 0]), support=jnp.array([True, True, True, False, False]))
    assert bool(rnd._record.over_budget) and int(rnd._record.n_queried) == 3
    rnd = LinearRound(_example(), budget=3)  # the same request within the budget
    rnd.play(jnp.array([1.0, 0, 0, 0, 0]), support=jnp.array([True, True, True, False, False]))
    assert not bool(rnd._record.over_budget)
    # w nonzero outside its support: the request is the union (2 + 1), the weight off the
    # support is not played, and the round is over budget even though 3 <= 3
    rnd = LinearRound(_example(), budget=3)
    theta = rnd.play(jnp.array([1.0, 0, 0, 0, 2.0]),
                     support=jnp.array([True, True, False, False, False]))
    rec = rnd._record
    assert int(rec.n_queried) == 3 and bool(rec.over_budget)
    assert np.asarray(rec.w).tolist() == [1.0, 0, 0, 0, 0]
    assert np.flatnonzero(np.asarray(theta)).tolist() == [0, 1]


def test_linear_round__an_integer_action_is_played_in_the_feedback_dtype():
    rnd = LinearRound(_example(), budget=2)
    rnd.play(jnp.array([1, 0, 0, 0, 0], jnp.int32))
    assert rnd._record.w.dtype == rnd._theta.dtype


def test_bandit_round__once_per_round_a_float_index_and_a_rejected_replay():
    ex = BanditExample(arms=jnp.eye(3), rewards=jnp.array([0.1, 0.9, 0.3]),
                       means=jnp.zeros(3), logged=jnp.int32(1))
    rnd = BanditRound(ex)
    assert float(rnd.pull(jnp.float32(2.0))) == 0.0  # arm 2, logged 1: rejected, reward 0
    assert int(rnd._record.arm) == 2 and rnd._record.arm.dtype == jnp.int32
    assert not bool(rnd.accepted)
    with pytest.raises(ProtocolError, match=r"^pull\(\)/play\(\) may be called once per "
                       r"round\.$"):
        rnd.pull(1)
    rnd = BanditRound(ex)
    assert float(rnd.pull(1)) == pytest.approx(0.9) and bool(rnd.accepted)


def test_bandit_round__continuous_play_scales_only_x_outside_the_unit_ball():
    theta = jnp.array([0.6, 0.8, 0.0])
    ex = BanditExample(arms=jnp.eye(3), rewards=jnp.zeros(3), means=jnp.zeros(3), theta=theta,
                       noise=jnp.float32(0.25), best=jnp.float32(1.0))
    for x, played in [([0.3, 0.0, 0.0], [0.3, 0.0, 0.0]), ([3.0, 4.0, 0.0], [0.6, 0.8, 0.0])]:
        rnd = BanditRound(ex)
        got = rnd.play(jnp.array(x))
        np.testing.assert_allclose(np.asarray(rnd._record.x), played, rtol=1e-6)
        assert float(got) == pytest.approx(float(np.dot(played, theta)) + 0.25)
        assert int(rnd._record.arm) == -1


def test_problem_lookup__binds_the_problem_params_or_is_none():
    from types import SimpleNamespace

    from oslr.protocol import problem_lookup

    problem = SimpleNamespace(features=lambda params, ids: params[ids])
    lookup = problem_lookup(problem, jnp.array([10.0, 20.0, 30.0]))
    assert np.asarray(lookup(jnp.array([2, 0]))).tolist() == [30.0, 10.0]
    assert problem_lookup(SimpleNamespace(features=None), None) is None
    assert problem_lookup(SimpleNamespace(), None) is None


def test_rounds__float32_actions_and_forms_are_recorded_in_float64_mode_dtype():
    from tests.helpers import x64

    with x64():
        ex = StreamExample(x=jnp.arange(1.0, 6.0), y=jnp.float64(7.0), y_clean=jnp.float64(6.5))
        assert ex.x.dtype == jnp.float64
        rnd = LinearRound(ex, budget=2)
        rnd.play(jnp.array([1.0, 0, 0, 0, 0], jnp.float32))
        assert rnd._record.w.dtype == jnp.float64
        rnd = PredictionRound(ex, budget=2)
        rnd.observe(jnp.zeros(5, bool), jnp.ones((1, 5), jnp.float32))
        rnd.commit(0.0)
        assert rnd._record.forms.dtype == jnp.float64
        # a float32 stream in float64 mode: the prediction stays in the stream's dtype and the
        # counts int32 (a scan carrying records would change dtype otherwise)
        ex32 = StreamExample(x=jnp.arange(1.0, 6.0, dtype=jnp.float32), y=jnp.float32(7.0),
                             y_clean=jnp.float32(6.5))
        rnd = PredictionRound(ex32, budget=2)
        _, values = rnd.observe(jnp.zeros(5, bool), jnp.ones((1, 5), jnp.float32))
        rnd.commit(0.5)
        rec = rnd._record
        assert (rec.prediction.dtype, rec.n_queried.dtype) == (jnp.float32, jnp.int32)
        assert values.dtype == jnp.float32


def _observe_jaxpr(budget, traced: bool) -> str:
    def observe(x, mask, b):
        rnd = PredictionRound(StreamExample(x=x, y=jnp.float32(0.0), y_clean=jnp.float32(0.0)),
                              b if traced else budget)
        return rnd.observe(mask)

    return str(jax.make_jaxpr(observe)(jnp.ones(6), jnp.ones(6, bool), jnp.int32(budget)))


def test_prediction_round__a_static_budget_covering_every_coordinate_costs_no_truncation():
    """ogd-full's budget d is a Python int: the round skips the prefix-sum truncation (a matrix
    product that stops XLA fusing the observation into the prediction); a traced budget, or a
    static one below d, still truncates."""
    assert "dot_general" not in _observe_jaxpr(6, traced=False)
    assert "dot_general" not in _observe_jaxpr(np.int64(9), traced=False)
    assert "dot_general" in _observe_jaxpr(6, traced=True)
    assert "dot_general" in _observe_jaxpr(5, traced=False)
    rnd = PredictionRound(_example(), budget=np.int32(5))
    assert np.asarray(rnd.observe(jnp.ones(5, bool))).tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]
    rnd.commit(0.0)
    assert not bool(rnd._record.over_budget) and int(rnd._record.n_queried) == 5
    rnd = PredictionRound(_example(), budget=4)  # static, one short: the last one dropped
    assert np.asarray(rnd.observe(jnp.ones(5, bool))).tolist() == [1.0, 2.0, 3.0, 4.0, 0.0]


def test_rounds__observation_counts_are_int32_in_float64_mode_too():
    from tests.helpers import x64

    with x64():
        rnd = PredictionRound(_example(), budget=2)
        rnd.observe(jnp.array([True, True, True, False, False]))
        rnd.commit(0.0)
        assert rnd._record.n_queried.dtype == jnp.int32 and int(rnd._record.n_queried) == 3
        rnd = PredictionRound(_example(), budget=2)  # with linear forms: counted in int32 too
        rnd.observe(jnp.array([True, False, False, False, False]), jnp.ones((2, 5)))
        rnd.commit(0.0)
        assert rnd._record.n_queried.dtype == jnp.int32 and int(rnd._record.n_queried) == 3
        lin = LinearRound(_example(), budget=2)
        lin.play(jnp.array([1.0, 0.0, 2.0, 0.0, 0.0]), jnp.array([True, False, True, True,
                                                                  False]))
        assert lin._record.n_queried.dtype == jnp.int32 and int(lin._record.n_queried) == 3


def test_rounds__refusals_name_the_shape_or_the_problem_kind():
    rnd = PredictionRound(_example(), budget=2)
    rnd.observe(jnp.zeros(5, bool))
    with pytest.raises(ProtocolError, match=r"^commit\(\) expects a scalar prediction, got "
                                            r"\(2,\)\.$"):
        rnd.commit(jnp.zeros(2))
    finite = BanditExample(arms=jnp.eye(3), rewards=jnp.zeros(3), means=jnp.zeros(3))
    with pytest.raises(ProtocolError, match=r"^play\(x\) needs a continuous-action problem; this "
                                            r"one has finite "):
        BanditRound(finite).play(jnp.ones(3))
    sphere = finite._replace(theta=jnp.ones(3), noise=jnp.float32(0.0), best=jnp.float32(1.0))
    with pytest.raises(ProtocolError, match=r"^play\(\) expects x of shape \(3,\), got \(2,\)\.$"):
        BanditRound(sphere).play(jnp.ones(2))
    rnd = BanditRound(sphere)
    rnd.play(jnp.ones(3))
    with pytest.raises(ProtocolError, match=r"^pull\(\)/play\(\) may be called once per round\.$"):
        rnd.play(jnp.ones(3))


def test_bandit_round__a_pull_in_a_continuous_problem_records_the_arms_features():
    theta = jnp.array([0.6, 0.8, 0.0])
    ex = BanditExample(arms=2.0 * jnp.eye(3), rewards=jnp.array([0.1, 0.2, 0.3]),
                       means=jnp.zeros(3), theta=theta, noise=jnp.float32(0.0),
                       best=jnp.float32(1.0))
    rnd = BanditRound(ex)
    rnd.pull(jnp.int32(1))
    np.testing.assert_array_equal(np.asarray(rnd._record.x), [0.0, 2.0, 0.0])
    rnd = BanditRound(ex._replace(theta=None, noise=None, best=None))  # finite arms: no x
    rnd.pull(jnp.int32(1))
    assert rnd._record.x is None
