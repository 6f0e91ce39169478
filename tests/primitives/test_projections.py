"""Observation matrices A for the forms a_i^T x ([ITO] F_A, KKLP_A)."""

import numpy as np
import pytest

from oslr.primitives.projections import projection_matrix, resolve_projection


def test_projection_matrix__unit_spectral_norm_and_shapes():
    a = projection_matrix(10)  # the E3 default: Gaussian 10 x 20
    assert a.shape == (10, 20) and a.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(a.astype(np.float64), 2), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(a, projection_matrix(10, 20, seed=0))  # reproducible
    assert not np.array_equal(a, projection_matrix(10, 20, seed=1))
    identity = projection_matrix(4, kind="identity")
    assert identity.dtype == np.float32
    np.testing.assert_array_equal(identity, np.eye(4))
    b = projection_matrix(6, 13, seed=2)  # m given: 13 columns, not the default 2 d
    assert b.shape == (6, 13) and b.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(b.astype(np.float64), 2), 1.0, rtol=1e-6)
    one = projection_matrix(3, 1)  # a single column is allowed: unit length
    assert one.shape == (3, 1)
    np.testing.assert_allclose(np.linalg.norm(one.astype(np.float64)), 1.0, rtol=1e-6)


def test_resolve_projection__names_and_arrays():
    np.testing.assert_array_equal(resolve_projection("gaussian", 5), projection_matrix(5))
    assert resolve_projection("gaussian", 5).shape == (5, 10)
    np.testing.assert_array_equal(resolve_projection("identity", 3), np.eye(3))
    given = np.random.default_rng(0).normal(size=(4, 1))  # float64, one column
    a = resolve_projection(given, 4)
    assert a.dtype == np.float32 and a.shape == (4, 1)
    np.testing.assert_array_equal(a, given.astype(np.float32))


def test_resolve_projection__refuses_bad_input():
    assert resolve_projection(None, 5) is None
    with pytest.raises(ValueError, match="m = d = 5"):
        projection_matrix(5, 7, kind="identity")
    with pytest.raises(ValueError, match=r"^projection: m=0 must be >= 1\.$"):
        projection_matrix(5, 0)
    with pytest.raises(ValueError, match="unknown projection kind 'haar'"):
        resolve_projection("haar", 5)
    for shape in ((4, 2), (5,), (5, 0), (2, 5, 2)):
        with pytest.raises(ValueError, match=r"^projection must be a \(d=5, m\) matrix whose "
                           r"columns are observed as a_i\^T x; got shape \(" + str(shape[0])):
            resolve_projection(np.ones(shape), 5)
    with pytest.raises(ValueError, match="NaN"):
        resolve_projection(np.full((5, 2), np.nan), 5)
