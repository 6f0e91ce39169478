"""Sample histories (`oslr.primitives.history`): the two storage modes, capacity, acceptance,
uniform draws."""

import jax
import jax.numpy as jnp
import numpy as np

from oslr.primitives.history import history_add, history_draw, history_get, history_init


def test_history_init__shapes_and_dtypes_of_both_modes():
    feats = history_init(4, 3, store_features=True)
    assert (feats.ids.shape, feats.x.shape, feats.y.shape) == ((0,), (4, 3), (4,))
    ids = history_init(4, 3, store_features=False)
    assert (ids.ids.shape, ids.x.shape, ids.y.shape) == ((4,), (0, 3), (4,))
    for h in (feats, ids):
        assert (h.x.dtype, h.y.dtype, h.ids.dtype, h.n.dtype) == (
            jnp.float32, jnp.float32, jnp.int32, jnp.int32)
        assert int(h.n) == 0


def test_history_add__accepts_drops_past_capacity_and_keeps_ids_as_integers():
    h = history_init(2, 2, store_features=False)
    for i, (idx, y, ok) in enumerate([(5, 1.0, True), (6, 2.0, False), (7, 3.0, True),
                                      (8, 4.0, True)]):
        h = history_add(h, jnp.float32(y), idx=jnp.float32(idx), accept=ok)
    assert np.asarray(h.ids).tolist() == [5, 7] and h.ids.dtype == jnp.int32
    assert np.asarray(h.y).tolist() == [1.0, 3.0] and int(h.n) == 2 and h.n.dtype == jnp.int32
    table = jnp.arange(20.0).reshape(10, 2)
    x, y = history_get(h, 1, table)
    assert np.asarray(x).tolist() == [14.0, 15.0] and float(y) == 3.0
    x, _ = history_get(h, 0, lambda i: table[i] * 10)  # a lookup function instead of a table
    assert np.asarray(x).tolist() == [100.0, 110.0]
    one = history_add(history_init(1, 2, store_features=True), jnp.float32(9.0),
                      x=jnp.array([1.0, 2.0]))  # capacity one: kept
    assert np.asarray(one.x).tolist() == [[1.0, 2.0]] and float(one.y[0]) == 9.0
    x, y = history_get(one, 0)
    assert np.asarray(x).tolist() == [1.0, 2.0] and float(y) == 9.0
    empty = history_init(0, 2, store_features=True)
    assert history_add(empty, jnp.float32(1.0), x=jnp.ones(2)) is empty


def test_history_draw__uniform_over_the_stored_samples():
    keys = jax.random.split(jax.random.key(0), 200)
    h = history_init(5, 1, store_features=False)
    h = history_add(h, jnp.float32(1.0), idx=0)
    assert set(np.asarray(jax.jit(jax.vmap(lambda k: history_draw(k, h)))(keys)).tolist()) == {0}
    for i in range(2):
        h = history_add(h, jnp.float32(1.0), idx=i)
    draws = np.asarray(jax.jit(jax.vmap(lambda k: history_draw(k, h)))(keys))
    assert set(draws.tolist()) == {0, 1, 2}


def test_history_draw__float64_mode_draws_the_same_samples():
    from tests.helpers import x64

    keys = jax.random.split(jax.random.key(1), 50)
    h = history_init(8, 1, store_features=False)
    for i in range(6):
        h = history_add(h, jnp.float32(1.0), idx=i)
    f32 = np.asarray(jax.jit(jax.vmap(lambda k: history_draw(k, h)))(keys))
    with x64():
        f64 = np.asarray(jax.jit(jax.vmap(lambda k: history_draw(k, h)))(keys))
    np.testing.assert_array_equal(f32, f64)
    assert f64.dtype == np.int32
