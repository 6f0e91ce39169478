"""oslr.result: a recording keeps each study's per-run part only."""

import numpy as np

import oslr
from oslr.report import runs_curves_frame
from oslr.result import recording


def test_recording__keeps_the_per_run_part_not_the_checkpoint_statistics():
    problem, pp = oslr.make_problem("sparse-linear", d=6, k=2)
    learner, params = oslr.make("ogd-full", d=6)
    with recording() as seen:
        res = oslr.simulate(learner, problem, params, pp, horizon=40, n_runs=3, seed=1,
                            comparator_k=2)
    (light,) = seen
    assert light is not res and light.curves == {} and res.curves  # the Gram sums dropped
    assert {"theta_sum", "gram"} & set(res.final) and not {"theta_sum", "gram"} & set(light.final)
    assert all(np.ndim(v) == 2 for v in light.final.values()) and "loss" in light.final
    for name, curve in res.regret_curves().items():
        np.testing.assert_array_equal(light.regret_curves()[name], curve)
    # the per-run file's rows are the same from the light copy as from the whole result
    assert runs_curves_frame([light]).equals(runs_curves_frame([res]))
    # outside a recording nothing is kept
    oslr.simulate(learner, problem, params, pp, horizon=40, n_runs=3, seed=1, comparator_k=2)
    assert len(seen) == 1
