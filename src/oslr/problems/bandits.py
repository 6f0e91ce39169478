"""Synthetic linear bandits (family F3).

* `linear_bandit` ([KPM] setting (b)): theta* is uniform on the unit sphere; each round has K arms
  with unit-norm features (drawn once at the start, or afresh every round with `changing=True`);
  the reward of arm a is <x_a, theta*> + xi with xi ~ U[-noise, noise] (bounded, zero mean, as
  [KPM] assume).
* `sphere_bandit` ([KPM] setting (a), [RT10]; docs/algorithms.md E2, its PEGE check): the
  action set is the unit sphere with the known basis e_1..e_d; theta* uniform on the sphere of
  radius `norm`; playing x earns x^T theta* + xi, and the best action earns ||theta*||.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from oslr.checks import check_positive_int
from oslr.spec import Option, ProblemSpec
from oslr.types import Array, BanditExample, Problem, on_device


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class BanditParams:
    """Attributes: noise: () float32, half-width of the uniform reward noise."""

    noise: Array


def bandit_params(noise: float = 0.5) -> BanditParams:
    return BanditParams(noise=on_device(noise, np.float32))


class BanditState(NamedTuple):
    """Attributes: theta: (d,) float32 hidden parameter; arms: (K, d) fixed arm set."""

    theta: Array
    arms: Array


def _unit_rows(key: Array, shape: tuple[int, ...]) -> Array:
    z = jax.random.normal(key, shape, jnp.float32)
    return z / jnp.linalg.norm(z, axis=-1, keepdims=True)


def linear_bandit(d: int, n_arms: int = 10, changing: bool = False) -> Problem:
    """Linear bandit with a fixed (or per-round) finite set of `n_arms` unit-norm arms."""

    def init(key: Array, params: BanditParams) -> BanditState:
        del params
        k_theta, k_arms = jax.random.split(key)
        return BanditState(theta=_unit_rows(k_theta, (d,)), arms=_unit_rows(k_arms, (n_arms, d)))

    def sample(key: Array, state: BanditState, t: Array, params: BanditParams):
        del t
        k_arms, k_noise = jax.random.split(key)
        arms = _unit_rows(k_arms, (n_arms, d)) if changing else state.arms
        means = arms @ state.theta
        xi = jax.random.uniform(k_noise, (n_arms,), jnp.float32, -1.0, 1.0) * params.noise
        return state, BanditExample(arms=arms, rewards=means + xi, means=means)

    return Problem(
        init=init,
        sample=sample,
        kind="bandit",
        d=d,
        name="linear-bandit",
        n_arms=n_arms,
        changing_arms=changing,
        info={"changing": changing},
    )


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class SphereParams:
    """Attributes: noise: () half-width of the uniform noise; norm: () ||theta*||."""

    noise: Array
    norm: Array


def sphere_params(noise: float = 1.0, norm: float = 1.0) -> SphereParams:
    return SphereParams(noise=on_device(noise, np.float32), norm=on_device(norm, np.float32))


def sphere_bandit(d: int) -> Problem:
    """Linear bandit on the unit sphere with basis arms e_1..e_d (continuous actions: `play(x)`)."""

    def init(key: Array, params: SphereParams) -> Array:
        return _unit_rows(key, (d,)) * params.norm

    def sample(key: Array, theta: Array, t: Array, params: SphereParams):
        del t
        xi = jax.random.uniform(key, (), jnp.float32, -1.0, 1.0) * params.noise
        basis = jnp.eye(d, dtype=jnp.float32)
        return theta, BanditExample(arms=basis, rewards=theta + xi, means=theta, theta=theta,
                                    noise=xi, best=jnp.linalg.norm(theta))

    return Problem(init=init, sample=sample, kind="bandit", d=d, name="sphere-bandit", n_arms=d,
                   continuous_actions=True, info={"action_set": "unit sphere"})


# --------------------------------------------------------------------------- registered problems


def _check_noise(noise: float) -> None:
    if not 0 <= noise <= 1:
        raise ValueError(f"noise half-width {noise} must lie in [0, 1] ([KPM] assume |xi| <= 1).")


def _linear(d: int = 10, n_arms: int = 10, changing: bool = False, noise: float = 0.5):
    check_positive_int("d", d)
    if n_arms < 2:
        raise ValueError(f"a bandit needs n_arms >= 2, got {n_arms}.")
    _check_noise(noise)
    return linear_bandit(d, n_arms=n_arms, changing=changing), bandit_params(noise)


def _sphere(d: int = 10, noise: float = 1.0, norm: float = 1.0):
    check_positive_int("d", d)
    _check_noise(noise)
    if not norm > 0:
        raise ValueError(f"norm={norm} of theta* must be > 0.")
    return sphere_bandit(d), sphere_params(noise, norm)


LINEAR_BANDIT = ProblemSpec(
    "linear-bandit", "bandit",
    "linear bandit, unit-norm theta* and K unit-norm arms (fixed or changing), uniform noise",
    _linear,
    (Option("d", 10, "feature dimension", type=int, lo=1),
     Option("n_arms", 10, "arms per round K", type=int, lo=2),
     Option("changing", False, "a fresh arm set every round", type=bool),
     Option("noise", 0.5, "half-width of the uniform reward noise", type=float, lo=0.0,
            hi=1.0)))
SPHERE_BANDIT = ProblemSpec(
    "sphere-bandit", "bandit",
    "linear bandit on the unit sphere (play any unit x; basis e_1..e_d known), U[-1, 1] noise",
    _sphere,
    (Option("d", 10, "feature dimension", type=int, lo=1),
     Option("noise", 1.0, "half-width of the uniform reward noise", type=float, lo=0.0,
            hi=1.0),
     Option("norm", 1.0, "||theta*|| (> 0)", type=float, lo=0.0)))
