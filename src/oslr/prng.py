"""The key implementation behind every study: JAX's threefry2x32, bit for bit, unrolled.

JAX's default keys hash with Threefry-2x32-20 (Salmon, Moraes, Dror, Shaw, "Parallel random
numbers: as easy as 1, 2, 3", SC 2011). On a CPU JAX lowers each hash to a *rolled* loop (an XLA
while loop of five iterations), which XLA cannot fuse with the operations around it: every
`fold_in`, `split` and draw of a round becomes its own small loop with its own kernel launches.
On the LinUCB benchmark row (1,024 runs) that made the idle harness (keys, stream, metrics) cost
0.19 us per run-round, more than the learner itself. Here the same hash is written out as the
twenty rounds of adds, rotations and xors (what JAX itself emits on a GPU), so XLA fuses it with
the round. Draws of more than `UNROLLED_UP_TO` words per key keep JAX's lowering: there one loop
serves many words, and the unrolled code measured slower inside FTPSL's round.

Everything else is JAX's "partitionable" threefry (`jax_threefry_partitionable`, the default since
jax 0.5): the same seed, `fold_in`, `split` and `random_bits` semantics, so every key and every
draw equals what `jax.random.key(seed)` gives (tests/test_prng.py), streams are unchanged, keys
remain pure functions of (seed, run, stream, round) and vmap over runs equals a loop. Registered
with `jax.extend.random.define_prng_impl`; a study's keys use it through `oslr.rollout.root_key`.

`OSLR_THREEFRY=rolled` in the environment (read at import) keeps JAX's own lowering for every
hash instead: the same bits, programs compile about twice as fast and run slower on a CPU (the
test suite uses it; `tests/test_prng.py` checks the unrolled code).

Rejected alternatives, measured on this CPU: JAX's own `philox4x32` (jax >= 0.10) is as fast but
lowers to `chlo.mulhi`, which XLA's SPMD partitioner cannot legalise (a sharded runs axis fails to
compile); Philox with the high product emulated from 16-bit halves costs 3.3x the native block;
`rbg` keys break vmap = loop.
"""

from __future__ import annotations

import math
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend.random import define_prng_impl, threefry2x32_p

from oslr.types import Array

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def _unrolled_up_to(mode: str) -> int:
    """UNROLLED_UP_TO for an `OSLR_THREEFRY` value: 256 for "unrolled", 0 for "rolled"."""
    sizes = {"unrolled": 256, "rolled": 0}
    if mode not in sizes:
        raise ValueError(f"OSLR_THREEFRY={mode!r}: 'unrolled' (the default: faster rounds) or "
                         f"'rolled' (JAX's own lowering: faster compiles, the same bits)")
    return sizes[mode]


#: Largest draw (words per key) hashed by the unrolled code; larger ones use JAX's own lowering
#: (the same bits). FTPSL's resample draw (10 x 124 words a run) ran 1.4-2.4x slower unrolled
#: inside its round (its play draw, 124 words, and LinUCB's 10 were faster). 0 under
#: OSLR_THREEFRY=rolled.
UNROLLED_UP_TO = _unrolled_up_to(os.environ.get("OSLR_THREEFRY", "unrolled"))
_PARITY = np.uint32(0x1BD11BDA)


def _rotl(x: Array, r: int) -> Array:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def threefry2x32(k0: Array, k1: Array, x0: Array, x1: Array) -> tuple[Array, Array]:
    """The Threefry-2x32-20 block of key (k0, k1) and counter (x0, x1), elementwise over
    broadcast uint32 arrays: five groups of four rounds (x0 += x1; x1 = rotl(x1, r) ^ x0), the
    key schedule (k0, k1, k0 ^ k1 ^ 0x1BD11BDA) injected before and after each group."""
    ks = (k0, k1, k0 ^ k1 ^ _PARITY)
    x0, x1 = x0 + ks[0], x1 + ks[1]
    for g in range(5):
        for r in _ROTATIONS[g % 2]:
            x0 = x0 + x1
            x1 = _rotl(x1, r) ^ x0
        x0 = x0 + ks[(g + 1) % 3]
        x1 = x1 + ks[(g + 2) % 3] + np.uint32(g + 1)
    return x0, x1


