"""What a bad or oversized input file gives the data layer: one-line DatasetErrors naming the file
(and the line), memory refused before it is allocated, duplicate entries counted and reported."""
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from spbench.datasets import registry, resources
from spbench.datasets.errors import DatasetError
from spbench.datasets.matrix_market import read_matrix
from spbench.datasets.tns_ingest import convert_tns
from spbench.datasets.transforms import lower_triangle

HEADER = "%%MatrixMarket matrix coordinate {field} {symmetry}\n"


def _mtx(path, body, field="real", symmetry="general"):
    path.write_text(HEADER.format(field=field, symmetry=symmetry) + body)
    return path


@pytest.fixture
def little_memory(monkeypatch):
    """This machine has 8 GiB free, as far as the data layer can tell."""
    monkeypatch.setattr(resources, "available_memory", lambda: (8 << 30, "MemAvailable"))


@pytest.mark.parametrize("field, body, line", [
    ("integer", "2 2 2\n1 1 99999999999999999999\n2 2 1\n", 3),
    ("real", "2 2 2\n1 1 1.0\n99999999999999999999 2 1.0\n", 4),
    ("integer", "% a comment\n2 2 2\n1 1 1\n2 2 -99999999999999999999\n", 5),
])
def test_integers_beyond_int64_are_one_line_naming_file_and_line(tmp_path, field, body, line):
    path = _mtx(tmp_path / "big.mtx", body, field)
    with pytest.raises(DatasetError) as err:
        read_matrix(path)
    message = str(err.value)
    assert str(path) in message and f"line {line}" in message and "64-bit" in message
    assert "\n" not in message


@pytest.mark.parametrize("lines, words", [
    ("1 1 1 1.0\n99999999999999999999 2 2 2.0\n", ["line 2", "index 1 is 99,999,999,999,999,999,999",
                                                     "beyond the largest 64-bit integer"]),
    ("1 1 1 1.0\n2 +2 2 2.0\n", ["line 2", "index 2 '+2' is not an integer"]),
    ("1 1 1 1.0\n2 2 2 1_0\n", ["line 2", "value '1_0' is not a number"]),
    ("1 1 1 1.0\n2 2 2 \u0663\n", ["line 2", "is not a number"]),
])
def test_tns_lines_the_block_parser_refuses_are_named_by_line(tmp_path, lines, words):
    """What Python's int/float read but the int64/float64 block parser does not: the line and why,
    not the parser's column message."""
    path = tmp_path / "t.tns"
    path.write_text(lines)
    with pytest.raises(DatasetError) as err:
        convert_tns(path, tmp_path / "store")
    message = str(err.value)
    assert message.startswith(f"{path}: line") and all(w in message for w in words), message
    assert not (tmp_path / "store").exists()


def test_a_size_line_beyond_int64_is_one_line(tmp_path):
    path = _mtx(tmp_path / "rows.mtx", "99999999999999999999 2 1\n1 1 1.0\n")
    with pytest.raises(DatasetError, match=r"rows\.mtx: size line: .*64-bit"):
        read_matrix(path)


