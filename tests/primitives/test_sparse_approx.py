"""OMP and IHT (docs/algorithms.md B8, B9)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from oslr.primitives.sparse_approx import iht, omp, spd_solve
from tests.helpers import x64
from tests.reference.sparse_approx import omp_reference


@pytest.mark.parametrize("s", [1, 2, 4])
def test_omp__matches_float64_reference(s):
    rng = np.random.default_rng(s)
    a, b = rng.standard_normal((10, 20)), rng.standard_normal(10)
    u_ref, support = omp_reference(a, b, s)
    with x64():
        u = np.asarray(jax.jit(omp, static_argnums=3)(jnp.asarray(a), jnp.asarray(b), s, 5))
    assert np.count_nonzero(u) == s and set(np.nonzero(u)[0]) == set(support)
    np.testing.assert_allclose(u, u_ref, atol=1e-9)


def test_omp__many_slots_take_the_lapack_solve_and_still_match_the_reference():
    # s_max = 12 > UNROLL_MAX: LAPACK's solve per iteration (an unrolled Cholesky of that size
    # made a compile of over 20 GB); same answer as the reference
    from oslr.primitives import sparse_approx

    assert sparse_approx.UNROLL_MAX < 12
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((30, 40)), rng.standard_normal(30)
    u_ref, support = omp_reference(a, b, 9)
    with x64():
        u = np.asarray(jax.jit(omp, static_argnums=3)(jnp.asarray(a), jnp.asarray(b), 9, 12))
    assert set(np.nonzero(u)[0]) == set(support)
    np.testing.assert_allclose(u, u_ref, atol=1e-9)


def test_omp__identity_dictionary_gives_the_top_s_entries():
    b = jnp.array([0.3, -2.0, 0.1, 1.5, -0.7, 0.0])
    u = omp(jnp.eye(6), b, jnp.int32(3), 4)
    np.testing.assert_allclose(u, [0, -2.0, 0, 1.5, -0.7, 0], atol=1e-6)
    assert not np.asarray(omp(jnp.eye(6), b, jnp.int32(0), 4)).any()  # s = 0: nothing


def test_omp__column_norms_decide_the_choice_and_traced_s_under_vmap():
    # |a_0^T b| = 10 > |a_1^T b| = 1.4, but normalised 1 < 1.4: OMP takes column 1, then the LS
    # coefficient <a_1, b> / ||a_1||^2 = 1.4
    a = jnp.array([[10.0, 0.6, 0.0], [0.0, 0.8, 0.0]])
    b = jnp.array([1.0, 1.0])
    np.testing.assert_allclose(omp(a, b, jnp.int32(1), 2), [0.0, 1.4, 0.0], atol=1e-6)
    # the zero column is never chosen; a traced s under vmap
    us = jax.jit(jax.vmap(lambda s: omp(a, b, s, 3)))(jnp.array([0, 1, 2, 3]))
    assert [int(np.count_nonzero(v)) for v in np.asarray(us)] == [0, 1, 2, 2]
    np.testing.assert_allclose(us[2], [0.025, 1.25, 0.0], atol=1e-5)


def test_iht__identity_converges_to_the_top_s_entries_and_is_s_sparse():
    b = jnp.array([0.3, -2.0, 0.1, 1.5, -0.7, 0.0])
    u = iht(jnp.eye(6), b, jnp.int32(2), 3)
    np.testing.assert_allclose(u, [0, -2.0, 0, 1.5, 0, 0], atol=1e-5)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((12, 24))
    a /= np.linalg.norm(a, 2)
    w = np.zeros(24)
    w[[3, 17]] = [1.0, -0.5]
    u = np.asarray(iht(jnp.asarray(a, jnp.float32), jnp.asarray(a @ w, jnp.float32),
                       jnp.int32(2), 4, n_iter=500))
    assert np.count_nonzero(u) <= 2
    # it reduces the residual far below ||b|| (exact recovery is not guaranteed at this size)
    assert np.linalg.norm(a @ u - a @ w) < 0.5 * np.linalg.norm(a @ w)
    # the default step is 0.99 / ||A||_2^2: one iteration from 0 with ||A||_2 = 3 is the top 2
    # entries of (0.99 / 9) A^T b
    a3 = 3.0 * a
    b3 = a3 @ w
    one = np.asarray(iht(jnp.asarray(a3, jnp.float32), jnp.asarray(b3, jnp.float32),
                         jnp.int32(2), 4, n_iter=1))
    v = 0.99 / 9.0 * (a3.T @ b3)
    keep = np.argsort(-np.abs(v))[:2]
    want = np.zeros(24)
    want[keep] = v[keep]
    np.testing.assert_allclose(one, want, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("n", [1, 3, 8])
def test_spd_solve__matches_numpy(n):
    rng = np.random.default_rng(n)
    q = rng.standard_normal((n, n + 2))
    lhs, rhs = q @ q.T, rng.standard_normal(n)
    with x64():
        x = np.asarray(spd_solve(jnp.asarray(lhs), jnp.asarray(rhs)))
    np.testing.assert_allclose(x, np.linalg.solve(lhs, rhs), rtol=1e-9)
