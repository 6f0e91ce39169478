"""Shared test helpers: regenerate a run's stream exactly as the simulator sees it."""

import jax
import jax.numpy as jnp
from jax import lax

from oslr.sim import _keys


def stream(problem, pp, seed: int, run_id: int, horizon: int):
    """Examples of rounds 0..horizon-1 of run `run_id` (stacked pytree)."""
    ks = _keys(jnp.asarray(seed, jnp.uint32), jnp.int32(run_id))
    ps = problem.init(ks[0], pp)

    def body(s, t):
        s, ex = problem.sample(jax.random.fold_in(ks[1], t), s, t, pp)
        return s, ex

    _, exs = lax.scan(body, ps, jnp.arange(horizon, dtype=jnp.int32))
    return exs


def learner_keys(seed: int, run_id: int, horizon: int):
    """The per-round learner keys of run `run_id` (typed keys, shape (horizon,))."""
    ks = _keys(jnp.asarray(seed, jnp.uint32), jnp.int32(run_id))
    return jax.vmap(lambda t: jax.random.fold_in(ks[3], t))(jnp.arange(horizon, dtype=jnp.int32))


def x64():
    """Context manager enabling float64 (jax.enable_x64 on new JAX, jax.experimental on old)."""
    if hasattr(jax, "enable_x64"):
        return jax.enable_x64(True)
    from jax.experimental import enable_x64  # pragma: no cover - older JAX

    return enable_x64()
