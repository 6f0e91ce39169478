"""The plain-JAX anchors (`benchmarks.plain_jax`): one jit(scan) per study, the same learner and
stream law as oslr's benchmark rows. No speed is asserted."""

import numpy as np
import pytest
from benchmarks import plain_jax

from tests.test_anchors import _FINAL, _oslr_final


@pytest.mark.slow  # benchmark code (two compiles); keeps the default run under 5 min
def test_plain_jax__ogd_study_checkpoints_its_sums_and_is_the_same_whatever_the_batch():
    out = plain_jax.plain_batched("ogd-full", 6, 40, seed=3)()
    loss, ckpt = out["loss"], out["ckpt"]
    assert loss.shape == (6,) and loss.dtype == np.float32 and np.isfinite(loss).all()
    np.testing.assert_array_equal(ckpt[0][-1], loss)  # the last checkpoint is round T
    np.testing.assert_array_equal(ckpt[1][-1], out["loss_wstar"])
    assert (np.diff(ckpt[0], axis=0) >= 0).all()  # running sums of squares
    # each run's draws come from its own key folded with the round: the first 3 of 6 runs
    # are those of a study of 3
    few = plain_jax.plain_batched("ogd-full", 3, 40, seed=3)()
    np.testing.assert_allclose(few["loss"], loss[:3], rtol=1e-5)


@pytest.mark.slow  # compiles each study twice (oslr's and the anchor), up to 1024 runs
@pytest.mark.parametrize("name", plain_jax.NAMES)
def test_plain_jax__same_learner_and_stream_law_as_oslr(name):
    # as the NumPy anchors (tests/test_anchors.py): the means of the final metric agree with
    # oslr's within 4 standard errors of the difference
    runs, horizon = {"ftpsl": (128, 1000)}.get(name, (1024, 100))
    ref = _oslr_final(name, runs, horizon)
    got = np.asarray(plain_jax.plain_batched(name, runs, horizon)()[_FINAL[name]], np.float64)
    se = np.sqrt(got.var(ddof=1) / runs + ref.var(ddof=1) / runs)
    assert abs(got.mean() - ref.mean()) < 4 * se, (got.mean(), ref.mean(), se)
