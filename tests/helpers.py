"""Shared test helpers: regenerate a run's stream exactly as the simulator sees it."""

import jax

from oslr.rollout import learner_round_keys as learner_keys  # noqa: F401  (re-used by tests)
from oslr.rollout import stream  # noqa: F401


def x64():
    """Context manager enabling float64 (jax.enable_x64 on new JAX, jax.experimental on old)."""
    if hasattr(jax, "enable_x64"):
        return jax.enable_x64(True)
    from jax.experimental import enable_x64  # pragma: no cover - older JAX

    return enable_x64()