def _counts(shape: tuple[int, ...]) -> Array:
    """The flat index of every element of `shape` (uint32; JAX's `iota_2x32_shape` low word)."""
    n = math.prod(shape)
    if n >= 2**32:
        raise NotImplementedError(f"{n} random words from one key: at most 2^32 - 1")
    return lax.iota(np.uint32, n).reshape(shape)


def _seed(seed: Array) -> Array:
    if seed.shape:
        raise TypeError(f"a PRNG seed must be a scalar; got shape {seed.shape}")
    if not jnp.issubdtype(seed.dtype, jnp.integer):
        raise TypeError(f"a PRNG seed must be an integer; got {seed.dtype}")
    hi = (lax.shift_right_logical(seed, jnp.asarray(32, seed.dtype)) if seed.dtype.itemsize == 8
          else jnp.zeros((), seed.dtype))
    return jnp.stack([lax.convert_element_type(hi, np.uint32),
                      lax.convert_element_type(seed, np.uint32)])


def _hash(k0: Array, k1: Array, counts: Array) -> tuple[Array, Array]:
    """The block of every counter (high word 0, low word `counts`): unrolled up to
    UNROLLED_UP_TO words, else JAX's loop, whose lowering wants both counter words batched alike
    under vmap (the high word `counts ^ counts` is)."""
    if math.prod(jnp.shape(counts)) <= UNROLLED_UP_TO:
        return threefry2x32(k0, k1, jnp.zeros_like(counts), counts)
    return threefry2x32_p.bind(k0, k1, counts ^ counts, counts)


def _split(key: Array, shape: tuple[int, ...]) -> Array:
    c = _counts(shape)
    return jnp.stack(_hash(key[0], key[1], c), axis=len(shape))


def _fold_in(key: Array, data: Array) -> Array:
    return jnp.stack(_hash(key[0], key[1], data))  # data: uint32 (jax.random.fold_in's)


def _random_bits(key: Array, bit_width: int, shape: tuple[int, ...]) -> Array:
    if bit_width not in (8, 16, 32, 64):
        raise TypeError(f"random bits of width {bit_width}: 8, 16, 32 or 64 only")
    c = _counts(shape)
    b0, b1 = _hash(key[0], key[1], c)
    if bit_width == 64:
        wide = jnp.uint64
        return (b0.astype(wide) << wide(32)) | b1.astype(wide)
    return (b0 ^ b1).astype(f"uint{bit_width}")


def paired_bits(key: Array, shape: tuple[int, ...]) -> Array:
    """`shape` random uint32 words from the threefry key `key`, two words per hash: block i
    (counter (0, i)) gives words 2i and 2i + 1 of the flattened draw, both of its outputs (as
    Threefry is meant to be used, and as JAX's own, non-partitionable threefry did). Half the
    hashes of `jax.random.bits`, which XORs a block's two outputs into one word, so not its
    stream; the same law (i.i.d. uniform words). A pure function of the key: vmap over keys
    equals a loop. `key` must serve this draw alone (another draw from it would share blocks)."""
    data = jax.random.key_data(key)
    if data.shape != (2,):
        raise TypeError(f"paired_bits needs one threefry key (2 words); got key data of shape "
                        f"{data.shape} (vmap over a batch of keys)")
    n = math.prod(shape)
    b0, b1 = _hash(data[0], data[1], _counts(((n + 1) // 2,)))
    return jnp.stack([b0, b1], axis=-1).reshape(-1)[:n].reshape(shape)


#: JAX's handle of the implementation (`jax.random.key(seed, impl=THREEFRY)`).
THREEFRY = define_prng_impl(key_shape=(2,), seed=_seed, split=_split, random_bits=_random_bits,
                            fold_in=_fold_in,  # type: ignore[arg-type]  # data: a uint32 array
                            name="oslr_threefry2x32", tag="ofry")


def rademacher(key: Array, shape: tuple[int, ...] = ()) -> Array:
    """Uniform signs +-1 in float32, the same draws in float32 and float64 mode.

    `jax.random.rademacher` flips its coin with a uniform of the default float dtype, so
    `jax_enable_x64` changes every sign; here the coin is a float32 uniform in both modes (bit
    for bit `jax.random.rademacher(key, shape, jnp.float32)` in float32 mode)."""
    coin = jax.random.bernoulli(key, jnp.float32(0.5), shape).astype(jnp.float32)
    return 2.0 * coin - 1.0


__all__ = ["THREEFRY", "UNROLLED_UP_TO", "paired_bits", "rademacher", "threefry2x32"]
