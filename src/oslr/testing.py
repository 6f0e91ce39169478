"""The public contract suite: checks any learner against the `oslr` learner contract.

    from oslr.testing import check_learner
    check_learner(learner, params, alt_params, problem, problem_params)

runs every check below and raises `ContractError` naming the first one that fails:

* `check_jit_matches_eager`: a jitted episode equals the same episode under `jax.disable_jit()`;
* `check_vmap_seeds`: `vmap` over runs equals a Python loop over runs;
* `check_vmap_params`: `vmap` over two params points equals a loop over them;
* `check_no_retrace`: a second call with new values (same shapes) does not trace again;
* `check_state_stable`: `step` returns a state of the same structure, shapes and dtypes as `init`;
* `check_finite`: every float in the state and the decisions is finite;
* `check_budget`: no round asks for more than `learner.budget(params)` observations;
* `check_blind`: the decision does not change when the label (or reward) or any unqueried
  feature of the round is perturbed (and the query itself does not depend on the round's data).

`check_float64` (and `check_spec(spec, float64=True)`) is the float64 mode: under
`jax_enable_x64` the learner traces (no float32/float64 mismatch in a `cond`, `while` or `scan`
carry), keeps its state's structure and dtypes across a step, computes in float64 (every float
leaf of its state is float64) and stays finite and within its budget.

An episode plays `n_rounds` rounds of `problem` with the simulator's key discipline.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from oslr.protocol import problem_lookup
from oslr.rollout import (
    LEARNER_INIT,
    LEARNER_ROUNDS,
    PROBLEM_INIT,
    PROBLEM_ROUNDS,
    episode_fn,
    learner_round_keys,
    play_round,
    root_key,
    run_keys,
    stream,
)
from oslr.sim import stack_params
from oslr.types import (
    BANDIT,
    LINEAR,
    NO_REQUIREMENTS,
    PREDICTION,
    Learner,
    Problem,
    PyTree,
    Requirements,
)


class ContractError(AssertionError):
    """A learner broke the contract; the message says which check and how."""


_RUNNERS: dict[tuple, Any] = {}


def _runner(learner: Learner, problem: Problem, n_rounds: int, in_axes=None):
    """Cached jit (optionally of a vmap over `in_axes` of (seed, run_id, params, pp)) of the
    episode; its step counts its own traces. The returned function takes an optional
    `n_active` (default: every round)."""
    key = (id(learner.step), id(learner.init), id(problem.sample), n_rounds, in_axes)
    if key not in _RUNNERS:
        count = [0]

        def counted_step(k, state, rnd, p):
            count[0] += 1
            return learner.step(k, state, rnd, p)

        run = episode_fn(learner._replace(step=counted_step), problem, n_rounds)
        jitted = jax.jit(run if in_axes is None else jax.vmap(run, (*in_axes, None)))

        def fn(seed, run_id, lp, pp, n_active=n_rounds):
            return jitted(seed, run_id, lp, pp, jnp.asarray(n_active, jnp.int32))

        _RUNNERS[key] = (fn, count, learner, problem)  # keep objects alive: ids stay unique
    return _RUNNERS[key][:2]


def _seed(seed: int) -> jax.Array:
    return jnp.asarray(seed, jnp.uint32)


def _assert_trees_close(name: str, a: PyTree, b: PyTree, rtol: float, atol: float) -> None:
    la, ta = jax.tree.flatten(a)
    lb, tb = jax.tree.flatten(b)
    if ta != tb:  # type: ignore[operator]  # PyTreeDef compares; JAX's stubs say not
        raise ContractError(f"{name}: pytree structures differ: {ta} vs {tb}.")
    for i, (x, y) in enumerate(zip(la, lb)):
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape:
            raise ContractError(f"{name}: leaf {i} shapes differ: {x.shape} vs {y.shape}.")
        if x.dtype.kind in "fc":
            if not np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True):
                err = np.max(np.abs(x.astype(np.float64) - y.astype(np.float64)))
                raise ContractError(f"{name}: leaf {i} differs (max abs diff {err:.3g}).")
        elif not np.array_equal(x, y):
            raise ContractError(f"{name}: leaf {i} differs.")


def check_jit_matches_eager(learner, params, problem, pp, n_rounds=4, n_eager=2, rtol=1e-5,
                            atol=1e-5):
    """The first `n_eager` rounds of the jitted episode equal the same rounds with the learner
    run eagerly (state after them and every decision).

    The examples and the per-round keys come from the rollout (compiled); `learner.init` and
    every `learner.step` then run under `jax.disable_jit()` in a Python loop, so the check is on
    the learner's code, not on the problem's sampling (eager random draws cost ~0.3 s each). The
    jitted side is the program the other checks use, with the state frozen after n_eager rounds.
    """
    n_eager = min(n_eager, n_rounds)
    state_j, recs_j = _runner(learner, problem, n_rounds)[0](_seed(0), 1, params, pp, n_eager)
    jitted = (state_j, jax.tree.map(lambda a: a[:n_eager], recs_j))
    examples = stream(problem, pp, _seed(0), 1, n_eager)
    keys = run_keys(_seed(0), 1)
    round_keys = learner_round_keys(_seed(0), 1, n_eager)
    lookup = problem_lookup(problem, pp)
    records = []
    with jax.disable_jit():
        state = learner.init(keys[LEARNER_INIT], params)
        for t in range(n_eager):
            example = jax.tree.map(lambda a, t=t: a[t], examples)
            state, rec = play_round(learner, round_keys[t], state, example, params,
                                    jnp.int32(t), lookup)
            records.append(rec)
    eager = (state, stack_params(records))
    _assert_trees_close("jit vs no-jit", jitted, eager, rtol, atol)


#: Rows of the batched episode shared by the two vmap checks (one compile for both).
_BATCH = 3


def _batched_vs_loop(name, learner, problem, pp, ids, points, n_rounds, rtol, atol):
    """Run rows (run id, params point) batched (jit of vmap over both) and in a Python loop of
    the unbatched episode; both checks use `_BATCH` rows, so they share one compiled program."""
    run = _runner(learner, problem, n_rounds)[0]
    batched_run = _runner(learner, problem, n_rounds, (None, 0, 0, None))[0]
    batched = batched_run(_seed(3), jnp.asarray(ids, jnp.int32), stack_params(points), pp)
    looped = stack_params([run(_seed(3), i, p, pp) for i, p in zip(ids, points)])
    _assert_trees_close(name, batched, looped, rtol, atol)


def check_vmap_seeds(learner, params, problem, pp, n_rounds=4, rtol=1e-5, atol=1e-6):
    """`vmap` over run ids equals a Python loop over them."""
    _batched_vs_loop("vmap over seeds vs loop", learner, problem, pp, list(range(_BATCH)),
                     [params] * _BATCH, n_rounds, rtol, atol)


def check_vmap_params(learner, params, alt_params, problem, pp, n_rounds=4, rtol=1e-5,
                      atol=1e-6):
    """`vmap` over a stack of params points (default, alternative, default) equals a loop."""
    _batched_vs_loop("vmap over params vs loop", learner, problem, pp, [2] * _BATCH,
                     [params, alt_params, params], n_rounds, rtol, atol)

def check_no_retrace(learner, params, alt_params, problem, pp, n_rounds=4):
    """Calling the jitted episode again with other values (same shapes) does not retrace."""
    run, count = _runner(learner, problem, n_rounds)
    jax.block_until_ready(run(_seed(0), 0, params, pp))
    first = count[0]
    jax.block_until_ready(run(_seed(1), 7, alt_params, pp))
    if first < 1 or count[0] != first:
        raise ContractError(
            f"no retrace: step was traced {first} time(s) on the first call and "
            f"{count[0] - first} more on the second; make every swept number a params leaf "
            "(not a Python value) and avoid Python branching on params."
        )


def check_state_stable(learner, params, problem, pp):
    """One step maps the init state to a state with identical structure, shapes and dtypes."""
    ks = run_keys(_seed(0), 0)

    def one(lp, ppar):
        ls = learner.init(ks[LEARNER_INIT], lp)
        ps = problem.init(ks[PROBLEM_INIT], ppar)
        _, ex = problem.sample(ks[PROBLEM_ROUNDS], ps, jnp.int32(0), ppar)
        new, _ = play_round(learner, ks[LEARNER_ROUNDS], ls, ex, lp, None,
                            problem_lookup(problem, pp))
        return ls, new

    before, after = jax.eval_shape(one, params, pp)
    if jax.tree.structure(before) != jax.tree.structure(after):
        raise ContractError("state structure changes across step.")
    for i, (a, b) in enumerate(zip(jax.tree.leaves(before), jax.tree.leaves(after))):
        if a.shape != b.shape or a.dtype != b.dtype:
            raise ContractError(
                f"state leaf {i} changes from {a.shape} {a.dtype} to {b.shape} {b.dtype}."
            )


def check_finite(learner, params, problem, pp, n_rounds=4):
    """Every float in the final state and the decisions is finite."""
    out = _runner(learner, problem, n_rounds)[0](_seed(2), 0, params, pp)
    for i, leaf in enumerate(jax.tree.leaves(out)):
        a = np.asarray(leaf)
        if a.dtype.kind == "f" and not np.isfinite(a).all():
            raise ContractError(f"finite: output leaf {i} holds NaN or inf.")


def check_budget(learner, params, problem, pp, n_rounds=4):
    """No round requests more observations than `learner.budget(params)`."""
    if learner.family == BANDIT:
        return
    _, recs = _runner(learner, problem, n_rounds)[0](_seed(4), 0, params, pp)
    budget = int(np.asarray(learner.budget(params)))
    n_q = np.asarray(recs.n_queried)
    if np.asarray(recs.over_budget).any() or (n_q > budget).any():
        raise ContractError(
            f"budget: a round requested {int(n_q.max())} observations with budget {budget}."
        )
    revealed = np.asarray(recs.query).sum(axis=-1)
    if getattr(recs, "forms", None) is not None:  # each revealed nonzero form is one observation
        revealed = revealed + np.any(np.asarray(recs.forms) != 0, axis=-1).sum(axis=-1)
    if (revealed > budget).any():
        raise ContractError(f"budget: {int(revealed.max())} features revealed > budget {budget}.")


def _perturb(key, a, scale=3.0):
    return a + scale * (1.0 + jnp.abs(a)) * jax.random.normal(key, a.shape, a.dtype)


def _unseen_perturbation(key, x, query, forms):
    """x moved along directions no observation of the round sees: the unqueried coordinates,
    and, when linear forms were revealed, only within the orthogonal complement of their rows
    (restricted to the unqueried coordinates)."""
    x_alt = jnp.where(query, x, _perturb(key, x))
    if forms is None:
        return x_alt
    hidden = ~np.asarray(query)
    rows = np.asarray(forms, np.float64)[:, hidden]
    rows = rows[np.any(rows != 0, axis=1)]
    delta = np.asarray(x_alt - x, np.float64)[hidden]
    if len(rows):
        q, _ = np.linalg.qr(rows.T)  # an orthonormal basis of the rows' span
        delta = delta - q @ (q.T @ delta)
    out = np.asarray(x, np.float64).copy()
    out[hidden] += delta
    return jnp.asarray(out, x.dtype)


def check_blind(learner, params, problem, pp, warmup=4):
    """The decision ignores the label/reward and every unqueried feature of its round."""
    ks = run_keys(_seed(6), 0)
    ls, _ = _runner(learner, problem, warmup)[0](_seed(6), 0, params, pp)
    # the example of the round after the warm-up, as the rollout draws it
    ex = jax.tree.map(lambda a: a[warmup], stream(problem, pp, _seed(6), 0, warmup + 1))

    def step(e):
        # eager: the primitives are those of the eager check, already compiled, so this costs
        # no new program (a jit here would compile one per learner)
        with jax.disable_jit():
            return play_round(learner, ks[LEARNER_ROUNDS], ls, e, params, None,
                              problem_lookup(problem, pp))[1]

    base = step(ex)
    kp = jax.random.split(root_key(99), 3)
    if learner.family == BANDIT:
        alt = ex._replace(rewards=_perturb(kp[0], ex.rewards), means=_perturb(kp[1], ex.means))
        if ex.theta is not None:
            alt = alt._replace(theta=_perturb(kp[2], ex.theta), noise=_perturb(kp[2], ex.noise),
                               best=_perturb(kp[1], ex.best))
        changed = step(alt)
        if int(changed.arm) != int(base.arm) or (
                base.x is not None and not np.array_equal(np.asarray(changed.x),
                                                          np.asarray(base.x))):
            raise ContractError("blind: the pulled arm depends on this round's rewards.")
        return
    if learner.family == PREDICTION:
        x_alt = _unseen_perturbation(kp[0], ex.x, base.query, base.forms)
        alt = ex._replace(x=x_alt, y=_perturb(kp[1], ex.y), y_clean=_perturb(kp[2], ex.y_clean))
        changed = step(alt)
        # with linear forms the revealed values <a, x_alt> equal <a, x> up to rounding only
        same = (np.array_equal if base.forms is None else
                lambda a, b: np.allclose(a, b, rtol=1e-4, atol=1e-5))
        if not same(np.asarray(changed.prediction), np.asarray(base.prediction)):
            raise ContractError(
                "blind: the prediction changes when the label or an unqueried feature changes."
            )
        all_x = ex._replace(x=_perturb(kp[0], ex.x))
        if not np.array_equal(np.asarray(step(all_x).query), np.asarray(base.query)):
            raise ContractError("blind: the query depends on this round's features.")
        return
    if learner.family == LINEAR:
        alt = ex._replace(x=_perturb(kp[0], ex.x), y=_perturb(kp[1], ex.y))
        changed = step(alt)
        if not (np.array_equal(np.asarray(changed.w), np.asarray(base.w))
                and np.array_equal(np.asarray(changed.query), np.asarray(base.query))):
            raise ContractError("blind: the played action depends on this round's theta.")


def check_learner(learner: Learner, params: Any, alt_params: Any, problem: Problem,
                  problem_params: Any, n_rounds: int = 4) -> list[str]:
    """Run the whole contract suite; raise `ContractError` on the first failure.

    Args:
      learner: the learner under test.
      params, alt_params: two different params points of the same shapes.
      problem, problem_params: a problem the learner's family can run on.
      n_rounds: rounds per checked episode.

    Returns:
      The names of the checks that passed.
    """
    if not problem.supports(learner.family):
        raise ValueError(f"problem {problem.name!r} cannot host a {learner.family} learner.")
    pp = problem_params
    checks = [
        ("state_stable", lambda: check_state_stable(learner, params, problem, pp)),
        ("jit_matches_eager", lambda: check_jit_matches_eager(learner, params, problem, pp,
                                                              n_rounds)),
        ("vmap_seeds", lambda: check_vmap_seeds(learner, params, problem, pp, n_rounds)),
        ("vmap_params", lambda: check_vmap_params(learner, params, alt_params, problem, pp,
                                                  n_rounds)),
        ("no_retrace", lambda: check_no_retrace(learner, params, alt_params, problem, pp)),
        ("finite", lambda: check_finite(learner, params, problem, pp)),
        ("budget", lambda: check_budget(learner, params, problem, pp)),
        ("blind", lambda: check_blind(learner, params, problem, pp)),
    ]
    passed = []
    for name, fn in checks:
        fn()
        passed.append(name)
    return passed


def _x64():
    """A context in which jax_enable_x64 is on (jax.enable_x64 on new JAX)."""
    if hasattr(jax, "enable_x64"):
        return jax.enable_x64(True)
    from jax.experimental import enable_x64  # pragma: no cover - older JAX

    return enable_x64()


def check_float64(learner: Learner, params: Any, problem: Problem, problem_params: Any,
                  n_rounds: int = 4) -> list[str]:
    """The float64 mode of the suite: run under jax_enable_x64 (entered here), with the float
    leaves of `params` and `problem_params` cast to float64 (build them under x64 to have the
    learner's own defaults in float64).

    Checks, in order: every float leaf of the initial state is float64 (a float32 leaf would keep
    part of the learner in float32 when the user asked for float64); `check_state_stable`; a
    jitted episode of `n_rounds` traces and stays finite (`check_finite`) and within its budget
    (`check_budget`). Returns the names of the checks that passed.
    """
    def widen(tree):
        return jax.tree.map(lambda a: jnp.asarray(a, jnp.float64)
                            if jnp.issubdtype(jnp.asarray(a).dtype, jnp.floating) else a, tree)

    passed = []
    with _x64():
        params, pp = widen(params), widen(problem_params)
        state = jax.eval_shape(learner.init, root_key(0), params)
        narrow = [i for i, a in enumerate(jax.tree.leaves(state))
                  if jnp.issubdtype(a.dtype, jnp.floating) and a.dtype != jnp.float64]
        if narrow:
            raise ContractError(f"float64: state leaves {narrow} stay "
                                f"{jax.tree.leaves(state)[narrow[0]].dtype} under x64.")
        passed.append("float64_state")
        try:
            check_state_stable(learner, params, problem, pp)
            passed.append("state_stable")
            check_finite(learner, params, problem, pp, n_rounds)
        except TypeError as e:  # a cond / while / scan carry whose dtype changes under x64
            raise ContractError(f"float64: the episode does not trace under x64: "
                                f"{str(e).splitlines()[0]}") from e
        passed.append("finite")
        check_budget(learner, params, problem, pp, n_rounds)
        passed.append("budget")
    return passed


def example_problem(family: str, requires: Requirements | None = None, d: int = 8):
    """A small problem that a learner of `family` with `requires` can run on (contract checks):
    `sparse-linear` (d, k = 2) for the stream families, `sphere-bandit` for continuous actions,
    `linear-bandit` (5 arms) otherwise. Returns (problem, problem_params)."""
    from oslr.registry import make_problem

    requires = requires or NO_REQUIREMENTS
    if family != BANDIT:
        return make_problem("sparse-linear", d=d, k=2)
    if requires.continuous_actions:
        return make_problem("sphere-bandit", d=max(2, d - 2))
    return make_problem("linear-bandit", d=max(2, d - 2), n_arms=5)


def check_spec(spec: Any, d: int = 8, float64: bool = False, **options) -> list[str]:
    """Run the contract suite on a registered learner spec at its default and alternative params,
    on `example_problem` (built with the problem's arm count when the spec has an `n_arms`
    option). Returns the names of the checks that passed.

    Args:
      spec: a `LearnerSpec`.
      d: the example problem's dimension.
      float64: run the float64 mode (`check_float64`, learner and params built under x64)
        instead of the float32 suite.
      options: static options for `spec.make` (to check a variant, e.g. `b=1.0`).
    """
    learner, _ = spec.make(d, **options)
    problem, pp = example_problem(spec.family, learner.requires, d)
    if "n_arms" in spec.option_names:
        options = {"n_arms": problem.n_arms, **options}
    if float64:
        with _x64():
            learner, params = spec.make(problem.d, **options)
            problem, pp = example_problem(spec.family, learner.requires, d)
        return check_float64(learner, params, problem, pp)
    learner, params = spec.make(problem.d, **options)
    return check_learner(learner, params, spec.alt_params(problem.d), problem, pp)


__all__ = [
    "ContractError",
    "check_blind",
    "check_budget",
    "check_finite",
    "check_float64",
    "check_jit_matches_eager",
    "check_learner",
    "check_spec",
    "example_problem",
    "check_no_retrace",
    "check_state_stable",
    "check_vmap_params",
    "check_vmap_seeds",
    "episode_fn",
]
