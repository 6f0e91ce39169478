"""Feedback-delay schedules for labelled streams ([WLL] section 4.1; docs/algorithms.md L1a).

`with_delays(problem, schedule, max_delay)` stamps every example with D_t in {1..max_delay}: the
feedback of round t may be used from the end of round t + D_t - 1 on.

* "fixed": D_t = max_delay;
* "random": D_t uniform on {1, ..., max_delay}, drawn from the round's key (its own stream);
* "batched": D_t = L - (t mod L) with L = max_delay: the feedback of each block of L rounds
  arrives together at the block's end (an oblivious adversarial schedule).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from oslr.checks import check_positive_int
from oslr.types import Problem
from oslr.spec import Option

SCHEDULES = ("fixed", "random", "batched")

#: the options of a stream that may be delayed (`maybe_delayed`)
DELAY_OPTIONS = (
    Option("delays", None, "feedback delay schedule (None: feedback at once)", SCHEDULES, str),
    Option("max_delay", 1, "largest feedback delay D_t", type=int, lo=1),
)
_DELAY_STREAM = 0xDE1A


def with_delays(problem: Problem, schedule: str, max_delay: int) -> Problem:
    """Return `problem` with a delay D_t on every example (see the module docstring)."""
    if schedule not in SCHEDULES:
        raise ValueError(f"unknown delay schedule {schedule!r}; choose one of {SCHEDULES}.")
    check_positive_int("max_delay", max_delay)
    if problem.kind != "stream":
        raise ValueError(f"delays apply to labelled streams, not to {problem.kind} problems.")

    def sample(key, state, t, params):
        state, ex = problem.sample(key, state, t, params)
        if schedule == "fixed":
            delay = jnp.asarray(max_delay, jnp.int32)
        elif schedule == "random":
            k_delay = jax.random.fold_in(key, _DELAY_STREAM)
            delay = jax.random.randint(k_delay, (), 1, max_delay + 1, jnp.int32)
        else:
            delay = (max_delay - jnp.mod(t, max_delay)).astype(jnp.int32)
        return state, ex._replace(delay=delay)

    info = dict(problem.info or {}, delay_schedule=schedule, max_delay=max_delay)
    return problem._replace(sample=sample, info=info, max_delay=max_delay)


def maybe_delayed(problem: Problem, schedule: str | None, max_delay: int) -> Problem:
    """`problem` itself when `schedule` is None, else `with_delays(problem, schedule, ...)`."""
    return problem if schedule is None else with_delays(problem, schedule, max_delay)


def expected_total_delay(schedule: str, max_delay: int, horizon: int) -> float:
    """D = sum_t D_t (its expectation for "random"), the D of [WLL] Theorem 7."""
    if schedule == "fixed":
        return float(max_delay * horizon)
    if schedule == "random":
        return (max_delay + 1) / 2.0 * horizon
    full, rest = divmod(horizon, max_delay)
    block = max_delay * (max_delay + 1) / 2.0
    return full * block + sum(max_delay - j for j in range(rest))
