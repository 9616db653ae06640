"""Synthetic SPD generators: deterministic, symmetric positive definite, expected sizes, strict parameters."""
import time

import numpy as np
import pytest
import scipy.sparse as sp

from spbench.datasets import synthetic
from spbench.datasets.errors import DatasetError

SMALL = {"lap2d-5pt": {"grid": 5}, "lap2d-9pt": {"grid": 5}, "lap3d-7pt": {"grid": 4},
         "lap3d-27pt": {"grid": 4}, "elasticity3d": {"grid": 3}, "rgg-spd": {"n": 150},
         "fem-mesh": {"element": "tet4", "cells_x": 3, "cells_y": 2, "cells_z": 2, "tile_x": 2},
         "bundle-adjustment": {"cameras": 4, "points": 10, "track": 2}}


def test_every_generator_has_a_small_case():
    assert set(SMALL) == set(synthetic.GENERATORS)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_spd_symmetric_deterministic(name):
    A = synthetic.generate(name, SMALL[name])
    B = synthetic.generate(name, SMALL[name])
    assert isinstance(A, sp.csr_matrix) and A.dtype == np.float64 and A.has_sorted_indices
    assert (A != B).nnz == 0
    assert abs(A - A.T).max() == 0
    np.linalg.cholesky(A.toarray())
    assert A.shape[0] == synthetic.GENERATORS[name].rows(synthetic.check_params(name, SMALL[name]))


@pytest.mark.parametrize("name, params, n, nnz_lower", [
    ("lap2d-5pt", {"grid": 5}, 25, 25 + 2 * 5 * 4),
    ("lap2d-9pt", {"grid": 5}, 25, 25 + 2 * 5 * 4 + 2 * 4 * 4),
    ("lap3d-7pt", {"grid": 4}, 64, 64 + 3 * 16 * 3),
    ("lap3d-27pt", {"grid": 3}, 27, 27 + (7**3 - 27) // 2),
    ("elasticity3d", {"grid": 2}, 24, (24 * 24 + 24) // 2),
])
def test_stencil_sizes(name, params, n, nnz_lower):
    A = synthetic.generate(name, params)
    assert A.shape == (n, n)
    assert sp.tril(A).nnz == nnz_lower


def test_lap3d_27pt_full_stencil():
    A = synthetic.generate("lap3d-27pt", {"grid": 3})
    assert A[13].nnz == 27 and A[13, 13] == 26.0
    assert A[0].nnz == 8


def test_elasticity3d_blocks():
    A = synthetic.generate("elasticity3d", {"grid": 3})
    assert A.shape == (81, 81)
    centre = 13
    assert A[3 * centre].nnz == 81
    assert (synthetic.generate("elasticity3d", {"grid": 3, "seed": 1}) != A).nnz > 0


def test_rgg_spd_degree_and_seed():
    A = synthetic.generate("rgg-spd", {"n": 4000, "avg_degree": 10.0})
    off_diag = A.nnz - A.shape[0]
    assert 7.0 < off_diag / A.shape[0] < 10.5
    assert (synthetic.generate("rgg-spd", {"n": 4000, "seed": 3}) != synthetic.generate("rgg-spd", {"n": 4000})).nnz > 0
    B = synthetic.generate("rgg-spd", {"n": 500, "radius": 0.1, "dim": 3})
    assert B.shape == (500, 500)


def test_lap2d_5pt_grid400_fast_and_sized():
    start = time.perf_counter()
    A = synthetic.generate("lap2d-5pt", {"grid": 400})
    assert time.perf_counter() - start < 1.0
    assert A.shape == (160_000, 160_000)
    assert sp.tril(A).nnz == 479_200


@pytest.mark.parametrize("params, match", [
    ({"gird": 3}, "unknown parameter 'gird'; expected grid"),
    ({"grid": "3"}, "parameter 'grid' must be int >= 2, got '3'"),
    ({"grid": 3.0}, "parameter 'grid' must be int"),
    ({"grid": True}, "parameter 'grid' must be int"),
    ({"grid": 1}, "parameter 'grid' must be int >= 2, got 1"),
])
def test_bad_params(params, match):
    with pytest.raises(DatasetError, match=match):
        synthetic.generate("lap2d-5pt", params)


def test_bad_rgg_params_and_unknown_generator():
    with pytest.raises(DatasetError, match=r"'dim' must be int in \[2, 3\]"):
        synthetic.check_params("rgg-spd", {"dim": 4})
    with pytest.raises(DatasetError, match="avg_degree or radius, not both"):
        synthetic.check_params("rgg-spd", {"avg_degree": 4, "radius": 0.1})
    assert synthetic.check_params("rgg-spd", {"avg_degree": 4})["avg_degree"] == 4.0
    with pytest.raises(DatasetError, match="unknown generator 'lap4d'"):
        synthetic.generate("lap4d")


def test_label_and_checksum():
    assert synthetic.label("lap2d-5pt", {"grid": 200}) == "lap2d-5pt[grid=200]"
    assert synthetic.label("lap2d-5pt", {"grid": 100}) == "lap2d-5pt"
    assert synthetic.label("rgg-spd", {"seed": 2, "n": 500}) == "rgg-spd[n=500,seed=2]"
    a = synthetic.checksum("lap2d-5pt", {"grid": 100})
    assert a == synthetic.checksum("lap2d-5pt") and len(a) == 64
    assert a != synthetic.checksum("lap2d-5pt", {"grid": 101})
