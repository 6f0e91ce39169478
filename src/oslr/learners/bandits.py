"""Linear-bandit references (family F3).

`eps_greedy`: ridge least squares on the pulled arms, kept as A^{-1} by Sherman-Morrison (B11),
with epsilon-greedy exploration: with probability eps_t = min(1, eps (t+1)^(-alpha)) pull a
uniformly random arm, otherwise argmax_a <x_a, theta_hat>, theta_hat = A^{-1} b,
A = lam I + sum x x^T, b = sum r x.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from oslr.primitives import sherman_morrison_update, tree_select
from oslr.spec import LearnerSpec, param, register_params
from oslr.types import BANDIT, Array, Learner, Requirements, float_dtype


@register_params
class EpsGreedyParams:
    """Attributes:
    eps: () float32, exploration rate scale.
    alpha: () float32, decay exponent of eps_t (0 = constant).
    lam: () float32, ridge regulariser of A.
    """

    eps: Array = param(jnp.float32, 0.1, lo=0.0, hi=1.0,
                       doc="exploration rate scale, eps_t = min(1, eps (t+1)^-alpha)")
    alpha: Array = param(jnp.float32, 0.0, lo=0.0, hi=1.0, doc="decay exponent of eps_t")
    lam: Array = param(jnp.float32, 1.0, lo=0.0, lo_open=True,
                       doc="ridge regulariser (> 0 so that A is invertible)")


class EpsGreedyState(NamedTuple):
    """Attributes:
    a_inv: (d, d) float32, (lam I + sum x x^T)^{-1}.
    b: (d,) float32, sum of reward-weighted pulled features.
    t: () int32, rounds played.
    """

    a_inv: Array
    b: Array
    t: Array


def eps_greedy(d: int) -> Learner:
    """Epsilon-greedy ridge least squares for linear bandits with finite arm sets."""

    def init(key: Array, params: EpsGreedyParams) -> EpsGreedyState:
        del key
        return EpsGreedyState(
            a_inv=jnp.eye(d, dtype=float_dtype()) / params.lam,
            b=jnp.zeros(d, float_dtype()),
            t=jnp.zeros((), jnp.int32),
        )

    def step(key: Array, state: EpsGreedyState, rnd, params: EpsGreedyParams) -> EpsGreedyState:
        k_coin, k_arm = jax.random.split(key)
        arms = rnd.arms
        theta = state.a_inv @ state.b
        greedy = jnp.argmax(arms @ theta)
        eps_t = jnp.minimum(1.0, params.eps * (state.t + 1.0) ** (-params.alpha))
        explore = jax.random.uniform(k_coin, (), jnp.float32) < eps_t  # float32 draws in both modes
        random_arm = jax.random.randint(k_arm, (), 0, rnd.n_arms, jnp.int32)
        arm = jnp.where(explore, random_arm, greedy)
        reward = rnd.pull(arm)
        x = arms[arm]
        new = EpsGreedyState(
            a_inv=sherman_morrison_update(state.a_inv, x),
            b=state.b + reward * x,
            t=state.t + 1,
        )
        # a rejected replay event leaves the state as it was
        return tree_select(rnd.accepted, new, state)

    def budget(params: EpsGreedyParams) -> Array:
        del params
        return jnp.asarray(1, jnp.int32)

    return Learner(
        init=init, step=step, family=BANDIT, budget=budget, name="eps-greedy",
        requires=Requirements(replay=True),
    )


EPS_GREEDY = LearnerSpec(
    name="eps-greedy",
    family=BANDIT,
    description="epsilon-greedy ridge least squares (Sherman-Morrison) for linear bandits",
    factory=eps_greedy,
    params=EpsGreedyParams,
    alt={"eps": 0.3, "alpha": 0.5, "lam": 2.0},
    reference="docs/algorithms.md F3",
)
