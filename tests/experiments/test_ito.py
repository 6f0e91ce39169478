"""[ITO] E3 experiments: the Table-1 study's rows, the paper's numbers beside ours."""

import numpy as np
import pytest

from oslr.experiments import ito


@pytest.mark.slow
def test_ito_table1__tiny_study_has_every_method_and_the_papers_numbers():
    table, curves = ito.ito_table1(settings=((10, 2, 4),), horizon=60, runs=6)
    assert table["method"].tolist() == list(ito.METHODS)
    paper = table.set_index("method")["paper"]
    assert paper[["alg2", "alg3", "kklp", "kklp_a"]].tolist() == [427.0, 2544.3, 4649.4, 4335.0]
    assert np.isnan(paper["alg1"])  # Alg. 1 is not in [ITO]'s table
    assert (table["queries_per_round"] <= 4 + 1e-9).all()
    assert (table["ci_low"] <= table["regret"]).all()
    assert (table["regret"] <= table["ci_high"]).all()
    assert set(curves["method"]) == set(ito.METHODS) and curves["n"].max() == 60
    # predicting 0 has one regret per setting, whichever method's comparator loss is read
    np.testing.assert_allclose(table["zero_regret"], table["zero_regret"].iloc[0], rtol=1e-5)
    assert table["zero_regret"].iloc[0] > 0


def test_method__kklp_parameters_follow_l3_4():
    a = np.eye(10, 20, dtype=np.float32)
    learner, _ = ito.method("kklp", 10, 8, 2, 5000, a)
    # k0 = k = 8, k1 = k' = 2, B = ceil((8 * 5000 / (10 * 2))^(1/3)) = ceil(12.599) = 13
    assert (learner.info["k0"], learner.info["k1"], learner.info["batch"]) == (8, 2, 13)
    learner, _ = ito.method("kklp_a", 10, 8, 2, 5000, a)
    # on m = 20 forms: ceil((40000 / 40)^(1/3)) = 10
    assert learner.info["batch"] == 10 and learner.info["projection_m"] == 20
