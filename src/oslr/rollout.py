"""One rollout: the key schedule and the round body shared by the simulator, the contract suite
and the tests' references.

Run r of a study with seed s uses `run_keys(s, r) = split(fold_in(root_key(s), r), 4)`: the streams
`PROBLEM_INIT`, `PROBLEM_ROUNDS`, `LEARNER_INIT` and `LEARNER_ROUNDS`; round t uses
`fold_in(stream, t)`. Every learner and every grid point of run r therefore sees the same stream
(common random numbers), and a run can be replayed alone.

Keys use `oslr.prng.THREEFRY`: JAX's threefry2x32 bit for bit (the same streams as
`jax.random.key`), with the hash unrolled so that XLA fuses it with the round on a CPU.

Every matrix product a round traces (the learner, the problem, the protocol, the metrics) runs at
`MATMUL_PRECISION` = HIGHEST (`exact_matmuls`): on a GPU a float32 product otherwise runs at TF32
(10-bit mantissa) and LinUCB's regret, prefix sums and Gram updates drift from the CPU's. On a CPU
the precision changes nothing. The shared primitives whose result must be exact (prefix sums,
Sherman-Morrison) also state it themselves, for use outside a study.
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
from jax import lax

from oslr.primitives.tree import tree_select
from oslr.prng import THREEFRY
from oslr.families import family
from oslr.protocol import ProtocolError, problem_lookup
from oslr.types import Array, Learner, Problem, PyTree

PROBLEM_INIT, PROBLEM_ROUNDS, LEARNER_INIT, LEARNER_ROUNDS = range(4)

#: The precision of every matrix product traced inside a study's round (see the module doc).
MATMUL_PRECISION = "highest"


def exact_matmuls():
    """Context manager: matrix products traced inside it default to `MATMUL_PRECISION`."""
    return jax.default_matmul_precision(MATMUL_PRECISION)

#: The key implementation behind every study's keys.
PRNG_IMPL = THREEFRY


def root_key(seed: Any) -> Array:
    """The typed root key of seed `seed` (a uint32 scalar), on `PRNG_IMPL`."""
    return jax.random.key(jnp.asarray(seed, jnp.uint32), impl=PRNG_IMPL)


def run_keys(seed: Any, run_id: Any) -> Array:
    """(4,) typed keys of run `run_id` under root seed `seed` (uint32 / int32 scalars)."""
    return jax.random.split(jax.random.fold_in(root_key(seed), run_id), 4)


def play_round(learner: Learner, key: Array, state: Any, example: Any, params: Any,
               t: Array | None = None, lookup=None):
    """Run one protocol round `t`: build the round of the learner's family (`lookup`: the
    problem's `features` bound to its params, for bandit rounds), call `learner.step`, return
    (state, record).

    Raises:
      ProtocolError: at trace time if the learner never committed / played / pulled.
    """
    rnd = family(learner.family).round(example, learner.budget(params), t, lookup)
    new_state = learner.step(key, state, rnd, params)
    if rnd._record is None:
        raise ProtocolError(
            f"learner {learner.name!r} returned without committing a decision "
            "(call round.commit / round.play / round.pull exactly once)."
        )
    return new_state, rnd._record


def init_run(learner: Learner, problem: Problem, keys: Array, lp: PyTree,
             pp: PyTree) -> tuple[PyTree, PyTree]:
    """(learner state, problem state) at the start of a run."""
    with exact_matmuls():
        return learner.init(keys[LEARNER_INIT], lp), problem.init(keys[PROBLEM_INIT], pp)


def play(learner: Learner, problem: Problem, keys: Array, ls: PyTree, ps: PyTree, t: Array,
         lp: PyTree, pp: PyTree) -> tuple[PyTree, PyTree, Any, Any]:
    """Round t of a run: sample the example, play the protocol round.

    Returns:
      (new learner state, new problem state, the example, the round's record).
    """
    with exact_matmuls():
        ps_new, example = problem.sample(jax.random.fold_in(keys[PROBLEM_ROUNDS], t), ps, t, pp)
        ls_new, record = play_round(learner, jax.random.fold_in(keys[LEARNER_ROUNDS], t), ls,
                                    example, lp, t, problem_lookup(problem, pp))
    return ls_new, ps_new, example, record


def episode_fn(learner: Learner, problem: Problem, n_rounds: int) -> Callable:
    """`run(seed, run_id, params, problem_params, n_active=None) -> (final learner state,
    stacked records)`, rounds 0 .. n_rounds - 1 with the simulator's key schedule.

    `n_active` (a traced count, optional) freezes the states after the first n_active rounds, so
    one compiled program serves every prefix; records of later rounds are then computed from the
    frozen state (the contract suite reads only the first n_active)."""

    def run(seed, run_id, lp, pp, n_active=None):
        keys = run_keys(seed, run_id)

        def body(c, t):
            ls, ps, _, rec = play(learner, problem, keys, *c, t, lp, pp)
            new = (ls, ps) if n_active is None else tree_select(t < n_active, (ls, ps), c)
            return new, rec

        carry = init_run(learner, problem, keys, lp, pp)
        (ls, _), recs = lax.scan(body, carry, jnp.arange(n_rounds, dtype=jnp.int32))
        return ls, recs

    return run


def stream(problem: Problem, pp: PyTree, seed: int, run_id: int, horizon: int) -> Any:
    """The examples of rounds 0 .. horizon - 1 of run `run_id` (stacked), as a study sees them."""

    @jax.jit
    def examples(pp, seed, run_id):
        keys = run_keys(seed, run_id)

        def body(s, t):
            return problem.sample(jax.random.fold_in(keys[PROBLEM_ROUNDS], t), s, t, pp)

        with exact_matmuls():
            ps = problem.init(keys[PROBLEM_INIT], pp)
            return lax.scan(body, ps, jnp.arange(horizon, dtype=jnp.int32))[1]

    return examples(pp, jnp.asarray(seed, jnp.uint32), jnp.asarray(run_id, jnp.int32))


def learner_round_keys(seed: int, run_id: int, horizon: int) -> Array:
    """The (horizon,) per-round learner keys of run `run_id`."""
    @jax.jit
    def keys_of(seed, run_id):
        keys = run_keys(seed, run_id)
        return jax.vmap(lambda t: jax.random.fold_in(keys[LEARNER_ROUNDS], t))(
            jnp.arange(horizon, dtype=jnp.int32))

    return keys_of(jnp.asarray(seed, jnp.uint32), jnp.asarray(run_id, jnp.int32))


__all__ = [
    "LEARNER_INIT",
    "LEARNER_ROUNDS",
    "PROBLEM_INIT",
    "PROBLEM_ROUNDS",
    "MATMUL_PRECISION",
    "episode_fn",
    "exact_matmuls",
    "init_run",
    "learner_round_keys",
    "PRNG_IMPL",
    "play",
    "root_key",
    "run_keys",
    "stream",
]
