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
    np.testing.assert_array_equal(projection_matrix(4, kind="identity"), np.eye(4))


def test_resolve_projection__refuses_bad_input():
    assert resolve_projection(None, 5) is None
    with pytest.raises(ValueError, match="m = d = 5"):
        projection_matrix(5, 7, kind="identity")
    with pytest.raises(ValueError, match="NaN"):
        resolve_projection(np.full((5, 2), np.nan), 5)
