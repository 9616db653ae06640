"""HyperG's hypergraph (paper §5, Kaya & Uçar's fine-grained model) built from arrays through an
hMetis file, its preset chosen by k, and the preset and partition time it records."""
import importlib

import numpy as np
import pytest

from spbench.tucker.schemes import SCHEMES

hyper_mod = importlib.import_module("spbench.tucker.schemes.hyper")
needs_mtkahypar = pytest.mark.skipif(not hyper_mod.available(),
                                     reason="Mt-KaHyPar (pip install mtkahypar) is not installed")


def list_nets(t):
    """The nets as the scheme first built them: one Python list per slice of two or more elements."""
    nets = []
    for n in range(t.nmodes):
        sl = t.slices(n)
        for l in np.flatnonzero(sl.sizes > 1).tolist():
            nets.append(sl.order[sl.offsets[l]:sl.offsets[l + 1]].tolist())
    return nets


@pytest.mark.parametrize("seed, dims, nnz", [(0, (6, 5, 4), 60), (5, (30, 3, 9, 7), 400), (2, (1200, 40, 3), 900)])
def test_array_nets_equal_list_nets(make_tensor, seed, dims, nnz):
    t = make_tensor(seed, dims=dims, nnz=nnz)
    offsets, pins = hyper_mod.hypergraph_nets(t)
    assert [pins[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == list_nets(t)


def test_hmetis_text(tmp_path):
    offsets, pins = np.array([0, 2, 5, 7]), np.array([0, 9, 3, 99, 1000, 4, 0])
    path = tmp_path / "h.hgr"
    hyper_mod.write_hmetis(path, 1001, offsets, pins)
    assert path.read_text() == "3 1001\n1 10\n4 100 1001\n5 1\n"
    hyper_mod.write_hmetis(path, 1001, offsets, pins, chunk_pins=1)   # one net at a time: the same text
    assert path.read_text() == "3 1001\n1 10\n4 100 1001\n5 1\n"
    hyper_mod.write_hmetis(path, 4, np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64))
    assert path.read_text() == "0 4\n"


@needs_mtkahypar
def test_no_net_of_two_pins():
    from spbench.datasets.sparse_tensor import SparseTensor
    t = SparseTensor(np.array([[i, i, i] for i in range(4)]), np.ones(4), (4, 4, 4))
    d = SCHEMES["hyper"](t, 2, threads=1)
    assert d.info["nets"] == 0 and d.info["km1"] == 0 and np.bincount(d.policy(0)).tolist() == [2, 2]


@needs_mtkahypar
@pytest.mark.parametrize("seed, dims, nnz", [(1, (6, 5, 4), 60), (4, (20, 9, 5, 3), 300)])
def test_partitioner_reads_the_same_nets(make_tensor, seed, dims, nnz):
    t = make_tensor(seed, dims=dims, nnz=nnz)
    mtkahypar, mtk = hyper_mod._initializer(1)
    ctx = mtk.context_from_preset(mtkahypar.PresetType.DEFAULT)
    ctx.set_partitioning_parameters(2, 0.03, mtkahypar.Objective.KM1)
    hg, nets = hyper_mod._hypergraph(mtkahypar, mtk, ctx, t)
    assert hg.num_nodes() == t.nnz and nets == hg.num_edges()
    read = sorted(sorted(hg.pins(e)) for e in range(hg.num_edges()))
    assert read == sorted(sorted(net) for net in list_nets(t))
    assert not list((hyper_mod.data_dir() / "tmp").glob("hyper-*.hgr"))   # the file is removed once read


def test_preset_by_k():
    k = hyper_mod.AUTO_LARGE_K_FROM
    assert SCHEMES["hyper"].parameters["preset"].default == "auto"
    assert hyper_mod.resolve_preset("auto", 32) == "default"
    assert hyper_mod.resolve_preset("auto", k - 1) == "default"
    assert hyper_mod.resolve_preset("auto", k) == "large_k"
    assert hyper_mod.resolve_preset("auto", 512) == "large_k"
    assert hyper_mod.resolve_preset("QUALITY", 512) == "quality"


@needs_mtkahypar
def test_info_carries_preset_and_time(make_tensor, tmp_path):
    t = make_tensor(3, dims=(6, 5, 4), nnz=50)
    fresh = SCHEMES["hyper"](t, 2, threads=1, cache_dir=tmp_path)
    again = SCHEMES["hyper"](t, 2, threads=1, cache_dir=tmp_path)
    for d, cached in ((fresh, False), (again, True)):
        assert d.info["preset"] == "default" and d.info["cached"] is cached
        assert d.info["partition_seconds"] == fresh.info["partition_seconds"] > 0
        assert d.info["km1"] == fresh.info["km1"]
    assert SCHEMES["hyper"](t, 1).info["preset"] == "default"


@needs_mtkahypar
def test_simulated_rows_carry_preset_and_partition_time(write_config, tmp_path):
    import json

    from click.testing import CliRunner

    from spbench.cli import main
    cfg = write_config("""
        name: thyper
        experiment: tucker
        execution: simulate
        fallback: standin
        datasets:
          - nell2: {nnz: 1500}
        params:
          hyper: {threads: 1}
        sweep:
          algorithm: [hyper]
          ranks: [4, 128]
          K: [2]
        """)
    out = tmp_path / "res"
    res = CliRunner().invoke(main, ["run", str(cfg), "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    rows = {r["ranks"]: r for r in (json.loads(p.read_text()) for p in (out / "runs").glob("*.json"))}
    assert {P: rows[P]["dist_info"]["preset"] for P in rows} == {4: "default", 128: "large_k"}
    for row in rows.values():
        assert row["dist_time"] == row["dist_info"]["partition_seconds"] > 0
        assert row["dist_info"]["km1"] > 0 and row["dist_time_kind"].startswith("hypergraph partitioning")
