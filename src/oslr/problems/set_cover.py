"""The set-cover stream of [FKK] Algorithm 2 (Reduction 1; docs/algorithms.md L5.2).

A binary matrix M (m x d) whose columns are sets over m elements. Round t draws a row r ~ U[m]
and a sign sigma_t ~ +-1 and shows x_t = sigma_t r / sqrt(d) (so ||x_t|| <= 1) with label
y_t = sigma_t / sqrt(d k).

If k sets cover every element exactly once, w = 1_{S*} / sqrt(k) predicts every round with zero
loss. If no k' sets cover every element, every learner querying <= k' features has expected loss
>= 1 / (m d k) per round, and Alg. 2 decides "satisfiable" when the total loss is <= T / (2 m d k).

Planted generator (OURS): "yes": k of the d columns form a random partition of the m elements (an
exact cover), the other d - k columns are decoys containing each element with probability rho;
"no": the same plus one more element (an all-zero row) that no set covers, so m + 1 rows. The
instance is drawn once from `instance_seed` (NumPy); rows and signs are drawn per round from the
run's problem key. The matrix and the planted w travel as problem params (broadcast).
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from oslr.checks import check_positive_int
from oslr.prng import rademacher
from oslr.spec import Option, ProblemSpec
from oslr.types import Array, Problem, StreamExample, on_device


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class SetCoverParams:
    """Attributes:
    matrix: (m, d) float32 0/1 set-cover matrix (rows: elements, columns: sets).
    w_star: (d,) float32 planted predictor 1_{S*} / sqrt(k) (zero loss on a "yes" instance).
    k: () int32 size of the planted cover (the comparator's sparsity).
    """

    matrix: Array
    w_star: Array
    k: Array


def planted_instance(d: int, k: int, m: int, rho: float, satisfiable: bool,
                     seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A planted set-cover matrix and its cover.

    Returns:
      matrix: (m, d) or, for a "no" instance, (m + 1, d) 0/1 float32 (the last row uncovered).
      cover: (k,) int64 sorted column indices of the exact cover of the first m elements.
    """
    rng = np.random.default_rng(seed)
    cover = np.sort(rng.choice(d, size=k, replace=False))
    matrix = (rng.random((m, d)) < rho).astype(np.float32)  # decoys of density rho
    cuts = np.sort(rng.choice(np.arange(1, m), size=k - 1, replace=False))
    groups = np.split(rng.permutation(m), cuts)
    matrix[:, cover] = 0.0
    for col, members in zip(cover, groups):
        matrix[members, col] = 1.0
    if not satisfiable:
        matrix = np.vstack([matrix, np.zeros((1, d), np.float32)])
    return matrix, cover


def set_cover(d: int, n_rows: int) -> Problem:
    """The Alg. 2 stream over an (n_rows, d) matrix given in the params."""

    def init(key: Array, params: SetCoverParams):
        del key, params
        return ()

    def sample(key: Array, state, t: Array, params: SetCoverParams):
        del t
        k_row, k_sign = jax.random.split(key)
        row = jax.random.randint(k_row, (), 0, n_rows, jnp.int32)
        sign = rademacher(k_sign)
        x = sign * params.matrix[row] / jnp.sqrt(jnp.float32(d))
        y = sign / jnp.sqrt(jnp.float32(d) * params.k.astype(jnp.float32))
        return state, StreamExample(x=x, y=y, y_clean=jnp.dot(params.w_star, x))

    return Problem(init=init, sample=sample, kind="stream", d=d, name="set-cover",
                   sparsity="k")  # the planted cover's size, params.k


def decision_threshold(horizon, n_rows: int, d: int, k: int):
    """Alg. 2's line: total loss <= T / (2 m d k) means "satisfiable" (m = rows of the matrix)."""
    return np.asarray(horizon, float) / (2.0 * n_rows * d * k)


def _factory(d: int = 8, k: int = 2, m: int = 12, rho: float = 0.3, satisfiable: bool = True,
             instance_seed: int = 0):
    check_positive_int("d", d)
    check_positive_int("m", m)
    if not 1 <= k <= min(d, m):
        raise ValueError(f"cover size k={k} must satisfy 1 <= k <= min(d={d}, m={m}) (k sets "
                         "partition the m elements).")
    if not 0.0 <= rho <= 1.0:
        raise ValueError(f"decoy density rho={rho} must lie in [0, 1].")
    matrix, cover = planted_instance(d, k, m, rho, bool(satisfiable), int(instance_seed))
    w_star = np.zeros(d, np.float32)
    w_star[cover] = 1.0 / np.sqrt(k)
    problem = set_cover(d, matrix.shape[0])._replace(
        realizable=bool(satisfiable), sparsity=k,
        info={"satisfiable": bool(satisfiable), "rows": int(matrix.shape[0]), "rho": float(rho),
              "cover": [int(c) for c in cover], "instance_seed": int(instance_seed)})
    params = SetCoverParams(matrix=on_device(matrix), w_star=on_device(w_star),
                            k=on_device(k, np.int32))
    return problem, params


SET_COVER = ProblemSpec(
    "set-cover", "stream",
    "[FKK] Alg. 2 hard stream from a planted set-cover matrix (yes: exact k-cover; no: + an "
    "uncovered element)", _factory,
    (Option("d", 8, "sets (features)", type=int, lo=1),
     Option("k", 2, "size of the planted cover (the comparator's sparsity)", type=int, lo=1,
            hi="d"),
     Option("m", 12, "elements", type=int, lo=1),
     Option("rho", 0.3, "decoy density", type=float, lo=0.0, hi=1.0),
     Option("satisfiable", True, "an exact k-cover exists (False: one element uncovered)",
            type=bool),
     Option("instance_seed", 0, "seed of the planted instance", type=int)))
