"""What each problem family means, in one record per family (docs/algorithms.md sections 1-2).

A `Family` holds everything the harness and the results need to know about a family: the round
object a learner plays (`oslr.protocol`), the running sums the tracker keeps and each round's
increments (`oslr.metrics` reduces them inside the scan), whether the comparator needs the d x d
statistics of the prefix, and the comparator that turns the sums into regret (`oslr.regret`, on
the host, in float64). Modules outside the learners and problems ask `family(name)` instead of
branching on the family's name. Which regret quantity a table shows first is declared once for
every family in `oslr.frames.PRIMARY_METRICS` (a saved folder is read without JAX, and so
without this module).

* prediction (F1): learner loss (y_hat - y)^2; the true model's loss (y_clean - y)^2 (R3);
  optionally G = X^T X, c = X^T y, s = y^T y, from which the best k-sparse least-squares loss
  in hindsight is computed (R1, or the greedy lower bound R2 above the enumeration limit);
* linear (F2): reward y <w, x> and Theta = sum y x, whose top-k norm is the best sparse action
  (R4);
* bandit (F3): reward, pseudo-regret max_a <x_a, theta*> - <x_pulled, theta*> (R5) and the count
  of accepted events (every round, except rejected events of a replay).

Prediction and linear rounds also count queried features and over-budget rounds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax.numpy as jnp
import numpy as np

from oslr import regret
from oslr.protocol import BanditRound, LinearRound, PredictionRound
from oslr.types import BANDIT, LINEAR, PREDICTION, Array, float_dtype

#: Above this many supports C(d, k) the prediction comparator is the greedy lower bound (R2).
ENUMERATION_LIMIT = 200_000


@dataclass(frozen=True)
class Family:
    """One problem family.

    Attributes:
      name: PREDICTION, LINEAR or BANDIT.
      round: `round(example, budget, t, lookup)` -> the round object `Learner.step` gets.
      sums: `sums(d, stats)` -> {name: shape} of the running sums per run, in order (`stats`:
        with the comparator's d x d statistics, where the family has them).
      increments: `increments(example, record, stats)` -> this round's term of every sum.
      gram_stats: whether the comparator can use the d x d statistics (`sums` with stats).
      regret: `regret(result)` -> {quantity: (G, R, C) float64} from a result's curves.
    """

    name: str
    round: Callable[..., Any]
    sums: Callable[[int, bool], dict[str, tuple]]
    increments: Callable[[Any, Any, bool], dict[str, Array]]
    gram_stats: bool
    regret: Callable[[Any], dict[str, np.ndarray]]

    def running_names(self, stats: bool) -> tuple[str, ...]:
        """Names of the running sums (each also checkpointed)."""
        return tuple(self.sums(0, stats))


# ----------------------------------------------------------------------------- prediction (F1)

def _prediction_sums(d: int, stats: bool) -> dict[str, tuple]:
    base = {"loss": (), "loss_wstar": (), "queries": (), "over_budget": ()}
    return {**base, "gram": (d, d), "xy": (d,), "yy": ()} if stats else base


def _prediction_increments(example: Any, record: Any, stats: bool) -> dict[str, Array]:
    f = float_dtype()
    x, y = example.x.astype(f), example.y.astype(f)
    inc = {
        "loss": (record.prediction.astype(f) - y) ** 2,
        "loss_wstar": (example.y_clean.astype(f) - y) ** 2,
        "queries": record.n_queried.astype(f),
        "over_budget": record.over_budget.astype(f),
    }
    if stats:
        inc.update(gram=jnp.outer(x, x), xy=y * x, yy=y * y)
    return inc


def _prediction_regret(result: Any) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    c = result.curves
    loss = c["loss"].astype(np.float64)
    if result.realizable:
        out["regret_wstar"] = loss - c["loss_wstar"]
    if "gram" in c and result.comparator_k is not None:
        best, exact = regret.best_sparse_ls_loss(
            c["gram"], c["xy"], c["yy"], result.comparator_k,
            radius=result.comparator_radius, enumeration_limit=ENUMERATION_LIMIT,
        )
        out["regret" if exact else "regret_lb_greedy"] = loss - best
    return out


# ----------------------------------------------------------------------------- linear (F2)

def _linear_sums(d: int, stats: bool) -> dict[str, tuple]:
    return {"reward": (), "theta_sum": (d,), "queries": (), "over_budget": ()}


def _linear_increments(example: Any, record: Any, stats: bool) -> dict[str, Array]:
    f = float_dtype()
    x, y = example.x.astype(f), example.y.astype(f)
    return {
        "reward": y * jnp.sum(record.w.astype(f) * x),
        "theta_sum": y * x,
        "queries": record.n_queried.astype(f),
        "over_budget": record.over_budget.astype(f),
    }


def _linear_regret(result: Any) -> dict[str, np.ndarray]:
    c = result.curves
    k = np.asarray(result.params.k).reshape(-1, 1, 1)
    b = float(result.info.get("b", 2.0))
    best = regret.best_sparse_linear_reward(c["theta_sum"], k, b)
    return {"regret": best - c["reward"]}


# ----------------------------------------------------------------------------- bandit (F3)

def _bandit_sums(d: int, stats: bool) -> dict[str, tuple]:
    return {"reward": (), "pseudo_regret": (), "accepted": ()}


def _bandit_increments(example: Any, record: Any, stats: bool) -> dict[str, Array]:
    f = float_dtype()
    if example.theta is not None:  # continuous action set: the played x
        mean = jnp.sum(record.x.astype(f) * example.theta.astype(f))
        return {"reward": mean + example.noise.astype(f),
                "pseudo_regret": example.best.astype(f) - mean, "accepted": jnp.ones((), f)}
    means = example.means.astype(f)
    accepted = (jnp.ones((), f) if record.accepted is None else record.accepted.astype(f))
    return {
        "reward": example.rewards[record.arm].astype(f) * accepted,
        "pseudo_regret": jnp.max(means) - means[record.arm],
        "accepted": accepted,
    }


def _bandit_regret(result: Any) -> dict[str, np.ndarray]:
    return {"pseudo_regret": result.curves["pseudo_regret"].astype(np.float64)}


FAMILIES: dict[str, Family] = {
    PREDICTION: Family(
        PREDICTION, lambda example, budget, t, lookup: PredictionRound(example, budget, t),
        _prediction_sums, _prediction_increments, True, _prediction_regret),
    LINEAR: Family(
        LINEAR, lambda example, budget, t, lookup: LinearRound(example, budget, t),
        _linear_sums, _linear_increments, False, _linear_regret),
    BANDIT: Family(
        BANDIT, lambda example, budget, t, lookup: BanditRound(example, t, lookup),
        _bandit_sums, _bandit_increments, False, _bandit_regret),
}


def family(name: str) -> Family:
    """The record of family `name`; ValueError for a name that is none of them."""
    try:
        return FAMILIES[name]
    except KeyError:
        raise ValueError(f"unknown family {name!r}") from None
