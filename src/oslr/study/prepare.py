"""A study's problem and learners built from its settings (`prepare`), every check done first:
names, families against the problem's kind, parameters no learner takes, then the problem, then
each learner with the static options the harness fills (`oslr.spec.FILLS`), its params and its
grid, checked (`oslr.validation.validate`) and sized (`oslr.memory.check_fits`). Nothing is
traced."""

from __future__ import annotations

from typing import Any

from oslr.study.checks import PYTHON, Names, check_grid_labels
from oslr.study.settings import StudySettings, UsageError


def _check_names(study: StudySettings, names: Names) -> None:
    """The problem and every learner known, each learner named once, of a family the problem
    serves, and every parameter one some learner takes: before anything is built."""
    from oslr.checks import unknown_name
    from oslr.registry import LEARNERS, PROBLEMS
    from oslr.types import serves

    if study.problem not in PROBLEMS:
        raise UsageError(unknown_name("problem", study.problem, PROBLEMS))
    learners = list(study.learners or [])
    if not learners:
        raise UsageError(f"{names.said('learners', learners)}: no learners given.")
    twice = sorted({n for n in learners if learners.count(n) > 1})
    if twice:
        raise UsageError(f"learner(s) {twice} named twice in {names.of('learners')}; name each "
                         f"once (to compare settings of one learner, sweep them with "
                         f"{names.of('grid')}).")
    kind = PROBLEMS[study.problem].kind
    for name in learners:
        if name not in LEARNERS:
            raise UsageError(unknown_name("learner", name, LEARNERS))
        family = LEARNERS[name].family
        if serves(kind, family):
            continue
        if getattr(study, "default_learners", False):
            raise UsageError(f"{names.said('problem', study.problem)}: no learners named, and "
                             f"the default ones ({', '.join(learners)}) cannot run on problem "
                             f"{study.problem!r} ({kind}): name some with {names.of('learners')} "
                             "(`oslr list` shows each learner's family).")
        raise UsageError(f"learner {name!r} ({family}) cannot run on problem "
                         f"{study.problem!r} ({kind}); pick learners of a matching family "
                         "(oslr list).")
    for table in ("grid", "params"):
        for key in getattr(study, table) or {}:
            if not any(key in LEARNERS[n].sweepable or (key == "k" and LEARNERS[n].filled("k"))
                       or (table == "params" and key in _settable(LEARNERS[n]))
                       for n in learners):
                raise UsageError(f"{names.of(table, key)}: {key!r} is not a parameter of any "
                                 f"chosen learner ({', '.join(learners)}); see `oslr list`.")


def _settable(spec) -> tuple[str, ...]:
    """The static options of a learner a study sets with params (one value, not swept): those
    the harness does not fill from the study itself (`Option.fill`)."""
    return tuple(o.name for o in spec.options if o.fill is None)


def _problem(study: StudySettings, names: Names):
    import oslr

    try:
        return oslr.make_problem(study.problem, **dict(study.problem_options or {}))
    except ValueError as err:
        msg = err.args[0] if err.args else str(err)
        named = [k for k in study.problem_options or {} if f"option {k}=" in msg]
        where = names.of("problem_options", named[0]) if named else names.of("problem_options")
        raise UsageError(f"{msg} Change it with {where}.") from None


def prepare(study: StudySettings, names: Names = PYTHON):
    """Build problem, learners and params for a study; UsageError (one line, naming the value
    as `names` says the caller wrote it) for any bad input, before anything is traced."""
    from oslr.checks import parse_bytes
    from oslr.memory import check_fits
    from oslr.validation import check_comparator, validate

    _check_names(study, names)
    check_grid_labels(study, names)
    problem, pp = _problem(study, names)
    plans = []
    for lname in study.learners or []:
        learner, labels, params = _learner(lname, study, problem, pp, names)
        try:
            validate(learner, problem, params, pp, study.horizon, study.runs, study.seed,
                     study.comparator_k)
            check_comparator(learner, problem, pp, study.comparator_k,
                             names.said("comparator_k", 5))
            check_fits(learner, problem, params, pp, study.horizon, study.runs,
                       comparator_k=study.comparator_k,
                       max_memory=parse_bytes("max_memory", study.max_memory),
                       results_dir=study.out or ".")
        except ValueError as err:
            raise UsageError(_hint(err, study, names)) from None
        plans.append((learner, labels, params))
    return problem, pp, plans


def _learner(lname: str, study: StudySettings, problem, pp, names: Names):
    """(learner, grid labels, stacked params) of one learner of the study."""
    import oslr
    from oslr.registry import LEARNERS
    from oslr.sim import grid_params

    spec = LEARNERS[lname]
    params_, grid_ = study.params or {}, study.grid
    fixed = {k: v for k, v in params_.items() if k in spec.sweepable}
    grid = {k: v for k, v in grid_.items() if k in spec.sweepable}
    chosen = {k: v for k, v in params_.items() if k in _settable(spec)}  # static options
    static = _static_k(lname, spec, study, problem, pp, names)
    ks = [int(v) for v in [fixed.get("k")] + list(grid.get("k", [])) if v is not None]
    fills: dict[str, Any] = {
        "max_k": max(ks) if ks and 1 <= max(ks) <= problem.d else None,
        # a delay-aware learner buffers the problem's delays; the simulator explains the others
        "max_delay": problem.max_delay if problem.max_delay > 1 else None,
        "n_arms": problem.n_arms,  # shapes built for the problem's arm count
        **static}
    options: dict[str, Any] = {}
    for fill, value in fills.items():
        option = spec.filled(fill)
        if option is not None:
            options[option] = value
    try:
        learner, base = oslr.make(lname, d=problem.d, horizon=study.horizon, **options,
                                  **chosen, **fixed)
    except ValueError as err:
        msg = _hint(err, study, names)
        if static and "k" not in params_ and msg == str(err.args[0]):
            msg += (f" Its k is static and came from the problem's k={static['k']}: give "
                    f"another with {names.of('params', 'k')} (or the problem's with "
                    f"{names.of('problem_options', 'k')}).")
        raise UsageError(msg) from None
    prep = None
    if spec.prepare is not None:
        def prep(point, _spec=spec):
            return _spec.prepare(point, problem, pp)
    labels, params = grid_params(base, grid, prepare=prep)
    # values fixed with params (and static options chosen) label every row and legend entry
    return learner, [{**chosen, **fixed, **label} for label in labels], params


def _hint(err: ValueError, study: StudySettings, names: Names) -> str:
    """The message of `err` and, for a parameter the user set, where it was set."""
    msg = err.args[0] if err.args else str(err)
    for key in sorted(set(study.params or {}) | set(study.grid)):
        if f"parameter {key}=" in msg:
            table = "grid" if key in study.grid else "params"
            return f"{msg} Change it with {names.of(table, key)}."
    return msg


def _static_k(name: str, spec, study: StudySettings, problem, pp,
              names: Names) -> dict[str, int]:
    """{"k": K} for a learner with a static k (`Option(fill="k")`: it enumerates k-subsets):
    the study's params k, else the problem's sparsity; {} for the others."""
    if spec.filled("k") is None:
        return {}
    if "k" in study.grid:
        raise UsageError(f"{names.of('grid', 'k')}: learner {name!r} enumerates k-subsets, so "
                         f"its k is static: run one study per k ({names.of('params', 'k')}) "
                         "instead of a grid over k.")
    if "k" in (study.params or {}):
        return {"k": int((study.params or {})["k"])}
    k = problem.comparator_sparsity(pp)
    return {} if k is None else {"k": k}
