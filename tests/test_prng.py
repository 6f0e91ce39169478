"""`oslr.prng.THREEFRY`: JAX's threefry2x32 keys bit for bit, with the hash unrolled."""

import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from oslr import prng
from oslr.prng import THREEFRY, threefry2x32
from oslr.rollout import root_key, run_keys


@pytest.fixture(autouse=True)
def _unrolled(monkeypatch):
    """The suite runs under OSLR_THREEFRY=rolled (tests/conftest.py: faster compiles); here the
    default, unrolled, hash is what is checked."""
    monkeypatch.setattr(prng, "UNROLLED_UP_TO", 256)

# Random123's known answers for Threefry-2x32-20: (key, counter) -> block
_KAT = [((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
        ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
        ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0))]


@pytest.mark.parametrize("key, ctr, want", _KAT)
def test_threefry2x32__random123_known_answers(key, ctr, want):
    got = threefry2x32(*(jnp.uint32(v) for v in key + ctr))
    assert [int(w) for w in got] == list(want)


def _draws(key):
    """Every kind of draw, each at most UNROLLED_UP_TO words."""
    kd = jax.random.key_data
    return {"key": kd(key), "split": kd(jax.random.split(key, 5)),
            "split_2d": kd(jax.random.split(key, (2, 3))),
            "fold_in": kd(jax.random.fold_in(key, 77)),
            "bits32": jax.random.bits(key, (3, 5)),
            "bits8": jax.random.bits(key, (7,), jnp.uint8),
            "bits16": jax.random.bits(key, (7,), jnp.uint16),
            "empty": jax.random.bits(key, (0,)),
            "uniform": jax.random.uniform(key, (11,)),
            "normal": jax.random.normal(key, (4, 3)),
            "laplace": jax.random.laplace(key, (5,)),
            "permutation": jax.random.permutation(key, 20),
            "randint": jax.random.randint(key, (9,), 0, 7),
            "vmapped": jax.vmap(lambda i: jax.random.uniform(jax.random.fold_in(key, i), (3,)))(
                jnp.arange(4))}


@pytest.mark.slow  # keeps the default run under 5 min (CI runs it with -m slow)
@pytest.mark.parametrize("seed", [0, 1, 12345, 2**32 - 1])
def test_every_draw__equals_jax_default_keys(seed):
    key = jax.random.key(jnp.uint32(seed), impl=THREEFRY)
    program = jax.jit(lambda k: _draws(k)).lower(key)
    assert "while" not in program.as_text()  # the unrolled hash made these draws
    ours = program.compile()(key)
    jaxs = _draws(jax.random.key(jnp.uint32(seed)))
    for name in ours:
        np.testing.assert_array_equal(np.asarray(ours[name]), np.asarray(jaxs[name]), err_msg=name)
    large = jax.jit(lambda k: jax.random.bits(k, (3, 200)))  # above UNROLLED_UP_TO: JAX's hash
    assert "while" in large.lower(key).as_text()
    at, above = (jax.jit(lambda k, n=n: jax.random.bits(k, (n,))) for n in (256, 257))
    assert "while" not in at.lower(key).as_text() and "while" in above.lower(key).as_text()
    np.testing.assert_array_equal(large(key), jax.random.bits(jax.random.key(seed), (3, 200)))


def test_rolled_mode__jaxs_lowering_for_every_hash_with_the_same_draws(monkeypatch):
    monkeypatch.setattr(prng, "UNROLLED_UP_TO", 0)
    key = jax.random.key(jnp.uint32(5), impl=THREEFRY)
    program = jax.jit(lambda k: _draws(k)).lower(key)
    assert "while" in program.as_text()  # one rolled loop per hash
    ours, jaxs = program.compile()(key), _draws(jax.random.key(jnp.uint32(5)))
    for name in ours:
        np.testing.assert_array_equal(np.asarray(ours[name]), np.asarray(jaxs[name]), err_msg=name)


