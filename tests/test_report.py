"""Report helpers: the fitted growth exponent and the bound overlay."""

import matplotlib
import numpy as np

from oslr.report import draw_bound, growth_exponent

matplotlib.use("Agg")


def test_growth_exponent__of_power_curves():
    t = np.geomspace(10, 1e5, 30)
    assert abs(growth_exponent(t, 3.0 * t**0.5) - 0.5) < 1e-12
    assert abs(growth_exponent(t, t ** (2 / 3)) - 2 / 3) < 1e-12
    # only points at t >= t_min count: a curve that bends from t to sqrt(t) at 1e3
    bent = np.where(t < 1e3, t, np.sqrt(1e3 * t))
    assert abs(growth_exponent(t, bent, t_min=1e3) - 0.5) < 1e-12
    # non-positive values are left out; fewer than two points give NaN
    assert abs(growth_exponent(t, np.where(t < 100, -1.0, t)) - 1.0) < 1e-12
    assert np.isnan(growth_exponent([1.0, 2.0], [1.0, -1.0]))


def test_draw_bound__labels_order_only():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    line = draw_bound(ax, [1, 10], [1.0, 3.0], "Thm 1", order_only=True)
    assert line.get_label() == "Thm 1 (order only, constant 1)"
    assert line.get_linestyle() == "--"
    np.testing.assert_allclose(line.get_ydata(), [1.0, 3.0])
    assert draw_bound(ax, [1, 10], [1.0, 3.0], "Thm 4").get_label() == "Thm 4"
    plt.close(fig)


def test_draw_bound__without_rescale_keeps_the_data_limits():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([1, 10], [1.0, 2.0])
    before = ax.get_ylim()
    line = draw_bound(ax, [1, 10], [1e3, 1e6], None, rescale=False)
    ax.plot([1, 10], [1.5, 1.8])  # a later curve autoscales without the bound
    assert ax.get_ylim() == before and line.get_label() == "_nolegend_"
    assert line in ax.get_children()
    plt.close(fig)
