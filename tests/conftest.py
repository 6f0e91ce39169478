"""Strict JAX flags for the whole suite (STYLE.md: equinox-style strictness)."""

import jax
import numpy as np
import pytest

jax.config.update("jax_numpy_rank_promotion", "raise")


@pytest.fixture
def rng():
    return np.random.default_rng(0)
