"""Geometric resampling ([WLL] Algorithm 2, [NB16]; docs/algorithms.md B2).

Estimates 1/q_i, q_i = P(i in Q_t), without knowing q_i: redraw the round's play M times from the
same law and let h_i be the first draw whose selected set contains i (M if none does). Then
E[h_i] = (1 - (1 - q_i)^M) / q_i, so theta_i h_i 1{i in Q_t} is unbiased up to the factor
1 - (1 - q_i)^M.
"""

from __future__ import annotations

from typing import Callable, NamedTuple, cast

import jax
import jax.numpy as jnp

from oslr.primitives.topk import in_top_k
from oslr.types import Array

MODES = ("shared", "independent")


class TopK(NamedTuple):
    """Selected sets given as Q = top-k of a score (`top_k_mask`'s rule), not as masks.

    Attributes:
      score: (*shape, d) float scores of each draw.
      k: (*shape,) int, the number of entries each draw selects.
    """

    score: Array
    k: Array


def batched_draw(play: Callable, noise: Callable[[Array, tuple], tuple]) -> Callable:
    """`draw(key, shape)` from `noise(key, shape) -> arrays with leading dims shape` (all random
    numbers of the batch in one call each) and `play(*noise_slices) -> outputs` for one draw,
    vectorised over the leading dims."""

    def draw(key: Array, shape: tuple = ()):
        f = play
        for _ in shape:
            f = jax.vmap(f)
        return f(*noise(key, shape))

    return draw


def first_hits(masks: Array) -> Array:
    """h_i = 1 + index of the first row of `masks` (M, d) holding i, or M if none does."""
    m = masks.shape[0]
    return jnp.where(masks.any(axis=0), jnp.argmax(masks, axis=0) + 1, m).astype(jnp.int32)


def geometric_resampling(draw: Callable[[Array, tuple], Array], key: Array, n_resamples: int,
                         selected: Array | None = None, mode: str = "shared",
                         max_k: int | None = None) -> Array:
    """Geometric-resampling counts h (d,) int32 in {1..M}.

    Args:
      draw: `draw(key, shape)`, the selected sets of prod(shape) independent fresh plays with this
        round's law: shape + (d,) bool masks, or a `TopK` (Q = top-k of a score), whose
        membership is then tested at the slots of Q_t only (`in_top_k`: max_k d comparisons a
        draw, no selection; the counts are the same as from the masks). Drawing the whole batch
        from one key (one RNG call per kind of random number) is what makes the M resamples
        cheap; see `batched_draw`.
      key: PRNG key.
      n_resamples: M (static).
      selected: (d,) bool Q_t, needed in "independent" mode and for `TopK` draws.
      mode: "shared" (one batch of M draws serves every coordinate, as in [NB16]; M draws) or
        "independent" (each of the `max_k` selected slots gets its own M draws, as the [WLL]
        Lemma 6 analysis assumes; k M draws). Marginals of h_i agree; covariances differ.
      max_k: static bound on |Q_t| ("independent" mode, `TopK` draws).

    Returns:
      (d,) int32 counts; only entries on Q_t are meaningful in "independent" mode and for `TopK`
      draws (the others are M).
    """
    if mode not in MODES:
        raise ValueError(f"unknown resampling mode {mode!r}; choose one of {MODES}.")
    if mode == "independent" and (selected is None or max_k is None):
        raise ValueError("independent mode needs the selected set and max_k.")
    sets = draw(key, (n_resamples,) if mode == "shared" else (max_k, n_resamples))
    by_rank = isinstance(sets, TopK)
    if mode == "shared" and not by_rank:
        return first_hits(sets)  # one batch of M draws: counts for every coordinate
    if selected is None or max_k is None:
        raise ValueError("TopK draws need the selected set and max_k.")
    d = selected.shape[-1]
    (slots,) = jnp.nonzero(selected, size=max_k, fill_value=0)
    if mode == "shared":  # every slot against the same M draws (by rank: TopK draws)
        topk = cast(TopK, sets)
        hits = jax.vmap(in_top_k, (0, 0, None))(topk.score, topk.k, slots)  # (M, max_k)
        per_slot = first_hits(hits)
    else:  # slot j against its own M draws
        if by_rank:
            one = lambda sc, kk, i: in_top_k(sc, kk, i[None])[0]  # noqa: E731
            topk = cast(TopK, sets)
            hits = jax.vmap(jax.vmap(one, (0, 0, None)))(topk.score, topk.k, slots)
        else:
            hits = jax.vmap(lambda m, i: m[:, i])(sets, slots)  # (max_k, M)
        per_slot = jax.vmap(lambda m: first_hits(m[:, None])[0])(hits)  # (max_k,)
    valid = jnp.arange(max_k) < jnp.sum(selected)
    h = jnp.full((d,), n_resamples, jnp.int32)
    return h.at[jnp.where(valid, slots, d)].set(per_slot, mode="drop")
