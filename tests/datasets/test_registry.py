"""The registry (Table A.1), resolving config entries, and loading from cache, download, file or stand-in."""
import hashlib
import json

import numpy as np
import pytest
import scipy.sparse as sp

from spbench.datasets import registry, synthetic
from spbench.datasets.registry import (SUITESPARSE, DatasetError, MatrixDataset, LoadedMatrix, list_datasets,
                                       resolve)
from spbench.datasets.matrix_market import write_matrix


def test_table_a1():
    assert len(SUITESPARSE) == 33
    assert {"af_0_k101", "Flan_1565", "G3_circuit", "parabolic_fem", "StocF-1465"} <= set(SUITESPARSE)
    flan = SUITESPARSE["Flan_1565"]
    assert (flan.group, flan.n, flan.nnz, flan.avg_wavefront) == ("Janna", 1564794, 59485419, 200)
    assert flan.url() == "http://127.0.0.1:9/MM/Janna/Flan_1565.tar.gz"
    assert flan.url("https://sparse.tamu.edu/MM") == "https://sparse.tamu.edu/MM/Janna/Flan_1565.tar.gz"
    assert all(m.sha256 is None for m in SUITESPARSE.values())


@pytest.mark.parametrize("name", sorted(SUITESPARSE))
def test_standin_recipe_valid_and_scaled(name):
    m = SUITESPARSE[name]
    params = synthetic.check_params(m.standin, m.standin_params)
    rows = synthetic.GENERATORS[m.standin].rows(params)
    assert m.standin_rows() / 1.25 <= rows <= 1.25 * m.standin_rows()
    assert synthetic.GENERATORS[m.standin].rows(synthetic.scaled_params(m.standin, params, 1 / 8)) < rows / 4


@pytest.mark.parametrize("entry, name, kind", [
    ("Flan_1565", "Flan_1565", "suitesparse"),
    ({"Flan_1565": None}, "Flan_1565", "suitesparse"),
    ("lap2d-5pt", "lap2d-5pt", "synthetic"),
    ({"lap2d-5pt": {"grid": 200}}, "lap2d-5pt[grid=200]", "synthetic"),
    ("lap2d-5pt[grid=200]", "lap2d-5pt[grid=200]", "synthetic"),
    ({"rgg-spd": {"n": 500, "seed": 2}}, "rgg-spd[n=500,seed=2]", "synthetic"),
])
def test_resolve_names(entry, name, kind):
    ds = resolve(entry)
    assert (ds.name, ds.kind) == (name, kind)
    assert resolve(ds) is ds


def test_resolve_path(tmp_path, mm):
    path = write_matrix(tmp_path / "my.mtx.gz", mm.spd_matrix(5))
    ds = resolve({"path": str(path)})
    assert ds == MatrixDataset("my", "file", {"path": str(path)})
    loaded = ds.load()
    assert loaded.source == "real" and loaded.name == "my"
    assert loaded.checksum == hashlib.sha256(path.read_bytes()).hexdigest()
    assert abs(loaded.matrix - mm.spd_matrix(5)).max() == 0


@pytest.mark.parametrize("entry, match", [
    ("Flan1565", r"unknown name 'Flan1565'.*close names: Flan_1565"),
    ("lap2d_5pt", r"close names: lap2d-5pt"),
    ({"lap2d-5pt": {"gird": 3}}, r"unknown parameter 'gird'; expected grid \(int >= 2\)"),
    ({"lap2d-5pt": {"grid": "big"}}, r"'grid' must be int >= 2, got 'big'"),
    ({"lap2d-5pt": [200]}, "must be a mapping"),
    ({"Flan_1565": {"grid": 3}}, "takes no parameters"),
    ({"path": "/no/such/file.mtx"}, "no such file /no/such/file.mtx"),
    ({"path": "/etc/hostname"}, "expected a .mtx, .mtx.gz or .tar.gz file"),
    ({"a": 1, "b": 2}, "expected one key"),
    (42, "expected a name"),
])
def test_resolve_errors_are_one_line(entry, match):
    with pytest.raises(DatasetError, match=match) as info:
        resolve(entry)
    assert "\n" not in str(info.value) and repr(entry)[:10] in str(info.value)


def test_synthetic_load():
    loaded = resolve({"lap2d-5pt": {"grid": 10}}).load()
    assert loaded == LoadedMatrix("lap2d-5pt[grid=10]", "synthetic", synthetic.checksum("lap2d-5pt", {"grid": 10}),
                                  loaded.matrix)
    assert loaded.matrix.shape == (100, 100)


