"""Synthetic labelled streams for families F1 and F2.

Every stream is a pure function of (key, t): the simulator passes `fold_in(stream_key, t)`, so all
learners in a comparison see the same examples (common random numbers) and a run can be replayed
alone.

* `sparse_linear`: realizable y = <w*, x> + sigma * eps, w* k-sparse (support uniform, N(0,1)
  entries, ||w*||_1 = 1, or ||w*||_2 = 1 with `w_norm="l2"`), x from an RIP-friendly design:
  "gaussian" N(0, I), "rademacher" +-1
  (||x||_inf = 1, the [KKLP] E4 design), "hadamard" (uniformly drawn rows of a Hadamard matrix:
  subsampled orthogonal rows, RIP w.h.p., entries +-1), "correlated" (+-1 entries sharing one
  sign up to 5% flips: column correlation 0.81, a design that violates RIP) or "sphere"
  (normalised Gaussian, ||x||_2 = 1, the [ITO] and [FKK] E3 / E5 design; with `clip_y` the labels
  are clipped to [-1, 1], so |y| <= 1). `unit_x=True` divides every design's x by its norm
  before the label is formed (||x||_2 = 1, as [FKK], [ITO] and [KKLP] assume ||x|| <= 1; their
  default rates are set for it), for every stream below too.
* `agnostic`: misspecified labels y = sign(<w*, x>), each flipped with probability `flip`.
* `drifting`: w* random-walks on its support, w*_{t+1} = w*_t + drift * N(0, I) on the support
  (renormalised to ||w*||_1 = 1), the [KPM] drifting least-squares setting.
* `switching`: an oblivious adversary: a fresh k-sparse w* (new support) every `period` rounds, so
  no single sparse predictor fits the whole stream.
* `add_redundant_features`: append m standard-normal features ([WLL] App. B), scaled by 1/4 and
  clipped to [-1, 1] so that ||theta||_inf <= 1 still holds (the paper scales by the block max,
  which a stream cannot know in advance; departure noted).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from oslr.checks import check_positive_int
from oslr.primitives import random_subset_mask, tree_select
from oslr.problems.delays import DELAY_OPTIONS, maybe_delayed
from oslr.prng import rademacher
from oslr.spec import Option, ProblemSpec
from oslr.types import Array, Problem, StreamExample, on_device

DESIGNS = ("gaussian", "rademacher", "sphere", "hadamard", "correlated")

#: Probability that a coordinate of the "correlated" design disagrees with the common sign: the
#: columns then correlate at (1 - 2 * 0.05)^2 = 0.81, far from RIP.
CORRELATED_FLIP = 0.05


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class SyntheticParams:
    """Sweepable parameters of the synthetic streams.

    Attributes:
      k: () int32, sparsity of w* (traced).
      sigma: () float32, label noise standard deviation.
      drift: () float32, per-round random-walk scale of w* (`drifting` only).
      flip: () float32, label flip probability (`agnostic` only).
      period: () int32, rounds between switches of w* (`switching` only).
    """

    k: Array
    sigma: Array
    drift: Array
    flip: Array
    period: Array


#: the largest label noise a synthetic stream accepts (sigma^2 summed over 1e6 rounds stays far
#: below float32's 3.4e38)
SIGMA_MAX = 1e6


def synthetic_params(k: int = 3, sigma: float = 0.1, drift: float = 0.0, flip: float = 0.0,
                     period: int = 1000):
    return SyntheticParams(
        k=on_device(k, np.int32),
        sigma=on_device(sigma, np.float32),
        drift=on_device(drift, np.float32),
        flip=on_device(flip, np.float32),
        period=on_device(period, np.int32),
    )


class SyntheticState(NamedTuple):
    """Attributes: w_star: (d,) float32, the current hidden parameter; support: (d,) bool."""

    w_star: Array
    support: Array


def hadamard_row(i: Array, d: int) -> Array:
    """The first d entries of row i of the Sylvester-Hadamard matrix of order 2^ceil(log2 d):
    H[i, j] = (-1)^popcount(i & j), entries +-1."""
    j = jnp.arange(d, dtype=jnp.uint32)
    parity = lax.population_count(jnp.asarray(i, jnp.uint32) & j) & 1
    return (1.0 - 2.0 * parity).astype(jnp.float32)


def _draw_x(key: Array, d: int, design: str) -> Array:
    if design == "gaussian":
        return jax.random.normal(key, (d,), jnp.float32)
    if design == "hadamard":  # a uniformly drawn row of the Hadamard matrix (subsampled rows)
        n = 1 << max(0, (d - 1).bit_length())
        return hadamard_row(jax.random.randint(key, (), 0, n, jnp.int32), d)
    if design == "correlated":  # one common sign, each coordinate flipped w.p. CORRELATED_FLIP
        k_sign, k_flip = jax.random.split(key)
        sign = rademacher(k_sign)
        flip = jax.random.bernoulli(k_flip, jnp.float32(CORRELATED_FLIP), (d,))
        return jnp.where(flip, -sign, sign) * jnp.ones(d, jnp.float32)
    if design == "sphere":
        g = jax.random.normal(key, (d,), jnp.float32)
        return g / jnp.maximum(jnp.linalg.norm(g), 1e-30)
    return rademacher(key, (d,))


NORMS = ("l1", "l2")


def _normalise(w: Array, norm: str = "l1") -> Array:
    n = jnp.sum(jnp.abs(w)) if norm == "l1" else jnp.sqrt(jnp.sum(w * w))
    return w / jnp.where(n > 0, n, 1.0)


def _stream(d: int, design: str, mode: str, name: str, norm: str = "l1",
            unit_x: bool = False) -> Problem:
    if design not in DESIGNS:
        raise ValueError(f"unknown design {design!r}; choose one of {DESIGNS}.")
    if norm not in NORMS:
        raise ValueError(f"unknown w* normalisation {norm!r}; choose one of {NORMS}.")

    def init(key: Array, params: SyntheticParams) -> SyntheticState:
        k_sup, k_val = jax.random.split(key)
        support = random_subset_mask(k_sup, d, params.k, d)
        w = jnp.where(support, jax.random.normal(k_val, (d,), jnp.float32), 0.0)
        return SyntheticState(w_star=_normalise(w, norm), support=support)

    def sample(key: Array, state: SyntheticState, t: Array, params: SyntheticParams):
        k_x, k_noise, k_drift = jax.random.split(key, 3)
        if mode == "switching":
            fresh = init(k_drift, params)
            switch = (t > 0) & (jnp.mod(t, jnp.maximum(params.period, 1)) == 0)
            state = tree_select(switch, fresh, state)
        x = _draw_x(k_x, d, design)
        if unit_x:  # ||x||_2 = 1, as the [FKK], [ITO] and [KKLP] theorems assume (<= 1)
            x = x / jnp.maximum(jnp.linalg.norm(x), 1e-30)
        clean = jnp.dot(state.w_star, x)
        if mode == "agnostic":
            sign = jnp.where(clean >= 0, 1.0, -1.0)
            flip = jax.random.bernoulli(k_noise, params.flip)
            y = jnp.where(flip, -sign, sign)
            example = StreamExample(x=x, y=y, y_clean=y)
        else:
            y = clean + params.sigma * jax.random.normal(k_noise, (), jnp.float32)
            example = StreamExample(x=x, y=y, y_clean=clean)
        if mode == "drifting":
            step = params.drift * jax.random.normal(k_drift, (d,), jnp.float32)
            w = _normalise(jnp.where(state.support, state.w_star + step, 0.0), norm)
            state = SyntheticState(w_star=w, support=state.support)
        return state, example

    return Problem(
        init=init,
        sample=sample,
        kind="stream",
        d=d,
        name=name,
        realizable=mode != "agnostic",
        sparsity="k",  # the comparator's: w*'s sparsity, the traced params.k
        info={"design": design, "mode": mode, "unit_x": bool(unit_x)},
    )


def sparse_linear(d: int, design: str = "gaussian", norm: str = "l1",
                  unit_x: bool = False) -> Problem:
    """Realizable k-sparse linear model with Gaussian noise."""
    return _stream(d, design, "realizable", "sparse-linear", norm, unit_x)


def agnostic(d: int, design: str = "rademacher", norm: str = "l1",
             unit_x: bool = False) -> Problem:
    """Misspecified sign labels of a sparse linear model, with random flips."""
    return _stream(d, design, "agnostic", "agnostic", norm, unit_x)


def drifting(d: int, design: str = "gaussian", norm: str = "l1",
             unit_x: bool = False) -> Problem:
    """Realizable stream whose k-sparse w* random-walks on its support."""
    return _stream(d, design, "drifting", "drifting", norm, unit_x)


def switching(d: int, design: str = "gaussian", norm: str = "l1",
              unit_x: bool = False) -> Problem:
    """Oblivious adversary: a fresh k-sparse w* every `period` rounds (noisy linear labels)."""
    return _stream(d, design, "switching", "switching", norm, unit_x)


_REDUNDANT_STREAM = 0x5EED


def clip_labels(problem: Problem, bound: float = 1.0) -> Problem:
    """Clip every label (and its noise-free version) to [-bound, bound] ([ITO] E3 generator)."""

    def sample(key, state, t, params):
        state, ex = problem.sample(key, state, t, params)
        return state, ex._replace(y=jnp.clip(ex.y, -bound, bound),
                                  y_clean=jnp.clip(ex.y_clean, -bound, bound))

    return problem._replace(sample=sample, info=dict(problem.info or {}, clip_y=bound))


def add_redundant_features(problem: Problem, n_extra: int) -> Problem:
    """Append `n_extra` independent features N(0, 1) / 4, clipped to [-1, 1], to every example
    ([WLL] Fig. 1e-f; the module docstring says why that scale).

    The base stream is unchanged (its key is not touched); the extra block uses its own stream.
    """
    if n_extra < 0:
        raise ValueError(f"n_extra must be >= 0, got {n_extra}.")
    if n_extra == 0:
        return problem

    def sample(key, state, t, params):
        state, ex = problem.sample(key, state, t, params)
        z = jax.random.normal(jax.random.fold_in(key, _REDUNDANT_STREAM), (n_extra,), ex.x.dtype)
        x = jnp.concatenate([ex.x, jnp.clip(z / 4.0, -1.0, 1.0)])
        return state, ex._replace(x=x)

    info = dict(problem.info or {}, n_redundant=n_extra)
    return problem._replace(sample=sample, d=problem.d + n_extra, info=info)


# --------------------------------------------------------------------------- registered problems


def _factory(builder):
    def factory(d: int = 16, k: int = 3, sigma: float = 0.1, design: str | None = None,
                drift: float = 0.01, flip: float = 0.1, period: int = 1000,
                n_redundant: int = 0, delays: str | None = None, max_delay: int = 1,
                clip_y: bool = False, w_norm: str = "l1", unit_x: bool = False):
        check_positive_int("d", d)
        if not 1 <= k <= d:
            raise ValueError(f"sparsity k={k} must satisfy 1 <= k <= d={d}.")
        if not 0 <= sigma <= SIGMA_MAX:
            raise ValueError(f"noise sigma={sigma} must lie in [0, {SIGMA_MAX:g}] (larger "
                             "squared losses overflow float32, whose largest number is 3.4e38).")
        if not 0 <= flip <= 1:
            raise ValueError(f"flip probability {flip} must lie in [0, 1].")
        if period < 1:
            raise ValueError(f"switching period {period} must be >= 1 round.")
        opts = {"norm": w_norm, "unit_x": bool(unit_x)}
        problem = builder(d, **opts) if design is None else builder(d, design=design, **opts)
        if clip_y:
            problem = clip_labels(problem)
        problem = maybe_delayed(add_redundant_features(problem, n_redundant), delays, max_delay)
        return problem, synthetic_params(k=k, sigma=sigma, drift=drift, flip=flip, period=period)

    return factory


def _options(design: str) -> tuple[Option, ...]:
    """The options of the synthetic streams (`_factory`), `design`: the stream's own default."""
    return (
        Option("d", 16, "feature dimension", type=int, lo=1),
        Option("k", 3, "sparsity of w* and of the comparator", type=int, lo=1, hi="d"),
        Option("sigma", 0.1, "label noise standard deviation (larger squared losses than "
               "its bound's overflow float32)", type=float, lo=0.0, hi=SIGMA_MAX),
        Option("design", None, f"design of x (None: {design})", DESIGNS, str),
        Option("drift", 0.01, "per-round random-walk scale of w* (drifting)", type=float,
               lo=0.0),
        Option("flip", 0.1, "label flip probability (agnostic)", type=float, lo=0.0, hi=1.0),
        Option("period", 1000, "rounds between fresh w* (switching)", type=int, lo=1),
        Option("n_redundant", 0, "standard-normal features appended", type=int, lo=0),
        *DELAY_OPTIONS,
        Option("clip_y", False, "clip the labels to [-1, 1]", type=bool),
        Option("w_norm", "l1", "norm of w* set to 1", ("l1", "l2"), str),
        Option("unit_x", False, "divide every x by its norm", type=bool),
    )


