"""`oslr.program`: one run's init and chunk, and their batched programs, compiled once per
learner, problem and shapes."""

import jax
import jax.numpy as jnp
import numpy as np

import oslr
from oslr import metrics, program
from oslr.rollout import init_run, run_keys
from tests.helpers import study_setup


def _fns(name="ogd-full", **options):
    learner, params, problem, pp = study_setup(name, d=4, **options)
    ckpts = jnp.asarray(metrics.checkpoint_rounds(8), jnp.int32)
    init, chunk = program.make_run_fns(learner, problem, len(ckpts), False)
    return learner, params, problem, pp, ckpts, init, chunk


def test_batched_fns__a_learner_or_problem_differing_in_any_function_gets_its_own_program():
    learner, _, problem, _ = study_setup("ogd-full", d=4)
    first = program.batched_fns(learner, problem, 5, False)
    assert program.batched_fns(learner, problem, 5, False)[0] is first[0]  # cached
    variants = [
        (learner._replace(step=lambda *a: learner.step(*a)), problem),
        (learner._replace(init=lambda *a: learner.init(*a)), problem),
        (learner, problem._replace(sample=lambda *a: problem.sample(*a))),
        (learner, problem._replace(init=lambda *a: problem.init(*a))),
    ]
    for lrn, prb in variants:
        assert program.batched_fns(lrn, prb, 5, False)[0] is not first[0]
    assert program.batched_fns(learner, problem, 6, False)[0] is not first[0]
    assert program.batched_fns(learner, problem, 5, True)[0] is not first[0]


def test_make_run_fns__init_reads_the_learner_params():
    learner, params, problem, pp, _, init, _ = _fns()
    ls, _, _ = init(jnp.uint32(0), jnp.int32(0), params, pp)
    want, _ = init_run(learner, problem, run_keys(jnp.uint32(0), jnp.int32(0)), params, pp)
    for got, ref in zip(jax.tree.leaves(ls), jax.tree.leaves(want)):
        np.testing.assert_array_equal(got, ref)
    seen = []
    spy = learner._replace(init=lambda key, p: (seen.append(p), learner.init(key, p))[1])
    seen.clear()
    init_spy, _ = program.make_run_fns(spy, problem, 3, False)
    init_spy(jnp.uint32(0), jnp.int32(0), params, pp)
    assert seen == [params]


def test_chunk__guarded_by_default_rounds_past_the_horizon_change_nothing():
    _, params, _, pp, ckpts, init, chunk = _fns()
    carry = init(jnp.uint32(0), jnp.int32(0), params, pp)
    args = (jnp.int32(0), jnp.int32(8), ckpts, jnp.uint32(0), jnp.int32(0), params, pp)
    whole = chunk(carry, *args, 8, 1, False)
    past = chunk(carry, *args, 12)  # four rounds beyond the horizon of 8
    for a, b in zip(jax.tree.leaves(whole), jax.tree.leaves(past)):
        np.testing.assert_array_equal(a, b)


def test_chunk__unroll_reaches_the_compiled_loop():
    _, params, _, pp, ckpts, init, chunk = _fns()
    carry = init(jnp.uint32(0), jnp.int32(0), params, pp)
    args = (jnp.int32(0), jnp.int32(8), ckpts, jnp.uint32(0), jnp.int32(0), params, pp)
    text = str(jax.make_jaxpr(lambda c: chunk(c, *args, 8, 4, False))(carry))
    assert "unroll=4" in text


def test_compiler_options__a_runs_bits_do_not_depend_on_its_batch_at_d_100():
    # LinUCB's arms times its A^-1 under XLA:CPU's YNNPACK fusions was blocked by the batch's
    # size: 7 of 8 runs' final regrets differed from the same runs in a batch of 64
    # (oslr.program.compiler_options turns those fusions off)
    problem, pp = oslr.make_problem("linear-bandit", d=100)
    learner, params = oslr.make("linucb", d=100)
    few, many = (oslr.simulate(learner, problem, params, pp, horizon=20, n_runs=n)
                 for n in (8, 64))
    for key in few.final:
        np.testing.assert_array_equal(few.final[key], many.final[key][:, :8], err_msg=key)


def test_known_options__each_option_asked_by_compiling_the_unknown_left_out(monkeypatch):
    from oslr import program

    got = program.known_options({"xla_backend_optimization_level": 3, "xla_no_such_option": 1,
                                 "xla_cpu_use_fusion_emitters": True})
    assert got == {"xla_backend_optimization_level": 3, "xla_cpu_use_fusion_emitters": True}
    assert program.known_options({}) == {}
    program.compiler_options.cache_clear()
    try:  # a jaxlib that knows only some of the batch-invariant options: none used
        monkeypatch.setattr(program, "BATCH_INVARIANT_OPTIONS", {
            **program.BATCH_INVARIANT_OPTIONS, "xla_no_such_option": 1})
        assert program.compiler_options() == {}
        program.compiler_options.cache_clear()
        monkeypatch.setattr(program, "known_options", lambda options: dict(options))
        assert program.compiler_options() == program.BATCH_INVARIANT_OPTIONS
    finally:
        program.compiler_options.cache_clear()
