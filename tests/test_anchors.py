"""The benchmark's anchors (`benchmarks.anchors`): batched NumPy and numba studies of the same
learners on the same stream laws as oslr. No speed is asserted."""

import numpy as np
import pytest
from benchmarks import anchors
from benchmarks.cases import BY_NAME

import oslr
from oslr.registry import LEARNERS

#: the compared final sum of each anchor, and its first running sum (the first checkpointed)
_FINAL = {"ogd-full": "loss", "ogd-random-subset": "loss", "uniform-subset": "reward",
          "eps-greedy": "pseudo_regret", "linucb": "pseudo_regret", "ftpsl": "reward",
          "ftpsl-delayed": "reward",
          "ftpl-random-subset": "reward", "ftpl-oracle-subset": "reward",
          "ito-dual-averaging": "loss", "pege": "pseudo_regret", "fpege-gd": "pseudo_regret"}
_FIRST = {name: "reward" if final == "pseudo_regret" else final for name, final in _FINAL.items()}


def test_anchors__every_numpy_anchor_is_a_benchmark_row():
    assert set(anchors.NUMPY_NAMES) == set(_FINAL) and set(anchors.NAMES) <= set(_FINAL)
    assert set(anchors.NUMPY_NAMES) <= set(BY_NAME)


@pytest.mark.parametrize("name", anchors.NUMPY_NAMES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_anchors__numpy_study_runs_in_its_dtype_and_checkpoints_its_sums(name, dtype):
    out = anchors.numpy_batched(name, 8, 30, dtype)()
    final = out[_FINAL[name]]
    assert final.shape == (8,) and final.dtype == dtype and np.isfinite(final).all()
    # the first running sum's checkpoint copies (checkpoint, run); the last one is round T
    np.testing.assert_array_equal(out["ckpt"][0][-1], out[_FIRST[name]])


def _oslr_final(name, runs, horizon):
    case = BY_NAME[name]  # the benchmark row's problem and learner settings
    problem, pp = oslr.make_problem(case.problem, **case.problem_opts)
    learner, params = oslr.make(name, d=problem.d, horizon=horizon, **case.make_opts)
    if LEARNERS[name].prepare is not None:
        params = LEARNERS[name].prepare(params, problem, pp)
    return oslr.simulate(learner, problem, params, pp, horizon=horizon,
                         n_runs=runs).final[_FINAL[name]][0]


@pytest.mark.slow  # 1024 runs of each side, numba compiles its kernels
@pytest.mark.parametrize("name", anchors.NUMPY_NAMES)
def test_anchors__same_learner_and_stream_law_as_oslr(name):
    # the means of the final loss / pseudo-regret / reward agree with oslr's within 4 standard
    # errors of the difference (a different learner or stream law does not: LinUCB with kappa
    # 0.3 fails at T = 100; FTPSL without its resampling weights only shows once it has
    # learned, about 6 standard errors apart at T = 2000)
    # PEGE's estimate only shows in its exploitation rounds: 20 of the first 100 at d = 20
    runs, horizon = ((256, 2000) if name.startswith("ftp") else
                     (1024, 2000) if name.endswith("pege-gd") or name == "pege" else (1024, 100))
    ref = _oslr_final(name, runs, horizon)
    sides = {"numpy_f64": anchors.numpy_batched(name, runs, horizon, np.float64),
             "numpy_f32": anchors.numpy_batched(name, runs, horizon, np.float32)}
    numba_call = anchors.numba_batched(name, runs, horizon)
    if numba_call is not None:
        sides["numba"] = numba_call
    for side, call in sides.items():
        got = np.asarray(call()[_FINAL[name]], np.float64)
        se = np.sqrt(got.var(ddof=1) / runs + ref.var(ddof=1) / runs)
        assert abs(got.mean() - ref.mean()) < 4 * se, (side, got.mean(), ref.mean(), se)


def test_anchor_ratios__best_alternative_by_the_platforms_clock():
    from benchmarks.anchor_ratios import compare

    # numba runs on every host core: fastest by wall time, not by CPU time
    row = {"learner": "x", "oslr_cpu": 100, "oslr_wall": 400, "numpy_f32_cpu": 50,
           "numpy_f32_wall": 50, "numba_cpu": 40, "numba_wall": 200}
    cpu, wall = compare(row, "cpu"), compare(row, "wall")
    assert (cpu["best_alternative"], cpu["oslr_over_best_cpu"]) == ("numpy_f32", 2.0)
    assert (wall["best_alternative"], wall["oslr_over_best_wall"]) == ("numba", 2.0)
    assert cpu["oslr_over_best_wall"] == 8.0 and wall["oslr_over_best_cpu"] == 2.5
