"""LinUCB and its fast SGD variants ([KPM] Algorithm 2; docs/algorithms.md L2.2-L2.4; family F3).

* `linucb` ([LCLS10], shared-parameter form): A = lam0 I + sum x x^T, b = sum r x,
  theta = A^{-1} b by Sherman-Morrison (the `rls-sm` tracker), UCB(x) = x^T theta +
  kappa sqrt(max(0, x^T A^{-1} x)); pull the argmax (ties, within a relative 1e-5, to the lower
  arm index).
* `flinucb-gd`, `flinucb-svrg`, `flinucb-sag`: theta from the fRLS-GD / SVRG / SAG tracker on the
  history of pulled arms, and the confidence width from the gradient tracker (11) of
  phi_k ~ (A_n + n lam_n I)^{-1} x_k, one per arm slot:
      phi_k <- phi_k + gamma_n (x_k / n - (phi_k^T x_i) x_i - lam_n phi_k),  i ~ U{1..n}
  (the -lam_n phi term is OURS, for stability; one sampled i is shared by the K arm steps per
  round, OURS; T_phi = 1 step per round with phi kept per arm slot as a warm start).
  UCB(x_k) = x_k^T theta + kappa sqrt(max(0, x_k^T phi_k)). Cost O(K d) per round against
  O(d^2 + K d^2) for `linucb`.

Histories (B12), capacity = horizon: `history="arm"` (default; the arm set is the same every
round) stores pulled arm indices and rebuilds x_i from this round's arm table; `"id"` stores the
problem's global arm ids and rebuilds x_i with its feature lookup (OBD replay: event row x item);
`"features"` stores the pulled vectors (arm sets that change, with no lookup).

Exact `linucb` keeps no history; `history="arm"` (a fixed arm set X, (K, d)) selects its O(K d)
form (`FixedArmState`): it carries u_a = A^{-1} x_a, the widths x_a^T A^{-1} x_a and the means
x_a^T theta for the K arms, and after pulling x = x_j with reward r and v = u_j,
w = x^T A^{-1} x, c = X v, updates them by Sherman-Morrison without A^{-1} itself:
    u_a -= c_a v / (1 + w),  width_a -= c_a^2 / (1 + w),  mean_a += c_a (r - mean_j) / (1 + w).
A = lam0 I + X^T diag(pulls) X and b = X^T (reward sums) follow from K counts, so the float32
guard (recompute all three by Cholesky every `refactor_every` rounds, from round 0) needs no
(d, d) state. `"features"` or `"id"` (arm sets that change) keep A^{-1} (O(K d^2) per round).

References: Li, Chu, Langford, Schapire 2010 (LinUCB); Korda, Prashanth, Munos, AAAI 2015,
Algorithm 2 and eq. (11).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from oslr.learners.least_squares import (
    TRACKER_DEFAULTS,
    TrackerParams,
    make_tracker,
    reg_at,
    ridge_inverse,
    step_at,
)
from oslr.primitives import (
    History,
    history_add,
    history_draw,
    history_get,
    history_init,
    tree_select,
)
from oslr.spec import LearnerSpec, Option, param, register_params
from oslr.types import BANDIT, Array, Learner, Requirements, float_dtype

HISTORIES = ("arm", "id", "features")
VARIANTS = {"linucb": "rls-sm", "flinucb-gd": "frls-gd", "flinucb-svrg": "svrg",
            "flinucb-sag": "sag"}


@register_params
class LinUcbParams(TrackerParams):
    """The tracker's `TrackerParams` (lam0, c_gamma, alpha, c_lambda, step_scale) and:

    Attributes:
      kappa: () float32, exploration weight of the confidence width.
    """

    kappa: Array = param(jnp.float32, 1.0, lo=0.0,
                         doc="exploration weight of the confidence width (GAP in [KPM])")

class FixedArmState(NamedTuple):
    """Exact LinUCB on a fixed arm set X (K, d) (see the module docstring).

    Attributes:
      u: (K, d) float32, row a is A^{-1} x_a.
      width: (K,) float32, x_a^T A^{-1} x_a.
      mean: (K,) float32, x_a^T theta, theta = A^{-1} b.
      pulls: (K,) float32, samples of each arm; rsum: (K,) float32, their reward sums.
    """

    u: Array
    width: Array
    mean: Array
    pulls: Array
    rsum: Array


def fixed_arm_state(arms: Array, pulls: Array, rsum: Array, lam0: Array) -> FixedArmState:
    """`FixedArmState` from scratch: A^-1 = (lam0 I + X^T diag(pulls) X)^-1 by the trackers'
    Cholesky (`ridge_inverse`), b = X^T rsum."""
    a_inv = ridge_inverse(arms.T @ (pulls[:, None] * arms), lam0)
    u = arms @ a_inv  # A^-1 is symmetric: row a is A^-1 x_a
    return FixedArmState(u=u, width=jnp.sum(u * arms, axis=-1),
                         mean=arms @ (a_inv @ (arms.T @ rsum)), pulls=pulls, rsum=rsum)


def fixed_arm_update(state: FixedArmState, arms: Array, arm: Array, reward: Array
                     ) -> FixedArmState:
    """The O(K d) Sherman-Morrison step after pulling `arm` (module docstring). Gathers and
    scatters at `arm` measured faster under vmap on the CPU than one-hot products or sums."""
    v = state.u[arm]
    denom = 1.0 + jnp.maximum(state.width[arm], 0.0)  # the float32 guard of B11
    c = arms @ v
    return FixedArmState(u=state.u - c[:, None] * v[None, :] / denom,
                         width=state.width - c * c / denom,
                         mean=state.mean + c * (reward - state.mean[arm]) / denom,
                         pulls=state.pulls.at[arm].add(1.0), rsum=state.rsum.at[arm].add(reward))


class LinUcbState(NamedTuple):
    """Attributes:
    est: the tracker state (theta, or A^{-1} and b for `linucb`).
    phi: (K, d) float32 confidence trackers per arm slot (unused by `linucb`: (K, 0)).
    hist: `History` of pulled arms and rewards (capacity 0 for `linucb`).
    a_sum: (d, d) float32 sum of x x^T and b_sum: (d,) sum of r x, kept only with `track=True`
      (else (0, 0) and (0,)) for the tracking-error diagnostic.
    """

    est: Any
    phi: Array
    hist: History
    a_sum: Array
    b_sum: Array


def linucb(d: int, n_arms: int, horizon: int = 10_000, variant: str = "linucb",
           history: str = "arm", refactor_every: int = 256, track: bool = False,
           schedule: str | None = None, average: bool = False) -> Learner:
    """LinUCB (`variant="linucb"`) or fLinUCB with the fRLS-GD, SVRG or SAG tracker.

    Args:
      d: feature dimension; n_arms: K arms per round (static).
      horizon: history capacity (rounds).
      variant: one of `VARIANTS`.
      history: "arm", "id" or "features" (see the module docstring).
      refactor_every: Cholesky refresh period of A^{-1} (`linucb`).
      schedule, average: fRLS-GD step form ("power" c n^-alpha, default, or "kpm" c/(4(c+n)))
        and Polyak averaging of its iterates (`flinucb-gd`).
      track: keep A_n, b_n (O(d^2) per round) and report `tracking_error` = ||theta_n -
        theta~_n|| at the checkpoints, theta~_n = (A_n + n lam_n I)^{-1} b_n the regularised LS
        solution the tracker follows (solved in the checkpoint rounds only; fLinUCB variants).
    """
    if variant not in VARIANTS:
        raise ValueError(f"unknown LinUCB variant {variant!r}; choose one of {list(VARIANTS)}.")
    if history not in HISTORIES:
        raise ValueError(f"unknown history mode {history!r}; choose one of {HISTORIES}.")
    kind = VARIANTS[variant]
    if kind == "rls-sm" and history == "arm":
        return _fixed_arm_linucb(d, n_arms, variant, refactor_every)
    return _tracked_linucb(d, n_arms, horizon, variant, history, refactor_every, track,
                           schedule, average)


def _budget(params: LinUcbParams) -> Array:
    del params
    return jnp.asarray(1, jnp.int32)


def _pick(ucb: Array) -> Array:
    """The arm of the largest UCB; ties within float32 rounding go to the lower index, so that
    compiled and eager runs (different fusion, last-bit differences) pull the same arm
    (unit-norm arms tie exactly in round 1)."""
    top = jnp.max(ucb)
    return jnp.argmax(ucb >= top - 1e-5 * (1.0 + jnp.abs(top)))


def _fixed_arm_linucb(d: int, n_arms: int, variant: str, refactor_every: int) -> Learner:
    """Exact LinUCB on a fixed arm set, in its O(K d) form (`FixedArmState`, module
    docstring)."""

    def init(key: Array, params: LinUcbParams) -> LinUcbState:
        del key, params
        # filled from the arm table at the start of round 0 (the refresh in `step`)
        zero_k = jnp.zeros(n_arms, float_dtype())
        est = FixedArmState(u=jnp.zeros((n_arms, d), float_dtype()), width=zero_k,
                            mean=zero_k, pulls=zero_k, rsum=zero_k)
        return LinUcbState(est=est, phi=jnp.zeros((n_arms, 0), float_dtype()),
                           hist=history_init(0, d, store_features=False),
                           a_sum=jnp.zeros((0, 0), float_dtype()),
                           b_sum=jnp.zeros(0, float_dtype()))

    def step(key: Array, state: LinUcbState, rnd, params: LinUcbParams) -> LinUcbState:
        del key
        arms = rnd.arms
        # the float32 guard: recompute from the pull counts at rounds 0, R, 2R, ... (also on a
        # rejected replay event, so that it keeps pace with the rounds)
        est = lax.cond(rnd.t % refactor_every == 0,
                       lambda: fixed_arm_state(arms, state.est.pulls, state.est.rsum,
                                               params.lam0),
                       lambda: state.est)
        arm = _pick(est.mean + params.kappa * jnp.sqrt(jnp.maximum(est.width, 0.0)))
        reward = rnd.pull(arm)
        new = fixed_arm_update(est, arms, arm, reward)
        return state._replace(est=tree_select(rnd.accepted, new, est))

    return Learner(init=init, step=step, family=BANDIT, budget=_budget, name=variant,
                   diagnostics=None,
                   info={"tracker": "rls-sm", "history": None, "fixed_arms": True},
                   requires=Requirements(replay=True, n_arms=n_arms, capacity=None,
                                         history="arm"))


def _tracked_linucb(d: int, n_arms: int, horizon: int, variant: str, history: str,
                    refactor_every: int, track: bool, schedule: str | None,
                    average: bool) -> Learner:
    """LinUCB with A^{-1} kept (arm sets that change) or fLinUCB with its SGD trackers."""
    kind = VARIANTS[variant]
    exact = kind == "rls-sm"
    capacity = 0 if exact else horizon
    tracker = make_tracker(kind, d, capacity, schedule, average, refactor_every)
    tracked = track and not exact
    width_schedule = schedule or "power"  # the fRLS-GD default; "kpm" when theta uses it

    def init(key: Array, params: LinUcbParams) -> LinUcbState:
        del key
        return LinUcbState(est=tracker.init(params),
                           phi=jnp.zeros((n_arms, 0 if exact else d), float_dtype()),
                           hist=history_init(capacity, d, store_features=history == "features"),
                           a_sum=jnp.zeros((d, d) if tracked else (0, 0), float_dtype()),
                           b_sum=jnp.zeros(d if tracked else 0, float_dtype()))

    def step(key: Array, state: LinUcbState, rnd, params: LinUcbParams) -> LinUcbState:
        k_phi, k_est = jax.random.split(key)
        arms = rnd.arms
        theta = tracker.theta(state.est, params)
        if exact:
            phi = state.phi
            width = jnp.sum((arms @ state.est.a_inv) * arms, axis=-1)
        else:
            phi = _phi_step(k_phi, state.phi, arms, state.hist, table(rnd), params,
                            width_schedule)
            width = jnp.sum(phi * arms, axis=-1)
        arm = _pick(arms @ theta + params.kappa * jnp.sqrt(jnp.maximum(width, 0.0)))
        reward = rnd.pull(arm)
        ok = rnd.accepted  # False only for a rejected replay event: then nothing changes
        x = arms[arm]
        idx = rnd.arm_ids[arm] if history == "id" and not exact else arm
        hist = history_add(state.hist, reward, x=x, idx=idx, accept=ok)
        est = tracker.update(k_est, state.est, x, reward, hist if not exact else None,
                             table(rnd), rnd.t, params)
        # a rejected event brings no sample, but the periodic work of the round (Cholesky
        # refresh, SVRG snapshot) still happens, so that it keeps pace with the samples
        idle = tracker.refresh(state.est, hist if not exact else None, table(rnd), rnd.t, params)
        a_sum, b_sum = state.a_sum, state.b_sum
        if tracked:
            a_sum, b_sum = a_sum + jnp.outer(x, x), b_sum + reward * x
        small = (est, phi, a_sum, b_sum)
        est, phi, a_sum, b_sum = tree_select(ok, small, (idle, state.phi, state.a_sum,
                                                         state.b_sum))
        return LinUcbState(est=est, phi=phi, hist=hist, a_sum=a_sum, b_sum=b_sum)

    def diagnostics(state: LinUcbState, params: LinUcbParams) -> dict:
        n = state.hist.n
        reg = n * reg_at(n, params) + 1e-6  # the jitter keeps fOLS (c_lambda = 0) solvable
        target = jnp.linalg.solve(state.a_sum + reg * jnp.eye(d, dtype=float_dtype()), state.b_sum)
        return {"tracking_error": jnp.linalg.norm(tracker.theta(state.est, params) - target)}

    def table(rnd):
        """How stored ids become features: this round's arms, or the problem's lookup."""
        return rnd.features if history == "id" and not exact else rnd.arms

    return Learner(init=init, step=step, family=BANDIT, budget=_budget, name=variant,
                   diagnostics=diagnostics if tracked else None,
                   info={"tracker": kind, "history": None if exact else history,
                         "fixed_arms": False},
                   requires=Requirements(replay=True, n_arms=n_arms,
                                         capacity=None if exact else horizon,
                                         history=None if exact else history))


def _phi_step(key, phi, arms, hist: History, tab, params, width_schedule: str) -> Array:
    """(11) with n = samples so far; no step before the first sample."""
    n = hist.n
    x_i, _ = history_get(hist, history_draw(key, hist), tab)
    # the same step form as the theta tracker ([KPM] use one gamma_n for both)
    gamma = step_at(n, params, width_schedule)
    lam = reg_at(n, params)
    nf = jnp.maximum(n, 1).astype(float_dtype())
    new = phi + gamma * (arms / nf - (phi @ x_i)[:, None] * x_i[None, :] - lam * phi)
    return jnp.where(n > 0, new, phi)


def _spec(variant: str, description: str, reference: str) -> LearnerSpec:
    def factory(d, n_arms=10, horizon=10_000, history="arm", refactor_every=256, track=False,
                schedule=None, average=False):
        return linucb(d, n_arms, horizon, variant, history, refactor_every, track, schedule,
                      average)

    return LearnerSpec(
        name=variant,
        family=BANDIT,
        description=description,
        factory=factory,
        params=LinUcbParams,
        options=(
            Option("n_arms", 10, "arms per round K (must match the problem)", type=int,
                   fill="n_arms"),
            Option("horizon", lambda c: c.horizon, "history capacity (rounds)"),
            Option("history", "arm", "stored past arms: arm indices, global ids or vectors",
                   HISTORIES),
            Option("refactor_every", 256, "Cholesky refresh period of A^-1 (linucb)"),
            Option("track", False, "record the tracking error against the RLS solution"),
            Option("schedule", None, "fRLS-GD step form (power c n^-alpha or kpm c/(4(c+n)))",
                   (None, "power", "kpm")),
            Option("average", False, "Polyak averaging of the fRLS-GD iterates"),
        ),
        defaults=TRACKER_DEFAULTS[VARIANTS[variant]],
        alt={"kappa": 0.3, "lam0": 2.0, "c_gamma": 0.5, "alpha": 0.6, "c_lambda": 0.5,
             "step_scale": 0.5},
        reference=reference,
    )


LINUCB = _spec("linucb", "LinUCB, shared theta, exact ridge LS by Sherman-Morrison ([LCLS10]); "
               "O(K d) per round on a fixed arm set (history='arm')",
               "[LCLS10]; docs/algorithms.md L2.2")
FLINUCB_GD = _spec("flinucb-gd",
                   "fLinUCB-GD: fRLS-GD estimate and SGD-tracked confidence widths ([KPM] Alg. 2)",
                   "[KPM] Alg. 2, docs/algorithms.md L2.2")
FLINUCB_SVRG = _spec("flinucb-svrg", "fLinUCB with an SVRG tracker ([KPM] App. B, reconstructed)",
                     "[KPM] App. B, docs/algorithms.md L2.3")
FLINUCB_SAG = _spec("flinucb-sag", "fLinUCB with a SAG tracker ([KPM] App. C, reconstructed)",
                    "[KPM] App. C, docs/algorithms.md L2.4")
