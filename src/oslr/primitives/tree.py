"""Pytree helpers shared by the harness, learners and problems."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from oslr.types import Array


def tree_select(pred: Array, new: Any, old: Any) -> Any:
    """`new` where `pred` else `old`, leaf by leaf (pred () bool, traced)."""
    return jax.tree.map(lambda a, b: jnp.where(pred, a, b), new, old)