@pytest.mark.parametrize("size_line, words", [
    ("100000000000 100000000000 2", ["100,000,000,000 x 100,000,000,000", "2 entries"]),
    ("3 3 100000000000", ["3 x 3", "100,000,000,000 entries"]),
])
def test_a_size_line_beyond_free_memory_is_refused_before_allocating(tmp_path, monkeypatch, little_memory,
                                                                     size_line, words):
    path = _mtx(tmp_path / "huge.mtx", f"{size_line}\n1 1 1.0\n2 2 1.0\n")
    monkeypatch.setattr(scipy.io, "mmread", lambda *a, **k: pytest.fail("read although it cannot fit"))
    with pytest.raises(DatasetError) as err:
        read_matrix(path)
    message = str(err.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    assert "of memory" in message and "8.6 GB is available (MemAvailable)" in message
    assert all(w in message for w in words), message


def test_a_memory_error_while_reading_is_one_line(tmp_path, monkeypatch):
    path = _mtx(tmp_path / "m.mtx", "2 2 2\n1 1 1.0\n2 2 1.0\n")

    def no_memory(*args, **kwargs):
        raise MemoryError("Unable to allocate 931. GiB")
    monkeypatch.setattr(scipy.io, "mmread", no_memory)
    with pytest.raises(DatasetError, match=r"m\.mtx: out of memory reading the matrix \(about .* of memory"):
        read_matrix(path)


@pytest.mark.parametrize("index, marks", [(10**12, "1.0 TB"), (9 * 10**9, "9.0 GB")])
def test_a_tns_index_beyond_free_memory_is_refused_naming_file_line_and_estimate(tmp_path, little_memory, index,
                                                                                marks):
    path = tmp_path / "huge.tns"
    path.write_text(f"1 1 1 1.0\n2 2 2 2.0\n# a comment\n{index} 2 2 2.0\n")
    with pytest.raises(DatasetError) as err:
        convert_tns(path, tmp_path / "store")
    message = str(err.value)
    assert message.startswith(f"{path}: line 4: index {index:,} of mode 1 needs about ") and "\n" not in message
    assert f"({marks} to mark the slices" in message and "8.6 GB is available (MemAvailable)" in message, message
    assert not (tmp_path / "store").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["huge.tns"]


def test_a_memory_error_while_converting_is_one_line(tmp_path, monkeypatch):
    from spbench.datasets import tensor_store

    def no_memory(self, *args, **kwargs):
        raise MemoryError("Unable to allocate 931. GiB")
    monkeypatch.setattr(tensor_store.StoreWriter, "append", no_memory)
    path = tmp_path / "t.tns"
    path.write_text("1 1 1.0\n2 2 2.0\n")
    with pytest.raises(DatasetError, match=r"t\.tns: out of memory converting"):
        convert_tns(path, tmp_path / "store")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.tns"]


# ---- duplicate entries ----------------------------------------------------------------------------

@pytest.mark.parametrize("symmetry, body, count, a21", [
    ("general", "2 2 4\n1 1 1.0\n2 2 1.0\n2 1 2.0\n2 1 3.0\n", 1, 5.0),
    ("general", "2 2 5\n1 1 1.0\n2 2 1.0\n2 1 2.0\n2 1 3.0\n2 1 1.0\n", 2, 6.0),
    ("symmetric", "3 3 5\n1 1 1\n2 1 2\n2 1 3\n2 2 1\n3 3 1\n", 1, 5.0),
    ("symmetric", "2 2 3\n1 1 4\n2 2 4\n2 1 1\n", 0, 1.0),
])
def test_duplicate_entries_are_counted_and_reported(tmp_path, symmetry, body, count, a21):
    path = _mtx(tmp_path / "dup.mtx", body, symmetry=symmetry)
    loaded = registry.resolve({"path": str(path)}).load()
    assert loaded.duplicates == count and loaded.matrix[1, 0] == a21  # the repeats' values added
    if count == 0:
        assert loaded.warnings == ()
        return
    noun = "entry" if count == 1 else "entries"
    (warning,) = loaded.warnings
    assert warning.startswith(f"{path}: {count} duplicate {noun} summed") and "\n" not in warning


def test_duplicates_of_a_transformed_file_are_reported(tmp_path):
    path = _mtx(tmp_path / "dup.mtx", "2 2 3\n1 1 1.0\n2 2 1.0\n1 1 2.0\n")
    loaded = registry.resolve({"path": str(path), "transform": "metis"}).load()
    assert loaded.duplicates == 1 and "1 duplicate entry summed" in loaded.warnings[0]


def test_duplicates_of_a_cached_registry_matrix_are_reported_every_load(tiny_entry, private_cache):
    folder = private_cache / "suitesparse"
    folder.mkdir(parents=True)
    lines = [f"{i} {i} 4.0" for i in range(1, 9)] + ["2 1 -1.0", "2 1 -1.0", "3 3 1.0"]
    _mtx(folder / "Tiny_8.mtx", f"8 8 {len(lines)}\n" + "\n".join(lines) + "\n", symmetry="symmetric")
    first = registry.resolve("Tiny_8").load(fetch=False)
    again = registry.resolve("Tiny_8").load(fetch=False)   # from the parsed .npz
    assert (private_cache / "suitesparse" / "Tiny_8.npz").is_file()
    for loaded in (first, again):
        assert loaded.duplicates == 2 and "2 duplicate entries summed" in loaded.warnings[0]
        assert "Tiny_8.mtx" in loaded.warnings[0]


def test_generated_matrices_have_no_warnings():
    loaded = registry.resolve({"lap2d-5pt": {"grid": 4}}).load()
    assert loaded.duplicates == 0 and loaded.warnings == ()


# ---- messages name the data, not the code -----------------------------------------------------------

@pytest.mark.parametrize("A", [
    sp.csr_matrix(np.array([[1.0, 0], [1.0, 0]])),
    sp.csr_matrix(np.ones((2, 3))),
    sp.csr_matrix(np.array([[1.0, 0], [np.inf, 1]])),
])
def test_lower_triangle_messages_name_no_function(A):
    with pytest.raises(DatasetError) as err:
        lower_triangle(A)
    assert not str(err.value).startswith("lower_triangle")
    assert "lower_triangle" not in str(err.value)
