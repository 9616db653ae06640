"""FROSTT .tns reader/writer: round trips, comments, the .npz cache, malformed files."""
import gzip
import os

import pytest

from spbench.datasets.errors import DatasetError
from spbench.datasets.frostt import npz_cache_path, read_tns, tns_stem, write_tns
from spbench.datasets.sparse_tensor import SparseTensor


def test_read_with_comments_and_blank_lines(tmp_path):
    p = tmp_path / "small.tns"
    p.write_text("# a FROSTT tensor\n1 1 1 1.5\n\n2 3 1 -2e-3   # trailing comment\n#x\n  1 2 4\t7\n1 1 1 0.5\n")
    t = read_tns(p, cache=False)
    assert t.dims == (2, 3, 4) and t.nnz == 3
    got = {tuple(c): v for c, v in zip(t.coords.tolist(), t.values.tolist())}
    assert got == {(0, 0, 0): 2.0, (1, 2, 0): -2e-3, (0, 1, 3): 7.0}


@pytest.mark.parametrize("suffix", [".tns", ".tns.gz"])
def test_round_trip(tmp_path, make_tensor, suffix):
    t = make_tensor(4, dims=(8, 6, 7, 3), nnz=200)
    t.values[:3] = [1 / 3, 1e-300, -12345.678901234567]
    p = write_tns(tmp_path / f"x{suffix}", t, comment="line one\nline two")
    if suffix.endswith(".gz"):
        with gzip.open(p, "rt") as fh:
            assert fh.readline() == "# line one\n"
    r = read_tns(p, dims=t.dims, cache=False)
    assert r.dims == t.dims
    assert (r.coords == t.coords).all() and (r.values == t.values).all()
    assert tns_stem(p) == "x"


def test_npz_cache(tmp_path, make_tensor):
    t = make_tensor(1)
    p = write_tns(tmp_path / "c.tns.gz", t)
    r1 = read_tns(p)
    npz = npz_cache_path(p)
    assert npz == tmp_path / "c.npz" and npz.is_file()
    r2 = read_tns(p)
    assert (r2.coords == r1.coords).all() and (r2.values == r1.values).all() and r2.dims == r1.dims
    # a changed source invalidates the cache
    t2 = SparseTensor([[0, 0, 0]], [9.0], (1, 1, 1))
    write_tns(p, t2)
    os.utime(p, ns=(1, 1))
    assert read_tns(p).nnz == 1
    # a separate cache folder
    out = tmp_path / "cache"
    read_tns(p, cache=out)
    assert (out / "c.npz").is_file()


@pytest.mark.parametrize("body,lineno,match", [
    ("1 1 1 1.0\n1 2 1 2.0 5\n", 2, "4 fields"),
    ("1 1 1 1.0\n# comment\n\n1 2 3\n", 4, "4 fields"),
    ("1 1 1 1.0\n2 0 1 1.0\n", 2, "1-based"),
    ("# c\n1 1 1 1.0\n1 1 -3 1.0\n", 3, "1-based"),
    ("1 1 1 1.0\n1 1 1 abc\n", 2, "not a number"),
    ("1 1 1 1.0\n1 1.5 1 2.0\n", 2, "not an integer"),
    ("1 1 1 1.0\n1 1 1 nan\n", 2, "finite"),
])
@pytest.mark.parametrize("gz", [False, True])
def test_malformed(tmp_path, body, lineno, match, gz):
    p = tmp_path / ("bad.tns.gz" if gz else "bad.tns")
    if gz:
        with gzip.open(p, "wt") as fh:
            fh.write(body)
    else:
        p.write_text(body)
    with pytest.raises(DatasetError) as exc:
        read_tns(p, cache=False)
    msg = str(exc.value)
    assert str(p) in msg and f"line {lineno}:" in msg and match in msg


def test_index_beyond_dims_and_other_errors(tmp_path):
    p = tmp_path / "d.tns"
    p.write_text("1 1 1.0\n3 2 1.0\n")
    with pytest.raises(DatasetError, match="line 2: index 1 is 3, beyond"):
        read_tns(p, dims=(2, 2), cache=False)
    assert read_tns(p, cache=False).dims == (3, 2)
    e = tmp_path / "empty.tns"
    e.write_text("# nothing\n\n")
    with pytest.raises(DatasetError, match="no nonzeros"):
        read_tns(e)
    with pytest.raises(DatasetError, match="no such file"):
        read_tns(tmp_path / "missing.tns")
    one = tmp_path / "one.tns"
    one.write_text("5\n")
    with pytest.raises(DatasetError, match="at least one index"):
        read_tns(one)


def test_chunked_read_and_error_in_later_chunk(tmp_path, make_tensor):
    t = make_tensor(8, dims=(40, 30, 20), nnz=300, skew=0.2)
    p = write_tns(tmp_path / "k.tns", t)
    r = read_tns(p, dims=t.dims, cache=False, chunksize=7)
    assert (r.coords == t.coords).all()
    lines = p.read_text().splitlines()
    lines[250] = lines[250] + " 9"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(DatasetError, match="line 251:"):
        read_tns(p, cache=False, chunksize=7)
