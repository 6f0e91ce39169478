"""The compiled programs of a study: one run's `init` and `chunk` (`make_run_fns`), and their
`jit(vmap(...))` over runs, compiled once per learner, problem and shapes (`batched_fns`)."""

from __future__ import annotations

import functools

import jax
import numpy as np
import jax.numpy as jnp
from jax import lax

from oslr import compile_cache, metrics
from oslr.rollout import exact_matmuls, init_run, play, run_keys
from oslr.types import Learner, Problem


def make_run_fns(learner: Learner, problem: Problem, n_ckpt: int, stats: bool):
    """Per-run building blocks of `simulate` (unbatched, unjitted).

    Returns:
      init(seed, run_id, params, problem_params) -> carry, and
      chunk(carry, start, horizon, ckpts, seed, run_id, params, problem_params, length, unroll=1,
      guard=True) -> carry, which plays rounds start .. start + length - 1; with `guard`, rounds
      >= horizon leave the carry as is (a `lax.cond` on the round index, which is not batched over
      runs). Only `length`, `unroll` (rounds per iteration of the compiled loop, see `simulate`)
      and `guard` are static; seed, horizon and the checkpoint rounds are traced.

    A chunk that ends within the horizon needs no guard, and `simulate` compiles the guarded
    program only for a last, partial chunk: the guard costs every round either a select over the
    whole carry, which copies buffers that a round updates by a batched scatter (an SGD history),
    or a conditional, which slows learners with small carries (benchmarks/HISTORY.md).
    """
    family = learner.family

    def init(seed, run_id, lp, pp):
        ls, ps = init_run(learner, problem, run_keys(seed, run_id), lp, pp)
        ms = metrics.init(family, problem.d, n_ckpt, stats)
        ms["diag"] = metrics.init_diagnostics(learner.diagnostics, ls, lp, n_ckpt)  # shapes only
        return ls, ps, ms

    def chunk(carry, start, horizon, ckpts, seed, run_id, lp, pp, length: int, unroll: int = 1,
              guard: bool = True):
        keys = run_keys(seed, run_id)

        def round_(c, t):
            ls, ps, ms = c
            ls_new, ps_new, example, record = play(learner, problem, keys, ls, ps, t, lp, pp)
            with exact_matmuls():  # the Gram sums and the learner's diagnostics too
                ms_new = metrics.update(family, ms, example, record, t, ckpts, stats)
                ms_new["diag"] = metrics.record_diagnostics(ms_new["diag"], learner.diagnostics,
                                                            ls_new, lp, t, ckpts)
            return ls_new, ps_new, ms_new

        def body(c, i):
            t = start + i
            if not guard:
                return round_(c, t), None
            return lax.cond(t < horizon, lambda: round_(c, t), lambda: c), None

        carry, _ = lax.scan(body, carry, jnp.arange(length, dtype=jnp.int32), unroll=unroll)
        return carry

    return init, chunk


#: XLA options of every study program: XLA:CPU's YNNPACK fusions off. Their matrix products
#: and sums are blocked by the size of the whole batch, so a run's rounding depended on how many
#: runs shared its batch (LinUCB at d = 100: a quarter of 4,000 runs' final regrets differed
#: from the same runs in a batch of 16,000); without them every run's results are the same bits
#: in any batch (docs/algorithms.md section 0), which a study played in blocks relies on.
BATCH_INVARIANT_OPTIONS = {"xla_cpu_experimental_ynn_fusion_type": ""}


def known_options(options: dict) -> dict:
    """The XLA compile `options` this jaxlib knows, each asked by compiling a one-line program
    with it (an unknown one is refused: "No such compile option"). The suite's fast build asks
    of its flags the same way (tests/conftest.py)."""
    known = {}
    for name, value in options.items():
        try:
            jax.jit(lambda x: x + 1, compiler_options={name: value})(np.float32(0))
        except Exception:  # noqa: BLE001 - "No such compile option" on another jaxlib
            continue
        known[name] = value
    return known


@functools.cache
def compiler_options() -> dict:
    """BATCH_INVARIANT_OPTIONS where this jaxlib knows them (it has YNNPACK fusions), else none
    (an older one, which has no such fusions)."""
    known = known_options(BATCH_INVARIANT_OPTIONS)
    return known if known == BATCH_INVARIANT_OPTIONS else {}


_COMPILED: dict[tuple, tuple] = {}


def batched_fns(learner: Learner, problem: Problem, n_ckpt: int, stats: bool):
    """jit(vmap(...)) of the run functions, cached per (learner, problem, shapes)."""
    key = (id(learner.step), id(learner.init), id(problem.sample), id(problem.init), n_ckpt,
           stats)
    if key not in _COMPILED:
        init_one, chunk_one = make_run_fns(learner, problem, n_ckpt, stats)
        init_b = jax.jit(jax.vmap(init_one, in_axes=(None, 0, 0, None)),
                         compiler_options=compiler_options())
        chunk_b = jax.jit(
            jax.vmap(chunk_one, in_axes=(0, None, None, None, None, 0, 0, None, None, None, None)),
            static_argnums=(8, 9, 10), compiler_options=compiler_options(),
        )
        # keep the learner and problem alive so that their ids stay unique
        _COMPILED[key] = (init_b, chunk_b, learner, problem)
    return _COMPILED[key][:2]


def identity(learner: Learner, problem: Problem, n_ckpt: int, stats: bool) -> str | None:
    """What the programs of `batched_fns` compute, as a digest of the learner, the problem
    (their functions and every value those close over), the shapes and the compile options
    (`oslr.compile_cache.value_digest`), once per learner and problem; None where some part
    has no digest (a learner or problem with code outside oslr): their programs are then not
    kept by oslr's store."""
    key = (id(learner), id(problem), n_ckpt, stats)
    if key not in _IDENTITY:
        _IDENTITY[key] = (compile_cache.value_digest(
            ("study programs", learner, problem, n_ckpt, stats, compiler_options())),
            learner, problem)  # kept alive: their ids stay unique
    return _IDENTITY[key][0]


_IDENTITY: dict[tuple, tuple] = {}


def clear_compiled() -> None:
    """Drop every compiled study program (this module's cache and JAX's). A process that compiles
    hundreds of distinct programs (the arena: one per learner, problem and budget) otherwise keeps
    them all mapped and runs out of memory mappings (vm.max_map_count) long before RAM."""
    _COMPILED.clear()
    _IDENTITY.clear()
    compile_cache.clear_loaded()
    jax.clear_caches()


__all__ = ["BATCH_INVARIANT_OPTIONS", "batched_fns", "clear_compiled", "compiler_options",
           "identity", "known_options", "make_run_fns"]
