"""The harness's share of a round: the same stream played by an idle learner.

The idle learner does only what the protocol requires of its family (query nothing and predict 0;
play w = 0 on an empty support; pull arm 0), so its round is the problem's stream and keys, the
protocol round, the streamed metrics and the loop: what every learner on that problem pays. The
throughput part times it in turn with each row's program (`harness_share` = its seconds over the
row's): a row whose round is mostly harness cannot beat its NumPy loop by much more than the
loop's own stream (NumPy's generator) allows.
"""

from __future__ import annotations

import jax.numpy as jnp

import oslr
from benchmarks.cases import Case
from oslr.types import BANDIT, LINEAR, PREDICTION, Learner


def idle_learner(family: str, d: int, requires=None) -> Learner:
    """A learner of `family` that observes nothing and commits the cheapest legal decision
    (`requires`: what it claims to need of a problem, e.g. the case learner's delay buffer)."""

    def init(key, params):
        del key, params
        return jnp.zeros((), jnp.int32)

    def step(key, state, rnd, params):
        del key, params
        if family == PREDICTION:
            rnd.observe(jnp.zeros(d, bool))
            rnd.commit(jnp.zeros((), jnp.float32))
        elif family == LINEAR:
            rnd.play(jnp.zeros(d, jnp.float32), support=jnp.zeros(d, bool))
        elif family == BANDIT:
            rnd.pull(jnp.zeros((), jnp.int32))
        else:
            raise ValueError(f"unknown family {family!r}")
        return state + 1

    return Learner(init=init, step=step, family=family,
                   budget=lambda params: jnp.zeros((), jnp.int32), name="idle",
                   requires=requires)


def idle_make(case: Case, horizon: int):
    """`make(problem) -> (idle learner, params)` for `throughput.build`: the idle learner of the
    case learner's family, with its requirements (so the problem is built the same way)."""

    def make(problem):
        real, _ = oslr.make(case.learner, d=problem.d, horizon=horizon, **case.make_opts)
        return idle_learner(real.family, problem.d, real.requires), {}

    return make
