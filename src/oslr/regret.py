"""Comparators in hindsight: pure float64 NumPy functions of sufficient statistics.

Never imported by learners. docs/algorithms.md section 2:

* R1 `best_sparse_ls_loss`: min over ||w||_0 <= k (optionally ||w||_2 <= radius) of
  sum_t (<w, x_t> - y_t)^2 = s - 2 c^T w + w^T G w, with G = X^T X, c = X^T y, s = y^T y, exact by
  enumerating every k-support; above an enumeration limit, forward greedy selection
  (`greedy_sparse_ls_loss`), whose loss is >= the optimum, so the regret it gives is a lower bound
  (labelled `regret_lb_greedy`).
* R4 `best_sparse_linear_reward`: max over K_{k,b} of sum_t y_t <w, x_t> = ||top_k(|Theta|)||_a,
  Theta = sum_t y_t x_t, a = b / (b - 1) ([WLL] Lemma 1 applied to the sum).
* R5 bandit pseudo-regret is accumulated inside the scan (`oslr.metrics`).
"""

from __future__ import annotations

import math

import numpy as np

from oslr.primitives.subsets import subset_table


def _trust_region_loss(lam: np.ndarray, cp: np.ndarray, s: np.ndarray, radius: float):
    """min_{||w|| <= radius} s - 2 c^T w + w^T G w in the eigenbasis of G (lam, cp = Q^T c)."""
    tol = 1e-12 * np.maximum(lam.max(axis=-1, keepdims=True), 1.0)
    pos = lam > tol
    inv = np.where(pos, 1.0 / np.where(pos, lam, 1.0), 0.0)
    w0_sq = np.sum(cp**2 * inv**2, axis=-1)
    loss_free = s - np.sum(cp**2 * inv, axis=-1)
    # mu > 0 with sum cp^2 / (lam + mu)^2 = radius^2; bisection on log mu.
    norm_c = np.sqrt(np.sum(cp**2, axis=-1))
    lo = np.full_like(norm_c, -30.0)
    hi = np.log(np.maximum(norm_c / radius, 1e-12)) + 1.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        mu = np.exp(mid)[..., None]
        too_big = np.sum(cp**2 / (lam + mu) ** 2, axis=-1) > radius**2
        lo = np.where(too_big, mid, lo)
        hi = np.where(too_big, hi, mid)
    mu = np.exp(hi)[..., None]
    u = cp / (lam + mu)
    loss_bound = s - 2.0 * np.sum(cp * u, axis=-1) + np.sum(lam * u**2, axis=-1)
    return np.where(w0_sq <= radius**2, loss_free, loss_bound)


def _projected_gain(gss: np.ndarray, cs: np.ndarray) -> np.ndarray:
    """c_S^T G_SS^+ c_S for PSD G_SS with c_S in its range, by symmetric elimination.

    A vectorised LDL^T over the leading axes: pivot j contributes r_j^2 / p_j; pivots below a
    relative tolerance are skipped (the pseudo-inverse on a rank-deficient G_SS). k static steps of
    whole-array NumPy operations, much faster than one LAPACK call per tiny matrix.
    """
    a = gss.copy()
    r = cs.copy()
    k = a.shape[-1]
    diag_max = np.max(np.diagonal(gss, axis1=-2, axis2=-1), axis=-1)
    tol = 1e-12 * np.maximum(diag_max, 1e-300)
    gain = np.zeros(a.shape[:-2])
    for j in range(k):
        p = a[..., j, j]
        ok = p > tol
        safe = np.where(ok, p, 1.0)
        gain += np.where(ok, r[..., j] ** 2 / safe, 0.0)
        if j + 1 < k:
            f = np.where(ok[..., None], a[..., j + 1 :, j] / safe[..., None], 0.0)
            a[..., j + 1 :, :] -= f[..., :, None] * a[..., j, None, :]
            r[..., j + 1 :] -= f * r[..., j, None]
    return gain


def support_losses(g, c, s, supports, radius: float | None = None) -> np.ndarray:
    """Least-squares loss restricted to each support.

    Args:
      g: (B, d, d) Gram matrices X^T X; c: (B, d) X^T y; s: (B,) y^T y.
      supports: (N, k) indices shared by the batch, or (B, N, k) per batch element.
      radius: optional l2 bound on w (trust-region solution in the eigenbasis of G_SS).

    Returns:
      (B, N) float64 minimal loss over w supported on each support (pseudo-inverse solution when
      G_SS is singular).
    """
    g = np.asarray(g, np.float64)
    c = np.asarray(c, np.float64)
    s = np.asarray(s, np.float64)
    supports = np.asarray(supports)
    if supports.ndim == 2:
        gss = g[:, supports[:, :, None], supports[:, None, :]]  # (B, N, k, k)
        cs = c[:, supports]  # (B, N, k)
    else:
        b = np.arange(g.shape[0])[:, None, None]
        gss = g[b[..., None], supports[..., :, None], supports[..., None, :]]
        cs = c[b, supports]
    # a squared loss is >= 0: with fewer samples than k (an interpolating support, G_SS nearly
    # singular) s - c^T G^+ c can come out negative from the rounding of float32 statistics
    if radius is None:
        return np.maximum(s[:, None] - _projected_gain(gss, cs), 0.0)
    lam, q = np.linalg.eigh(gss)
    lam = np.maximum(lam, 0.0)
    cp = np.einsum("...ij,...i->...j", q, cs)
    return np.maximum(_trust_region_loss(lam, cp, s[:, None], float(radius)), 0.0)


