"""`spbench datasets generate|show|fetch|convert` on bad input: exit 2 and one line naming the file
or flag and what was expected, nothing written; a write that fails part way: exit 1 saying that
nothing was kept; never a traceback."""
import errno

import pytest
import scipy.io
from click.testing import CliRunner

from spbench.cli import main
from spbench.datasets import resources

MTX = "%%MatrixMarket matrix coordinate real general\n{size}\n{body}"


def _cli(*args):
    return CliRunner().invoke(main, ["datasets", *map(str, args)])


def _one_line(res, code, *words):
    """Exit ``code``, no exception, a single 'Error:' line holding ``words``."""
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert res.exit_code == code, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.output
    assert all(w in lines[0] for w in words), lines[0]
    return lines[0]


@pytest.fixture
def blocked(tmp_path):
    """A regular file: any path below it cannot be written."""
    path = tmp_path / "a-file"
    path.write_text("not a folder\n")
    return path


@pytest.mark.parametrize("args, words", [
    (["generate", "nope", "-o", "{tmp}/x.mtx"], ["unknown name 'nope'"]),
    (["generate", "lap2d-5pt", "-p", "grid=abc", "-o", "{tmp}/x.mtx"], ["'grid'", "int >= 2", "'abc'"]),
    (["generate", "lap2d-5pt", "-p", "grid=-3", "-o", "{tmp}/x.mtx"], ["'grid'", "int >= 2", "-3"]),
    (["generate", "lap2d-5pt", "-p", "grid=1e20", "-o", "{tmp}/x.mtx"], ["'grid'", "1e20"]),
    (["generate", "lap2d-5pt", "-p", "grid=100000000000000000000", "-o", "{tmp}/x.mtx"],
     ["lap2d-5pt", "rows", "2,147,483,647"]),
    (["generate", "rgg-spd", "-p", "n=100000000000000000000", "-o", "{tmp}/x.mtx"], ["rgg-spd", "rows"]),
    (["generate", "fem-mesh", "-p", "tile_x=100000000000000000000", "-o", "{tmp}/x.mtx"], ["'tile_x'"]),
    (["generate", "lap2d-5pt", "-p", "grid", "-o", "{tmp}/x.mtx"], ["-p", "expected key=value", "'grid'"]),
    (["generate", "lap2d-5pt", "-o", "{tmp}/x.txt"], ["x.txt", "must end in .mtx or .mtx.gz"]),
    (["generate", "lap2d-5pt", "-o", "{blocked}/x.mtx"], ["-o", "a-file"]),
    (["generate", "lap2d-5pt"], ["Missing option", "-o"]),
    (["generate", "nell2", "-p", "nnz=1e20", "-o", "{tmp}/x.tns"], ["nell2", "'nnz'", "1e20"]),
    (["generate", "nell2", "-p", "nnz=100000000000000000000", "-o", "{tmp}/x.tns"], ["nell2", "nnz"]),
    (["generate", "nell2", "-p", "nnz=0", "-o", "{tmp}/x.tns"], ["nell2", "'nnz'", ">= 1"]),
    (["generate", "nell2", "-p", "dim_scale=1.0e+20", "-o", "{tmp}/x.tns"], ["nell2", "'dim_scale'", "(0, 1]"]),
    (["generate", "nell2", "-p", "dim_scale=-1", "-o", "{tmp}/x.tns"], ["nell2", "'dim_scale'", "(0, 1]"]),
    (["generate", "nell2", "-p", "nnz=100", "-o", "{blocked}/x.tns"], ["-o", "a-file"]),
    (["generate", "nell2", "-p", "nnz=100", "-o", "{blocked}/store"], ["-o", "a-file"]),
    (["show", "nope"], ["unknown name 'nope'"]),
    (["show", "nell2"], ["nell2", "tensor"]),
    (["show", "lap2d-5pt", "-p", "grid=abc"], ["'grid'", "'abc'"]),
    (["show", "lap2d-5pt", "-p", "grid=1e20"], ["'grid'", "1e20"]),
    (["show", "lap2d-5pt", "-p", "grid=100000000000"], ["lap2d-5pt", "rows"]),
    (["show", "lap2d-5pt", "-p", "grid"], ["-p", "expected key=value"]),
    (["show", "{tmp}/m.mtx", "-p", "grid=3"], ["-p", "generators"]),
    (["show", "{tmp}/none.mtx"], ["none.mtx"]),
    (["show"], ["Missing argument", "NAME"]),
    (["fetch", "nope"], ["nope", "SuiteSparse", "FROSTT"]),
    (["fetch", "Tiny_8", "lap2d-5pt"], ["lap2d-5pt is a generator"]),
    (["fetch", "Tiny_8", "--timeout", "-1"], ["--timeout"]),
    (["fetch", "Tiny_8", "--url-base", "notaurl"], ["--url-base", "notaurl"]),
    (["convert", "{tmp}/t.tns", "--memory", "1MB"], ["--memory", "128 MB"]),
    (["convert", "{tmp}/t.tns", "--out", "{blocked}/store"], ["--out", "a-file"]),
    (["convert", "{tmp}/none.tns"], ["none.tns", "no such file"]),
    (["nope"], ["No such command", "nope"]),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, blocked, tiny_entry, private_cache, args, words):
    (tmp_path / "t.tns").write_text("1 1 1.0\n2 2 2.0\n")
    (tmp_path / "m.mtx").write_text(MTX.format(size="2 2 2", body="1 1 1.0\n2 2 1.0\n"))
    before = sorted(p.name for p in tmp_path.iterdir())
    res = _cli(*(a.format(tmp=tmp_path, blocked=blocked) for a in args))
    _one_line(res, 2, *words)
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert not (private_cache / "stores").exists() or not any((private_cache / "stores").iterdir())


@pytest.mark.parametrize("body, words", [
    ("1 1 99999999999999999999\n2 2 1\n", ["line 3", "64-bit"]),
    ("1 1 1\n2 1 1\n", ["row 2 has no nonzero diagonal entry"]),
])
def test_show_of_a_bad_file_names_the_file(tmp_path, body, words):
    path = tmp_path / "bad.mtx"
    path.write_text(MTX.format(size="2 2 2", body=body).replace("real", "integer"))
    line = _one_line(_cli("show", path), 2, f"Error: {path}: ", *words)
    assert "lower_triangle" not in line


def test_show_of_a_huge_size_line_names_the_estimate(tmp_path, monkeypatch):
    monkeypatch.setattr(resources, "available_memory", lambda: (8 << 30, "MemAvailable"))
    path = tmp_path / "huge.mtx"
    path.write_text(MTX.format(size="100000000000 100000000000 2", body="1 1 1.0\n2 2 1.0\n"))
    _one_line(_cli("show", path), 2, str(path), "of memory", "8.6 GB is available")


def test_convert_of_a_huge_index_names_the_estimate(tmp_path, monkeypatch):
    monkeypatch.setattr(resources, "available_memory", lambda: (8 << 30, "MemAvailable"))
    path = tmp_path / "huge.tns"
    path.write_text("1 1 1 1.0\n1000000000000 2 2 2.0\n")
    _one_line(_cli("convert", path), 2, f"{path}: line 2", "1.0 TB", "8.6 GB is available")


def test_show_warns_of_summed_duplicates(tmp_path):
    path = tmp_path / "dup.mtx"
    path.write_text(MTX.format(size="2 2 3", body="1 1 1.0\n2 2 1.0\n1 1 2.0\n"))
    res = CliRunner().invoke(main, ["datasets", "show", str(path)])
    assert res.exit_code == 0, res.output
    assert res.stderr.splitlines() == [f"spbench: warning: {path}: 1 duplicate entry summed (a line repeating the "
                                       f"row and column of an earlier one; Matrix Market adds their values)"]


def test_fetch_failing_part_way_is_exit_1_naming_what_was_kept(tiny_server, http_server, private_cache, monkeypatch):
    from spbench.datasets import registry
    m = registry.SuiteSparseMatrix("Gone_8", "TestGroup", 8, 16, 2, "test matrix", "lap2d-5pt", {"grid": 3})
    monkeypatch.setitem(registry.SUITESPARSE, m.name, m)
    res = _cli("fetch", "Tiny_8", "Gone_8")
    assert res.exit_code == 1, res.output
    last = res.output.splitlines()[-1]
    assert last == "Error: could not fetch 1 of 2: Gone_8 (Tiny_8 fetched and kept)", res.output
    assert (private_cache / "suitesparse" / "Tiny_8.npz").is_file()


def _full_disk(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def test_generate_failing_part_way_is_exit_1_and_keeps_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(scipy.io, "mmwrite", _full_disk)
    res = _cli("generate", "lap2d-5pt", "-p", "grid=4", "-o", tmp_path / "x.mtx")
    _one_line(res, 1, "x.mtx", "No space left on device", "nothing was kept")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("output", ["x.tns", "store"])
def test_tensor_generate_failing_part_way_is_exit_1_and_keeps_nothing(tmp_path, monkeypatch, output):
    from spbench.datasets import tensor_store
    import pyarrow.csv as pcsv
    monkeypatch.setattr(tensor_store._Column, "append", _full_disk)
    monkeypatch.setattr(pcsv, "write_csv", _full_disk)
    res = _cli("generate", "nell2", "-p", "nnz=300", "-o", tmp_path / output)
    _one_line(res, 1, output, "No space left on device", "nothing was kept")
    assert list(tmp_path.iterdir()) == []


def test_convert_failing_part_way_is_exit_1_and_keeps_nothing(tmp_path, monkeypatch):
    from spbench.datasets import tensor_store
    monkeypatch.setattr(tensor_store._Column, "append", _full_disk)
    (tmp_path / "t.tns").write_text("1 1 1.0\n2 2 2.0\n")
    res = _cli("convert", tmp_path / "t.tns", "--out", tmp_path / "store")
    _one_line(res, 1, "store", "No space left on device", "nothing was kept")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.tns"]
