"""Every registered learner passes the public contract suite; cheaters are caught."""

import jax.numpy as jnp
import pytest

import oslr
from oslr.registry import LEARNERS
from oslr.testing import ContractError, check_budget, check_no_retrace, check_spec
from oslr.testing import check_state_stable, example_problem
from oslr.types import BANDIT, PREDICTION, Requirements


# the eight slowest to compile run with -m slow (CI runs both), keeping the default run < 5 min
# behind -m slow to keep the default run short; each of these learners also
# has reference or golden-rate tests of its own
_SLOW_CONTRACT = {"dantzig-poslr", "ftpsl-delayed", "online-greedy", "ftpsl-knapsack",
                  "flinucb-svrg", "ito-projection", "ito-block-bandit", "ito-dual-averaging",
                  "foster-hedge", "eps-greedy", "ftpsl", "ftpl-oracle-subset", "ftpl-random-subset",
                  "flinucb-gd", "flinucb-sag", "fpege-gd", "linucb", "ogd-random-subset",
                  "uniform-subset", "pege"}


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.slow) if n in _SLOW_CONTRACT else n
    for n in sorted(LEARNERS)])
def test_contract__registered_learner_passes(name):
    assert len(check_spec(LEARNERS[name])) == 8


def test_example_problem__follows_the_requirements():
    sphere, _ = example_problem(BANDIT, Requirements(continuous_actions=True))
    arms, _ = example_problem(BANDIT)
    stream, _ = example_problem(PREDICTION)
    assert (sphere.continuous_actions, arms.continuous_actions, stream.kind) == (
        True, False, "stream")

def _ogd():
    learner, params = oslr.make("ogd-random-subset", d=8, k=2)
    alt = LEARNERS["ogd-random-subset"].alt_params(8)
    problem, pp = oslr.make_problem("sparse-linear", d=8, k=2)
    return learner, params, alt, problem, pp


def test_contract__greedy_query_beyond_budget_is_caught():
    learner, params, _, problem, pp = _ogd()

    def step(key, state, rnd, p):
        x = rnd.observe(jnp.ones(8, bool))  # asks for all 8 with budget k = 2
        rnd.commit(jnp.sum(x))
        return state

    with pytest.raises(ContractError, match="budget"):
        check_budget(learner._replace(step=step), params, problem, pp)


def test_contract__python_value_in_step_causes_retrace_and_is_caught():
    learner, params, alt, problem, pp = _ogd()

    def step(key, state, rnd, p):
        k = int(p.k)  # concretises a param: fails under jit or retraces per value
        x = rnd.observe(jnp.arange(8) < k)
        rnd.commit(jnp.sum(x))
        return state

    with pytest.raises(Exception):
        check_no_retrace(learner._replace(step=step), params, alt, problem, pp)


def test_contract__state_dtype_drift_is_caught():
    learner, params, _, problem, pp = _ogd()

    def step(key, state, rnd, p):
        learner.step(key, state, rnd, p)
        return state._replace(w=state.w.astype(jnp.float16))

    with pytest.raises(ContractError, match="state leaf"):
        check_state_stable(learner._replace(step=step), params, problem, pp)


def test_contract__peeking_at_private_round_data_is_caught():
    from oslr.testing import check_blind

    learner, params, _, problem, pp = _ogd()

    def step(key, state, rnd, p):
        rnd.observe(jnp.zeros(8, bool))
        rnd.commit(rnd._y + rnd._x[0])  # reads the label and an unqueried feature
        return state

    with pytest.raises(ContractError, match="blind"):
        check_blind(learner._replace(step=step), params, problem, pp)


def test_contract__linear_forms_blind_to_what_they_do_not_see():
    from oslr.testing import check_blind, check_budget

    learner, params, _, problem, pp = _ogd()
    form = jnp.zeros((1, 8)).at[0, 0].set(1.0).at[0, 1].set(2.0)  # reveals x0 + 2 x1 only

    def honest(key, state, rnd, p):
        _, v = rnd.observe(jnp.zeros(8, bool), form)
        rnd.commit(3.0 * v[0])
        return state

    def leaky(key, state, rnd, p):  # also reads x1 alone, which the form does not reveal
        _, v = rnd.observe(jnp.zeros(8, bool), form)
        rnd.commit(v[0] + rnd._x[1])
        return state

    check_blind(learner._replace(step=honest), params, problem, pp)
    with pytest.raises(ContractError, match="blind"):
        check_blind(learner._replace(step=leaky), params, problem, pp)

    def greedy(key, state, rnd, p):  # one coordinate plus eight forms: 9 observations
        _, v = rnd.observe(jnp.arange(8) < 1, jnp.eye(8))
        rnd.commit(v[0])
        return state

    with pytest.raises(ContractError, match="budget"):
        check_budget(learner._replace(step=greedy), params, problem, pp)


def test_contract__learner_that_acts_differently_under_jit_is_caught():
    import jax

    from oslr.testing import check_jit_matches_eager

    learner, params, _, problem, pp = _ogd()

    def step(key, state, rnd, p):
        x = rnd.observe(jnp.arange(8) < 2)
        traced = isinstance(x, jax.core.Tracer)  # a Python branch on being traced
        rnd.commit(jnp.sum(x) + (1.0 if traced else 0.0))
        return state

    with pytest.raises(ContractError, match="jit vs no-jit"):
        check_jit_matches_eager(learner._replace(step=step), params, problem, pp)


def test_contract__state_update_skipped_in_eager_rounds_is_caught():
    import jax

    from oslr.testing import check_jit_matches_eager

    learner, params, _, problem, pp = _ogd()

    def step(key, state, rnd, p):
        new = learner.step(key, state, rnd, p)
        # a state change only when compiled: the decisions of the two eager rounds may agree,
        # the state after them must not
        return new if isinstance(new.w, jax.core.Tracer) else state

    with pytest.raises(ContractError, match="jit vs no-jit"):
        check_jit_matches_eager(learner._replace(step=step), params, problem, pp)
