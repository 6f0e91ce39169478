"""Online regressors on (masked) feature vectors, as optax-style pure components (docs/algorithms.md
B6, B7, B11; Zinkevich 2003).

A `Regressor` is a NamedTuple of pure functions over its own state; hyper-parameters are a params
dataclass passed on every call (so a study can sweep them), declared with `oslr.spec.param` so a
learner that embeds a regressor can inherit its fields:

    reg = vaw(k)                              # ogd(k), ons(k), ridge(k)
    state = reg.init(params)
    y_hat = reg.predict(state, x, params)     # x (k,): observed features (zeros elsewhere)
    state = reg.update(state, x, y, params)   # after the label y arrives

Coordinates that stay zero in every x keep a zero weight (VAW, ridge, ONS: identity rows of A and
zero b there), which is how a learner runs a regressor on a selected subset of a fixed axis.

References: [CBL06] section 11.8 (Vovk-Azoury-Warmuth); [HAK07] (Online Newton Step); Zinkevich
2003 (projected OGD); B11 (Sherman-Morrison).
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import jax.numpy as jnp
from jax import lax

from oslr.primitives.sherman_morrison import sherman_morrison_update
from oslr.spec import param, register_params
from oslr.types import Array


class Regressor(NamedTuple):
    """An online regressor over (k,) feature vectors.

    Attributes:
      init: `init(params) -> state`.
      predict: `predict(state, x, params) -> ()` the prediction for x (before y is known).
      update: `update(state, x, y, params) -> state`.
      weights: `weights(state, params) -> (k,)` the current linear predictor (VAW: the one that
        predicted the last x; ridge / OGD / ONS: the one that will predict the next x).
    """

    init: Callable[[Any], Any]
    predict: Callable[[Any, Array, Any], Array]
    update: Callable[[Any, Array, Array, Any], Any]
    weights: Callable[[Any, Any], Array]


# --------------------------------------------------------------------------- VAW and ridge


@register_params
class VawParams:
    """Attributes: a: () float32, the ridge of A = a I + sum x x^T (B6, OURS a = 1)."""

    a: Array = param(jnp.float32, 1.0, lo=0.0, lo_open=True,
                     doc="ridge a of A = a I + sum x x^T")


class LsState(NamedTuple):
    """Attributes: a_inv: (k, k) float32 A^{-1}; b: (k,) float32 sum y x."""

    a_inv: Array
    b: Array


def _ls_init(k: int) -> Callable[[VawParams], LsState]:
    def init(params: VawParams) -> LsState:
        dtype = params.a.dtype  # float32, or float64 under x64 (references)
        return LsState(jnp.eye(k, dtype=dtype) / params.a, jnp.zeros(k, dtype))

    return init


def _ls_update(state: LsState, x: Array, y: Array, params) -> LsState:
    del params
    return LsState(sherman_morrison_update(state.a_inv, x), state.b + y * x)


def vaw(k: int) -> Regressor:
    """Vovk-Azoury-Warmuth forecaster (B6): x_t enters A before predicting,

        y_hat_t = x_t^T (A_{t-1} + x_t x_t^T)^{-1} b_{t-1} = x^T A^{-1} b / (1 + x^T A^{-1} x)

    (the second form by Sherman-Morrison), then A += x x^T, b += y x. Bound: sum (y_hat - y)^2
    <= inf_u [sum (u^T x - y)^2 + a ||u||^2] + Y^2 sum_i log(1 + lambda_i / a).
    """

    def predict(state: LsState, x: Array, params: VawParams) -> Array:
        del params
        ax = state.a_inv @ x
        return (ax @ state.b) / (1.0 + jnp.maximum(x @ ax, 0.0))

    def weights(state: LsState, params: VawParams) -> Array:
        del params
        return state.a_inv @ state.b

    return Regressor(_ls_init(k), predict, _ls_update, weights)


def ridge(k: int) -> Regressor:
    """Follow-the-regularised-leader ridge least squares: y_hat = x^T A^{-1} b with A = a I +
    sum of the past x x^T (x_t not included; compare `vaw`), A^{-1} by Sherman-Morrison (B11)."""

    def predict(state: LsState, x: Array, params: VawParams) -> Array:
        del params
        return x @ (state.a_inv @ state.b)

    def weights(state: LsState, params: VawParams) -> Array:
        del params
        return state.a_inv @ state.b

    return Regressor(_ls_init(k), predict, _ls_update, weights)


# --------------------------------------------------------------------------- OGD


@register_params
class OgdStepParams:
    """Attributes: eta: () float32 base step (eta / sqrt(t + 1) at update t, 0-based); radius: ()
    float32 radius D of the l2 ball of the iterates."""

    eta: Array = param(jnp.float32, 0.1, lo=0.0, lo_open=True,
                       doc="base step; eta / sqrt(t + 1) at update t")
    radius: Array = param(jnp.float32, 1.0, lo=0.0, lo_open=True,
                          doc="radius D of the l2 ball of the iterates")


class OgdState(NamedTuple):
    """Attributes: w: (k,) float32 weights; t: () int32 updates so far."""

    w: Array
    t: Array


def project_l2(w: Array, radius: Array) -> Array:
    """Euclidean projection onto {||w||_2 <= radius}."""
    norm = jnp.linalg.norm(w)
    return w * jnp.minimum(1.0, radius / jnp.maximum(norm, 1e-30))


def ogd(k: int) -> Regressor:
    """Projected online gradient descent on the square loss (Zinkevich 2003):
    w <- Pi_D(w - eta / sqrt(t + 1) * 2 (w^T x - y) x)."""

    def init(params: OgdStepParams) -> OgdState:
        return OgdState(jnp.zeros(k, params.eta.dtype), jnp.zeros((), jnp.int32))

    def predict(state: OgdState, x: Array, params) -> Array:
        del params
        return state.w @ x

    def update(state: OgdState, x: Array, y: Array, params: OgdStepParams) -> OgdState:
        step = params.eta / jnp.sqrt(state.t.astype(params.eta.dtype) + 1.0)
        w = state.w - step * 2.0 * (state.w @ x - y) * x
        return OgdState(project_l2(w, params.radius), state.t + 1)

    return Regressor(init, predict, update, lambda state, params: state.w)


# --------------------------------------------------------------------------- ONS


@register_params
class OnsParams:
    """Online Newton Step constants (B7): A_0 = eps I, step 1 / beta, radius D.

    Attributes: beta: () float32; eps: () float32; radius: () float32.
    """

    beta: Array = param(jnp.float32, 0.5, lo=0.0, lo_open=True,
                        doc="beta = min(1/(4 G D), alpha) / 2; the step is A^-1 grad / beta")
    eps: Array = param(jnp.float32, 1.0, lo=0.0, lo_open=True,
                       doc="A_0 = eps I (theory: 1 / (beta D)^2)")
    radius: Array = param(jnp.float32, 1.0, lo=0.0, lo_open=True,
                          doc="radius D of the l2 ball of the iterates")


class OnsState(NamedTuple):
    """Attributes: w: (k,) float32; a: (k, k) float32 A = eps I + sum grad grad^T;
    a_inv: (k, k) float32 A^{-1}."""

    w: Array
    a: Array
    a_inv: Array


def project_l2_in_norm(v: Array, a: Array, radius: Array, n_bisect: int = 40) -> Array:
    """Generalised projection argmin_{||w|| <= radius} (w - v)^T A (w - v), A symmetric PD.

    Stationarity gives w(mu) = (A + mu I)^{-1} A v with mu >= 0 the multiplier of the ball; in the
    eigenbasis A = Q diag(lam) Q^T, ||w(mu)||^2 = sum_i (lam_i c_i / (lam_i + mu))^2, c = Q^T v,
    decreasing in mu: bisection on log mu finds ||w(mu)|| = radius when v lies outside.
    """
    lam, q = jnp.linalg.eigh(a)
    lam = jnp.maximum(lam, 1e-30)
    c = q.T @ v

    def norm2(mu):
        return jnp.sum((lam * c / (lam + mu)) ** 2)

    # ||w(mu)|| <= lam_max ||c|| / mu: mu_hi = lam_max ||c|| / radius is feasible
    hi = jnp.log(jnp.max(lam) * jnp.linalg.norm(c) / radius + 1e-30) + 1.0
    lo = jnp.log(jnp.min(lam)) - 40.0

    def bisect(_, bounds):
        lo_, hi_ = bounds
        mid = 0.5 * (lo_ + hi_)
        outside = norm2(jnp.exp(mid)) > radius**2
        return jnp.where(outside, mid, lo_), jnp.where(outside, hi_, mid)

    _, hi = lax.fori_loop(0, n_bisect, bisect, (lo, hi))
    w_proj = q @ (lam * c / (lam + jnp.exp(hi)))
    return jnp.where(jnp.linalg.norm(v) <= radius, v, w_proj)


def ons(k: int) -> Regressor:
    """Online Newton Step on the square loss ([HAK07], B7):
    A += g g^T, w <- Pi^A_D(w - A^{-1} g / beta), g = 2 (w^T x - y) x."""

    def init(params: OnsParams) -> OnsState:
        eye = jnp.eye(k, dtype=params.eps.dtype)
        return OnsState(jnp.zeros(k, eye.dtype), params.eps * eye, eye / params.eps)

    def predict(state: OnsState, x: Array, params) -> Array:
        del params
        return state.w @ x

    def update(state: OnsState, x: Array, y: Array, params: OnsParams) -> OnsState:
        g = 2.0 * (state.w @ x - y) * x
        a = state.a + jnp.outer(g, g)
        a_inv = sherman_morrison_update(state.a_inv, g)
        v = state.w - (a_inv @ g) / params.beta
        return OnsState(project_l2_in_norm(v, a, params.radius), a, a_inv)

    return Regressor(init, predict, update, lambda state, params: state.w)


# --------------------------------------------------------------------------- batch least squares


def masked_ls_loss(g: Array, c: Array, yy: Array, mask: Array) -> Array:
    """min over w supported on `mask` of yy - 2 c^T w + w^T G w = yy - c_R^T G_RR^+ c_R, the
    least-squares loss of a batch with statistics G = X^T X, c = X^T y, yy = y^T y restricted to
    the masked columns R ([KKLP] eq. (6) times B).

    Symmetric elimination on the masked G (the pseudo-inverse form of `oslr.regret`): pivot j
    adds r_j^2 / p_j to the explained part; a pivot below 10 n eps max diag(G_RR) is a column
    dependent on the earlier ones (exactly collinear +-1 columns are common in a short batch)
    and is skipped, so singular supports need no ridge. Clamped to [0, yy]. `vmap` it over
    masks to score many candidate supports at once.

    Args:
      g: (n, n) PSD; c: (n,); yy: (); mask: (n,) bool.

    Returns:
      () the loss.
    """
    r = mask.astype(g.dtype)
    n = g.shape[-1]
    a = g * r[:, None] * r[None, :]
    v = c * r
    tol = 10.0 * n * jnp.finfo(g.dtype).eps * jnp.maximum(jnp.max(jnp.diagonal(a)), 1e-30)
    rows = jnp.arange(n)

    def pivot(j, carry):
        a, v, gain = carry
        p = a[j, j]
        ok = p > tol
        safe = jnp.where(ok, p, 1.0)
        gain = gain + jnp.where(ok, v[j] * v[j] / safe, 0.0)
        f = jnp.where(ok & (rows > j), a[:, j] / safe, 0.0)
        return a - f[:, None] * a[j][None, :], v - f * v[j], gain

    _, _, gain = lax.fori_loop(0, n, pivot, (a, v, jnp.zeros((), g.dtype)))
    return jnp.clip(yy - gain, 0.0, jnp.maximum(yy, 0.0))


__all__ = [
    "masked_ls_loss",
    "LsState",
    "OgdState",
    "OgdStepParams",
    "OnsParams",
    "OnsState",
    "Regressor",
    "VawParams",
    "ogd",
    "ons",
    "project_l2",
    "project_l2_in_norm",
    "ridge",
    "vaw",
]
