"""Shared vectorised building blocks (ALGORITHMS.md section 3), reused by every learner family."""

from oslr.primitives.geometric_resampling import batched_draw, first_hits, geometric_resampling
from oslr.primitives.history import (
    History,
    history_add,
    history_draw,
    history_get,
    history_init,
)
from oslr.primitives.knapsack import knapsack_exact, knapsack_fptas
from oslr.primitives.oracle import oracle_weights, sparse_oracle, sparse_oracle_value
from oslr.primitives.sherman_morrison import sherman_morrison_update
from oslr.primitives.tree import tree_select
from oslr.primitives.topk import radix_select_mask, random_subset_mask, top_k_mask

__all__ = [
    "History",
    "history_add",
    "history_draw",
    "history_get",
    "history_init",
    "batched_draw",
    "first_hits",
    "geometric_resampling",
    "knapsack_exact",
    "knapsack_fptas",
    "oracle_weights",
    "radix_select_mask",
    "random_subset_mask",
    "sherman_morrison_update",
    "sparse_oracle",
    "sparse_oracle_value",
    "top_k_mask",
    "tree_select",
]
