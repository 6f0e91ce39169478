"""Regressors (docs/algorithms.md B6, B7, B11): VAW's bound, float64 references, golden values."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from oslr.primitives.regressors import (
    OgdStepParams,
    OnsParams,
    VawParams,
    masked_ls_loss,
    ogd,
    ons,
    project_l2,
    project_l2_in_norm,
    ridge,
    vaw,
)
from oslr.spec import build_params
from tests.helpers import x64


def _run(reg, params, xs, ys):
    """Predictions of `reg` on the sequence (jitted scan), float of the input."""

    def body(state, xy):
        x, y = xy
        y_hat = reg.predict(state, x, params)
        return reg.update(state, x, y, params), y_hat

    state, preds = jax.lax.scan(body, reg.init(params), (xs, ys))
    return state, np.asarray(preds)


def _f64(params):
    return jax.tree.map(lambda a: a.astype(jnp.float64), params)


def test_vaw__golden_one_dimensional_sequence():
    # a = 1. Round 1: A = 1 + 1 = 2, b = 0 -> y_hat = 0; then b = 1 * 1 = 1.
    # Round 2: x = 2: A = 2 + 4 = 6 -> y_hat = 2 * 1 / 6 = 1/3; then b = 1 + 2 * 0.5 = 2.
    # Round 3: x = -1: A = 7 -> y_hat = -2 / 7.
    reg = vaw(1)
    params = build_params(VawParams, 1)
    _, preds = _run(reg, params, jnp.array([[1.0], [2.0], [-1.0]]), jnp.array([1.0, 0.5, 0.0]))
    np.testing.assert_allclose(preds, [0.0, 1 / 3, -2 / 7], rtol=1e-6)


def test_ridge__golden_one_dimensional_sequence():
    # the same data; ridge leaves x_t out of A when predicting: A = 1 -> 0; A = 2, b = 1 -> 2/2
    # = 1; A = 6, b = 2 -> -2/6.
    _, preds = _run(ridge(1), build_params(VawParams, 1), jnp.array([[1.0], [2.0], [-1.0]]),
                    jnp.array([1.0, 0.5, 0.0]))
    np.testing.assert_allclose(preds, [0.0, 1.0, -1 / 3], rtol=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vaw__matches_float64_reference_and_its_regret_bound_holds(seed):
    rng = np.random.default_rng(seed)
    T, k, a = 300, 4, 0.75  # exact in float32 (params are declared float32)
    xs = rng.normal(size=(T, k)) / np.sqrt(k)
    ys = np.clip(xs @ rng.normal(size=k) + 0.5 * rng.normal(size=T), -1, 1)
    if seed == 2:
        ys = rng.uniform(-1, 1, size=T)  # pure noise: the bound must hold for any sequence
    with x64():
        params = _f64(build_params(VawParams, k, a=a))
        _, preds = _run(vaw(k), params, jnp.asarray(xs), jnp.asarray(ys))
    # reference: A_t = a I + sum_{s <= t} x x^T, y_hat_t = x_t^T A_t^{-1} b_{t-1}
    ref, big_a, b = [], a * np.eye(k), np.zeros(k)
    for x, y in zip(xs, ys):
        big_a += np.outer(x, x)
        ref.append(x @ np.linalg.solve(big_a, b))
        b += y * x
    np.testing.assert_allclose(preds, ref, rtol=1e-9, atol=1e-12)
    # [CBL06] Thm 11.8: sum (y_hat - y)^2 <= inf_u [sum (u x - y)^2 + a |u|^2] + Y^2 sum log(1 +
    # lambda_i / a)
    gram = xs.T @ xs
    u = np.linalg.solve(gram + a * np.eye(k), xs.T @ ys)
    best = np.sum((xs @ u - ys) ** 2) + a * u @ u
    bound = best + np.max(ys**2) * np.sum(np.log1p(np.linalg.eigvalsh(gram) / a))
    loss = np.sum((preds - ys) ** 2)
    assert loss <= bound
    assert loss >= best - 1e-9 * abs(best)  # the comparator is not beaten by more than rounding


def test_vaw__coordinates_never_observed_keep_zero_weight():
    rng = np.random.default_rng(3)
    xs = rng.normal(size=(50, 5)).astype(np.float32)
    xs[:, [1, 4]] = 0.0  # a learner running VAW on the subset {0, 2, 3}
    reg = vaw(5)
    params = build_params(VawParams, 5)
    state, _ = _run(reg, params, jnp.asarray(xs), jnp.asarray(rng.normal(size=50), jnp.float32))
    w = np.asarray(reg.weights(state, params))
    assert w[1] == 0.0 and w[4] == 0.0 and np.all(w[[0, 2, 3]] != 0.0)


def test_ogd__golden_step_and_projection():
    # w0 = 0, x = (1, 0), y = 1: grad = 2 (0 - 1) x = (-2, 0); step eta / sqrt(1) = 0.5 -> (1, 0),
    # projected on radius 0.5 -> (0.5, 0). Next: y_hat = 0.5; grad = 2 (0.5 - 0) (1, 0) = (1, 0),
    # step 0.5 / sqrt(2) -> 0.5 - 0.3536 = 0.1464.
    reg = ogd(2)
    params = build_params(OgdStepParams, 2, eta=0.5, radius=0.5)
    state, preds = _run(reg, params, jnp.array([[1.0, 0.0], [1.0, 0.0]]), jnp.array([1.0, 0.0]))
    np.testing.assert_allclose(preds, [0.0, 0.5], rtol=1e-6)
    np.testing.assert_allclose(state.w, [0.5 - 0.5 / np.sqrt(2.0), 0.0], rtol=1e-6)
    assert int(state.t) == 2 and state.t.dtype == jnp.int32  # an exact count past 2^24 updates


def _assert_a_norm_projection(v, a, radius):
    """v (outside the ball) projected in the A-norm lands on the sphere of `radius` and meets the
    KKT conditions A (v - w) = mu w with mu >= 0 (call under x64)."""
    w = np.asarray(project_l2_in_norm(jnp.asarray(v), jnp.asarray(a), jnp.asarray(radius)))
    assert abs(np.linalg.norm(w) - radius) < 1e-8
    g = a @ (v - w)
    mu = g @ w / (w @ w)
    assert mu >= 0 and np.allclose(g, mu * w, atol=1e-7)


def test_project_l2_in_norm__kkt_conditions_and_euclidean_case():
    rng = np.random.default_rng(0)
    with x64():
        m = rng.normal(size=(4, 4))
        a = m @ m.T + 0.1 * np.eye(4)
        v = 3.0 * rng.normal(size=4)
        _assert_a_norm_projection(v, a, 1.0)
        # A = I: the Euclidean projection; inside the ball: v itself
        e = np.asarray(project_l2_in_norm(jnp.asarray(v), jnp.eye(4), jnp.asarray(1.0)))
        np.testing.assert_allclose(e, v / np.linalg.norm(v), rtol=1e-8)
        inside = 0.1 * v / np.linalg.norm(v)
        np.testing.assert_allclose(project_l2_in_norm(jnp.asarray(inside), jnp.asarray(a),
                                                      jnp.asarray(1.0)), inside)


def test_projections__at_a_radius_other_than_one():
    # at radius 1, r = r^2 = sqrt(r): a radius of 2.5 tells them apart
    np.testing.assert_allclose(project_l2(jnp.array([6.0, 8.0]), jnp.asarray(2.5)),
                               [1.5, 2.0], rtol=1e-6)  # (6, 8) / 10 * 2.5
    np.testing.assert_allclose(project_l2(jnp.array([0.6, 0.8]), jnp.asarray(2.5)),
                               [0.6, 0.8], rtol=1e-6)  # inside: unchanged
    rng = np.random.default_rng(3)
    with x64():
        m = rng.normal(size=(3, 3))
        a = m @ m.T + 0.2 * np.eye(3)
        v = 6.0 * rng.normal(size=3)
        _assert_a_norm_projection(v, a, 2.5)
        # A diagonal, v on an axis: the A-norm projection is v scaled onto the sphere of 2.5
        np.testing.assert_allclose(project_l2_in_norm(jnp.array([0.0, 4.0, 0.0]),
                                                      jnp.diag(jnp.array([3.0, 1.0, 2.0])),
                                                      jnp.asarray(2.5)), [0.0, 2.5, 0.0],
                                   atol=1e-8)


def test_ons__first_step_projected_on_a_radius_below_one():
    # the golden first step below gives v = (0.8, 0); on radius 0.5 the A-norm projection with
    # A = diag(5, 1) is (0.5, 0)
    reg = ons(2)
    params = build_params(OnsParams, 2, radius=0.5)
    state, _ = _run(reg, params, jnp.array([[1.0, 0.0]]), jnp.array([1.0]))
    np.testing.assert_allclose(state.w, [0.5, 0.0], rtol=1e-5)


def test_ons__golden_first_step_and_ball_kept():
    # w0 = 0, x = (1, 0), y = 1: g = (-2, 0); A = I + g g^T = diag(5, 1); v = -A^{-1} g / beta =
    # (2/5, 0) / 0.5 = (0.8, 0), inside the unit ball.
    reg = ons(2)
    params = build_params(OnsParams, 2)
    state, _ = _run(reg, params, jnp.array([[1.0, 0.0]]), jnp.array([1.0]))
    np.testing.assert_allclose(state.w, [0.8, 0.0], rtol=1e-6)
    np.testing.assert_allclose(state.a, np.diag([5.0, 1.0]), rtol=1e-6)
    rng = np.random.default_rng(1)
    xs = jnp.asarray(rng.normal(size=(40, 2)), jnp.float32)
    state, _ = _run(reg, params, xs, 3.0 * xs[:, 0])
    assert float(jnp.linalg.norm(state.w)) <= 1.0 + 1e-5


def _batch(rng, n_rows, n, collinear=False):
    x = rng.choice([-1.0, 1.0], size=(n_rows, n)) if collinear else rng.normal(size=(n_rows, n))
    if collinear:
        x[:, 3] = -x[:, 1]  # an exactly dependent column, as +-1 designs give in short batches
    y = rng.normal(size=n_rows) * 0.5
    return x, y


@pytest.mark.parametrize("collinear", [False, True])
def test_masked_ls_loss__matches_numpy_lstsq_on_every_support(collinear):
    rng = np.random.default_rng(7 + collinear)
    x, y = _batch(rng, 6, 6, collinear)  # as many rows as columns: some supports interpolate
    g, c, yy = x.T @ x, x.T @ y, y @ y
    masks = np.array([[(s >> i) & 1 for i in range(6)] for s in range(64)], bool)
    got = np.asarray(jax.jit(jax.vmap(lambda m: masked_ls_loss(
        jnp.asarray(g, jnp.float32), jnp.asarray(c, jnp.float32), jnp.float32(yy), m)))(
        jnp.asarray(masks)))
    for m, value in zip(masks, got):
        cols = np.nonzero(m)[0]
        w = np.linalg.lstsq(x[:, cols], y, rcond=None)[0] if len(cols) else np.zeros(0)
        expected = np.sum((y - x[:, cols] @ w) ** 2)
        assert value == pytest.approx(expected, abs=2e-4 * max(yy, 1.0)), (cols, value, expected)


def test_masked_ls_loss__monotone_in_the_support():
    rng = np.random.default_rng(3)
    x, y = _batch(rng, 12, 8, collinear=True)
    g, c, yy = (jnp.asarray(v, jnp.float32) for v in (x.T @ x, x.T @ y, y @ y))
    for _ in range(12):
        base = rng.random(8) < 0.4
        j = rng.integers(8)
        bigger = base.copy()
        bigger[j] = True
        assert float(masked_ls_loss(g, c, yy, bigger)) <= float(
            masked_ls_loss(g, c, yy, base)) + 1e-4


def _ons_reference(xs, ys, beta, eps, radius):
    """ONS in float64 NumPy ([HAK07]): A += g g^T, v = w - A^-1 g / beta, w = the A-norm
    projection of v on the l2 ball of `radius`, found by a root of ||(A + mu I)^-1 A v|| =
    radius in mu >= 0 (scipy's brentq), not by the code under test."""
    from scipy.optimize import brentq

    k = xs.shape[1]
    w, a = np.zeros(k), eps * np.eye(k)
    preds = []
    for x, y in zip(xs.astype(np.float64), ys.astype(np.float64)):
        preds.append(w @ x)
        g = 2.0 * (w @ x - y) * x
        a = a + np.outer(g, g)
        v = w - np.linalg.solve(a, g) / beta
        if np.linalg.norm(v) <= radius:
            w = v
            continue

        def excess(mu):
            return np.linalg.norm(np.linalg.solve(a + mu * np.eye(k), a @ v)) - radius
        hi = 1.0
        while excess(hi) > 0:
            hi *= 2.0
        w = np.linalg.solve(a + brentq(excess, 0.0, hi, xtol=1e-14) * np.eye(k), a @ v)
    return w, np.asarray(preds)


def test_ons__matches_float64_reference_with_the_a_norm_projection_active():
    # correlated features and a small radius: the projection acts on most rounds and A is far
    # from a multiple of I, where the A-norm and Euclidean projections differ
    rng = np.random.default_rng(3)
    mix = np.array([[1.0, 0.8, 0.0], [0.0, 0.6, 0.5], [0.0, 0.0, 0.4]])
    xs = rng.normal(size=(30, 3)) @ mix
    ys = xs @ np.array([2.0, -1.5, 1.0]) + 0.1 * rng.normal(size=30)
    with x64():
        params = _f64(build_params(OnsParams, 3, radius=0.4, beta=0.5))
        state, preds = _run(ons(3), params, jnp.asarray(xs), jnp.asarray(ys))
    w_ref, preds_ref = _ons_reference(xs, ys, 0.5, 1.0, 0.4)
    np.testing.assert_allclose(preds, preds_ref, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(np.asarray(state.w), w_ref, rtol=1e-6, atol=1e-9)
    # the projection was active: the Euclidean one would have ended elsewhere
    assert abs(np.linalg.norm(w_ref) - 0.4) < 1e-9
