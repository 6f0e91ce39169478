"""The information protocol: round objects the harness hands to `Learner.step`.

The harness, not the learner, enforces what a learner may see. A round object is built from the
traced example of the round and exposes the data only through methods that must be called in
order, once each; a wrong order fails with `ProtocolError` at trace time:

* `PredictionRound` (family F1): `observe(mask, forms=None)` returns the queried features (zeros
  elsewhere), then `commit(prediction)` returns the label. The committed value is what the harness
  scores, and it is computed before the label exists in the trace, so it cannot depend on it.
* `LinearRound` (family F2, [WLL]): `play(w, support=None)` commits the sparse action and returns
  theta = -y x on the selected support only.
* `BanditRound` (family F3, [KPM]): `arms` is visible; `pull(arm)` returns that arm's reward.

Budgets are enforced structurally: queries beyond the budget are dropped (coordinates in index order
after linear forms) and the round records `over_budget`, which the contract suite requires to stay
False. The harness scores decisions itself (losses are never reported by the learner).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from oslr.primitives.prefix import prefix_sums
from oslr.types import (
    Array,
    BanditExample,
    StreamExample,
    float_dtype,
)


class ProtocolError(RuntimeError):
    """A learner used a round object out of order (raised while tracing)."""


class PredictionRecord(NamedTuple):
    """What the harness keeps from an F1 round.

    Attributes:
      prediction: () the committed prediction.
      query: (d,) bool, the coordinates revealed.
      n_queried: () int32, observations requested (coordinates plus nonzero linear forms).
      over_budget: () bool, whether the request exceeded the budget (it was truncated).
      forms: (m, d) the linear forms revealed (rows dropped by the budget zeroed), or None when
        the round observed coordinates only.
    """

    prediction: Array
    query: Array
    n_queried: Array
    over_budget: Array
    forms: Any = None


class LinearRecord(NamedTuple):
    """What the harness keeps from an F2 round: the played (d,) `w` and its (d,) `query`."""

    w: Array
    query: Array
    n_queried: Array
    over_budget: Array


class BanditRecord(NamedTuple):
    """What the harness keeps from an F3 round: the pulled `arm` () int32 (-1 for a continuous
    play), the played `x` (d,) for continuous-action problems and whether a replayed event was
    `accepted` () bool (None otherwise)."""

    arm: Array
    x: Any = None
    accepted: Any = None


def _round_index(t: Array | None) -> Array:
    """() int32 0-based round index (0 outside a harness).

    Under `simulate` it is the scan's counter, shared by every vmapped run, so `lax.cond` on it
    stays a real branch (a condition on batched state becomes a select that runs both sides):
    learners use it to schedule periodic work such as refactorisations and snapshots.
    """
    return jnp.zeros((), jnp.int32) if t is None else jnp.asarray(t, jnp.int32)


def _truncate(mask: Array, allowed: Array | int) -> Array:
    """Keep the first `allowed` True entries of `mask` (index order). A static `allowed` (a
    Python or NumPy integer: a budget that does not depend on the params) of at least the mask's
    length keeps it whole with no work, so that XLA fuses the observation into what follows."""
    if isinstance(allowed, (int, np.integer)) and allowed >= mask.shape[-1]:
        return mask
    return mask & (prefix_sums(mask) <= allowed)


def _budget(budget: Array | int) -> Array | int:
    """A static budget (Python or NumPy integer) stays static; anything else becomes int32."""
    return int(budget) if isinstance(budget, (int, np.integer)) else jnp.asarray(budget,
                                                                                 jnp.int32)


class PredictionRound:
    """F1 round: observe at most `budget` features (or linear forms), predict, then see y."""

    def __init__(self, example: StreamExample, budget: Array, t: Array | None = None):
        self.t = _round_index(t)
        self._x = example.x
        self._y = example.y
        self._budget = _budget(budget)
        self._stage = 0
        self._record: PredictionRecord | None = None
        self._query = jnp.zeros(self.d, bool)
        self._n_queried = jnp.zeros((), jnp.int32)
        self._over = jnp.zeros((), bool)
        self._forms: Array | None = None

    @property
    def d(self) -> int:
        """Number of features (static)."""
        return self._x.shape[-1]

    def observe(self, mask: Array, forms: Array | None = None) -> Any:
        """Reveal the queried coordinates (and optionally linear forms) of this round's x.

        Args:
          mask: (d,) bool, coordinates to observe.
          forms: optional (m, d) rows a_j; each nonzero row counts as one observation and reveals
            <a_j, x> ([ITO] observation maps).

        Returns:
          (d,) x with unqueried coordinates set to 0; with `forms`, also the (m,) values <a_j, x>
          (0 for rows dropped by the budget).
        """
        if self._stage != 0:
            raise ProtocolError("observe() may be called once per round, before commit().")
        self._stage = 1
        mask = jnp.asarray(mask).astype(bool)
        if mask.shape != (self.d,):
            raise ProtocolError(f"observe() expects a ({self.d},) mask, got shape {mask.shape}.")
        requested = jnp.sum(mask, dtype=jnp.int32)
        used = jnp.zeros((), jnp.int32)
        values = None
        if forms is not None:
            forms = jnp.asarray(forms, self._x.dtype)
            nonzero = jnp.any(forms != 0, axis=-1)
            keep_forms = _truncate(nonzero, self._budget)
            used = jnp.sum(keep_forms, dtype=jnp.int32)
            requested = requested + jnp.sum(nonzero, dtype=jnp.int32)
            values = jnp.where(keep_forms, forms @ self._x, 0.0)
            self._forms = jnp.where(keep_forms[:, None], forms, 0.0)
        keep = _truncate(mask, self._budget if forms is None else self._budget - used)
        self._query = keep
        self._n_queried = requested
        self._over = requested > self._budget
        x_obs = jnp.where(keep, self._x, jnp.zeros_like(self._x))
        return x_obs if values is None else (x_obs, values)

    def commit(self, prediction: Array) -> Array:
        """Commit the prediction for this round and receive the label y (a () array)."""
        if self._stage == 2:
            raise ProtocolError("commit() may be called once per round.")
        self._stage = 2
        prediction = jnp.asarray(prediction, self._x.dtype)
        if prediction.shape != ():
            raise ProtocolError(f"commit() expects a scalar prediction, got {prediction.shape}.")
        self._record = PredictionRecord(prediction, self._query, self._n_queried, self._over,
                                        self._forms)
        return self._y


class LinearRound:
    """F2 round ([WLL]): play w with |support| <= budget, observe theta = -y x on the support."""

    def __init__(self, example: StreamExample, budget: Array, t: Array | None = None):
        self.t = _round_index(t)
        self._theta = -example.y * example.x
        self._budget = _budget(budget)
        self._delay = example.delay
        self._record: LinearRecord | None = None

    @property
    def delay(self) -> Array:
        """() int32 D_t: this round's feedback is usable from the end of round t + D_t - 1 on."""
        return jnp.asarray(1 if self._delay is None else self._delay, jnp.int32)

    @property
    def d(self) -> int:
        """Number of coordinates (static)."""
        return self._theta.shape[-1]

    def play(self, w: Array, support: Array | None = None) -> Array:
        """Play `w` (d,) and receive theta on `support` (default: the nonzeros of w).

        `support` is the selected index set Q_t of [WLL]; entries of w outside the kept support are
        set to 0 (and counted as a budget violation).

        Returns:
          (d,) theta_t with coordinates outside the support set to 0.
        """
        if self._record is not None:
            raise ProtocolError("play() may be called once per round.")
        w = jnp.asarray(w, self._theta.dtype)
        if w.shape != (self.d,):
            raise ProtocolError(f"play() expects a ({self.d},) action, got shape {w.shape}.")
        support = (w != 0) if support is None else jnp.asarray(support).astype(bool)
        keep = _truncate(support, self._budget)
        requested = jnp.sum(support | (w != 0), dtype=jnp.int32)
        over = (requested > self._budget) | jnp.any((w != 0) & ~keep)
        w_played = jnp.where(keep, w, 0.0)
        self._record = LinearRecord(w_played, keep, requested, over)
        return jnp.where(keep, self._theta, 0.0)


