"""Fixed-capacity sample histories for SGD from history (docs/algorithms.md B12).

SGD trackers ([KPM]) draw a past sample i ~ U{0..n-1} every step. When a sample's features are
determined by a choice from a known table (a bandit arm from a fixed arm set, a PEGE basis vector),
the buffer stores the choice (int32) and the reward, not the vector, so thousands of runs fit in
memory; x_i is rebuilt as `table[ids[i]]`. Otherwise (arm sets that change every round) it stores
the vectors. Capacity is static (the horizon); entries at index >= n are never read.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from oslr.types import Array, float_dtype


class History(NamedTuple):
    """Attributes:
    ids: (capacity,) int32 table row of each sample (id mode), or (0,) in feature mode.
    x: (capacity, d) float32 features (feature mode), or (0, d) in id mode.
    y: (capacity,) float32 responses (rewards or labels).
    n: () int32, samples stored.
    """

    ids: Array
    x: Array
    y: Array
    n: Array


def history_init(capacity: int, d: int, store_features: bool) -> History:
    """An empty history of static `capacity`; `store_features` picks feature mode over id mode."""
    return History(
        ids=jnp.zeros((0 if store_features else capacity,), jnp.int32),
        x=jnp.zeros((capacity if store_features else 0, d), float_dtype()),
        y=jnp.zeros((capacity,), float_dtype()),
        n=jnp.zeros((), jnp.int32),
    )


def history_add(h: History, y: Array, x: Array | None = None, idx: Array | None = None,
                accept: Array | bool = True) -> History:
    """Append one sample (x in feature mode, the table row `idx` in id mode) if `accept`.

    Samples past the capacity are dropped (the harness sizes the buffer to the horizon).
    """
    if h.y.shape[0] == 0:  # a zero-capacity history (a learner that needs none)
        return h
    pos = jnp.where(accept, h.n, h.y.shape[0])  # an out-of-range position drops the write
    ids = h.ids if h.ids.shape[0] == 0 else h.ids.at[pos].set(jnp.asarray(idx, h.ids.dtype),
                                                                  mode="drop")
    xs = h.x if h.x.shape[0] == 0 else h.x.at[pos].set(x, mode="drop")
    n = jnp.minimum(h.n + jnp.asarray(accept, jnp.int32), h.y.shape[0])
    return History(ids=ids, x=xs, y=h.y.at[pos].set(y, mode="drop"), n=n)


def history_get(h: History, i: Array, table=None) -> tuple[Array, Array]:
    """(x_i (d,), y_i ()) of sample i; id mode needs the `table`: an array (rows, d) or a
    function of the stored id (e.g. a problem's feature lookup)."""
    if h.x.shape[0]:
        return h.x[i], h.y[i]
    x = table(h.ids[i]) if callable(table) else table[h.ids[i]]
    return x, h.y[i]


def history_draw(key: Array, h: History) -> Array:
    """A uniform index in {0..n-1} (0 when the history is empty; callers mask that case)."""
    return jax.random.randint(key, (), 0, jnp.maximum(h.n, 1), jnp.int32)
