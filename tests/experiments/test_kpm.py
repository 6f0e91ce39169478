"""[KPM] experiment helpers: the PEGE / fPEGE-GD order terms drawn over kpm-pege (golden)."""

import numpy as np
import pandas as pd
import pytest

from oslr.experiments import kpm


def test_pege_bounds__golden():
    df = pd.DataFrame({"learner": ["pege", "fpege-gd"], "d": [5, 5], "n": [100, 100]})
    # PEGE: d = 5; fPEGE-GD: 2 d ln^4 n = 10 * 4.60517^4 = 4497.62
    np.testing.assert_allclose(kpm.pege_bounds(df), [5.0, 4497.62], rtol=1e-5)


@pytest.mark.slow  # moved behind -m slow to keep the default run under 5 min
def test_kpm_runtime__both_linucb_forms_are_rows():
    from oslr.experiments.kpm import kpm_runtime

    df = kpm_runtime(ds=(4,), n_arms=3, horizon=8, repeats=1,
                     learners=("linucb", "linucb (A^-1 form)"))
    assert df["learner"].tolist() == ["linucb", "linucb (A^-1 form)"]
    assert df["fixed_arms"].tolist() == [True, False]  # the O(K d) form, then the A^-1 one
    assert (df["ms_per_round"] > 0).all() and (df["d"] == 4).all()
