"""Registry: `make(name, d)` -> (learner, default params); `make_problem(name, ...)`; listings.

Add a learner by writing its module under `oslr/learners/` and one `register_learner` call here
with a factory `d -> Learner`, a default-params builder and a second params point (used by the
contract suite to check vmap over params).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable

import jax.numpy as jnp
import numpy as np

from oslr.learners.bandits import eps_greedy, eps_greedy_params
from oslr.learners.ftpsl import (
    ftpl_oracle_subset,
    ftpl_random_subset,
    ftpsl,
    ftpsl_delayed,
    ftpsl_knapsack,
    ftpsl_params,
    knapsack_params,
    oracle_subset,
    subset_ftpl_params,
)
from oslr.learners.ogd import ogd_full, ogd_params, ogd_random_subset
from oslr.learners.uniform import uniform_params, uniform_subset
from oslr.problems.bandits import bandit_params, linear_bandit, sphere_bandit, sphere_params
from oslr.problems.datasets import DATASETS, dataset_params, dataset_replay
from oslr.problems.delays import with_delays
from oslr.problems.synthetic import (
    add_redundant_features,
    agnostic,
    drifting,
    sparse_linear,
    switching,
    synthetic_params,
)
from oslr.learners.linucb import linucb, linucb_params
from oslr.learners.pege import pege, pege_params
from oslr.types import BANDIT, LINEAR, PREDICTION, Learner, Problem


@dataclass(frozen=True)
class LearnerSpec:
    """A registered learner.

    Attributes:
      name: registry name.
      family: protocol family.
      description: one line for `oslr list`.
      factory: `factory(d, **options) -> Learner`.
      params: `params(d, **overrides) -> params` (defaults; overrides by field name).
      alt_params: a second, different params point for `d` (contract suite).
      sweepable: params fields that change the learner's behaviour (grid keys of `oslr run`).
      reference: paper / algorithm it implements.
      prepare: optional `prepare(params, problem, problem_params) -> params` applied to each grid
        point before a study (e.g. the offline oracle subset for its k); None = identity.
    """

    name: str
    family: str
    description: str
    factory: Callable[..., Learner]
    params: Callable[..., Any]
    alt_params: Callable[[int], Any]
    sweepable: tuple[str, ...] = ()
    reference: str = ""
    prepare: Callable[..., Any] | None = None


@dataclass(frozen=True)
class ProblemSpec:
    """A registered problem: `factory(**options) -> (Problem, params)`."""

    name: str
    kind: str
    description: str
    factory: Callable[..., tuple[Problem, Any]]


LEARNERS: dict[str, LearnerSpec] = {}
PROBLEMS: dict[str, ProblemSpec] = {}


def register_learner(spec: LearnerSpec) -> None:
    LEARNERS[spec.name] = spec


def register_problem(spec: ProblemSpec) -> None:
    PROBLEMS[spec.name] = spec


def _unknown(kind: str, name: str, table: dict) -> ValueError:
    return ValueError(f"unknown {kind} {name!r}; available: {', '.join(sorted(table))}.")


def make(name: str, d: int, horizon: int | None = None, **options) -> tuple[Learner, Any]:
    """Build learner `name` for dimension `d` with its default params.

    Args:
      name: registry name (`oslr list`).
      d: feature dimension (static).
      horizon: the T of horizon-dependent defaults (FTPSL's eq. (1)); ignored by the others.
      **options: static options of the learner's factory (e.g. `max_k`, a static bound on the
        traced k: a small max_k makes selection much cheaper; `b`, `n_resamples`, `max_delay`,
        `max_budget`, `solver`), and params fields to override (e.g. `k=4`, `eta=0.1`).
        Options set to None are ignored.

    Example:
      learner, params = oslr.make("ogd-random-subset", d=20, k=4, max_k=8)
    """
    if name not in LEARNERS:
        raise _unknown("learner", name, LEARNERS)
    if isinstance(d, bool) or not isinstance(d, int) or d < 1:
        raise ValueError(f"d must be a positive integer, got {d!r}.")
    spec = LEARNERS[name]
    factory_args = _arg_names(spec.factory) - {"d"}
    options = {k: v for k, v in options.items() if v is not None}
    static = {k: v for k, v in options.items() if k in factory_args}
    overrides = {k: v for k, v in options.items() if k not in factory_args}
    if "max_k" in static and not 1 <= static["max_k"] <= d:
        raise ValueError(f"max_k={static['max_k']} must satisfy 1 <= max_k <= d={d}.")
    if horizon is not None and "horizon" in _arg_names(spec.params):
        overrides = {"horizon": horizon, **overrides}
    if horizon is not None and "horizon" in factory_args:  # e.g. a history capacity
        static = {"horizon": horizon, **static}
    return spec.factory(d, **static), spec.params(d, **overrides)


def takes_max_k(name: str) -> bool:
    """Whether learner `name` has a static `max_k` bound on a traced k."""
    return "max_k" in factory_options(name)


def factory_options(name: str) -> set[str]:
    """Static options of learner `name` (`make` keyword arguments that shape the program)."""
    return _arg_names(LEARNERS[name].factory) - {"d"}


def _arg_names(fn) -> set[str]:
    import inspect

    return set(inspect.signature(fn).parameters)


def make_problem(name: str, **options) -> tuple[Problem, Any]:
    """Build problem `name` and its default params.

    Synthetic streams take d, k, sigma, design, drift, flip, n_redundant; datasets take cycle and
    n_redundant; `linear-bandit` takes d, n_arms, changing, noise.
    """
    if name not in PROBLEMS:
        raise _unknown("problem", name, PROBLEMS)
    return PROBLEMS[name].factory(**options)


def list_learners() -> list[dict]:
    """Registered learners as dicts (name, family, description, reference)."""
    return [
        {"name": s.name, "family": s.family, "description": s.description,
         "params": list(s.sweepable), "reference": s.reference}
        for s in LEARNERS.values()
    ]


def list_problems() -> list[dict]:
    """Registered problems as dicts (name, kind, description, options)."""
    import inspect

    return [{"name": s.name, "kind": s.kind, "description": s.description,
             "options": list(inspect.signature(s.factory).parameters)}
            for s in PROBLEMS.values()]


# --------------------------------------------------------------------------- learners


def _default_k(d: int) -> int:
    return max(1, d // 4)


def _with(builder, defaults: dict, overrides: dict):
    unknown = set(overrides) - set(defaults)
    if unknown:
        raise ValueError(
            f"unknown parameter(s) {sorted(unknown)}; parameters: {', '.join(sorted(defaults))}."
        )
    return builder(**{**defaults, **overrides})


register_learner(LearnerSpec(
    name="ogd-full",
    family=PREDICTION,
    description="full-information projected OGD on the square loss (upper reference, budget d)",
    factory=ogd_full,
    params=lambda d, **o: _with(ogd_params, dict(eta=0.5 / d, radius=1.0, k=d), o),
    alt_params=lambda d: ogd_params(eta=0.1 / d, radius=2.0, k=d),
    sweepable=("eta", "radius"),
    reference="Zinkevich 2003",
))
register_learner(LearnerSpec(
    name="ogd-random-subset",
    family=PREDICTION,
    description="OGD observing a fresh uniform random k-subset each round (lower reference)",
    factory=ogd_random_subset,
    params=lambda d, **o: _with(ogd_params, dict(eta=0.5 / d, radius=1.0, k=_default_k(d)), o),
    alt_params=lambda d: ogd_params(eta=0.1 / d, radius=2.0, k=max(1, d // 2)),
    sweepable=("eta", "radius", "k"),
    reference="lower reference (ALGORITHMS.md F1)",
))
register_learner(LearnerSpec(
    name="uniform-subset",
    family=LINEAR,
    description="plays k^(-1/b) on a fresh uniform k-subset (F2 lower reference)",
    factory=uniform_subset,
    params=lambda d, **o: _with(uniform_params, dict(k=_default_k(d)), o),
    alt_params=lambda d: uniform_params(k=max(1, d // 2)),
    sweepable=("k",),
    reference="[WLL] Alg. 1 exploration law",
))
register_learner(LearnerSpec(
    name="eps-greedy",
    family=BANDIT,
    description="epsilon-greedy ridge least squares (Sherman-Morrison) for linear bandits",
    factory=eps_greedy,
    params=lambda d, **o: _with(eps_greedy_params, dict(eps=0.1, alpha=0.0, lam=1.0), o),
    alt_params=lambda d: eps_greedy_params(eps=0.3, alpha=0.5, lam=2.0),
    sweepable=("eps", "alpha", "lam"),
    reference="ALGORITHMS.md F3",
))


def _linucb_spec(variant: str, description: str) -> LearnerSpec:
    fields = ("kappa", "lam0", "c_gamma", "alpha", "c_lambda", "step_scale")

    def params(d, **o):
        unknown = set(o) - set(fields)
        if unknown:
            raise ValueError(f"unknown parameter(s) {sorted(unknown)}; parameters: "
                             f"{', '.join(fields)}.")
        return linucb_params(variant, d, **o)

    def factory(d, n_arms=10, horizon=10_000, history="arm", refactor_every=256, track=False,
                schedule=None, average=False):
        return linucb(d, n_arms, horizon, variant, history, refactor_every, track, schedule,
                      average)

    return LearnerSpec(
        name=variant,
        family=BANDIT,
        description=description,
        factory=factory,
        params=params,
        alt_params=lambda d: linucb_params(variant, d, kappa=0.3, lam0=2.0, c_gamma=0.5,
                                           alpha=0.6, c_lambda=0.5, step_scale=0.5),
        sweepable=fields,
        reference="[KPM] Alg. 2, ALGORITHMS.md L2.2-L2.4",
    )


for _variant, _text in (
    ("linucb", "LinUCB, shared theta, exact ridge LS by Sherman-Morrison ([LCLS10])"),
    ("flinucb-gd", "fLinUCB-GD: fRLS-GD estimate and SGD-tracked confidence widths ([KPM] Alg. 2)"),
    ("flinucb-svrg", "fLinUCB with an SVRG tracker ([KPM] App. B, reconstructed)"),
    ("flinucb-sag", "fLinUCB with a SAG tracker ([KPM] App. C, reconstructed)"),
):
    register_learner(_linucb_spec(_variant, _text))


def _pege_spec(fast: bool) -> LearnerSpec:
    def params(d, **o):
        unknown = set(o) - {"c_gamma"}
        if unknown:
            raise ValueError(f"unknown parameter(s) {sorted(unknown)}; parameters: c_gamma.")
        return pege_params(d, **o)

    def factory(d, horizon=10_000):
        return pege(d, horizon, fast)

    name = "fpege-gd" if fast else "pege"
    return LearnerSpec(
        name=name,
        family=BANDIT,
        description=("fPEGE-GD: PEGE with an fOLS-GD estimate ([KPM] Alg. 1), unit sphere"
                     if fast else "PEGE: explore the basis, exploit theta/||theta|| ([RT10])"),
        factory=factory,
        params=params,
        alt_params=lambda d: pege_params(d, c_gamma=2.0 * d),
        sweepable=("c_gamma",),
        reference="[KPM] Alg. 1, ALGORITHMS.md L2.1",
    )


register_learner(_pege_spec(False))
register_learner(_pege_spec(True))


def _ftpsl_defaults(d, horizon=10_000, **o):
    return _with(ftpsl_params, dict(k=_default_k(d), horizon=horizon, eta_scale=1.0, c0=1.0,
                                    gamma_max=0.5), o)


register_learner(LearnerSpec(
    name="ftpsl",
    family=LINEAR,
    description="Follow the Perturbed Sparse Leader, b = 2, M = 10 geometric resampling",
    factory=ftpsl,
    params=_ftpsl_defaults,
    alt_params=lambda d: ftpsl_params(k=max(1, d // 2), horizon=500, eta_scale=3.0, c0=0.5),
    sweepable=("k", "horizon", "eta_scale", "c0", "gamma_max"),
    reference="[WLL] Algorithms 1-2, eq. (1)",
))


def _ftpsl_delayed_factory(d: int, max_delay: int = 64, max_k: int | None = None,
                           b: float = 2.0, n_resamples: int = 10, gr_mode: str = "shared"):
    return ftpsl_delayed(d, max_delay, max_k=max_k, b=b, n_resamples=n_resamples,
                         gr_mode=gr_mode)


register_learner(LearnerSpec(
    name="ftpsl-delayed",
    family=LINEAR,
    description="FTPSL with delayed feedback (ring buffer of estimates), Theorem 7 rates",
    factory=_ftpsl_delayed_factory,
    params=lambda d, horizon=10_000, **o: _ftpsl_defaults(d, horizon=horizon, **{"c0": 2.0, **o}),
    alt_params=lambda d: ftpsl_params(k=max(1, d // 2), horizon=900, eta_scale=3.0, c0=1.0),
    sweepable=("k", "horizon", "eta_scale", "c0", "gamma_max"),
    reference="[WLL] section 4.1, Theorem 7 (horizon = D = sum of delays)",
))


def _knapsack_factory(d: int, max_budget: int | None = None, b: float = 2.0,
                      n_resamples: int = 10, solver: str = "exact", eps: float = 0.1,
                      gr_mode: str = "shared"):
    return ftpsl_knapsack(d, d if max_budget is None else max_budget, b=b,
                          n_resamples=n_resamples, solver=solver, eps=eps, gr_mode=gr_mode)


def _knapsack_defaults(d, horizon=10_000, **o):
    costs = o.pop("costs", np.ones(d, np.int32))
    budget = o.pop("budget", _default_k(d))
    unknown = set(o) - {"k", "eta_scale", "c0", "gamma_max"}
    if unknown:
        raise ValueError(f"unknown parameter(s) {sorted(unknown)} for ftpsl-knapsack.")
    return knapsack_params(costs, budget, horizon=horizon, **o)


register_learner(LearnerSpec(
    name="ftpsl-knapsack",
    family=LINEAR,
    description="FTPSL with observation costs and a per-round budget (exact DP or FPTAS leader)",
    factory=_knapsack_factory,
    params=_knapsack_defaults,
    alt_params=lambda d: knapsack_params(1 + np.arange(d) % 3, max(2, d // 2), horizon=500,
                                         eta_scale=3.0),
    sweepable=("budget", "horizon", "eta_scale", "c0", "gamma_max"),
    reference="[WLL] section 4.2",
))


def _subset_defaults(d, horizon=10_000, **o):
    k = o.get("k", _default_k(d))
    return _with(lambda **kw: subset_ftpl_params(d, **kw),
                 dict(k=k, horizon=horizon, eta_scale=1.0, subset=np.arange(d) < k), o)


register_learner(LearnerSpec(
    name="ftpl-random-subset",
    family=LINEAR,
    description="FTPL on a random k-subset fixed before round 1 ([WLL] App. B baseline)",
    factory=ftpl_random_subset,
    params=_subset_defaults,
    alt_params=lambda d: subset_ftpl_params(d, k=max(1, d // 2), horizon=500, eta_scale=3.0),
    sweepable=("k", "horizon", "eta_scale"),
    reference="[WLL] App. B",
))


def _oracle_prepare(params, problem, problem_params):
    """Replace the subset by the offline best k-subset of the replayed dataset."""
    if not hasattr(problem_params, "x"):
        raise ValueError(
            "ftpl-oracle-subset needs a dataset problem (its oracle subset is computed offline "
            f"from the whole stream); problem {problem.name!r} is synthetic."
        )
    k = int(np.asarray(params.k))
    mask = oracle_subset(np.asarray(problem_params.x), np.asarray(problem_params.y), k)
    if problem.d > mask.shape[0]:  # redundant features appended: never in the oracle subset
        mask = np.concatenate([mask, np.zeros(problem.d - mask.shape[0], bool)])
    return dataclasses.replace(params, subset=jnp.asarray(mask))


register_learner(LearnerSpec(
    name="ftpl-oracle-subset",
    family=LINEAR,
    description="FTPL on the offline best k-subset of the stream ([WLL] App. B 'oracle')",
    factory=ftpl_oracle_subset,
    params=_subset_defaults,
    alt_params=lambda d: subset_ftpl_params(d, k=max(1, d // 2), horizon=500, eta_scale=3.0,
                                            subset=np.arange(d) >= d - max(1, d // 2)),
    sweepable=("k", "horizon", "eta_scale"),
    reference="[WLL] App. B",
    prepare=_oracle_prepare,
))


# --------------------------------------------------------------------------- problems


def _delayed(problem: Problem, delays: str | None, max_delay: int) -> Problem:
    return problem if delays is None else with_delays(problem, delays, max_delay)


def _synthetic(builder):
    def factory(d: int = 16, k: int = 3, sigma: float = 0.1, design: str | None = None,
                drift: float = 0.01, flip: float = 0.1, period: int = 1000,
                n_redundant: int = 0, delays: str | None = None, max_delay: int = 1):
        if isinstance(d, bool) or not isinstance(d, int) or d < 1:
            raise ValueError(f"d must be a positive integer, got {d!r}.")
        if not 1 <= k <= d:
            raise ValueError(f"sparsity k={k} must satisfy 1 <= k <= d={d}.")
        if sigma < 0:
            raise ValueError(f"noise sigma={sigma} must be >= 0.")
        if not 0 <= flip <= 1:
            raise ValueError(f"flip probability {flip} must lie in [0, 1].")
        if period < 1:
            raise ValueError(f"switching period {period} must be >= 1 round.")
        problem = builder(d) if design is None else builder(d, design=design)
        problem = _delayed(add_redundant_features(problem, n_redundant), delays, max_delay)
        return problem, synthetic_params(k=k, sigma=sigma, drift=drift, flip=flip, period=period)

    return factory


register_problem(ProblemSpec(
    "sparse-linear", "stream",
    "realizable k-sparse linear model, Gaussian or Rademacher design, Gaussian noise",
    _synthetic(sparse_linear)))
register_problem(ProblemSpec(
    "agnostic", "stream", "sign labels of a sparse linear model with random flips (misspecified)",
    _synthetic(agnostic)))
register_problem(ProblemSpec(
    "drifting", "stream", "realizable stream whose sparse w* random-walks on its support",
    _synthetic(drifting)))
register_problem(ProblemSpec(
    "switching", "stream", "oblivious adversary: a fresh sparse w* every `period` rounds",
    _synthetic(switching)))


def _dataset(name: str):
    def factory(cycle: bool = False, n_redundant: int = 0, delays: str | None = None,
                max_delay: int = 1):
        problem = add_redundant_features(dataset_replay(name, cycle=cycle), n_redundant)
        return _delayed(problem, delays, max_delay), dataset_params(name)

    return factory


_DATASET_TEXT = {
    "a9a": "LIBSVM a9a (UCI Adult), 48,842 x 123, +-1 labels",
    "connect4": "UCI Connect-4 one-hot without draws, 61,108 x 126, +-1 labels",
    "covtype": "covtype.binary fixed-seed subset, 58,100 x 54, +-1 labels",
    "mnist35": "MNIST 3 vs 5, 13,454 x 784, +-1 labels",
    "kegg": "UCI KEGG metabolic network (undirected), 63,608 x 26, real target",
}
for _name in DATASETS:
    register_problem(ProblemSpec(_name, "stream", f"replay of {_DATASET_TEXT[_name]}",
                                 _dataset(_name)))


def _bandit(d: int = 10, n_arms: int = 10, changing: bool = False, noise: float = 0.5):
    if isinstance(d, bool) or not isinstance(d, int) or d < 1:
        raise ValueError(f"d must be a positive integer, got {d!r}.")
    if n_arms < 2:
        raise ValueError(f"a bandit needs n_arms >= 2, got {n_arms}.")
    if not 0 <= noise <= 1:
        raise ValueError(f"noise half-width {noise} must lie in [0, 1] ([KPM] assume |xi| <= 1).")
    return linear_bandit(d, n_arms=n_arms, changing=changing), bandit_params(noise)


def _obd(campaign: str = "all", stream: bool = False, shuffle: bool = True):
    from oslr.problems.obd import obd_params, obd_replay

    return obd_replay(campaign, stream, shuffle), obd_params(campaign)


register_problem(ProblemSpec(
    "obd", "bandit",
    "Open Bandit Dataset uniform-random logs (ZOZOTOWN), replay by rejection sampling; "
    "campaign all (K=80, d=1177) / men / women",
    _obd))


def _sphere(d: int = 10, noise: float = 1.0, norm: float = 1.0):
    if isinstance(d, bool) or not isinstance(d, int) or d < 1:
        raise ValueError(f"d must be a positive integer, got {d!r}.")
    if not 0 <= noise <= 1:
        raise ValueError(f"noise half-width {noise} must lie in [0, 1] ([KPM] assume |xi| <= 1).")
    if not norm > 0:
        raise ValueError(f"norm={norm} of theta* must be > 0.")
    return sphere_bandit(d), sphere_params(noise, norm)


register_problem(ProblemSpec(
    "sphere-bandit", "bandit",
    "linear bandit on the unit sphere (play any unit x; basis e_1..e_d known), U[-1, 1] noise",
    _sphere))
register_problem(ProblemSpec(
    "linear-bandit", "bandit",
    "linear bandit, unit-norm theta* and K unit-norm arms (fixed or changing), uniform noise",
    _bandit))