def test_rolled_mode__read_from_the_environment_and_an_unknown_value_refused_naming_both():
    import subprocess
    import sys

    assert (prng._unrolled_up_to("unrolled"), prng._unrolled_up_to("rolled")) == (256, 0)
    # one fresh Python imports the module under each setting in turn (the value is read at
    # import): unrolled, rolled, unset
    code = ("import importlib, os, oslr.prng as p\n"
            "for mode in ('unrolled', 'rolled', None):\n"
            "    os.environ.pop('OSLR_THREEFRY', None)\n"
            "    os.environ.update({'OSLR_THREEFRY': mode} if mode else {})\n"
            "    print(importlib.reload(p).UNROLLED_UP_TO)\n")
    env = {k: v for k, v in os.environ.items() if k != "OSLR_THREEFRY"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.split() == ["256", "0", "256"], out.stderr
    with pytest.raises(ValueError, match=r"^OSLR_THREEFRY='fast': 'unrolled' \(the default: faster "
                       r"rounds\) or 'rolled' \(JAX's own lowering: faster compiles, the same "
                       r"bits\)$"):
        prng._unrolled_up_to("fast")


def test_64_bit_draws__equal_jax_default_keys_under_x64():
    with jax.enable_x64(True):
        for f in (lambda k: jax.random.bits(k, (5,), jnp.uint64),
                  lambda k: jax.random.uniform(k, (5,), jnp.float64)):
            np.testing.assert_array_equal(f(jax.random.key(7, impl=THREEFRY)),
                                          f(jax.random.key(7)))
        for big in (2**40 + 3, np.uint64(2**63 + 11)):  # 64-bit seeds: both words used
            np.testing.assert_array_equal(
                jax.random.key_data(jax.random.key(big, impl=THREEFRY)),
                jax.random.key_data(jax.random.key(big)))


def test_counts__at_most_2_to_the_32_words_from_one_key():
    from oslr.prng import _counts

    assert _counts((3, 2)).tolist() == [[0, 1], [2, 3], [4, 5]]
    with pytest.raises(NotImplementedError, match=r"^4294967296 random words from one key: at "
                       r"most 2\^32 - 1$"):
        _counts((2**16, 2**16))  # refused before anything is allocated


def test_study_keys__use_the_unrolled_hash_with_the_same_values():
    assert jax.random.key_impl(root_key(3)) == jax.random.key_impl(jax.random.key(0, impl=THREEFRY))
    want = jax.random.split(jax.random.fold_in(jax.random.key(jnp.uint32(3)), 5), 4)
    np.testing.assert_array_equal(jax.random.key_data(run_keys(3, 5)), jax.random.key_data(want))


def test_a_round_of_draws__compiles_to_no_loop():
    """What makes it fast on a CPU: JAX's own threefry lowers each hash to a while loop there,
    which XLA cannot fuse with the round; ours is straight-line code."""
    def draws(key, t):
        k = jax.random.fold_in(key, t)
        return jax.random.uniform(jax.random.split(k)[1], (10,))

    assert "while" not in jax.jit(draws).lower(root_key(0), 3).as_text()


def test_rademacher__jaxs_signs_in_float32_mode_and_the_same_under_x64():
    from oslr.prng import rademacher
    from tests.helpers import x64

    keys = jax.random.split(jax.random.key(3), 64)
    ours = np.asarray(jax.vmap(lambda k: rademacher(k, (5,)))(keys))
    if not jax.config.jax_enable_x64:
        jaxs = jax.vmap(lambda k: jax.random.rademacher(k, (5,), jnp.float32))(keys)
        np.testing.assert_array_equal(ours, np.asarray(jaxs))
    with x64():
        wide = jax.vmap(lambda k: rademacher(k, (5,)))(keys)
    assert wide.dtype == jnp.float32 and set(np.unique(ours).tolist()) == {-1.0, 1.0}
    np.testing.assert_array_equal(np.asarray(wide), ours)


def test_random_bits__a_width_other_than_8_16_32_64_is_refused():
    with pytest.raises(TypeError, match=r"^random bits of width 12: 8, 16, 32 or 64 only$"):
        prng._random_bits(jnp.zeros(2, jnp.uint32), 12, (3,))


def test_seed__refuses_a_float_or_an_array_naming_it():
    from oslr.prng import _seed

    with pytest.raises(TypeError, match=r"^a PRNG seed must be an integer; got float32$"):
        _seed(jnp.float32(1.0))
    with pytest.raises(TypeError, match=r"^a PRNG seed must be a scalar; got shape \(2,\)$"):
        _seed(jnp.zeros(2, jnp.int32))


@pytest.mark.parametrize("shape", [(1,), (7,), (2, 62), (10, 124)])
def test_paired_bits__both_outputs_of_block_i_are_words_2i_and_2i_plus_1(shape):
    """Against the hash checked by Random123's answers above, below and above UNROLLED_UP_TO
    blocks (10 x 124 words: 620 blocks, JAX's loop), an odd count included."""
    key = jax.random.key(5, impl=THREEFRY)
    got = np.asarray(prng.paired_bits(key, shape)).reshape(-1)
    k0, k1 = (jnp.uint32(v) for v in np.asarray(jax.random.key_data(key)))
    n = got.size
    blocks = [threefry2x32(k0, k1, jnp.uint32(0), jnp.uint32(i)) for i in range((n + 1) // 2)]
    want = np.array([int(w) for b in blocks for w in b][:n], np.uint32)
    np.testing.assert_array_equal(got, want)


def test_paired_bits__vmap_over_keys_equals_a_loop_and_jaxs_keys_give_the_same():
    keys = jax.random.split(jax.random.key(3, impl=THREEFRY), 4)
    batched = jax.vmap(lambda k: prng.paired_bits(k, (3, 124)))(keys)
    for i in range(4):
        np.testing.assert_array_equal(batched[i], prng.paired_bits(keys[i], (3, 124)))
    data = jax.random.key_data(keys[1])  # JAX's default threefry: the same key words
    np.testing.assert_array_equal(prng.paired_bits(jax.random.wrap_key_data(data), (5,)),
                                  prng.paired_bits(keys[1], (5,)))


def test_paired_bits__uniform_words():
    words = np.asarray(prng.paired_bits(jax.random.key(9, impl=THREEFRY), (200_000,)))
    bits = (words[:, None] >> np.arange(32, dtype=np.uint32)) & 1
    np.testing.assert_allclose(bits.mean(axis=0), 0.5, atol=0.005)  # each bit a fair coin
    even, odd = words[0::2] >> 16, words[1::2] >> 16  # a block's two outputs uncorrelated
    assert abs(np.corrcoef(even.astype(float), odd.astype(float))[0, 1]) < 0.01


@pytest.mark.parametrize("key", [jax.random.key(0, impl="rbg"),
                                 jax.random.split(jax.random.key(0, impl=THREEFRY), 3)])
def test_paired_bits__anything_but_one_threefry_key_is_refused(key):
    with pytest.raises(TypeError, match="paired_bits needs one threefry key"):
        prng.paired_bits(key, (4,))
