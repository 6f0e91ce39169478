"""Strict JAX flags for the whole suite (STYLE.md: equinox-style strictness)."""

import jax
import numpy as np
import pytest

jax.config.update("jax_numpy_rank_promotion", "raise")


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture(scope="session", autouse=True)
def _compilation_cache(tmp_path_factory):
    """A persistent compilation cache for this session only: many tests build fresh closures of
    the same programs (contract checks, references, the benchmark smoke run), and XLA compiles
    each identical program once (17% off the contract suite on 2 cores)."""
    jax.config.update("jax_compilation_cache_dir", str(tmp_path_factory.mktemp("jax-cache")))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    yield