def exact_sparse_ls_loss(g, c, s, k: int, radius: float | None = None,
                         batch_supports: int = 1_000_000) -> np.ndarray:
    """Exact best k-sparse least-squares loss by enumerating all C(d, k) supports (R1).

    Args:
      g: (..., d, d); c: (..., d); s: (...) sufficient statistics (any batch shape).
      k: static sparsity (supports of size exactly k cover all smaller ones).
      radius: optional l2 bound on w ([FKK] comparator).
      batch_supports: matrices solved per NumPy call (memory bound).

    Returns:
      (...) float64 minimal loss.
    """
    g = np.asarray(g, np.float64)
    d = g.shape[-1]
    k = int(min(k, d))
    table = subset_table(d, k)
    batch = g.shape[:-2]
    flat_g = g.reshape((-1, d, d))
    flat_c = np.asarray(c, np.float64).reshape((-1, d))
    flat_s = np.asarray(s, np.float64).reshape(-1)
    best = np.full(flat_s.shape, np.inf)
    n_b = flat_s.shape[0]
    step = max(1, batch_supports // max(n_b, 1))
    for lo in range(0, table.shape[0], step):
        part = table[lo : lo + step]
        losses = support_losses(flat_g, flat_c, flat_s, part, radius)
        best = np.minimum(best, losses.min(axis=-1))
    return best.reshape(batch)


def greedy_sparse_ls_loss(g, c, s, k: int, radius: float | None = None) -> np.ndarray:
    """Forward-selection k-sparse least-squares loss (R2): an upper bound on the optimum loss.

    Adds, k times, the coordinate that most reduces the restricted loss. Regret computed with it
    is a lower bound on the true regret.
    """
    g = np.asarray(g, np.float64)
    d = g.shape[-1]
    batch = g.shape[:-2]
    flat_g = g.reshape((-1, d, d))
    flat_c = np.asarray(c, np.float64).reshape((-1, d))
    flat_s = np.asarray(s, np.float64).reshape(-1)
    n_b = flat_s.shape[0]
    chosen = np.zeros((n_b, 0), np.int64)
    loss = flat_s.copy()
    for _ in range(int(min(k, d))):
        cand = np.broadcast_to(np.arange(d)[None, :, None], (n_b, d, 1))
        sup = np.concatenate([np.broadcast_to(chosen[:, None, :], (n_b, d, chosen.shape[1])),
                              cand], axis=-1)
        losses = support_losses(flat_g, flat_c, flat_s, sup, radius)  # (n_b, d)
        taken = np.zeros((n_b, d), bool)
        if chosen.shape[1]:
            np.put_along_axis(taken, chosen, True, axis=1)
        losses = np.where(taken, np.inf, losses)
        j = losses.argmin(axis=1)
        loss = np.minimum(loss, losses[np.arange(n_b), j])
        chosen = np.concatenate([chosen, j[:, None]], axis=1)
    return loss.reshape(batch)


def best_sparse_ls_loss(g, c, s, k: int, radius: float | None = None,
                        enumeration_limit: int = 200_000) -> tuple[np.ndarray, bool]:
    """Best k-sparse LS loss: exact when C(d, k) <= enumeration_limit (whatever the batch:
    `exact_sparse_ls_loss` bounds its memory itself), else greedy.

    Returns:
      (loss (...), exact: bool). When `exact` is False the loss is the greedy upper bound.
    """
    d = np.shape(g)[-1]
    if math.comb(d, min(k, d)) <= enumeration_limit:
        return exact_sparse_ls_loss(g, c, s, k, radius), True
    return greedy_sparse_ls_loss(g, c, s, k, radius), False


def best_sparse_linear_reward(theta_sum, k, b: float) -> np.ndarray:
    """max over {||w||_0 <= k, ||w||_b <= 1} of <w, Theta> = ||top_k(|Theta|)||_a (R4).

    Args:
      theta_sum: (..., d) Theta = sum_t y_t x_t.
      k: int or integer array broadcastable to the batch dims of `theta_sum`.
      b: norm exponent in [1, inf]; a = b / (b - 1).

    Returns:
      (...) float64 comparator reward.
    """
    v = np.sort(np.abs(np.asarray(theta_sum, np.float64)), axis=-1)[..., ::-1]
    d = v.shape[-1]
    k = np.broadcast_to(np.asarray(k), v.shape[:-1])
    keep = np.arange(d) < k[..., None]
    if b == 1.0:
        return v[..., 0]
    if math.isinf(b):
        return np.sum(np.where(keep, v, 0.0), axis=-1)
    a = b / (b - 1.0)
    return np.sum(np.where(keep, v, 0.0) ** a, axis=-1) ** (1.0 / a)
