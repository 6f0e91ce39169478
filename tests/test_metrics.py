"""Streaming metrics (`oslr.metrics`): compensated float32 running sums are error-free."""

import types

import jax.numpy as jnp
import numpy as np
from jax import lax

from oslr import metrics
from oslr.types import PREDICTION


def _queries_sum(counts):
    """The `queries` running sum of a prediction tracker fed `counts` (int) one per round."""
    ckpts = jnp.asarray([len(counts)], jnp.int32)
    state = metrics.init(PREDICTION, 2, 1, stats=False)
    example = types.SimpleNamespace(x=jnp.zeros(2), y=jnp.zeros(()), y_clean=jnp.zeros(()))

    def body(m, tc):
        t, c = tc
        record = types.SimpleNamespace(prediction=jnp.zeros(()), n_queried=c,
                                       over_budget=jnp.zeros((), bool))
        return metrics.update(PREDICTION, m, example, record, t, ckpts, False), None

    counts = jnp.asarray(counts, jnp.int32)
    state, _ = lax.scan(body, state, (jnp.arange(len(counts), dtype=jnp.int32), counts))
    return metrics.combine(state["run"])["queries"], metrics.combine(state["ckpt"])["queries"]


def test_compensated_sums__exact_on_a_short_hard_float32_sum():
    # 2^24 + 1 rounds back to 2^24 in float32: a plain sum of [2^24, 1 x 100, -2^24] is 0
    assert metrics.compensated()
    counts = [2**24] + [1] * 100 + [-(2**24)]
    run, ckpt = _queries_sum(counts)
    assert float(run) == 100.0 and float(ckpt[0]) == 100.0  # the checkpoint copy too
    plain = np.float32(0)
    for c in counts:
        plain = np.float32(plain + np.float32(c))
    assert plain == 0.0  # what an uncompensated float32 sum gives


def test_two_sum__error_term_is_exact():
    a, b = jnp.float32(1.0), jnp.float32(2.0**-30)
    s, e = metrics.two_sum(a, b)
    assert float(s) == 1.0 and float(e) == 2.0**-30
    s, e = metrics.two_sum(b, a)  # either order
    assert float(s) == 1.0 and float(e) == 2.0**-30
