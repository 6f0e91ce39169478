"""Uniform random sparse play for sparse online linear optimisation (family F2, [WLL]).

The lower reference of F2: each round play w = k^(-1/b) 1_Q on a fresh uniformly random k-subset Q
(the exploration law over the set K-bar of [WLL] Algorithm 1), ignoring the feedback. Its expected
loss is the average coordinate loss, so its regret grows linearly unless theta has no signal.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax.numpy as jnp

from oslr.primitives import random_subset_mask
from oslr.spec import LearnerSpec, Option, param, register_params
from oslr.types import LINEAR, Array, Learner, float_dtype


@register_params
class UniformParams:
    """Attributes: k: () int32, sparsity of the play (traced)."""

    k: Array = param(jnp.int32, lambda c: max(1, c.d // 4), lo=1, hi="max_k",
                     doc="sparsity of the play")


class UniformState(NamedTuple):
    """Attributes: t: () int32 rounds played."""

    t: Array


def uniform_subset(d: int, max_k: int | None = None, b: float = 2.0) -> Learner:
    """Play a uniformly random k-subset with weights k^(-1/b) each round.

    Args:
      d: number of coordinates (static).
      max_k: static bound on the traced k (default d).
      b: norm exponent of the feasible set K_{k,b} (static, in [1, inf]).
    """
    max_k = d if max_k is None else max_k

    def init(key: Array, params: UniformParams) -> UniformState:
        del key, params
        return UniformState(t=jnp.zeros((), jnp.int32))

    def step(key: Array, state: UniformState, rnd, params: UniformParams) -> UniformState:
        k = jnp.minimum(params.k, 1) if b == 1.0 else params.k
        q = random_subset_mask(key, d, k, max_k)
        scale = 1.0 if math.isinf(b) else jnp.maximum(k, 1).astype(float_dtype()) ** (-1.0 / b)
        rnd.play(jnp.where(q, scale, 0.0).astype(float_dtype()), support=q)
        return UniformState(t=state.t + 1)

    def budget(params: UniformParams) -> Array:
        return params.k

    return Learner(
        init=init, step=step, family=LINEAR, budget=budget, name="uniform-subset",
        info={"b": b},
    )


UNIFORM_SUBSET = LearnerSpec(
    name="uniform-subset",
    family=LINEAR,
    description="plays k^(-1/b) on a fresh uniform k-subset (F2 lower reference)",
    factory=uniform_subset,
    params=UniformParams,
    options=(Option("max_k", lambda c: c.d, "static bound on the traced k", type=int,
                    fill="max_k"),
             Option("b", 2.0, "norm exponent of the feasible set K_{k,b}")),
    alt={"k": lambda c: max(1, c.d // 2)},
    reference="[WLL] Alg. 1 exploration law",
)
