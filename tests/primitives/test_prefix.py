"""`oslr.primitives.prefix.prefix_sums` equals `jnp.cumsum`, in one level and in blocks."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from oslr.primitives.prefix import prefix_sums
from oslr.protocol import _truncate


@pytest.mark.parametrize("d", [1, 3, 64, 128, 129, 300])
def test_prefix_sums__equal_cumsum_for_masks_and_floats(d):
    rng = np.random.default_rng(d)
    mask = jnp.asarray(rng.random((2, d)) < 0.5)
    got = prefix_sums(mask)
    assert got.dtype == jnp.int32
    np.testing.assert_array_equal(got, np.cumsum(np.asarray(mask), axis=-1))
    v = jnp.asarray(rng.standard_normal(d), jnp.float32)
    np.testing.assert_allclose(prefix_sums(v), np.cumsum(np.asarray(v, np.float64)),
                               rtol=1e-5, atol=1e-5)


def test_prefix_sums__blocks_below_the_length():
    v = jnp.arange(1, 11, dtype=jnp.int32)  # three blocks of 4, the last one padded
    np.testing.assert_array_equal(prefix_sums(v, block=4), np.cumsum(np.arange(1, 11)))


@pytest.mark.parametrize("allowed", [-1, 0, 2, 5, 64])
def test_truncate__keeps_the_first_allowed_queries_in_index_order(allowed):
    mask = jnp.asarray(np.random.default_rng(0).random(64) < 0.3)
    want = np.asarray(mask) & (np.cumsum(np.asarray(mask)) <= allowed)
    np.testing.assert_array_equal(jax.jit(_truncate)(mask, allowed), want)


def test_prefix_sums__state_highest_precision_and_keep_float32_under_x64():
    import jax
    import jax.numpy as jnp

    from oslr.primitives.prefix import prefix_sums
    from tests.helpers import dot_precisions, x64

    for v in (jnp.ones((3, 5)), jnp.ones(300)):  # one product, and the blocked form
        assert dot_precisions(jax.jit(prefix_sums).lower(v).as_text()) == {("HIGHEST", "HIGHEST")}
    with x64():
        out = prefix_sums(jnp.arange(4, dtype=jnp.float32))
        assert out.dtype == jnp.float32 and out.tolist() == [0.0, 1.0, 3.0, 6.0]
