"""Observation matrices A (d x m) whose columns a_i a learner observes as a_i^T x ([ITO] F_A,
Alg. 3; the KKLP_A baseline, docs/algorithms.md L3.3-L3.4).

[ITO] assume ||A||_2 <= 1; the Gaussian family is rescaled to spectral norm exactly 1.
"""

from __future__ import annotations

import numpy as np

KINDS = ("identity", "gaussian")


def projection_matrix(d: int, m: int | None = None, kind: str = "gaussian",
                      seed: int = 0) -> np.ndarray:
    """(d, m) float32 A with ||A||_2 = 1.

    Args:
      d: the feature dimension.
      m: number of columns (default: d for "identity", 2 d for "gaussian", the E3 choice).
      kind: "identity" (A = I_d) or "gaussian" (i.i.d. N(0, 1) entries from numpy's PCG64 with
        `seed`, divided by the largest singular value).
    """
    if kind not in KINDS:
        raise ValueError(f"unknown projection kind {kind!r}; choose one of {KINDS}.")
    if kind == "identity":
        if m not in (None, d):
            raise ValueError(f"an identity projection has m = d = {d} columns, not {m}.")
        return np.eye(d, dtype=np.float32)
    m = 2 * d if m is None else int(m)
    if m < 1:
        raise ValueError(f"projection: m={m} must be >= 1.")
    a = np.random.default_rng(seed).standard_normal((d, m))
    return (a / np.linalg.norm(a, 2)).astype(np.float32)


def resolve_projection(projection, d: int) -> np.ndarray | None:
    """A (d, m) float32 from a learner option: None (observe coordinates), "identity",
    "gaussian" (m = 2 d, seed 0) or an array-like (d, m) with finite entries."""
    if projection is None:
        return None
    if isinstance(projection, str):
        return projection_matrix(d, kind=projection)
    a = np.asarray(projection, np.float32)
    if a.ndim != 2 or a.shape[0] != d or a.shape[1] < 1:
        raise ValueError(f"projection must be a (d={d}, m) matrix whose columns are observed as "
                         f"a_i^T x; got shape {a.shape}.")
    if not np.isfinite(a).all():
        raise ValueError("projection holds NaN or inf entries.")
    return a


__all__ = ["KINDS", "projection_matrix", "resolve_projection"]
