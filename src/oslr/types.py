"""Core types: the learner and problem contracts shared by every part of `oslr`.

A learner is a pair of pure functions over a state pytree (optax / gymnax style):

    state = learner.init(key, params)
    state = learner.step(key, state, rnd, params)

`params` is a pytree of arrays (everything a user may sweep: sparsity k, step sizes, ...), so
`jax.vmap` maps seeds and hyper-parameters independently. `rnd` is built by the harness
(`oslr.protocol`) from the traced example of this round; it is the *only* way a learner sees data,
and it hands over the queried features before the label, in order, once.

A problem is a pure stream of examples, `pstate, example = problem.sample(key, pstate, t, params)`,
with its own key, so that every learner in a comparison sees the same stream (common random
numbers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Final, Literal, NamedTuple, Protocol

import jax
import numpy as np

Array = jax.Array
PyTree = Any

def on_device(x, dtype=None) -> jax.Array:
    """`x` converted on the host (NumPy) and transferred: the same values as
    `jnp.asarray(x, dtype)`, without the conversion program JAX compiles for each dtype and
    shape (params, grids and scalars are built this way so a study compiles only its own
    programs)."""
    return jax.device_put(np.asarray(x, dtype))


def float_dtype() -> Any:
    """The float dtype of learner states, params and metrics: float32, or float64 under
    `jax_enable_x64` (read when a program is traced, so `jax.enable_x64(True)` blocks work). Float64
    is what a careful user turns on to check a float32 result: the problems' random draws stay
    float32 (the same stream in both modes), everything computed from them is float64."""
    return jax.numpy.result_type(float)  # no array made: jnp.zeros would compile a program


#: The three protocols (see docs/algorithms.md section 1).
PREDICTION: Final = "prediction"  # F1: query <= budget features, predict, then see y (square loss)
LINEAR: Final = "linear"  # F2: play a k-sparse w, see theta = -y x on its support (linear loss)
BANDIT: Final = "bandit"  # F3: see arm features, pull one arm, see its reward
FAMILIES = (PREDICTION, LINEAR, BANDIT)
#: A learner's protocol family.
Family = Literal["prediction", "linear", "bandit"]
#: What a problem serves: "stream" (examples, for prediction and linear learners) or "bandit".
KINDS = ("stream", "bandit")
Kind = Literal["stream", "bandit"]


class Round(Protocol):
    """What a learner's `step` receives each round: its family's round object
    (`oslr.protocol`: PredictionRound, LinearRound or BanditRound), each with the round's
    index `t` and its family's calls (observe / predict, play, pull)."""

    t: Array


def serves(kind: str, family: str) -> bool:
    """Whether a problem of `kind` serves a learner of `family`."""
    return family == BANDIT if kind == "bandit" else family in (PREDICTION, LINEAR)


class InitFn(Protocol):
    def __call__(self, key: Array, params: PyTree) -> PyTree: ...


class StepFn(Protocol):
    def __call__(self, key: Array, state: PyTree, rnd: Round, params: PyTree) -> PyTree: ...


class Learner(NamedTuple):
    """A learner: pure `init`/`step` functions plus the facts the harness needs.

    Attributes:
      init: `init(key, params) -> state`.
      step: `step(key, state, rnd, params) -> state`; talks to the data only through the round
        object `rnd` (`oslr.protocol`).
      family: one of `FAMILIES`; decides which round type the harness builds.
      budget: `budget(params) -> () int32`, the number of observations the learner may make per
        round (features for `prediction`, support size for `linear`). The harness enforces it.
        A budget that does not depend on the params may be a Python int: the harness then knows
        it while tracing and skips the truncation when it covers every coordinate.
      name: registry name, for labels.
      check: optional `check(params, d)` on concrete (batched) params that raises ValueError with
        a clear message for values out of range; called by the simulator before any tracing.
      info: static settings recorded in result files (e.g. the norm exponent b).
      requires: what the learner needs from a problem (`Requirements`), checked by the simulator
        before any tracing.
      diagnostics: optional `diagnostics(state, params) -> {name: () array}`, values the harness
        records at the checkpoint rounds only (e.g. the tracking error of an SGD estimate against
        the exact least-squares solution); they appear in `SimResult.curves` and, at the horizon,
        in `SimResult.final`.
      options: the static options it was built with (`LearnerSpec.make` fills it in), part of a
        checkpoint's fingerprint.
      warn_if_nonzero: diagnostic name -> what it counts: `simulate` warns (RuntimeWarning) when
        one is non-zero at the horizon in some run (e.g. LP solves that failed); every name is a
        key of `diagnostics`.
      d: the feature dimension it was built for (`LearnerSpec.make` fills it in; None: not
        declared), checked against the problem's before tracing.
    """

    init: InitFn
    step: StepFn
    family: Family
    budget: Callable[[PyTree], Array | int]
    name: str = "learner"
    check: Callable[[PyTree, int], None] | None = None
    info: dict | None = None
    diagnostics: Callable[[PyTree, PyTree], dict] | None = None
    requires: "Requirements | None" = None
    options: dict | None = None
    warn_if_nonzero: dict[str, str] | None = None
    d: int | None = None


