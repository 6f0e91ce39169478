"""The keyed permutation of [0, n) behind the dataset replays (`oslr.primitives.permutation`)."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from oslr.primitives.permutation import ROUNDS, permutation_keys, permute
from tests.helpers import x64


def _perms(n: int, n_keys: int, seed: int = 1) -> np.ndarray:
    keys = jax.vmap(permutation_keys)(jax.random.split(jax.random.key(seed), n_keys))
    return np.asarray(jax.jit(jax.vmap(lambda k: permute(k, jnp.arange(n), n)))(keys))


@pytest.mark.slow  # keeps the default run under 5 min (CI runs it with -m slow)
@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 8, 9, 1000, 1024, 1025, 48_842])
def test_permute__is_a_bijection_of_0_to_n(n):
    p = _perms(n, 3)
    for row in p:
        np.testing.assert_array_equal(np.sort(row), np.arange(n))
    if n >= 4:
        assert len({tuple(r) for r in p}) == 3  # different keys, different orders


@pytest.mark.slow  # keeps the default run under 5 min (CI runs it with -m slow)
@pytest.mark.parametrize("n", [3, 5, 6])
def test_permute__every_permutation_of_a_few_items_is_equally_likely(n):
    n_perm = math.factorial(n)
    p = _perms(n, 500 * n_perm)
    codes = (p * n ** np.arange(n)).sum(1)
    counts = np.unique(codes, return_counts=True)[1]
    assert len(counts) == n_perm
    assert stats.chisquare(counts).pvalue > 1e-4


@pytest.mark.slow  # keeps the default run under 5 min (CI runs it with -m slow)
def test_permute__positions_and_pairs_are_spread_as_by_a_uniform_shuffle():
    n, n_keys = 1000, 5_000
    p = _perms(n, n_keys, seed=2)
    bins = 20
    # where item 0 lands, and the joint position of items 0 and 1 (independent up to O(1/n))
    first = np.bincount(p[:, 0] * bins // n, minlength=bins)
    assert stats.chisquare(first).pvalue > 1e-4
    pair = np.bincount((p[:, 0] * 5 // n) * 5 + p[:, 1] * 5 // n, minlength=25)
    assert stats.chisquare(pair).pvalue > 1e-4
    # consecutive rounds show unrelated rows: pi(t) and pi(t + 1) uncorrelated
    r = np.corrcoef(p[:, :-1].ravel(), p[:, 1:].ravel())[0, 1]
    assert abs(r) < 4 / math.sqrt(p[:, :-1].size)


def test_permute__refuses_an_empty_or_huge_domain():
    keys = permutation_keys(jax.random.key(0))
    for n in (0, 2**31):
        with pytest.raises(ValueError, match="permutation domain"):
            permute(keys, jnp.arange(1), n)


def _lowbias32(x: np.ndarray) -> np.ndarray:
    """C. Wellons' "lowbias32" integer hash, in NumPy uint32 arithmetic."""
    x = x.astype(np.uint32)
    x ^= x >> np.uint32(16)
    x *= np.uint32(0x7FEB352D)
    x ^= x >> np.uint32(15)
    x *= np.uint32(0x846CA68B)
    x ^= x >> np.uint32(16)
    return x


def _permute_reference(keys: np.ndarray, n: int) -> np.ndarray:
    """The module docstring's Feistel network with cycle walking, written out in NumPy."""
    bits = max(2, int(np.ceil(np.log2(n))) if n > 1 else 0)

    def feistel(x):
        w_a = bits - bits // 2
        for r in range(ROUNDS):
            w_b = bits - w_a
            a, b = x >> np.uint32(w_b), x & np.uint32(2**w_b - 1)
            a ^= _lowbias32(b ^ keys[r]) & np.uint32(2**w_a - 1)
            x = (b << np.uint32(w_a)) | a
            w_a = w_b
        return x

    x = feistel(np.arange(n, dtype=np.uint32))
    while (x >= n).any():
        x = np.where(x >= n, feistel(x), x)
    return x.astype(np.int64)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 1000, 1024])
def test_permute__equals_a_numpy_feistel_network_with_lowbias32(n):
    with np.errstate(over="ignore"):
        one_n = jax.jit(permute, static_argnums=2)  # one compile for the three seeds
        for seed in range(3):
            keys = permutation_keys(jax.random.key(seed))
            got = np.asarray(one_n(keys, jnp.arange(n), n))
            np.testing.assert_array_equal(got, _permute_reference(np.asarray(keys), n))


def test_permutation_keys__uint32_and_the_same_under_float64():
    keys = permutation_keys(jax.random.key(4))
    with x64():
        keys64 = permutation_keys(jax.random.key(4))
    assert keys.dtype == keys64.dtype == jnp.uint32 and keys.shape == (ROUNDS,)
    np.testing.assert_array_equal(np.asarray(keys64), np.asarray(keys))
