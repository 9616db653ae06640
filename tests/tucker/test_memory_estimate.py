"""The Tucker pre-flight estimates: tensor sizes known without generating or loading anything, the
stores still to write, and the memory laws of simulated and measured points."""
import numpy as np
import pytest

from spbench.datasets.tensor_registry import file_store, resolve, standin_store, write_standin
from spbench.tucker import memory_estimate as me
from spbench.tucker.metrics import metrics_from_counts


class _Config:
    fallback, execution, launcher = "standin", "simulate", ""


@pytest.mark.parametrize("multi_policy", [True, False])
def test_the_rank_formula_is_metrics_mem_total_at_ideal_loads(multi_policy):
    """§7.3's memory per rank as metrics_from_counts adds it, fed the ideal per-rank counts."""
    dims, nnz, P, K = (40, 300, 7), 10_001, 4, 5
    E = -(-nnz // P)
    counts = [{"e_p": np.full(P, E), "r_p": np.full(P, min(L, -(-L // P) + 1)), "held_p": np.full(P, min(L, 3 * E)),
               "slices": L, "fm_rows": 0, "bad_slices": 0} for L in dims]
    metrics = metrics_from_counts(dims, nnz, K, None, multi_policy, counts)
    assert me.rank_formula_bytes(dims, nnz, P, K, multi_policy) == pytest.approx(metrics.aggregate["mem_total_mb_max"]
                                                                                 * 1e6)


def test_a_standin_is_sized_from_its_recipe_then_from_its_store():
    dataset = resolve({"nell2": {"nnz": 3000, "standin": True}})
    before = me.tensor_size(dataset, _Config)
    assert before.nnz == 3000 and "stand-in recipe" in before.basis
    assert before.disk == me.store_bytes(before.dims, 3000) == 3000 * (3 * 4 + 8) + 4096
    store = standin_store("nell2", nnz=3000)
    after = me.tensor_size(dataset, _Config)
    assert after.disk == 0 and "store header" in after.basis and after.dims == before.dims
    written = sum(f.stat().st_size for f in store.iterdir())
    assert written <= before.disk <= written + 4096


def test_a_real_tensor_not_cached_has_the_papers_sizes():
    class Strict(_Config):
        fallback = "error"
    size = me.tensor_size(resolve("enron"), Strict)
    assert size.nnz == 54_202_099 and size.dims == (6_066, 5_699, 244_268, 1_176) and "Fig. 9" in size.basis
    assert "after its download" in size.disk_basis


def test_a_tns_file_is_estimated_from_its_size_then_read_from_its_store(tmp_path):
    small = write_standin("enron", tmp_path / "small.tns", nnz=2000)
    exact = me.tensor_size(resolve({"path": str(small)}), _Config)
    assert exact.nnz == 2000 and "estimated" not in exact.basis
    big = write_standin("enron", tmp_path / "big.tns.gz", nnz=150_000)  # ~3 MB of text: a sample is read
    guess = me.tensor_size(resolve({"path": str(big)}), _Config)
    assert "estimated from the file's size" in guess.basis and abs(guess.nnz - 150_000) < 0.15 * 150_000
    assert len(guess.dims) == 4 and guess.disk > 0
    file_store(big, name="big")
    known = me.tensor_size(resolve({"path": str(big)}), _Config)
    assert known.nnz == 150_000 and known.disk == 0


def test_an_unreadable_file_is_left_to_its_loader(tmp_path):
    (tmp_path / "bad.tns").write_text("1 x 2.0\n")
    (tmp_path / "cut.tns.gz").write_bytes(b"\x1f\x8b\x08\x00garbage")
    for name in ("bad.tns", "cut.tns.gz"):
        assert me.tensor_size(resolve({"path": str(tmp_path / name)}), _Config) is None


def test_an_index_beyond_int64_is_left_to_its_loader(tmp_path):
    """Its loader names the line; the pre-flight does not size a store of 10^20 slices."""
    (tmp_path / "big.tns").write_text("1 1 1 1.0\n99999999999999999999 2 2 2.0\n")
    assert me.tensor_size(resolve({"path": str(tmp_path / "big.tns")}), _Config) is None


def test_a_tensor_of_too_many_modes_is_left_to_its_loader(tmp_path):
    """43 modes: no estimate (its loader refuses it), and none of the N·2^(N−2) prefix sets a
    calibrated point's spill estimate would enumerate (which never ended)."""
    from types import SimpleNamespace

    from spbench.pipeline.sweep import Point

    path = tmp_path / "wide.tns"
    path.write_text(" ".join(["1"] * 43) + " 1.0\n" + " ".join(["2"] * 43) + " 2.0\n")
    dataset = resolve({"path": str(path)})
    config = SimpleNamespace(fallback="standin", execution="simulate", launcher="", params={})
    point = Point(dataset=dataset, values=(("algorithm", "coarse"), ("ranks", 2), ("K", 2)), repeat=0)
    assert me.estimate_points(config, [point], csf_prefixes=True) == []


def test_simulated_laws():
    from spbench.tucker.stream_metrics import simulated_peak_bytes

    size = me.TensorSize((100, 200, 300), 1_000_000, "test")
    small, _ = me.simulated_peak(size, "hyper", 32, False)
    large, basis = me.simulated_peak(size, "hyper", 512, False, params={"preset": "default"})
    assert large - small == 5 * 480 * 1_000_000 and "HyperG in memory" in basis
    # auto takes large_k from k = 128 on: Mt-KaHyPar's state then does not grow with k, it goes by pins
    auto, basis = me.simulated_peak(size, "hyper", 512, False)
    assert auto == me.simulated_peak(size, "hyper", 128, False)[0] < large and "pins (large_k)" in basis
    assert auto - small == 247 * 3 * 1_000_000 - (580 + 5 * 32) * 1_000_000
    peak, basis = me.simulated_peak(size, "lite", 32, True)
    assert peak == simulated_peak_bytes(size.dims, size.nnz, 32, True, 21, decision_nonempty_bytes=16)
    assert "streaming engine" in basis


def test_a_stores_nonempty_slices_lower_the_streaming_estimate():
    """Before a stand-in exists its nonempty slices are bounded by min(L_n, nnz); its store's header
    then gives them, and an estimate only falls: most slices of a sparse stand-in are empty, and
    their entries' pages are never touched (the law's per-nonempty-slice bytes)."""
    dataset = resolve({"nell1": {"nnz": 20000, "standin": True}})
    before = me.tensor_size(dataset, _Config)
    assert before.nonempty is None
    standin_store("nell1", nnz=20000)
    after = me.tensor_size(dataset, _Config)
    assert after.nonempty is not None and all(ne <= min(L, 20000) for ne, L in zip(after.nonempty, after.dims))
    for scheme, multi in (("lite", True), ("coarse", True), ("medium", False)):
        assert me.simulated_peak(after, scheme, 512, multi)[0] < me.simulated_peak(before, scheme, 512, multi)[0]


def test_measured_ranks_on_this_machine(monkeypatch):
    size = me.TensorSize((100, 200, 300), 1_000_000, "test")
    per_rank = max(93e6, me.rank_formula_bytes(size.dims, size.nnz, 8, 10, True) * 1.18 + 56e6)
    assert me.measured_peak(me.TensorSize((10, 20, 30), 100, "test"), 1, 10, False, "")[0] == 93e6
    assert me.measured_peak(size, 8, 10, True, "")[0] == int(8 * per_rank)
    monkeypatch.delenv("SLURM_JOB_NUM_NODES", raising=False)
    assert me.measured_peak(size, 8, 10, True, "srun -n {ranks}")[0] == int(per_rank)
    monkeypatch.setenv("SLURM_JOB_NUM_NODES", "3")
    peak, basis = me.measured_peak(size, 8, 10, True, "srun -n {ranks}")
    assert peak == int(3 * per_rank) and "3 of 8 ranks per node" in basis
