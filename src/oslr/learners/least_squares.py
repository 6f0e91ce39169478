"""Online least-squares estimators ([KPM]; docs/algorithms.md L2.0, L2.3, L2.4, B11, B12).

A `Tracker` is a pure component that higher-level learners (LinUCB, PEGE, ...) embed: after each
new sample (x_n, y_n) is appended to a `History`, `update` moves the estimate; `theta` reads it.

* `sm` (`ols-sm`, `rls-sm`): exact ridge least squares theta = (lam0 I + A_n)^{-1} b_n with A^{-1}
  kept by Sherman-Morrison (B11). Float32 guard: A itself is kept as an exact sum and A^{-1} is
  recomputed by Cholesky every `refactor_every` rounds (OURS: 256). `ols-sm` is the same with a
  vanishing ridge lam0 = 1e-6 (so that A is invertible before d samples arrive; OURS).
* `gd` (`fols-gd`, `frls-gd`): one SGD step from history per sample, [KPM] (5) / (9):
      i ~ U{1..n},
      theta_n = theta_{n-1} + gamma_n ((y_i - theta_{n-1}^T x_i) x_i - lam_n theta_{n-1})
  with gamma_n = c / (4 (c + n)) (Thm 1, "kpm") or c n^-alpha ("power"), lam_n = c_lam n^-(1-alpha)
  (c_lam = 0: fOLS-GD), and optional Polyak averaging. Steps and schedules are optax's.
  Targets: OLS A_n^{-1} b_n, or the RLS fixed point (A_n + n lam_n I)^{-1} b_n of (9) (the update is
  authoritative over (3)'s penalty).
* `svrg` (L2.3, reconstructed [JZ13]):
      theta <- theta - eta (g_i(theta) - g_i(snap) + mu + lam_n theta),
  mu = (1/n) sum_i g_i(snap) kept up to date as samples arrive, snapshot refreshed when the round
  count t + 1 is a power of two (amortised O(d log T)); eta = step_scale / L,
  L = max ||x||^2 + lam_n.
* `sag` (L2.4, reconstructed [LSB12], "divide by the number seen"): one stored residual per sample,
  G = sum_i g_i, theta <- theta - alpha (G / n + lam_n theta), alpha = step_scale / L.

Every update is O(d) per step plus one history gather, except `sm` (O(d^2)).

References: Korda, Prashanth, Munos, "Fast gradient descent for drifting least squares
regression, with application to bandits", AAAI 2015, eqs. (5), (9); Johnson & Zhang 2013 (SVRG);
Le Roux, Schmidt, Bach 2012 (SAG).
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import optax
from jax import lax

from oslr.primitives import History, history_draw, history_get, sherman_morrison_update
from oslr.spec import build_params, param, register_params
from oslr.types import Array, float_dtype

TRACKERS = ("ols-sm", "rls-sm", "fols-gd", "frls-gd", "svrg", "sag")
SCHEDULES = ("kpm", "power")


@register_params
class TrackerParams:
    """Hyper-parameters of every tracker (each uses the fields it needs).

    Attributes:
      lam0: () float32, ridge of the Sherman-Morrison estimators (LinUCB's lambda_0).
      c_gamma: () float32, step constant c (gamma_n = c/(4(c+n)) or c n^-alpha).
      alpha: () float32, exponent in (1/2, 1) of the power step and of lam_n.
      c_lambda: () float32, lam_n = c_lambda n^-(1 - alpha) (0: no regularisation, fOLS).
      step_scale: () float32, SVRG / SAG step = step_scale / L.
    """

    lam0: Array = param(jnp.float32, 1.0, lo=0.0, lo_open=True,
                        doc="ridge of lam0 I + A (> 0 so that it is invertible)")
    c_gamma: Array = param(jnp.float32, 1.0, lo=0.0, lo_open=True,
                           doc="step constant c of gamma_n")
    alpha: Array = param(jnp.float32, 0.75, lo=0.5, hi=1.0, lo_open=True, hi_open=True,
                         doc="exponent in (1/2, 1) of the power step c n^-alpha and of lam_n")
    c_lambda: Array = param(jnp.float32, 1.0, lo=0.0,
                            doc="lam_n = c_lambda n^-(1 - alpha) (0: no ridge, fOLS)")
    step_scale: Array = param(jnp.float32, 1.0, lo=0.0, lo_open=True,
                              doc="SVRG / SAG step = step_scale / L")


#: Per-tracker default overrides of `TrackerParams` (docs/algorithms.md L2.0, OURS: alpha = 0.75,
#: c_gamma = c_lambda = 1): `ols-sm` a vanishing ridge; `fols-gd` the Thm 1 step with c = 3d
#: (mu c / 4 = 0.75 for isotropic unit-norm features, mu = 1/d) and no ridge; `svrg` 0.1 / L (L2.3).
TRACKER_DEFAULTS: dict[str, dict] = {
    "ols-sm": {"lam0": 1e-6},
    "rls-sm": {},
    "fols-gd": {"c_gamma": lambda c: 3.0 * c.d, "c_lambda": 0.0},
    "frls-gd": {},
    "svrg": {"step_scale": 0.1},
    "sag": {},
}


def tracker_defaults(kind: str, d: int, **overrides) -> TrackerParams:
    """`TrackerParams` with the defaults of tracker `kind` for dimension d."""
    return build_params(TrackerParams, d, TRACKER_DEFAULTS[kind], **overrides)


def reg_at(n: Array, params: TrackerParams) -> Array:
    """lam_n = c_lambda n^-(1 - alpha) (n >= 1 samples)."""
    return params.c_lambda * jnp.maximum(n, 1).astype(float_dtype()) ** (params.alpha - 1.0)


def step_at(n: Array, params: TrackerParams, schedule: str) -> Array:
    """gamma_n for sample count n >= 1: c/(4(c+n)) ("kpm") or c n^-alpha ("power")."""
    n = jnp.maximum(n, 1).astype(float_dtype())
    if schedule == "kpm":
        return params.c_gamma / (4.0 * (params.c_gamma + n))
    return params.c_gamma * n ** (-params.alpha)


class Tracker(NamedTuple):
    """An online least-squares estimator component.

    Attributes:
      init: `init(params) -> state`.
      update: `update(key, state, x, y, hist, table, t, params) -> state` for the newest sample
        (x (d,), y ()), already appended to `hist` (a `History` to draw past samples from, or None
        for `sm`, which needs none); `table` rebuilds x in id mode; t is the round index.
      theta: `theta(state, params) -> (d,)` current estimate.
      name: registry-style name.
      refresh: `refresh(state, hist, table, t, params) -> state`, the periodic work of round t
        (a Cholesky refactorisation, an SVRG snapshot) on a round that brings no sample, e.g. a
        rejected replay event; `update` does the same work itself. Identity for the others.
    """

    init: Callable[[TrackerParams], Any]
    update: Callable[..., Any]
    theta: Callable[[Any, TrackerParams], Array]
    name: str
    refresh: Callable[..., Any] = lambda state, hist, table, t, params: state


# ------------------------------------------------------------------------------- Sherman-Morrison


class SmState(NamedTuple):
    """Attributes:
    a: (d, d) float32, exact sum of x x^T (without the ridge).
    a_inv: (d, d) float32, (lam0 I + a)^{-1}.
    b: (d,) float32, sum of y x.
    """

    a: Array
    a_inv: Array
    b: Array


def ridge_inverse(a: Array, lam0: Array) -> Array:
    """(lam0 I + a)^{-1} by Cholesky (the periodic refactorisation of B11)."""
    d = a.shape[-1]
    chol = jnp.linalg.cholesky(a + lam0 * jnp.eye(d, dtype=a.dtype))
    return jax.scipy.linalg.cho_solve((chol, True), jnp.eye(d, dtype=a.dtype))


def sm_tracker(d: int, refactor_every: int = 256, name: str = "rls-sm") -> Tracker:
    """Exact ridge least squares by Sherman-Morrison, refactorised every `refactor_every` rounds."""

    def init(params: TrackerParams) -> SmState:
        return SmState(a=jnp.zeros((d, d), float_dtype()),
                       a_inv=jnp.eye(d, dtype=float_dtype()) / params.lam0,
                       b=jnp.zeros(d, float_dtype()))

    def update(key, state: SmState, x, y, hist, table, t, params: TrackerParams) -> SmState:
        del key, hist, table
        a = state.a + jnp.outer(x, x)
        # t is the harness's unbatched round index, so this cond stays a branch under vmap
        a_inv = lax.cond((t + 1) % refactor_every == 0, lambda: ridge_inverse(a, params.lam0),
                         lambda: sherman_morrison_update(state.a_inv, x))
        return SmState(a=a, a_inv=a_inv, b=state.b + y * x)

    def theta(state: SmState, params: TrackerParams) -> Array:
        del params
        return state.a_inv @ state.b

    def refresh(state: SmState, hist, table, t, params: TrackerParams) -> SmState:
        del hist, table
        a_inv = lax.cond((t + 1) % refactor_every == 0,
                         lambda: ridge_inverse(state.a, params.lam0), lambda: state.a_inv)
        return state._replace(a_inv=a_inv)

    return Tracker(init=init, update=update, theta=theta, name=name, refresh=refresh)


# ------------------------------------------------------------------------------- SGD from history


class GdState(NamedTuple):
    """Attributes:
    theta: (d,) float32 iterate.
    theta_avg: (d,) float32 Polyak average of the iterates.
    opt: optax state (holds the step count n - 1).
    """

    theta: Array
    theta_avg: Array
    opt: Any


def _sgd(params: TrackerParams, schedule: str) -> optax.GradientTransformation:
    # optax counts from 0; sample n is count n - 1
    return optax.sgd(learning_rate=lambda count: step_at(count + 1, params, schedule))


def gd_tracker(d: int, schedule: str = "power", average: bool = False,
               name: str = "frls-gd") -> Tracker:
    """fOLS-GD / fRLS-GD ([KPM] (5), (9)): one uniformly sampled history step per new sample."""
    if schedule not in SCHEDULES:
        raise ValueError(f"unknown step schedule {schedule!r}; choose one of {SCHEDULES}.")

    def init(params: TrackerParams) -> GdState:
        zero = jnp.zeros(d, float_dtype())
        return GdState(theta=zero, theta_avg=zero, opt=_sgd(params, schedule).init(zero))

    def update(key, state: GdState, x_new, y_new, hist: History, table, t, params) -> GdState:
        del t, x_new, y_new
        x, y = history_get(hist, history_draw(key, hist), table)
        lam = reg_at(hist.n, params)
        grad = -(y - state.theta @ x) * x + lam * state.theta  # gradient of f_i at theta_{n-1}
        updates, opt = _sgd(params, schedule).update(grad, state.opt)
        theta = optax.apply_updates(state.theta, updates)
        avg = state.theta_avg + (theta - state.theta_avg) / jnp.maximum(hist.n, 1)
        return GdState(theta=theta, theta_avg=avg, opt=opt)

    def theta(state: GdState, params: TrackerParams) -> Array:
        del params
        return state.theta_avg if average else state.theta

    return Tracker(init=init, update=update, theta=theta, name=name)


# ------------------------------------------------------------------------------- SVRG and SAG


class SvrgState(NamedTuple):
    """Attributes:
    theta: (d,) float32 iterate; snap: (d,) snapshot; mu: (d,) mean data gradient at snap over
    the first n_mu samples; n_mu: () int32; lmax: () float32 running max of ||x||^2.
    """

    theta: Array
    snap: Array
    mu: Array
    n_mu: Array
    lmax: Array


def _data_grad(theta: Array, x: Array, y: Array) -> Array:
    """g_i(theta) = -(y_i - theta^T x_i) x_i."""
    return -(y - theta @ x) * x


def svrg_tracker(d: int, snapshot_every: int | None = None, name: str = "svrg") -> Tracker:
    """SVRG tracker (docs/algorithms.md L2.3): snapshot at rounds t + 1 = 1, 2, 4, 8, ... (the
    doubling of L2.3 on the round count; rounds where no sample arrives still count), and every
    `snapshot_every` rounds if set (fixed-length epochs, for long runs on a static history)."""

    def init(params: TrackerParams) -> SvrgState:
        del params
        zero = jnp.zeros(d, float_dtype())
        return SvrgState(theta=zero, snap=zero, mu=zero, n_mu=jnp.zeros((), jnp.int32),
                         lmax=jnp.zeros((), float_dtype()))

    def full_mean(snap: Array, hist: History, table) -> Array:
        cap = hist.y.shape[0]
        block = min(256, cap)

        def grad_i(i):
            x, y = history_get(hist, jnp.minimum(i, cap - 1), table)
            return jnp.where(i < hist.n, _data_grad(snap, x, y), 0.0)

        def add_block(b, acc):
            return acc + jnp.sum(jax.vmap(grad_i)(b * block + jnp.arange(block)), 0)

        # blocks of 256 samples keep the memory at 256 d whatever the capacity; only the
        # blocks that hold samples run (under vmap: as many as the fullest run's), so the
        # snapshots at t + 1 = 1, 2, 4, ... cost about 2 T sample gradients in all, not a pass
        # over the whole capacity each
        n_blocks = (jnp.minimum(hist.n, cap) + block - 1) // block
        g = lax.fori_loop(0, n_blocks, add_block, jnp.zeros(d, snap.dtype))
        return g / jnp.maximum(hist.n, 1)

    def update(key, state: SvrgState, x_new, y_new, hist: History, table, t, params):
        n = jnp.maximum(hist.n, 1)
        arrived = n > state.n_mu  # a sample already in mu (a repeated call) is not added twice
        mu = jnp.where(arrived, state.mu + (_data_grad(state.snap, x_new, y_new) - state.mu) / n,
                       state.mu)
        lmax = jnp.maximum(state.lmax, x_new @ x_new)
        lam = reg_at(n, params)
        eta = params.step_scale / (lmax + lam)
        x, y = history_get(hist, history_draw(key, hist), table)
        g = _data_grad(state.theta, x, y) - _data_grad(state.snap, x, y) + mu
        theta = state.theta - eta * (g + lam * state.theta)
        snap, mu = lax.cond(snapshot_round(t),
                            lambda: (theta, full_mean(theta, hist, table)),
                            lambda: (state.snap, mu))
        return SvrgState(theta=theta, snap=snap, mu=mu, n_mu=n, lmax=lmax)

    def snapshot_round(t):
        # t is the harness's unbatched round index: a real branch under vmap, O(capacity d).
        # OURS: rounds, not samples (L2.3 doubles on n): a condition on the per-run sample count
        # is batched, and a batched lax.cond computes both sides every round. Under replay the
        # snapshot is refreshed on rejected rounds too (`refresh`), so it still doubles with the
        # accepted samples in expectation (n ~ acceptance rate x t).
        due = ((t + 1) & t) == 0  # t + 1 is a power of two
        if snapshot_every is not None:
            due = due | ((t + 1) % snapshot_every == 0)
        return due

    def theta(state: SvrgState, params: TrackerParams) -> Array:
        del params
        return state.theta

    def refresh(state: SvrgState, hist: History, table, t, params) -> SvrgState:
        snap, mu = lax.cond(snapshot_round(t),
                            lambda: (state.theta, full_mean(state.theta, hist, table)),
                            lambda: (state.snap, state.mu))
        return state._replace(snap=snap, mu=mu)

    return Tracker(init=init, update=update, theta=theta, name=name, refresh=refresh)


class SagState(NamedTuple):
    """Attributes:
    theta: (d,) float32 iterate; resid: (capacity,) float32 stored residual r_i per sample
    (g_i = -r_i x_i); g_sum: (d,) sum of the stored gradients; lmax: () max ||x||^2.
    """

    theta: Array
    resid: Array
    g_sum: Array
    lmax: Array


def sag_tracker(d: int, capacity: int, name: str = "sag") -> Tracker:
    """SAG tracker (docs/algorithms.md L2.4) with one residual per stored sample."""

    def init(params: TrackerParams) -> SagState:
        del params
        return SagState(theta=jnp.zeros(d, float_dtype()), resid=jnp.zeros(capacity, float_dtype()),
                        g_sum=jnp.zeros(d, float_dtype()), lmax=jnp.zeros((), float_dtype()))

    def update(key, state: SagState, x_new, y_new, hist: History, table, t, params) -> SagState:
        del t
        n = jnp.maximum(hist.n, 1)
        r_new = y_new - state.theta @ x_new  # (re)store the newest gradient: idempotent
        g_sum = state.g_sum - (r_new - state.resid[n - 1]) * x_new
        resid = state.resid.at[n - 1].set(r_new)
        lmax = jnp.maximum(state.lmax, x_new @ x_new)
        i = history_draw(key, hist)
        x, y = history_get(hist, i, table)
        r = y - state.theta @ x
        g_sum = g_sum - (r - resid[i]) * x
        resid = resid.at[i].set(r)
        lam = reg_at(n, params)
        step = params.step_scale / (lmax + lam)
        theta = state.theta - step * (g_sum / n + lam * state.theta)
        return SagState(theta=theta, resid=resid, g_sum=g_sum, lmax=lmax)

    def theta(state: SagState, params: TrackerParams) -> Array:
        del params
        return state.theta

    return Tracker(init=init, update=update, theta=theta, name=name)


def make_tracker(kind: str, d: int, capacity: int, schedule: str | None = None,
                 average: bool = False, refactor_every: int = 256,
                 snapshot_every: int | None = None) -> Tracker:
    """The tracker `kind` (one of `TRACKERS`); `capacity` is the history size (SAG residuals)."""
    if kind in ("ols-sm", "rls-sm"):
        return sm_tracker(d, refactor_every, name=kind)
    if kind in ("fols-gd", "frls-gd"):
        default = "kpm" if kind == "fols-gd" else "power"
        return gd_tracker(d, schedule or default, average, name=kind)
    if kind == "svrg":
        return svrg_tracker(d, snapshot_every)
    if kind == "sag":
        return sag_tracker(d, capacity)
    raise ValueError(f"unknown tracker {kind!r}; choose one of {TRACKERS}.")
