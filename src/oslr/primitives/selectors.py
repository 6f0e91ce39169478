"""Selectors: experts / bandit algorithms over a finite set of K arms (feature sets, observation
functions, subsets), as optax-style pure components (docs/algorithms.md B4, B5; [FKK] Hedge).

A `Selector` is a NamedTuple of pure functions over its own state; the rate is passed in on every
call (a traced value, so a study can sweep it):

    sel = exp3(n_arms)                         # or bexp(n_arms, m), hedge(n_arms), tsallis_inf(n)
    state = sel.init(key)
    d = sel.draw(key, state, rate)              # Draw(arm, observed (K,) bool, prob ())
                                                # (prob: hedge 1, the others sum(p[observed]))
    state = sel.update(state, d, losses, rate)  # losses (K,) in [0, 1]; read where d.observed

One update serves all of them: L-hat_i += loss_i / prob for the observed arms i (importance
weighting; Exp3: observed = {arm}, prob = p_arm; BEXP: observed = the bin of the arm, prob = its
total probability P_U; Hedge, full information: every arm, prob = 1).

The cumulative loss estimates are stored shifted so that their minimum is 0: the probabilities
depend on differences only, and the stored numbers stay bounded by the spread of the losses, not
by T (float32 at T = 1e6).

References: [BCB12] section 3.1 (Exp3); [ACBFS02]; [ZS21] (Tsallis-INF); [AKTT15] (BEXP, budgeted
experts); [FKK] Alg. 1 (Hedge over subsets); docs/algorithms.md B4, B5.
"""

from __future__ import annotations

import math
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from oslr.primitives.prefix import prefix_sums
from oslr.types import Array, float_dtype


class SelectorState(NamedTuple):
    """Attributes:
    cum_loss: (K,) float32, L-hat shifted so that min L-hat = 0.
    n: () int32, updates so far (the t of anytime rates).
    bin_of: (K,) int32, the bin of each arm (BEXP; an empty (0,) array otherwise, so that a
      selector over C(d, k) subsets carries no second (K,) array per run).
    """

    cum_loss: Array
    n: Array
    bin_of: Array


class Draw(NamedTuple):
    """One draw: the followed `arm` () int32, the `observed` (K,) bool arms whose losses the
    update reads, and `prob` () float32, the probability that any of them is observed."""

    arm: Array
    observed: Array
    prob: Array


class Selector(NamedTuple):
    """A selector over K arms.

    Attributes:
      init: `init(key) -> SelectorState` (the key draws BEXP's bins; unused otherwise).
      probs: `probs(state, rate) -> (K,)` the sampling law.
      observe: `observe(key, state, arm) -> (K,) bool`, the arms whose losses are seen when `arm`
        is followed (the key draws BEXP's fresh bins in `redraw` mode).
      draw: `draw(key, state, rate) -> Draw`: arm ~ probs, then `observe`.
      update: `update(state, draw, losses, rate) -> state`; `losses` (K,) are read only where
        `draw.observed`.
      n_arms: K.
    """

    init: Callable[[Array], SelectorState]
    probs: Callable[[SelectorState, Array], Array]
    observe: Callable[[Array, SelectorState, Array], Array]
    draw: Callable[[Array, SelectorState, Array], Draw]
    update: Callable[[SelectorState, Draw, Array, Array], SelectorState]
    n_arms: int


def exp_weights(cum_loss: Array, eta: Array) -> Array:
    """p = softmax(-eta L-hat), computed in log space."""
    return jax.nn.softmax(-eta * cum_loss)


def importance_update(state: SelectorState, draw: Draw, losses: Array) -> SelectorState:
    """L-hat_i += loss_i / prob on the observed arms, then shift so that min L-hat = 0."""
    est = jnp.where(draw.observed, losses / jnp.maximum(draw.prob, 1e-30), 0.0)
    cum = state.cum_loss + est.astype(state.cum_loss.dtype)
    return state._replace(cum_loss=cum - jnp.min(cum), n=state.n + 1)


def _init(n_arms: int) -> Callable[[Array], SelectorState]:
    def init(key: Array) -> SelectorState:
        del key
        return SelectorState(jnp.zeros(n_arms, float_dtype()), jnp.zeros((), jnp.int32),
                             jnp.zeros(0, jnp.int32))

    return init


