"""PEGE and fPEGE-GD on the unit sphere ([RT10]; [KPM] Algorithm 1; docs/algorithms.md L2.1; F3(a)).

Cycles m = 1, 2, ...: explore by playing the basis b_1..b_d once each, then exploit by playing
G(theta) = theta / ||theta|| (reward-maximising convention) m times. Cycle m starts at round
S_m = (m - 1) d + (m - 1) m / 2; the schedule is a function of the round index alone.

* `pege`: theta-hat is the exact least squares on the exploration data; with the orthonormal basis
  e_i it is the mean reward of each basis vector.
* `fpege-gd`: after each exploration sample, one fOLS-GD step (lam = 0) from the history of
  exploration samples (basis indices and rewards, B12), i ~ U{1..n}, step c / (4 (c + n)) with
  c = 6 d / lambda_PEGE = 6 d (OURS: the Thm 1 form with mu c / 4 = 0.75, mu = lambda_PEGE/(2d)
  as in the Thm 2 proof; docs/algorithms.md L2.1 notes the paper's inconsistent step sizes).
  Its diagnostic `tracking_error` is ||theta_GD - theta-hat_PEGE|| on the same exploration
  data.

References: Rusmevichientong & Tsitsiklis 2010 (PEGE); Korda, Prashanth, Munos, AAAI 2015, Alg. 1.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax.numpy as jnp
from jax import lax

from oslr.learners.least_squares import TrackerParams, make_tracker
from oslr.primitives import History, history_add, history_init
from oslr.spec import LearnerSpec, Option
from oslr.types import BANDIT, Array, Learner, Requirements, float_dtype


def cycle_position(t: Array, d: int) -> tuple[Array, Array]:
    """(cycle m >= 1, position in the cycle) of 0-based round t; positions < d explore."""
    t = jnp.asarray(t, jnp.int32)
    # j = m - 1 is the largest integer with j d + j (j + 1) / 2 <= t
    b = 2.0 * d + 1.0
    j = jnp.floor((-b + jnp.sqrt(b * b + 8.0 * t.astype(float_dtype()))) / 2.0).astype(jnp.int32)
    start = lambda j: j * d + j * (j + 1) // 2  # noqa: E731
    j = jnp.where(start(j) > t, j - 1, j)  # float rounding guards
    j = jnp.where(start(j + 1) <= t, j + 1, j)
    return j + 1, t - start(j)


def exploration_capacity(d: int, horizon: int) -> int:
    """Exploration rounds within `horizon`: at most d (M + 1), M(M+1)/2 <= horizon."""
    return int(min(horizon, d * (math.isqrt(2 * horizon) + 2)))


class PegeState(NamedTuple):
    """Attributes:
    sums: (d,) float32 reward sums per basis vector; counts: (d,) float32 plays per basis vector
      (theta-hat_PEGE = sums / counts).
    est: the fOLS-GD tracker state (`fpege-gd`; () placeholder for `pege`).
    hist: `History` of exploration samples (basis index, reward); capacity 0 for `pege`.
    theta_play: (d,) float32, the estimate fixed at the end of the last exploration phase.
    """

    sums: Array
    counts: Array
    est: Any
    hist: History
    theta_play: Array


def pege(d: int, horizon: int = 10_000, fast: bool = False) -> Learner:
    """PEGE (`fast=False`) or fPEGE-GD (`fast=True`) on the unit sphere with basis e_1..e_d.

    Args:
      d: dimension (static).
      horizon: rounds; sets the history capacity of fPEGE-GD.
      fast: use the fOLS-GD estimate ([KPM] Alg. 1) instead of the exact PEGE mean.
    """
    name = "fpege-gd" if fast else "pege"
    capacity = exploration_capacity(d, horizon) if fast else 0
    tracker = make_tracker("fols-gd", d, capacity, schedule="kpm")
    basis = jnp.eye(d, dtype=float_dtype())

    def init(key: Array, params: TrackerParams) -> PegeState:
        del key
        zero = jnp.zeros(d, float_dtype())
        return PegeState(sums=zero, counts=zero,
                         est=tracker.init(params) if fast else jnp.zeros(()),
                         hist=history_init(capacity, d, store_features=False), theta_play=zero)

    def estimate(state: PegeState, params: TrackerParams) -> Array:
        if fast:
            return tracker.theta(state.est, params)
        return state.sums / jnp.maximum(state.counts, 1.0)

    def step(key: Array, state: PegeState, rnd, params: TrackerParams) -> PegeState:
        _, pos = cycle_position(rnd.t, d)
        explore = pos < d
        arm = jnp.minimum(pos, d - 1)
        greedy = state.theta_play / jnp.maximum(jnp.linalg.norm(state.theta_play), 1e-12)
        x = jnp.where(explore, basis[arm], greedy)
        reward = rnd.play(x)
        hot = jnp.where(explore, basis[arm], 0.0)
        sums, counts = state.sums + reward * hot, state.counts + hot
        hist, est = state.hist, state.est
        if fast:
            hist = history_add(state.hist, reward, idx=arm, accept=explore)
            # the estimate moves on exploration rounds only; the round index is not batched over
            # runs, so the cond skips the tracker's step on the exploitation rounds
            est = lax.cond(explore,
                           lambda: tracker.update(key, state.est, x, reward, hist, basis, rnd.t,
                                                  params),
                           lambda: state.est)
        new = PegeState(sums=sums, counts=counts, est=est, hist=hist, theta_play=state.theta_play)
        last_exploration = pos == d - 1  # the estimate exploitation will use until the next cycle
        return new._replace(theta_play=jnp.where(last_exploration, estimate(new, params),
                                                 state.theta_play))

    def diagnostics(state: PegeState, params: TrackerParams) -> dict:
        exact = state.sums / jnp.maximum(state.counts, 1.0)
        return {"tracking_error": jnp.linalg.norm(tracker.theta(state.est, params) - exact)}

    def budget(params: TrackerParams) -> Array:
        del params
        return jnp.asarray(1, jnp.int32)

    return Learner(init=init, step=step, family=BANDIT, budget=budget, name=name,
                   diagnostics=diagnostics if fast else None,
                   info={"action_set": "unit sphere"},
                   requires=Requirements(capacity=horizon if fast else None,
                                         continuous_actions=True))


def _spec(fast: bool) -> LearnerSpec:
    def factory(d: int, horizon: int = 10_000) -> Learner:
        return pege(d, horizon, fast)

    return LearnerSpec(
        name="fpege-gd" if fast else "pege",
        family=BANDIT,
        description=("fPEGE-GD: PEGE with an fOLS-GD estimate ([KPM] Alg. 1), unit sphere"
                     if fast else "PEGE: explore the basis, exploit theta/||theta|| ([RT10])"),
        factory=factory,
        params=TrackerParams,
        options=(Option("horizon", lambda c: c.horizon,
                        "rounds; sets the history capacity of fPEGE-GD"),),
        # only the fOLS-GD step constant c is used (c = 6 d, see the module docstring)
        defaults={"c_gamma": lambda c: 6.0 * c.d},
        fixed={"lam0": 1.0, "alpha": 0.75, "c_lambda": 0.0, "step_scale": 1.0},
        alt={"c_gamma": lambda c: 2.0 * c.d},
        reference="[KPM] Alg. 1, docs/algorithms.md L2.1",
    )


PEGE = _spec(fast=False)
FPEGE_GD = _spec(fast=True)

