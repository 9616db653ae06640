"""Matrix Market reading and writing: .mtx, .mtx.gz, SuiteSparse tarballs, clear errors."""
import gzip

import numpy as np
import pytest
import scipy.sparse as sp

from spbench.datasets.errors import DatasetError
from spbench.datasets.matrix_market import matrix_stem, read_matrix, write_matrix

GENERAL = """%%MatrixMarket matrix coordinate real general
% a comment
3 3 4
1 1 2.0
2 1 -1.0
1 3 5.0
3 3 7.5
"""

SYMMETRIC = """%%MatrixMarket matrix coordinate real symmetric
3 3 4
1 1 4.0
2 1 -1.0
2 2 4.0
3 3 4.0
"""


def test_general(tmp_path):
    path = tmp_path / "g.mtx"
    path.write_text(GENERAL)
    A = read_matrix(path)
    assert isinstance(A, sp.csr_matrix) and A.dtype == np.float64
    np.testing.assert_array_equal(A.toarray(), [[2, 0, 5], [-1, 0, 0], [0, 0, 7.5]])


@pytest.mark.parametrize("suffix", [".mtx", ".mtx.gz"])
def test_symmetric_expanded(tmp_path, suffix):
    path = tmp_path / f"s{suffix}"
    if suffix.endswith(".gz"):
        path.write_bytes(gzip.compress(SYMMETRIC.encode()))
    else:
        path.write_text(SYMMETRIC)
    A = read_matrix(path)
    np.testing.assert_array_equal(A.toarray(), [[4, -1, 0], [-1, 4, 0], [0, 0, 4]])
    assert A.has_sorted_indices


def test_pattern_and_integer_become_float(tmp_path):
    path = tmp_path / "p.mtx"
    path.write_text("%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n")
    np.testing.assert_array_equal(read_matrix(path).toarray(), [[1, 1], [1, 0]])
    path.write_text("%%MatrixMarket matrix coordinate integer general\n2 2 1\n2 2 3\n")
    assert read_matrix(path).dtype == np.float64


@pytest.mark.parametrize("text, what", [
    ("not a matrix\n1 2 3\n", "Missing banner"),
    ("%%MatrixMarket matrix coordinate real general\n3 3 5\n1 1 1.0\n", "Truncated"),
    ("%%MatrixMarket matrix coordinate real general\n3 3 1\n9 1 1.0\n", "out of bounds"),
    ("%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1.0 2.0\n", "complex"),
])
def test_bad_files_name_file_and_problem(tmp_path, text, what):
    path = tmp_path / "bad.mtx"
    path.write_text(text)
    with pytest.raises(DatasetError, match=what) as info:
        read_matrix(path)
    assert str(path) in str(info.value)


def test_missing_corrupt_gz_and_wrong_suffix(tmp_path):
    with pytest.raises(DatasetError, match="no such file"):
        read_matrix(tmp_path / "none.mtx")
    gz = tmp_path / "x.mtx.gz"
    gz.write_bytes(b"not gzip at all")
    with pytest.raises(DatasetError, match="x.mtx.gz"):
        read_matrix(gz)
    other = tmp_path / "x.txt"
    other.write_text(GENERAL)
    with pytest.raises(DatasetError, match="expected .mtx"):
        read_matrix(other)


def test_suitesparse_tarball(tmp_path, mm):
    A = mm.spd_matrix(6)
    tarball = tmp_path / "Tiny.tar.gz"
    tarball.write_bytes(mm.suitesparse_tarball("Tiny", A))
    out = tmp_path / "extracted"
    B = read_matrix(tarball, extract_dir=out)
    assert abs(B - A).max() == 0
    assert sorted(p.name for p in out.iterdir()) == ["Tiny.mtx"]


def test_tarball_without_matrix_and_corrupt(tmp_path, mm):
    tarball = tmp_path / "Other.tar.gz"
    tarball.write_bytes(mm.suitesparse_tarball("Tiny", mm.spd_matrix(4)))
    with pytest.raises(DatasetError, match="no member Other/Other.mtx"):
        read_matrix(tarball)
    tarball.write_bytes(b"\x1f\x8b broken")
    with pytest.raises(DatasetError, match="unreadable tarball"):
        read_matrix(tarball)
    assert not list(tmp_path.glob("*.part"))


@pytest.mark.parametrize("name", ["w.mtx", "w.mtx.gz"])
def test_write_roundtrip_atomic(tmp_path, mm, name):
    A = mm.spd_matrix(7)
    path = write_matrix(tmp_path / "sub" / name, A, comment=" made by a test")
    assert sorted(p.name for p in path.parent.iterdir()) == [name]
    head = (gzip.open(path, "rt") if name.endswith(".gz") else open(path)).readline()
    assert "symmetric" in head
    assert abs(read_matrix(path) - A).max() == 0
    with pytest.raises(DatasetError, match="must end in .mtx"):
        write_matrix(tmp_path / "w.txt", A)


def test_matrix_stem():
    assert matrix_stem("/x/my.mtx.gz") == "my"
    assert matrix_stem("my.mtx") == "my"
    assert matrix_stem("Flan_1565.tar.gz") == "Flan_1565"