def _prefix_sums(v: Array) -> Array:
    """Inclusive prefix sums of a short vector (b,) (`oslr.primitives.prefix`: on XLA:CPU
    `jnp.cumsum` costs several times more than the whole draw); one triangular product up to
    b = 4096, as these draws were measured."""
    return prefix_sums(v, block=4096)


def _invert(cdf: Array, weights: Array, u: Array) -> Array:
    """#{i : cdf_i <= u}, clamped to the last index of positive weight."""
    idx = jnp.arange(weights.shape[-1])
    last = jnp.max(jnp.where(weights > 0, idx, 0))
    return jnp.minimum(jnp.sum(cdf <= u), last)


def sample_index(key: Array, p: Array) -> Array:
    """One index i ~ p (K,) by inversion of the cumulative law, in two levels.

    The K weights are cut into b = ceil(sqrt K) blocks of b (zero-padded): u ~ U(0, sum p) picks
    the block by inverting the b block sums, then the index by inverting that block's b weights.
    One random number and O(K) work per draw (Gumbel-max needs K random numbers, the larger cost
    on a CPU for a table of C(d, k) subsets), and no length-K cumulative sum. Arms of zero
    probability are never drawn; p need not be normalised.
    """
    n = p.shape[-1]
    b = math.isqrt(n - 1) + 1 if n > 1 else 1
    w = jnp.pad(p, (0, b * b - n)).reshape(b, b)
    block = jnp.sum(w, axis=1)
    cb = _prefix_sums(block)
    u = jax.random.uniform(key, (), jnp.float32).astype(p.dtype) * cb[-1]  # one draw in both modes
    i = _invert(cb, block, u)
    row = w[i]
    j = _invert(_prefix_sums(row), row, u - (cb[i] - block[i]))
    return (i * b + j).astype(jnp.int32)


def _draw_from(probs: Callable, observe: Callable) -> Callable:
    def draw(key: Array, state: SelectorState, rate: Array) -> Draw:
        k_arm, k_obs = jax.random.split(key)
        p = probs(state, rate)
        arm = sample_index(k_arm, p)
        observed = observe(k_obs, state, arm)
        return Draw(arm, observed, jnp.sum(jnp.where(observed, p, 0.0)))

    return draw


def _selector(n_arms: int, probs: Callable, observe: Callable, init=None) -> Selector:
    return Selector(init or _init(n_arms), probs, observe, _draw_from(probs, observe), _update,
                    n_arms)


def _single(n_arms: int) -> Callable:
    def observe(key: Array, state: SelectorState, arm: Array) -> Array:
        del key, state
        return jnp.arange(n_arms) == arm

    return observe


def _update(state: SelectorState, draw: Draw, losses: Array, rate: Array) -> SelectorState:
    del rate
    return importance_update(state, draw, losses)


def exp3(n_arms: int) -> Selector:
    """Exp3 (B4): p = softmax(-eta L-hat), draw I ~ p, L-hat_I += loss_I / p_I.

    `rate` is eta; eta = sqrt(2 log K / (n K)) for n rounds gives E[regret] <= sqrt(2 n K log K).
    """

    def probs(state: SelectorState, rate: Array) -> Array:
        return exp_weights(state.cum_loss, rate)

    return _selector(n_arms, probs, _single(n_arms))


def tsallis_probs(cum_loss: Array, eta: Array, n_newton: int = 30) -> Array:
    """The 1/2-Tsallis-INF law: p_i = 4 / (eta (L_i - x))^2 with x < min L such that sum p = 1.

    Newton's method on f(x) = sum_i 4 / (eta (L_i - x))^2 - 1 from x0 = min L - 2 / eta, where
    f(x0) >= 0: f is increasing and convex on x < min L, so the iterates rise monotonically to the
    root from its left (no step can overshoot it).
    """
    lo = jnp.min(cum_loss)

    def newton(_, x):
        gap = cum_loss - x
        f = jnp.sum(4.0 / (eta * gap) ** 2) - 1.0
        df = jnp.sum(8.0 / (eta**2 * gap**3))
        return jnp.minimum(x - f / df, lo - 1e-12)

    x = lax.fori_loop(0, n_newton, newton, lo - 2.0 / eta)
    p = 4.0 / (eta * (cum_loss - x)) ** 2
    return p / jnp.sum(p)  # the last Newton step leaves |sum p - 1| at rounding level


