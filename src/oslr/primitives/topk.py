"""Top-k masks with a traced k over a static `max_k` axis (docs/algorithms.md section 0)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from oslr import cpus
from oslr.types import Array


def top_k_mask(score: Array, k: Array, max_k: int) -> Array:
    """Boolean mask of the `k` largest entries of `score`, with `k` traced.

    Two exact paths, chosen statically by `max_k` (measured on XLA:CPU, `benchmarks/`):
    small max_k (<= 16): one `lax.top_k` on the static max_k, then the first k of its indices are
    marked (one-hot comparison or scatter); its cost grows linearly with max_k. Larger max_k: radix
    select (`radix_select_mask`), 32 + log2(d) compare-and-count passes whatever k is; 4-17x
    faster than `lax.top_k` at k/d >= 1/4 (a top_k with max_k = d is a full sort). Neither path
    sorts twice. Ties go to the lower index (the `lax.top_k` rule, as [KKLP] asks); -0.0 and +0.0
    count as equal.

    Args:
      score: (d,) float scores (finite).
      k: () int, 0 <= k <= max_k (traced).
      max_k: static upper bound on k, max_k <= d.

    Returns:
      (d,) bool with exactly min(k, max_k) True entries.
    """
    d = score.shape[-1]
    if max_k > _TOP_K_UP_TO:
        return radix_select_mask(score, jnp.minimum(k, max_k))
    # lax.top_k orders -0.0 below +0.0; the documented rule counts them equal (lower index wins)
    _, idx = lax.top_k(jnp.where(score == 0, jnp.zeros_like(score), score), max_k)
    keep = jnp.arange(max_k) < k
    if max_k * d <= _ONE_HOT_LIMIT:
        return jnp.any((idx[:, None] == jnp.arange(d)[None, :]) & keep[:, None], axis=0)
    return jnp.zeros(d, bool).at[idx].set(keep)


def in_top_k(score: Array, k: Array, idx: Array, one_pass: bool | None = None) -> Array:
    """Whether the entries `idx` of `score` are among its `k` largest, by counting: no sort.

    Entry i is in the mask `top_k_mask(score, k, .)` returns iff its rank #{j : score_j >
    score_i} + #{j < i : score_j = score_i} is below k (the same tie rule: lower index first;
    -0.0 and +0.0 compare equal). O(len(idx) d) comparisons: cheaper than a selection when only
    a few entries are asked about, as in geometric resampling (`geometric_resampling`).

    Two exact ways to count, the same answers: all (len(idx), d) pairs compared at once and
    summed (one large array, which XLA spreads over its threads), or one pass over the entries
    that counts for every slot at once on order keys (`_rank_by_pass`: no array of pairs, but a
    loop of small steps). `one_pass=None` takes the pass on a CPU backend whose process may run
    on one core only (where XLA has one thread and the pairs' array is pure memory traffic), the
    pairs elsewhere (several cores, accelerators: one kernel instead of a loop); see
    benchmarks/HISTORY.md (2026-12-05).

    Args:
      score: (d,) float scores (finite).
      k: () int (traced); k <= max_k of the matching `top_k_mask` call.
      idx: (m,) int indices in [0, d).
      one_pass: static choice of the counting (None: by the machine, as above).

    Returns:
      (m,) bool.
    """
    if one_pass is None:
        one_pass = counts_in_one_pass()
    return (_rank_by_pass if one_pass else _rank_by_pairs)(score, idx) < k


def counts_in_one_pass() -> bool:
    """Whether `in_top_k` counts in one pass here: a CPU backend whose process may run on one
    core only (XLA then runs its programs on one thread)."""
    return jax.default_backend() == "cpu" and cpus.count() == 1


def _rank_by_pairs(score: Array, idx: Array) -> Array:
    """The ranks of the entries `idx` (see `in_top_k`), every pair compared at once."""
    s_i = score[idx][:, None]
    j = jnp.arange(score.shape[-1])[None, :]
    # an entry is never compared with itself: XLA may compute the gathered s_i and the row of
    # scores from separate copies of a fused producer, rounded differently (FTPSL under the
    # default build, seed 7 round 65: a resample counted 2 where the float64 reference gives 1,
    # the entry ranked below its own copy)
    other, before = j != idx[:, None], j < idx[:, None]
    return jnp.sum(other & ((score[None, :] > s_i) | ((score[None, :] == s_i) & before)), axis=-1)


def _rank_by_pass(score: Array, idx: Array) -> Array:
    """The ranks of the entries `idx` (see `in_top_k`) in one pass over j: every slot i counts
    key_j + [j < i] > key_i on order keys (`_ordered_bits`), one addition and one comparison a
    pair. The keys come from one stored copy of the scores by exact bit operations, so an
    entry's key is its slot's key, and key_i + 0 > key_i never counts an entry against itself."""
    keys = _ordered_bits(lax.optimization_barrier(score))
    key_i = keys[idx]

    def count(j, rank):
        key_j = lax.dynamic_index_in_dim(keys, j, keepdims=False) + (j < idx).astype(keys.dtype)
        return rank + (key_j > key_i).astype(jnp.int32)

    return lax.fori_loop(0, score.shape[-1], count, jnp.zeros(idx.shape, jnp.int32), unroll=8)


_ONE_HOT_LIMIT = 1 << 15
_TOP_K_UP_TO = 16


_KEY_TYPES = {2: jnp.uint16, 4: jnp.uint32, 8: jnp.uint64}


def _ordered_bits(score: Array) -> Array:
    """Unsigned keys as wide as the float scores, in their order (-0.0 mapped to +0.0 first): a
    float32 score gets a uint32 key, a float64 one (under x64) a uint64 key. The largest finite
    score's key is below the type's maximum, so key + 1 does not wrap."""
    x = jnp.where(score == 0, jnp.zeros_like(score), score)
    kind = _KEY_TYPES[x.dtype.itemsize]
    bits = lax.bitcast_convert_type(x, kind)
    top = kind(1) << kind(8 * x.dtype.itemsize - 1)
    return jnp.where(bits >= top, ~bits, bits | top)


def radix_select_mask(score: Array, k: Array) -> Array:
    """Mask of the k largest entries of `score` (d,), k traced in [0, d], no sort at all.

    The k-th largest key t is built bit by bit from the top (keep a bit if at least k keys are
    >= the candidate): one pass of compare-and-count over d per bit of the key (32 for float32
    scores, 64 for float64). Entries above t are taken; among the entries equal to t the
    lowest-index ones fill the remaining places (a second bit-by-bit search over the index,
    log2(d) passes). Exactly k True entries; ties to the lower index.
    """
    d = score.shape[-1]
    keys = _ordered_bits(score)
    t = jnp.zeros((), keys.dtype)
    for bit in range(8 * keys.dtype.itemsize - 1, -1, -1):
        cand = t | (jnp.ones((), keys.dtype) << bit)
        t = jnp.where(jnp.sum(keys >= cand) >= k, cand, t)
    above, tie = keys > t, keys == t
    room = k - jnp.sum(above)
    idx = jnp.arange(d)
    cut = jnp.zeros((), jnp.int32)
    for bit in range(int(d).bit_length(), -1, -1):
        cand = cut | (1 << bit)
        cut = jnp.where(jnp.sum(tie & (idx < cand)) <= room, cand, cut)
    return above | (tie & (idx < cut))


def random_subset_mask(key: Array, d: int, k: Array, max_k: int) -> Array:
    """Uniformly random k-subset of [d] as a (d,) bool mask, k traced in [0, max_k].

    Small max_k (<= 16): Floyd's algorithm, max_k random integers and max_k one-hot updates
    (for i = 0..k-1, j = d - k + i: take t ~ U{0..j}, or j if t is already taken), so a round
    draws max_k random numbers instead of d (random numbers dominate on CPU, `benchmarks/`).
    Larger max_k: the top-k of U(0,1)^d. Both give every k-subset probability 1 / C(d, k).
    """
    k = jnp.minimum(k, max_k)
    if max_k > _TOP_K_UP_TO:
        return top_k_mask(jax.random.uniform(key, (d,), jnp.float32), k, max_k)
    i = jnp.arange(max_k)
    j = d - k + i  # the i-th step samples from {0..j}
    t = jax.random.randint(key, (max_k,), 0, jnp.maximum(j + 1, 1), jnp.int32)
    cols = jnp.arange(d)
    mask = jnp.zeros(d, bool)
    for step in range(max_k):
        pick = jnp.where(mask[t[step]], j[step], t[step])
        mask = mask | ((cols == pick) & (step < k))
    return mask
