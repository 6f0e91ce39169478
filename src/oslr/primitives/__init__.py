"""Shared vectorised building blocks (docs/algorithms.md section 3), reused by every learner family.

Selectors (Exp3, Tsallis-INF, BEXP, Hedge; `selectors`) and regressors (VAW, ridge, OGD, ONS;
`regressors`) are optax-style `init`/`update` components: a "selector over feature sets + a
regressor on the selected features" learner is a short composition of one of each.
"""

from oslr.primitives.geometric_resampling import (
    TopK,
    batched_draw,
    first_hits,
    geometric_resampling,
)
from oslr.primitives.history import (
    History,
    history_add,
    history_draw,
    history_get,
    history_init,
)
from oslr.primitives.knapsack import knapsack_exact, knapsack_fptas
from oslr.primitives.oracle import oracle_weights, sparse_oracle, sparse_oracle_value
from oslr.primitives.permutation import permutation_keys, permute
from oslr.primitives.regressors import Regressor, ogd, ons, ridge, vaw
from oslr.primitives.selectors import Draw, Selector, bexp, exp3, hedge, tsallis_inf
from oslr.primitives.sherman_morrison import sherman_morrison_update
from oslr.primitives.tree import tree_select
from oslr.primitives.topk import (
    counts_in_one_pass,
    in_top_k,
    radix_select_mask,
    random_subset_mask,
    top_k_mask,
)

__all__ = [
    "Draw",
    "Regressor",
    "Selector",
    "TopK",
    "bexp",
    "exp3",
    "hedge",
    "ogd",
    "ons",
    "ridge",
    "tsallis_inf",
    "vaw",
    "History",
    "history_add",
    "history_draw",
    "history_get",
    "history_init",
    "batched_draw",
    "first_hits",
    "geometric_resampling",
    "counts_in_one_pass",
    "in_top_k",
    "knapsack_exact",
    "knapsack_fptas",
    "oracle_weights",
    "permutation_keys",
    "permute",
    "radix_select_mask",
    "random_subset_mask",
    "sherman_morrison_update",
    "sparse_oracle",
    "sparse_oracle_value",
    "top_k_mask",
    "tree_select",
]