def tsallis_inf(n_arms: int, n_newton: int = 30) -> Selector:
    """Tsallis-INF ([ZS21], the option of B4): anytime eta_t = rate / sqrt(t) (rate = 2 in
    [ZS21], regret <= 4 sqrt(K n) + 1) and the importance-weighted update of Exp3."""

    def probs(state: SelectorState, rate: Array) -> Array:
        eta = rate / jnp.sqrt(state.n.astype(float_dtype()) + 1.0)
        return tsallis_probs(state.cum_loss, eta, n_newton)

    return _selector(n_arms, probs, _single(n_arms))


def bexp_bins(key: Array, n_arms: int, budget) -> Array:
    """(K,) int32 bin of each arm: a random permutation cut into consecutive blocks of `budget`
    (the last may be shorter). `budget` may be traced (several BEXPs of different budgets under
    one `vmap`); a BEXP state with these bins works with `bexp(K, ...)`'s functions, which read
    the bins from the state."""
    perm = jax.random.permutation(key, jnp.arange(n_arms, dtype=jnp.int32))
    return jnp.zeros(n_arms, jnp.int32).at[perm].set(
        (jnp.arange(n_arms) // budget).astype(jnp.int32))


def bexp(n_arms: int, budget: int, redraw: bool = False) -> Selector:
    """BEXP, budgeted experts (B5, [AKTT15]): the K arms are cut into ceil(K / m) bins of <= m
    (a random permutation drawn at init, OURS); follow j ~ softmax(-eta L-hat), observe the
    losses of bin(j) and add loss_i / P(bin(j)) to each of them.

    Args:
      n_arms: K experts.
      budget: m, experts whose losses may be seen per round (static, 1 <= m <= K).
      redraw: draw fresh bins every round (the option of B5) instead of once at init.

    `rate` is eta; eta = sqrt(log K / (n_bins n)) gives E[regret] <= 2 sqrt(n_bins n log K).
    """
    if not 1 <= budget <= n_arms:
        raise ValueError(f"BEXP budget m={budget} must lie in [1, K={n_arms}].")

    def bins(key: Array) -> Array:
        return bexp_bins(key, n_arms, budget)

    def init(key: Array) -> SelectorState:
        return _init(n_arms)(key)._replace(bin_of=bins(key))

    def probs(state: SelectorState, rate: Array) -> Array:
        return exp_weights(state.cum_loss, rate)

    def observe(key: Array, state: SelectorState, arm: Array) -> Array:
        bin_of = bins(key) if redraw else state.bin_of
        return bin_of == bin_of[arm]

    return _selector(n_arms, probs, observe, init)


def hedge(n_arms: int) -> Selector:
    """Hedge (full information, [FKK] Alg. 1 over a subset table): p = softmax(-eta L-hat), and
    every arm's loss is added (`draw.observed` is all True, `draw.prob` = 1).

    The full-information case of the one update, written without its no-op weighting: L-hat +=
    losses, shifted to min 0. Because min L-hat = 0, the draw inverts the unnormalised weights
    exp(-eta L-hat) <= 1 directly (no softmax pass over the K arms).
    """

    def probs(state: SelectorState, rate: Array) -> Array:
        return exp_weights(state.cum_loss, rate)

    def observe(key: Array, state: SelectorState, arm: Array) -> Array:
        del key, state, arm
        return jnp.ones(n_arms, bool)

    def draw(key: Array, state: SelectorState, rate: Array) -> Draw:
        k_arm, _ = jax.random.split(key)
        arm = sample_index(k_arm, jnp.exp(-rate * state.cum_loss))
        return Draw(arm, jnp.ones(n_arms, bool), jnp.ones((), float_dtype()))

    def update(state: SelectorState, d: Draw, losses: Array, rate: Array) -> SelectorState:
        del d, rate
        cum = state.cum_loss + losses.astype(state.cum_loss.dtype)
        return state._replace(cum_loss=cum - jnp.min(cum), n=state.n + 1)

    return Selector(_init(n_arms), probs, observe, draw, update, n_arms)


__all__ = [
    "Draw",
    "Selector",
    "SelectorState",
    "bexp",
    "bexp_bins",
    "exp3",
    "exp_weights",
    "hedge",
    "importance_update",
    "sample_index",
    "tsallis_inf",
    "tsallis_probs",
]