class StreamExample(NamedTuple):
    """One round of a labelled stream, used by the `prediction` and `linear` families.

    Attributes:
      x: (d,) features.
      y: () label.
      y_clean: () noise-free label <x, w*> for realizable streams (equals `y` otherwise).
      delay: () int32 feedback delay D_t >= 1 of this round ([WLL] section 4.1), or None when
        the problem has no delays (then D_t = 1).
    """

    x: Array
    y: Array
    y_clean: Array
    delay: Any = None


class BanditExample(NamedTuple):
    """One round of a linear bandit.

    Attributes:
      arms: (K, d) arm features, visible before the pull (for a continuous action set, a known
        basis of it, e.g. e_1..e_d for the unit sphere).
      rewards: (K,) realised reward of each arm this round (only the pulled one is revealed).
      means: (K,) expected reward of each arm (for pseudo-regret; never shown to the learner).
      theta: (d,) hidden parameter, set only by continuous-action problems ([KPM] setting (a)),
        where any x in the unit ball may be played: reward x^T theta + noise.
      noise: () this round's reward noise (continuous-action problems).
      best: () max over the action set of x^T theta (continuous-action problems; ||theta|| on the
        unit sphere).
      logged: () int32 logged arm of a replayed event (replay problems, [LCLW11]): a pull of any
        other arm is rejected (reward 0, `rnd.accepted` False) and the learner must not update.
      arm_ids: (K,) int32 global ids of this round's arms, for problems with `Problem.features`.
    """

    arms: Array
    rewards: Array
    means: Array
    theta: Any = None
    noise: Any = None
    best: Any = None
    logged: Any = None
    arm_ids: Any = None


class Problem(NamedTuple):
    """A data stream: pure `init`/`sample` functions over a problem-state pytree.

    Attributes:
      init: `init(key, params) -> pstate` (hidden parameter, permutation of a dataset, ...).
      sample: `sample(key, pstate, t, params) -> (pstate, example)` for round `t` (0-based).
      kind: "stream" (StreamExample; serves `prediction` and `linear` learners) or "bandit".
      d: feature dimension (static).
      name: registry name.
      n_rows: rows of a replayed dataset (None for synthetic streams).
      realizable: whether `y_clean` is the noise-free label of a known w*.
      n_arms: arms per round for bandit problems (0 otherwise).
      sparsity: the comparator's sparsity (k of the best k-sparse predictor in hindsight) the
        problem declares: an int, or the name of its params field that holds it (e.g. "k", a
        traced value); None: none (a study of a prediction learner then needs comparator_k).
      cycle: whether a replayed dataset may be cycled past its length.
      info: extra labels recorded in result files (scale factors, design, ...).
      features: optional `features(params, ids) -> (..., d)`, the arm features of global arm ids
        (`BanditExample.arm_ids`) of any round, so that learners keep ids, not vectors, in their
        histories (docs/algorithms.md B12); the harness hands it to rounds as `rnd.features`.
      max_delay: the largest feedback delay D_t of the stream (1: feedback at once).
      replay: whether rounds replay logged events by rejection sampling (`rnd.accepted`).
      changing_arms: whether the arm set changes every round (bandit problems).
      continuous_actions: whether any x of the unit ball may be played (`rnd.play(x)`).
    """

    init: Callable[[Array, PyTree], PyTree]
    sample: Callable[[Array, PyTree, Array, PyTree], tuple[PyTree, Any]]
    kind: Kind
    d: int
    name: str = "problem"
    n_rows: int | None = None
    realizable: bool = False
    n_arms: int = 0
    sparsity: int | str | None = None
    cycle: bool = False
    info: dict | None = None
    features: Callable | None = None
    max_delay: int = 1
    replay: bool = False
    changing_arms: bool = False
    continuous_actions: bool = False

    def comparator_sparsity(self, params: PyTree) -> int | None:
        """The comparator's sparsity the problem declares (`sparsity`: an int, or the name of
        its params field holding it) for its `params`, or None."""
        if isinstance(self.sparsity, str):
            return int(np.asarray(getattr(params, self.sparsity)))
        return self.sparsity

    def supports(self, family: str) -> bool:
        """Whether a learner of `family` can run on this problem."""
        return serves(self.kind, family)