class BanditRound:
    """F3 round ([KPM]): arm features are visible; pull one arm and receive its reward."""

    def __init__(self, example: BanditExample, t: Array | None = None, lookup=None):
        self.t = _round_index(t)
        self._example = example
        self._lookup = lookup
        self._record: BanditRecord | None = None

    @property
    def arms(self) -> Array:
        """(K, d) features of this round's arms."""
        return self._example.arms

    @property
    def n_arms(self) -> int:
        return self._example.arms.shape[0]

    @property
    def arm_ids(self) -> Array:
        """(K,) int32 global ids of this round's arms (problems with `Problem.features`)."""
        if self._example.arm_ids is None:
            raise ProtocolError("this problem has no global arm ids; store arm indices or "
                                "vectors instead (history='arm' or 'features').")
        return self._example.arm_ids

    def features(self, ids: Array) -> Array:
        """Arm features (..., d) of global arm ids from any round (`Problem.features`)."""
        if self._lookup is None:
            raise ProtocolError("this problem provides no feature lookup for arm ids.")
        return self._lookup(ids)

    def pull(self, arm: Array) -> Array:
        """Pull `arm` (() int) and receive its realised reward (() float)."""
        if self._record is not None:
            raise ProtocolError("pull()/play() may be called once per round.")
        arm = jnp.clip(jnp.asarray(arm, jnp.int32), 0, self.n_arms - 1)
        if arm.shape != ():
            raise ProtocolError(f"pull() expects a scalar arm index, got shape {arm.shape}.")
        ex = self._example
        accepted = None if ex.logged is None else arm == ex.logged
        self._record = BanditRecord(arm, None if ex.theta is None else ex.arms[arm], accepted)
        return ex.rewards[arm] if accepted is None else jnp.where(accepted, ex.rewards[arm], 0.0)

    @property
    def accepted(self) -> Array:
        """() bool, after `pull`: whether the event counts (False only for a replayed event whose
        logged arm differs from the pulled one; the learner must then leave its state as it was)."""
        if self._record is None:
            raise ProtocolError("accepted is known only after pull().")
        acc = self._record.accepted
        return jnp.ones((), bool) if acc is None else acc

    def play(self, x: Array) -> Array:
        """Play any x (d,) of the unit ball (continuous-action problems such as the unit sphere;
        a longer x is scaled back onto the sphere) and receive x^T theta + noise."""
        if self._record is not None:
            raise ProtocolError("pull()/play() may be called once per round.")
        ex = self._example
        if ex.theta is None:
            raise ProtocolError("play(x) needs a continuous-action problem; this one has finite "
                                "arms: use pull(arm).")
        x = jnp.asarray(x, float_dtype())
        if x.shape != ex.theta.shape:
            raise ProtocolError(f"play() expects x of shape {ex.theta.shape}, got {x.shape}.")
        x = x / jnp.maximum(jnp.linalg.norm(x), 1.0)
        self._record = BanditRecord(jnp.asarray(-1, jnp.int32), x)
        return x @ ex.theta + ex.noise


def problem_lookup(problem: Any, problem_params: Any):
    """`ids -> features` of `problem` with its params bound, or None."""
    if getattr(problem, "features", None) is None:
        return None
    return lambda ids: problem.features(problem_params, ids)
