"""0/1 knapsack solvers for the [WLL] section 4.2 leader (docs/algorithms.md B3), vectorisable.

* `knapsack_exact`: dynamic programme over integer capacities 0..max_budget ([KT05] section 6.4):
  best[c] = max value of items with total cost <= c, scanned item by item with a take table,
  then backtracked from c = budget. O(d * max_budget) time and booleans; `budget` may be traced.
* `knapsack_fptas`: the value-rounding FPTAS ([KT05] section 11.8): unit = eps max v / (2d),
  v-hat = ceil(v / unit), minc[V] = least cost reaching rounded value >= V; answer = largest V with
  minc[V] <= budget. Value >= OPT / (1 + eps). Table size d (ceil(2d/eps) + 1) (static).
"""

from __future__ import annotations

import math

import jax.numpy as jnp
from jax import lax

from oslr.types import Array, float_dtype


def _backtrack(takes: Array, step_cost: Array, start: Array) -> Array:
    """Walk the take table (d, C) backwards from index `start`; returns the chosen (d,) mask."""

    def back(pos, row_cost):
        row, cost = row_cost
        chosen = row[pos]
        return pos - jnp.where(chosen, cost, 0), chosen

    _, chosen = lax.scan(back, start, (takes, step_cost), reverse=True)
    return chosen


def knapsack_exact(values: Array, costs: Array, budget: Array, max_budget: int) -> Array:
    """Maximise sum v_i over subsets with sum c_i <= budget (integer costs >= 1).

    Args:
      values: (d,) values >= 0.
      costs: (d,) int32 costs >= 1.
      budget: () int32 capacity, 0 <= budget <= max_budget (traced).
      max_budget: static table size - 1.

    Returns:
      (d,) bool, an optimal subset.
    """
    caps = jnp.arange(max_budget + 1)
    values = values.astype(float_dtype())

    def add_item(best, item):
        v, c = item
        shifted = jnp.where(caps >= c, best[jnp.clip(caps - c, 0, max_budget)] + v, -jnp.inf)
        take = shifted > best
        return jnp.where(take, shifted, best), take

    _, takes = lax.scan(add_item, jnp.zeros(max_budget + 1, float_dtype()), (values, costs))
    return _backtrack(takes, costs, jnp.clip(budget, 0, max_budget))


def fptas_table_size(d: int, eps: float) -> int:
    """Number of rounded-value levels of the FPTAS table, d (ceil(2d/eps) + 1) + 1."""
    return d * (math.ceil(2 * d / eps) + 1) + 1


def knapsack_fptas(values: Array, costs: Array, budget: Array, eps: float) -> Array:
    """(1 - eps)-approximate 0/1 knapsack by value rounding (real or integer costs).

    Args:
      values: (d,) values >= 0; costs: (d,) costs > 0; budget: () capacity (traced);
      eps: static accuracy in (0, 1).

    Returns:
      (d,) bool subset with value >= OPT / (1 + eps) and cost <= budget.
    """
    d = values.shape[-1]
    size = fptas_table_size(d, eps)
    fits = costs <= budget
    vmax = jnp.max(jnp.where(fits, values, 0.0))
    unit = jnp.where(vmax > 0, eps * vmax / (2 * d), 1.0)
    vhat = jnp.where(fits, jnp.ceil(values / unit), 0).astype(jnp.int32)
    levels = jnp.arange(size)
    big = jnp.asarray(jnp.inf, float_dtype())

    def add_item(minc, item):
        vh, c, ok = item
        prev = minc[jnp.clip(levels - vh, 0, size - 1)]
        cand = jnp.where(ok & (vh > 0), prev + c, big)
        take = cand < minc
        return jnp.where(take, cand, minc), take

    minc0 = jnp.where(levels == 0, 0.0, big).astype(float_dtype())
    minc, takes = lax.scan(add_item, minc0, (vhat, costs.astype(float_dtype()), fits))
    best_level = jnp.max(jnp.where(minc <= budget, levels, 0))
    return _backtrack(takes, vhat, best_level)
