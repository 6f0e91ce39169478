"""Float64 mode: every registered learner, and every static option that changes its program,
traces and runs under jax_enable_x64 and computes in float64 (`oslr.testing.check_float64`);
`JAX_ENABLE_X64=1 python -m pytest -q -k x64` runs these. The contract's float64 mode catches a
learner whose carry dtype changes under x64."""

import json
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import oslr
from oslr.registry import LEARNERS
from oslr.testing import ContractError, check_float64, check_spec, example_problem
from tests.helpers import x64

#: (learner, static options) beyond each learner's defaults: the options that change its program
_VARIANTS = [
    ("uniform-subset", {"b": 1.0}),
    ("linucb", {"history": "features"}),
    ("linucb", {"schedule": "kpm", "track": True}),
    ("flinucb-gd", {"average": True, "schedule": "power"}),
    ("ftpsl", {"b": float("inf")}),
    ("ftpsl", {"b": 1.0, "gr_mode": "independent"}),
    ("ftpsl-knapsack", {"solver": "fptas"}),
    ("online-greedy", {"projection": "gaussian"}),
    ("dantzig-poslr", {"gram_mode": "paper"}),
    ("ito-block-bandit", {"bandit": "tsallis", "regressor": "ogd"}),
    ("ito-block-bandit", {"regressor": "ons"}),
    ("ito-projection", {"approx": "iht"}),
    ("ito-projection", {"projection": "identity"}),
]

# one learner of each kind in the default run (prediction, linear, bandit, continuous actions,
# a subset-enumerating one); every other learner and option variant with -m slow, which CI runs
# too (each compiles its own program under x64: 2-7 s apiece, 100 s together on 2 cores, more
# than the default run's 5 minutes leave)
_DEFAULT_RUN = {"ogd-full", "ftpsl", "linucb", "pege", "uniform-subset", "foster-hedge"}
_CASES = [(name, {}) if name in _DEFAULT_RUN else pytest.param(name, {}, marks=pytest.mark.slow)
          for name in sorted(LEARNERS)] + [
    pytest.param(name, options, marks=pytest.mark.slow) for name, options in _VARIANTS]


def _case_id(case) -> str:
    name, options = case.values if hasattr(case, "values") else case
    return name + "".join(f"-{k}={v}" for k, v in options.items())


@pytest.mark.slow  # keeps the default run under 5 min (CI runs it with -m slow)
@pytest.mark.parametrize("name,options", _CASES, ids=[_case_id(c) for c in _CASES])
def test_x64__learner_computes_in_float64(name, options):
    if name == "online-greedy" and "projection" in options:
        rng = np.random.default_rng(0)
        options = {"projection": rng.standard_normal((8, 12)).astype(np.float32)}
    assert check_spec(LEARNERS[name], float64=True, **options) == [
        "float64_state", "state_stable", "finite", "budget"]


def test_x64__the_float64_mode_catches_a_carry_that_changes_dtype():
    learner, params = oslr.make("ogd-full", d=8)
    problem, pp = example_problem("prediction")

    def leaky_init(key, p):  # float32 by hand: stays float32 when the user asked for float64
        return learner.init(key, p)._replace(w=jnp.zeros(8, jnp.float32))

    with pytest.raises(ContractError, match="float64: state leaves"):
        check_float64(learner._replace(init=leaky_init), params, problem, pp)

    def mismatched_step(key, state, rnd, p):  # a cond whose branches differ under x64 only
        new = learner.step(key, state, rnd, p)
        w = jax.lax.cond(jnp.sum(new.w) > 0, lambda: new.w, lambda: jnp.ones(8, jnp.float32))
        return new._replace(w=w)

    with pytest.raises(ContractError, match="does not trace under x64"):
        check_float64(learner._replace(step=mismatched_step), params, problem, pp)