SPARSE_LINEAR = ProblemSpec(
    "sparse-linear", "stream",
    "realizable k-sparse linear model (designs: gaussian, rademacher, sphere, hadamard, "
    "correlated), Gaussian noise",
    _factory(sparse_linear), _options("gaussian"))
AGNOSTIC = ProblemSpec(
    "agnostic", "stream", "sign labels of a sparse linear model with random flips (misspecified)",
    _factory(agnostic), _options("rademacher"))
DRIFTING = ProblemSpec(
    "drifting", "stream", "realizable stream whose sparse w* random-walks on its support",
    _factory(drifting), _options("gaussian"))
SWITCHING = ProblemSpec(
    "switching", "stream", "oblivious adversary: a fresh sparse w* every `period` rounds",
    _factory(switching), _options("gaussian"))


def _ito_synthetic(d: int = 10, k: int = 4, sigma: float = 0.1, normalise: bool = True,
                   clip: bool = True):
    """[ITO] E3 (OURS, the generator is in their unavailable supplement): x ~ N(0, I_d) normalised
    to ||x||_2 = 1 (`normalise=False`: left as drawn, ||x||_2 about sqrt(d); the paper's
    theorems assume ||x|| <= 1), a k-sparse w* with N(0, 1) entries normalised to
    ||w*||_2 = 1, y = clip(<w*, x> + sigma eps, -1, 1) (the paper's |y| <= 1; `clip=False`:
    unclipped, which with `normalise=False` is the stream whose regrets match the scale of
    [ITO] Table 1, docs/ito-results.md)."""
    problem, params = _factory(sparse_linear)(d=d, k=k, sigma=sigma,
                                              design="sphere" if normalise else "gaussian",
                                              clip_y=bool(clip), w_norm="l2")
    return problem._replace(name="ito-synthetic", info=dict(
        problem.info or {}, normalise=bool(normalise), clip=bool(clip))), params


ITO_SYNTHETIC = ProblemSpec(
    "ito-synthetic", "stream",
    "[ITO] E3: x on the unit sphere, k-sparse w* with ||w*||_2 = 1, y clipped to [-1, 1]",
    _ito_synthetic,
    (Option("d", 10, "feature dimension", type=int, lo=1),
     Option("k", 4, "sparsity of w* and of the comparator", type=int, lo=1, hi="d"),
     Option("sigma", 0.1, "label noise standard deviation", type=float, lo=0.0, hi=SIGMA_MAX),
     Option("normalise", True, "x on the unit sphere (False: x ~ N(0, I) as drawn)", type=bool),
     Option("clip", True, "labels clipped to [-1, 1]", type=bool)))
