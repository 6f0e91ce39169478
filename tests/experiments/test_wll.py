"""[WLL] experiment helpers: Theorem 3's order term (golden) and its overlay on the k/d figure."""

import math

import matplotlib
import numpy as np
import pandas as pd

from oslr.experiments.wll import plot_experiment, theorem_3_order

matplotlib.use("Agg")


def test_theorem_3_order__golden():
    # b = 2: sqrt(4^(1/2) * 10^2 * ln 10 * e * ln e) = sqrt(1251.82) = 35.3810
    np.testing.assert_allclose(theorem_3_order(10, 4, math.e), 35.3810, rtol=1e-5)
    # b = 1 drops the k factor: sqrt(100 ln 10 e) = 25.0181
    np.testing.assert_allclose(theorem_3_order(10, 4, math.e, b=1.0), 25.0181, rtol=1e-5)


def test_plot_experiment__draws_best_minus_the_order_term():
    df = pd.DataFrame({"learner": ["ftpsl", "ftpsl"], "ratio": [0.1, 0.2], "k": [2, 4],
                       "d": [20, 20], "horizon": [1000, 1000], "reward_mean": [50.0, 60.0],
                       "reward_ci_low": [45.0, 55.0], "reward_ci_high": [55.0, 65.0],
                       "comparator_reward_mean": [80.0, 90.0]})
    fig = plot_experiment(df, "ratio")
    line = [ln for ln in fig.axes[0].get_children()
            if str(ln.get_label()).startswith("best - [WLL] Thm 3")][0]
    assert "vacuous" in line.get_label()  # 80 - 1.1e3 is far below every interval
    np.testing.assert_allclose(line.get_ydata(), [80.0, 90.0] - theorem_3_order(20, [2, 4], 1000))