@dataclass(frozen=True)
class Requirements:
    """What a learner needs from a problem; `check` says, before tracing, what does not fit.

    Attributes:
      max_delay: the largest feedback delay the learner buffers (1: it uses feedback at once).
      replay: whether it skips rejected replay events (leaves its state as it was).
      n_arms: the arm count its shapes were built for (None: any).
      capacity: the most rounds its fixed-size history holds (None: unbounded).
      history: how it stores past arms: "arm" (indices into a fixed arm set), "id" (global ids
        with the problem's feature lookup), "features" (vectors) or None (no history).
      dataset: whether it needs a replayed dataset (an offline oracle computed from the stream).
      continuous_actions: whether it plays vectors of the unit ball (`rnd.play(x)`).
    """

    max_delay: int = 1
    replay: bool = False
    n_arms: int | None = None
    capacity: int | None = None
    history: str | None = None
    dataset: bool = False
    continuous_actions: bool = False

    def check(self, problem: Problem, horizon: int, learner: str = "learner") -> None:
        """Raise ValueError saying which requirement `problem` (or `horizon`) does not meet."""
        who = f"learner {learner!r}"
        if problem.max_delay > 1 and self.max_delay < problem.max_delay:
            if self.max_delay <= 1:
                raise ValueError(
                    f"problem {problem.name!r} has delayed feedback (up to {problem.max_delay} "
                    f"rounds) but {who} would use feedback at once; use a delay-aware learner "
                    "(one with a max_delay option, see `oslr list`).")
            raise ValueError(
                f"{who} buffers {self.max_delay} rounds of feedback but the problem delays it "
                f"up to {problem.max_delay}; build it with max_delay >= {problem.max_delay}.")
        if self.n_arms is not None and self.n_arms != problem.n_arms:
            raise ValueError(
                f"{who} was built for {self.n_arms} arms but problem {problem.name!r} has "
                f"{problem.n_arms}; build it with n_arms={problem.n_arms}.")
        if self.capacity is not None and self.capacity < horizon:
            raise ValueError(
                f"{who} keeps a history of {self.capacity} samples but the horizon is {horizon}; "
                f"build it with horizon >= {horizon} (oslr.make(..., horizon={horizon})).")
        if problem.replay and not self.replay:
            raise ValueError(
                f"problem {problem.name!r} replays logged events (rejection sampling) but {who} "
                "does not skip rejected events; use a replay-aware learner (see `oslr list`).")
        if self.history == "arm" and problem.changing_arms:
            raise ValueError(
                f"{who} stores arm indices (history='arm') but problem {problem.name!r} has new "
                "arms every round; build it with history='features'"
                + (" or history='id'." if problem.features is not None else "."))
        if self.history == "id" and problem.features is None:
            raise ValueError(
                f"{who} stores global arm ids (history='id') but problem {problem.name!r} has no "
                "feature lookup; use history='arm' or 'features'.")
        if self.dataset and problem.n_rows is None:
            raise ValueError(
                f"{who} needs a dataset problem (it computes an offline oracle from the whole "
                f"stream); problem {problem.name!r} is synthetic.")
        if self.continuous_actions and not problem.continuous_actions:
            raise ValueError(
                f"{who} plays vectors of the unit ball; problem {problem.name!r} has a finite "
                "arm set (use a continuous-action problem such as sphere-bandit).")


NO_REQUIREMENTS = Requirements()