def test_x64__params_follow_the_mode_and_streams_stay_float32():
    with x64():
        learner, params = oslr.make("ogd-full", d=4)
        problem, pp = oslr.make_problem("sparse-linear", d=4, k=2)
        assert params.eta.dtype == jnp.float64
        assert pp.sigma.dtype == jnp.float32  # the problems' draws are the float32 stream
    if not jax.config.jax_enable_x64:  # (JAX_ENABLE_X64=1 turns it on for the whole run)
        _, params32 = oslr.make("ogd-full", d=4)
        assert params32.eta.dtype == jnp.float32


_SCRIPT = """
import json, jax, numpy as np, oslr
from oslr.registry import LEARNERS
from oslr.testing import example_problem
out = {"x64": bool(jax.config.jax_enable_x64)}
for name, spec in LEARNERS.items():
    learner, _ = spec.make(8)
    prob, pp = example_problem(spec.family, learner.requires, 8)
    if learner.requires is not None and learner.requires.dataset:  # an offline oracle
        prob, pp = oslr.make_problem("a9a")
    options = {"n_arms": prob.n_arms} if "n_arms" in spec.option_names else {}
    learner, params = spec.make(prob.d, **options)
    res = oslr.simulate(learner, prob, params, pp, horizon=30, n_runs=2)
    curves = res.regret_curves()
    out[name] = {"dtype": str(res.curves[next(iter(res.curves))].dtype),
                 "finite": bool(all(np.isfinite(v).all() for v in curves.values()))}
print(json.dumps(out))
"""


@pytest.mark.slow  # a process started with JAX_ENABLE_X64=1, every learner through simulate
def test_x64__every_learner_simulates_in_float64_from_the_environment_variable():
    env = dict(os.environ, JAX_ENABLE_X64="1", JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True,
                          text=True, check=True)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out.pop("x64") is True
    assert set(out) == set(LEARNERS)
    for name, row in out.items():
        assert row == {"dtype": "float64", "finite": True}, name


def _finals(name: str, horizon: int = 40, n_runs: int = 3) -> dict:
    """Per-run finals of `name` on its example problem (a9a for an offline oracle), seed 5."""
    spec = LEARNERS[name]
    learner, _ = spec.make(8)
    prob, pp = example_problem(spec.family, learner.requires, 8)
    if learner.requires is not None and learner.requires.dataset:
        prob, pp = oslr.make_problem("a9a")
    options = {"n_arms": prob.n_arms} if "n_arms" in spec.option_names else {}
    learner, params = spec.make(prob.d, **options)
    res = oslr.simulate(learner, prob, params, pp, horizon=horizon, n_runs=n_runs, seed=5)
    return {k: np.asarray(v, np.float64) for k, v in res.final.items()}


# the stream, the learner's coins and the problem's draws are float32 in both modes, so a float64
# study checks a float32 one run by run; in the default run one learner (a sampled expert on a
# stream whose w* is a random subset; the primitives' own tests check each kind of draw across
# modes cheaply), every learner with -m slow (two compiles each, 5-10 s apiece on 2 cores)
_SAME_STREAM_DEFAULT = {"foster-hedge"}


@pytest.mark.parametrize("name", [n if n in _SAME_STREAM_DEFAULT else
                                  pytest.param(n, marks=pytest.mark.slow)
                                  for n in sorted(LEARNERS)])
def test_x64__float32_and_float64_runs_play_the_same_stream(name):
    if jax.config.jax_enable_x64:
        pytest.skip("JAX_ENABLE_X64=1 for the whole run: no float32 side to compare")
    f32 = _finals(name)
    with x64():
        f64 = _finals(name)
    assert set(f32) == set(f64)
    if "queries" in f32:  # the same coordinates queried
        np.testing.assert_array_equal(f32["queries"], f64["queries"])
    for key in f32:
        np.testing.assert_allclose(f64[key], f32[key], rtol=2e-3, atol=1e-3 * (
            1.0 + np.abs(f32[key]).max()), err_msg=f"{name}: {key}")
