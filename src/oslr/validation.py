"""Checks of a study's inputs before anything is traced: each bad value refused in one line
(`validate`): the argument order, counts, the seed, the comparator's k, the learner's family
against the problem's, a dataset's rows, the learner's requirements, finite params, and params
of a kind the learner or the problem can read."""

from __future__ import annotations

import dataclasses

import jax
import numpy as np

from oslr.checks import check_positive_int, check_seed
from oslr.rollout import LEARNER_INIT, PROBLEM_INIT, run_keys
from oslr.types import NO_REQUIREMENTS, Learner, Problem, PyTree


def _check_finite(name: str, tree: PyTree) -> None:
    for path, leaf in jax.tree_util.tree_leaves_with_path(tree):
        a = np.asarray(leaf)
        if a.dtype.kind == "f" and not np.isfinite(a).all():
            where = jax.tree_util.keystr(path)
            raise ValueError(f"{name}{where} contains NaN or inf; give finite values.")


def check_types(learner, problem, params, problem_params) -> None:
    """The arguments in the order `simulate(learner, problem, params, problem_params)` takes
    them (a swapped pair otherwise fails deep inside JAX with a dtype error)."""
    order = "simulate(learner, problem, params, problem_params, horizon=..., n_runs=...)"
    if isinstance(learner, Problem) and isinstance(problem, Learner):
        raise ValueError(f"the learner and the problem are swapped: {order}.")
    if not isinstance(learner, Learner):
        raise ValueError(f"the first argument must be a Learner (from oslr.make), got "
                         f"{type(learner).__name__}: {order}.")
    if not isinstance(problem, Problem):
        raise ValueError(f"the second argument must be a Problem (from oslr.make_problem), got "
                         f"{type(problem).__name__}: {order}.")
    for what, value in (("params", params), ("problem_params", problem_params)):
        if isinstance(value, (Learner, Problem)) or (
                isinstance(value, tuple) and any(isinstance(v, (Learner, Problem))
                                                 for v in value)):
            raise ValueError(f"{what} is a {type(value).__name__}, not a params pytree: "
                             f"`learner, params = oslr.make(...)` and `problem, problem_params "
                             f"= oslr.make_problem(...)` return pairs; {order}.")
        if dataclasses.is_dataclass(value):
            for f in dataclasses.fields(value):
                leaf = getattr(value, f.name)
                if isinstance(leaf, (list, tuple, dict)):
                    raise ValueError(
                        f"{what}.{f.name} is a Python {type(leaf).__name__}; each params field "
                        "holds one value (or an array stacked over grid points): to run "
                        f"several values, sweep them: oslr.sweep(learner, problem, params, "
                        f"problem_params, {{{f.name!r}: [...]}}, ...).")


def check_comparator(learner: Learner, problem: Problem, problem_params: PyTree,
                     comparator_k: int | None, how: str = "comparator_k=5") -> None:
    """A study of a prediction learner reports a regret, which needs a comparator: the
    problem's noise-free labels (a realizable stream), its declared sparsity, or
    `comparator_k`; refused before any work where it has none (`oslr.simulate` itself runs
    such a learner, for its losses) (`how`: how the caller gives one, for the message)."""
    from oslr import families

    if (families.family(learner.family).gram_stats and comparator_k is None
            and not problem.realizable and problem.comparator_sparsity(problem_params) is None):
        raise ValueError(f"problem {problem.name!r} declares no sparsity for the best-in-hindsight "
                         f"comparator and has no noise-free labels, so {learner.name!r} would "
                         f"have no regret to report; give the comparator's sparsity (e.g. "
                         f"{how}).")


def validate(learner: Learner, problem: Problem, params: PyTree, problem_params: PyTree,
             horizon: int, n_runs: int, seed: int = 0, comparator_k: int | None = None) -> None:
    """Raise ValueError with a clear message for bad input, before any tracing."""
    check_types(learner, problem, params, problem_params)
    check_positive_int("horizon", horizon)
    check_positive_int("n_runs", n_runs)
    if horizon >= 2**31:
        raise ValueError(f"horizon={horizon} must be below 2^31 = {2**31} (rounds are counted "
                         "in int32); split a longer study in parts.")
    check_seed(seed)
    if comparator_k is not None and not (isinstance(comparator_k, (int, np.integer))
                                         and 1 <= comparator_k <= problem.d):
        raise ValueError(f"comparator_k={comparator_k!r} must satisfy 1 <= k <= d={problem.d}.")
    if not problem.supports(learner.family):
        raise ValueError(
            f"learner {learner.name!r} ({learner.family} family) cannot run on problem "
            f"{problem.name!r} (a {problem.kind} problem)."
        )
    if learner.d is not None and learner.d != problem.d:
        raise ValueError(f"learner {learner.name!r} was built for d={learner.d}, problem "
                         f"{problem.name!r} has d={problem.d}; build it for the problem's "
                         f"(oslr.make(name, d={problem.d}, ...)).")
    if problem.n_rows is not None and horizon > problem.n_rows and not problem.cycle:
        raise ValueError(
            f"horizon {horizon} exceeds the {problem.n_rows} rows of dataset {problem.name!r}; "
            "lower the horizon or allow cycling (cycle=True / --cycle)."
        )
    (learner.requires or NO_REQUIREMENTS).check(problem, horizon, learner.name)
    _check_finite("learner params", params)
    _check_finite("problem params", problem_params)
    _check_params_read(learner, problem, params, problem_params)


def _check_params_read(learner: Learner, problem: Problem, params: PyTree,
                       problem_params: PyTree) -> None:
    """Params of a kind the learner or problem cannot read (a dict where it reads the fields of
    the dataclass `oslr.make` returns) in one line, not an AttributeError from inside a trace:
    the learner's `check` reads them, and params that are not a dataclass are read by an
    abstract trace of `init` (shapes only, no compile)."""
    def read_learner():
        if learner.check is not None:
            learner.check(params, problem.d)
        if not dataclasses.is_dataclass(params):
            jax.eval_shape(lambda: learner.init(run_keys(0, 0)[LEARNER_INIT], params))

    def read_problem():
        if not dataclasses.is_dataclass(problem_params):
            jax.eval_shape(lambda: problem.init(run_keys(0, 0)[PROBLEM_INIT], problem_params))

    for what, value, reader, read in (("params", params, f"learner {learner.name!r}",
                                       read_learner),
                                      ("problem_params", problem_params,
                                       f"problem {problem.name!r}", read_problem)):
        try:
            read()
        except AttributeError as err:
            raise ValueError(
                f"{what} is a {type(value).__name__} that {reader} cannot read ({err}): pass "
                f"the params that oslr.{'make' if what == 'params' else 'make_problem'} returns, "
                f"changing a value with dataclasses.replace({what}, name=value).") from None


__all__ = ["check_types", "validate"]
