"""Online gradient descent references for limited-feature prediction (family F1).

* `ogd_full`: full-information projected OGD on the square loss, the *upper* reference: it reads
  every feature (budget d).
* `ogd_random_subset`: the *lower* reference: each round it queries a fresh uniformly random
  k-subset S_t, predicts with w restricted to S_t and takes the gradient step of that restricted
  predictor, (x_t restricted to S_t) (ŷ_t - y_t), on the observed coordinates only.

Update (both): w_{t+1} = Pi_{||w||_2 <= D}(w_t - eta_t 2 (ŷ_t - y_t) x_obs), eta_t = eta / sqrt(t+1)
(Zinkevich 2003), with the schedule and the step from optax.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp
import optax

from oslr.primitives import random_subset_mask
from oslr.spec import LearnerSpec, Option, param, register_params
from oslr.types import PREDICTION, Array, Learner, float_dtype


@register_params
class OgdParams:
    """Sweepable parameters of the OGD references.

    Attributes:
      eta: () float32, base step size; the step at round t (0-based) is eta / sqrt(t + 1).
      radius: () float32, radius D of the l2 ball the iterates are projected on.
      k: () int32, features queried per round (traced; `ogd_full` pins k = d).
    """

    eta: Array = param(jnp.float32, lambda c: 0.5 / c.d, lo=0.0, lo_open=True,
                       doc="base step size; eta / sqrt(t + 1) at round t")
    radius: Array = param(jnp.float32, 1.0, lo=0.0, lo_open=True,
                          doc="radius D of the l2 ball of the iterates")
    k: Array = param(jnp.int32, lambda c: max(1, c.d // 4), lo=1, hi="max_k",
                     doc="features queried per round")


class OgdState(NamedTuple):
    """State of the OGD references.

    Attributes:
      w: (d,) float32 current weights.
      opt: optax state of the step-size schedule (holds the () int32 step count).
    """

    w: Array
    opt: Any


def _optimizer(params: OgdParams) -> optax.GradientTransformation:
    return optax.sgd(learning_rate=lambda n: params.eta / jnp.sqrt(n + 1.0))


def _ogd(d: int, max_k: int, full: bool, name: str) -> Learner:
    def init(key: Array, params: OgdParams) -> OgdState:
        del key
        w = jnp.zeros(d, float_dtype())
        return OgdState(w=w, opt=_optimizer(params).init(w))

    def step(key: Array, state: OgdState, rnd, params: OgdParams) -> OgdState:
        if full:
            del key
            query = jnp.ones(d, bool)
        else:
            query = random_subset_mask(key, d, params.k, max_k)
        x_obs = rnd.observe(query)
        y_hat = jnp.dot(state.w, x_obs)
        y = rnd.commit(y_hat)
        grad = 2.0 * (y_hat - y) * x_obs
        tx = _optimizer(params)
        updates, opt = tx.update(grad, state.opt, state.w)
        w = optax.apply_updates(state.w, updates)
        w = optax.projections.projection_l2_ball(w, params.radius)
        return OgdState(w=w.astype(float_dtype()), opt=opt)

    def budget(params: OgdParams) -> Array | int:
        return d if full else params.k  # full: static, the protocol skips the truncation

    return Learner(init=init, step=step, family=PREDICTION, budget=budget, name=name)


def ogd_full(d: int) -> Learner:
    """Full-information projected OGD on the square loss (upper reference, budget d).

    Args:
      d: number of features (static).
    """
    return _ogd(d, d, full=True, name="ogd-full")


def ogd_random_subset(d: int, max_k: int | None = None) -> Learner:
    """Projected OGD that observes a fresh uniform k-subset each round (lower reference).

    Args:
      d: number of features (static).
      max_k: static bound on the traced k (default d).
    """
    return _ogd(d, d if max_k is None else max_k, full=False, name="ogd-random-subset")


_MAX_K = Option("max_k", lambda c: c.d, "static bound on the traced k (smaller is faster)",
                type=int, fill="max_k")

OGD_FULL = LearnerSpec(
    name="ogd-full",
    family=PREDICTION,
    description="full-information projected OGD on the square loss (upper reference, budget d)",
    factory=ogd_full,
    params=OgdParams,
    fixed={"k": lambda c: c.d},
    alt={"eta": lambda c: 0.1 / c.d, "radius": 2.0},
    reference="Zinkevich 2003",
)

OGD_RANDOM_SUBSET = LearnerSpec(
    name="ogd-random-subset",
    family=PREDICTION,
    description="OGD observing a fresh uniform random k-subset each round (lower reference)",
    factory=ogd_random_subset,
    params=OgdParams,
    options=(_MAX_K,),
    alt={"eta": lambda c: 0.1 / c.d, "radius": 2.0, "k": lambda c: max(1, c.d // 2)},
    reference="lower reference (docs/algorithms.md F1)",
)