def test_not_cached_error_and_standin(tiny_entry, private_cache):
    ds = resolve("Tiny_8")
    with pytest.raises(DatasetError) as info:
        ds.load(fetch=False)
    message = str(info.value)
    assert "not cached" in message and "fetching is disabled" in message
    assert "fallback: standin" in message and "spbench datasets fetch Tiny_8" in message
    with pytest.raises(DatasetError, match=r"could not be fetched \(Tiny_8.tar.gz: download of http://127.0.0.1:9/"):
        ds.load()
    loaded = ds.load(standin=True)
    assert (loaded.name, loaded.source) == ("Tiny_8", "synthetic")
    assert loaded.matrix.shape == (9, 9)
    assert loaded.checksum == synthetic.checksum("lap2d-5pt", {"grid": 3})
    assert not any(private_cache.rglob("*.part"))


def test_fetch_parse_cache_npz(tiny_server, private_cache):
    folder = private_cache / "suitesparse"
    loaded = resolve("Tiny_8").load()
    tarball = tiny_server.files["/MM/TestGroup/Tiny_8.tar.gz"]
    sha = hashlib.sha256(tarball).hexdigest()
    assert (loaded.source, loaded.checksum) == ("real", sha)
    assert abs(loaded.matrix - tiny_server.matrix).max() == 0
    assert sorted(p.name for p in folder.iterdir()) == ["Tiny_8.npz", "Tiny_8.npz.json", "Tiny_8.tar.gz",
                                                        "checksums.json"]
    assert json.loads((folder / "checksums.json").read_text()) == {"Tiny_8.tar.gz": sha}
    assert registry.is_cached("Tiny_8")
    tiny_server.files.clear()
    again = resolve("Tiny_8").load(fetch=False)
    assert again.checksum == sha and isinstance(again.matrix, sp.csr_matrix)
    assert abs(again.matrix - tiny_server.matrix).max() == 0
    assert len(tiny_server.hits) == 1


def test_tampered_cache_detected(tiny_server, private_cache):
    resolve("Tiny_8").load()
    folder = private_cache / "suitesparse"
    (folder / "Tiny_8.npz").unlink()
    (folder / "Tiny_8.tar.gz").write_bytes(b"tampered")
    with pytest.raises(DatasetError, match="Tiny_8.tar.gz: checksum mismatch for the cached file"):
        resolve("Tiny_8").load()


def test_wrong_size_rejected(tiny_server, mm):
    tiny_server.files["/MM/TestGroup/Tiny_8.tar.gz"] = mm.suitesparse_tarball("Tiny_8", mm.spd_matrix(6))
    with pytest.raises(DatasetError, match=r"expected a 8x8 matrix for Tiny_8 \(Table A.1\), got 6x6"):
        resolve("Tiny_8").load()


def test_hand_placed_mtx_used(tiny_entry, private_cache, mm):
    write_matrix(private_cache / "suitesparse" / "Tiny_8.mtx", mm.spd_matrix(8))
    loaded = resolve("Tiny_8").load(fetch=False)
    assert loaded.source == "real"
    assert np.allclose(loaded.matrix.toarray(), mm.spd_matrix(8).toarray())


def test_list_datasets_rows(tiny_server, monkeypatch):
    from spbench.datasets import standin_stats
    measured = []
    monkeypatch.setattr(standin_stats, "standin_statistics",
                        lambda family, params: measured.append(family) or {"n": 1, "nnz": 1, "avg_wavefront": 1.0})
    resolve("Tiny_8").load()
    rows = {r["name"]: r for r in list_datasets()}
    plain = {name for name, r in rows.items() if r["kind"] in ("suitesparse", "synthetic", "metis-only")}
    assert set(SUITESPARSE) | set(registry.METIS_ONLY) | set(synthetic.GENERATORS) == plain
    assert len(measured) == len(SUITESPARSE) + len(registry.METIS_ONLY)
    assert rows["Flan_1565"]["standin_stats"]["n"] == 1 and "standin_stats" not in rows["lap2d-5pt"]
    assert set(registry.ICHOL_TABLE) | set(registry.METIS_TABLE) == set(rows) - plain
    assert rows["Tiny_8"]["cached"] is True and rows["Flan_1565"]["cached"] is False
    assert rows["Flan_1565"]["standin"] == SUITESPARSE["Flan_1565"].standin_label()
    assert rows["lap2d-5pt"]["kind"] == "synthetic" and rows["lap2d-5pt"]["n"] == 10_000
    assert rows["lap2d-5pt"]["nnz"] == 10_000 + 2 * 100 * 99
