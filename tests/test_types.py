"""`oslr.types`: what a learner requires of a problem, checked before tracing, in one line."""

import pytest

from oslr.types import Problem, Requirements


def _problem(**kw):
    base = dict(init=None, sample=None, kind="bandit", d=4, name="p", n_arms=5)
    return Problem(**{**base, **kw})


@pytest.mark.parametrize("req,problem,horizon,message", [
    (Requirements(), _problem(max_delay=3), 10,
     "problem 'p' has delayed feedback (up to 3 rounds) but learner 'L' would use feedback at "
     "once; use a delay-aware learner (one with a max_delay option, see `oslr list`)."),
    (Requirements(max_delay=2), _problem(max_delay=3), 10,
     "learner 'L' buffers 2 rounds of feedback but the problem delays it up to 3; build it with "
     "max_delay >= 3."),
    (Requirements(n_arms=4), _problem(), 10,
     "learner 'L' was built for 4 arms but problem 'p' has 5; build it with n_arms=5."),
    (Requirements(capacity=9), _problem(), 10,
     "learner 'L' keeps a history of 9 samples but the horizon is 10; build it with horizon >= "
     "10 (oslr.make(..., horizon=10))."),
    (Requirements(), _problem(replay=True), 10,
     "problem 'p' replays logged events (rejection sampling) but learner 'L' does not skip "
     "rejected events; use a replay-aware learner (see `oslr list`)."),
    (Requirements(history="arm"), _problem(changing_arms=True), 10,
     "learner 'L' stores arm indices (history='arm') but problem 'p' has new arms every round; "
     "build it with history='features'."),
    (Requirements(history="arm"), _problem(changing_arms=True, features=len), 10,
     "learner 'L' stores arm indices (history='arm') but problem 'p' has new arms every round; "
     "build it with history='features' or history='id'."),
    (Requirements(history="id"), _problem(), 10,
     "learner 'L' stores global arm ids (history='id') but problem 'p' has no feature lookup; "
     "use history='arm' or 'features'."),
    (Requirements(dataset=True), _problem(), 10,
     "learner 'L' needs a dataset problem (it computes an offline oracle from the whole stream); "
     "problem 'p' is synthetic."),
    (Requirements(continuous_actions=True), _problem(), 10,
     "learner 'L' plays vectors of the unit ball; problem 'p' has a finite arm set (use a "
     "continuous-action problem such as sphere-bandit)."),
])
def test_requirements__each_mismatch_refused_in_one_line(req, problem, horizon, message):
    with pytest.raises(ValueError) as e:
        req.check(problem, horizon, "L")
    assert str(e.value) == message


def test_requirements__what_fits_is_accepted_at_the_edges():
    for req, problem in [
        (Requirements(max_delay=3), _problem(max_delay=3)),
        (Requirements(n_arms=5), _problem()),
        (Requirements(capacity=10), _problem()),  # a history of exactly the horizon
        (Requirements(replay=True), _problem(replay=True)),
        (Requirements(history="arm"), _problem()),  # a fixed arm set
        (Requirements(history="features"), _problem(changing_arms=True)),
        (Requirements(history="id"), _problem(features=len)),
        (Requirements(dataset=True), _problem(n_rows=100)),
        (Requirements(continuous_actions=True), _problem(continuous_actions=True)),
        (Requirements(), _problem()),
    ]:
        req.check(problem, 10, "L")
    with pytest.raises(ValueError, match=r"^learner 'learner' was built for"):
        Requirements(n_arms=4).check(_problem(), 10)  # the default name


def test_on_device__the_dtype_asked_for_converted_on_the_host():
    import jax
    import numpy as np

    from oslr.types import on_device

    seed = on_device(3, np.uint32)
    assert seed.dtype == np.uint32 and isinstance(seed, jax.Array)
    assert on_device(2.0, np.int32).dtype == np.int32
    assert on_device([0.1, 0.2], np.float32).tolist() == np.asarray([0.1, 0.2], np.float32).tolist()
