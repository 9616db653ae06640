"""lower_triangle: the CSR layout the SpTrSV kernels take (diagonal last in every row)."""
import numpy as np
import pytest
import scipy.sparse as sp

from spbench.datasets import synthetic
from spbench.datasets.errors import DatasetError
from spbench.datasets.transforms import lower_triangle


def test_unsorted_duplicates_and_upper_part():
    rows = [1, 0, 1, 1, 2, 2, 2, 0, 2]
    cols = [1, 0, 0, 0, 2, 0, 1, 2, 0]
    vals = [3.0, 1.0, 2.0, 4.0, 5.0, 1.0, 7.0, 9.0, 1.0]
    A = sp.coo_matrix((vals, (rows, cols)), shape=(3, 3), dtype=np.float32).tocsr()
    A.indices[A.indptr[1]:A.indptr[2]] = A.indices[A.indptr[1]:A.indptr[2]][::-1].copy()
    A.data[A.indptr[1]:A.indptr[2]] = A.data[A.indptr[1]:A.indptr[2]][::-1].copy()
    A.has_sorted_indices = False
    L = lower_triangle(A)
    np.testing.assert_array_equal(L.toarray(), [[1, 0, 0], [6, 3, 0], [2, 7, 5]])
    assert L.dtype == np.float64 and L.indptr.dtype == np.int32 and L.indices.dtype == np.int32
    assert list(L.indptr) == [0, 1, 3, 6]
    assert list(L.indices) == [0, 0, 1, 0, 1, 2]
    assert all(L.indices[L.indptr[i + 1] - 1] == i for i in range(3))


def test_duplicate_entries_in_coo_summed():
    A = sp.coo_matrix(([1.0, 1.0, 2.0, 2.0], ([0, 0, 1, 1], [0, 0, 1, 1])), shape=(2, 2))
    L = lower_triangle(A)
    assert L.nnz == 2 and list(L.data) == [2.0, 4.0]


def test_generator_lower_matches_tril():
    A = synthetic.generate("lap2d-5pt", {"grid": 20})
    L = lower_triangle(A)
    assert abs(L - sp.tril(A)).max() == 0
    assert L.nnz == 400 + 2 * 20 * 19
    ends = L.indptr[1:] - 1
    np.testing.assert_array_equal(L.indices[ends], np.arange(400))


@pytest.mark.parametrize("A, match", [
    (sp.csr_matrix(np.array([[1.0, 0], [1.0, 0]])), "row 2 has no nonzero diagonal"),
    (sp.csr_matrix(np.array([[0.0, 1], [1.0, 2]])), "row 1 has no nonzero diagonal"),
    (sp.csr_matrix((3, 3)), r"row 1 has no nonzero diagonal entry \(3 such rows; rows counted from 1"),
    (sp.csr_matrix(np.array([[1.0, 0], [np.nan, 1]])), "row 2 has a non-finite value"),
    (sp.csr_matrix(np.ones((2, 3))), "square"),
])
def test_errors(A, match):
    with pytest.raises(DatasetError, match=match):
        lower_triangle(A)


def test_explicit_zero_diagonal_rejected():
    A = sp.csr_matrix((np.array([1.0, 0.0]), np.array([0, 1]), np.array([0, 1, 2])), shape=(2, 2))
    with pytest.raises(DatasetError, match="row 2 has"):
        lower_triangle(A)
