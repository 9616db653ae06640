"""The calibrated HOOI cost model: hand-computed terms (the CSF and the paper TTM), exact per-rank
loads and CSF tree shapes from one pass, the distributed Lanczos (no per-rank term in L_n, paper
mode's 4K queries), calibration."""
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from spbench.tucker.metrics import compute_metrics, mode_counts
from spbench.tucker.model.cost_model import (COMPUTE_COSTS, CONTEXT_COSTS, MPI_COSTS, TTM_COSTS, ModeLoad, lanczos_steps,
    predict_from_loads, predict_hooi, rank_loads)
from spbench.tucker.schemes import get_scheme

MPIEXEC = Path(sys.executable).parent / "mpiexec"

ROUND = {"ttm_csf_leaf": 1e-8, "ttm_csf_flop": 1e-9, "ttm_csf_node": 1e-7, "ttm_csf_row_khat": 1e-8,
         "ttm_csf_row": 1e-7, "ttm_csf_miss": 1e-7, "ttm_cache_bytes": 8000.0,
         "ttm_elem": 1e-6, "ttm_elem_khat": 1e-8, "ttm_row": 1e-7, "ttm_row_khat": 1e-7, "oracle_call": 1e-6,
         "oracle_matvec_entry": 1e-9, "oracle_rmatvec_entry": 1e-9, "gemm_madd": 1e-9, "lanczos_query": 1e-6,
         "lanczos_left_word": 1e-9, "lanczos_left_row": 1e-8, "lanczos_ritz_madd": 1e-9,
         "lanczos_right_word": 1e-9, "lanczos_right_row": 1e-8, "lanczos_local_query": 1e-7, "dist_oracle_call": 0.0,
         "dist_oracle_row": 1e-8}
ROUND_MPI = {**ROUND, "alpha_allreduce": 1e-5, "beta_allreduce": 1e-8, "alpha_alltoallv": 2e-5,
             "beta_alltoallv": 1e-8, "alpha_allgatherv": 3e-5, "beta_allgatherv": 1e-8,
             "alpha_allreduce_context": 0.0, "alpha_alltoallv_context": 0.0, "dist_query_context": 0.0}


def _a(*v):
    return np.array(v, dtype=np.int64)


def hand_load():
    """One mode, P = 2: K = 2 (ncv = 4, Q = 8), K̂ = 10, L = 100; rank 0 sends 10 partial sums to rank 1."""
    return ModeLoad(K=2, Khat=10, L=100, e=_a(600, 400), r=_a(60, 50), x_send=_a(10, 0), x_recv=_a(0, 10),
                    x_peers=_a(1, 1), own=_a(50, 50), fm_send=_a(0, 10), fm_recv=_a(10, 0), fm_peers=_a(1, 1))


def test_predict_hand_computed():
    assert set(ROUND_MPI) == set(COMPUTE_COSTS) | set(MPI_COSTS) | set(CONTEXT_COSTS)
    out = predict_from_loads([hand_load()], {"costs": ROUND_MPI}, invocations=2, ttm="paper")
    ttm = max(600e-6 + 600 * 10e-8 + 60e-7 + 60 * 10e-7, 400e-6 + 400 * 10e-8 + 50e-7 + 50 * 10e-7)
    calls = 8 * (1e-6 + 1e-6)                                  # Q = 4K = 8 queries × (oracle + Lanczos)
    index = (60 + 0) * 1e-8                                    # rank 0: (R + received) rows per query
    left = sum(j * 50 * 1e-9 + 50 * 1e-8 for j in range(4))    # GS over own = 50 rows, j = 0..3
    zx = 4 * (60 * 10 * 1e-9 + index) + left                   # rank 0 is the slowest every step
    yz = 4 * (60 * 10 * 1e-9 + index)
    right = sum(10 * (j + 1) * 1e-9 + 10 * 1e-8 for j in range(4))
    ritz = 50 * 4 * 2 * 1e-9 + 10 * 4 * 2 * 1e-9               # U·P (own × ncv × K), V·Qᵀ (K̂ × ncv × K)
    ar = lambda w: 1e-5 + 1e-8 * w                             # noqa: E731  (P = 2: α + β·w)
    allreduce = ar(1) + sum(ar(j) + ar(j + 1) for j in (1, 2, 3)) + 4 * ar(10)
    a2a = 2 * 4 * (2e-5 + 1e-8 * 10)                           # both directions, one peer, 10 words
    svd = calls + zx + yz + right + ritz                       # the Lanczos runs' local work
    fm = 2e-5 + 1e-8 * 10 * 2                                  # 10 rows × K = 2 words
    core_comm = (2e-5 + 1e-8 * 10 * 2) + ar(20)
    core_product = 60 * 10 * 2 * 1e-9
    assert out["ttm_time"] == pytest.approx(2 * ttm)
    assert out["svd_time"] == pytest.approx(2 * svd)
    assert out["comm_time"] == pytest.approx(2 * (allreduce + a2a + fm + core_comm))
    assert out["other_time"] == pytest.approx(2 * core_product)
    assert out["hooi_time"] == pytest.approx(2 * (ttm + svd + allreduce + a2a + fm + core_comm + core_product))
    assert out["fm_time"] == pytest.approx(2 * fm) and out["core_time"] == pytest.approx(2 * (core_product + core_comm))
    assert out["modes"][0]["queries"] == 8 and not out["modes"][0]["dense"]
    assert sum(out["terms"].values()) == pytest.approx(out["hooi_time"])
    assert out["ttm"] == "paper"


@pytest.mark.parametrize("P", [1, 2, 5])
@pytest.mark.parametrize("dims", [(4, 30, 25), (40, 30, 25)])   # a 4-slice mode takes the dense fallback
def test_modelled_components_partition_hooi_time(P, dims, make_tensor):
    """ttm + svd (local) + comm (every message) + other = hooi_time on modelled rows, within 2%
    (Fig. 11's bars), each named term in exactly one component; no message at P = 1."""
    from spbench.tucker.model.cost_model import TERM_COMPONENT

    t = make_tensor(3, dims=dims, nnz=1500)
    for name in ("lite", "coarse", "medium"):
        out = predict_hooi(t, get_scheme(name)(t, P, seed=0), 4, ROUND_MPI, invocations=2)
        parts = [out[k] for k in ("ttm_time", "svd_time", "comm_time", "other_time")]
        assert min(parts) >= 0 and sum(parts) == pytest.approx(out["hooi_time"], rel=0.02), name
        assert set(out["terms"]) == set(TERM_COMPONENT)
        for part in ("ttm_time", "svd_time", "comm_time", "other_time"):
            mine = sum(v for k, v in out["terms"].items() if TERM_COMPONENT[k] == part)
            assert mine == pytest.approx(out[part]), (name, part)
        assert (out["comm_time"] == 0.0) == (P == 1), name


def test_predict_csf_ttm_hand_computed():
    """ttm: csf charges each rank's tree (leaf multiply–adds, flops above, internal nodes, rows);
    without the trees' shapes it refuses; the SVD terms do not depend on the kernel."""
    ld = hand_load()
    with pytest.raises(ValueError, match="tree shapes"):
        predict_from_loads([ld], ROUND_MPI)
    ld.csf = np.array([[6000.0, 9000.0, 300.0], [4000.0, 20000.0, 100.0]])
    out = predict_from_loads([ld], ROUND_MPI, invocations=2)
    rank = [6000e-8 + 9000e-9 + 300e-7 + 60 * 10e-8 + 60e-7, 4000e-8 + 20000e-9 + 100e-7 + 50 * 10e-8 + 50e-7]
    assert out["ttm"] == "csf" and out["ttm_time"] == pytest.approx(2 * max(rank))
    paper = predict_from_loads([ld], ROUND_MPI, invocations=2, ttm="paper")
    assert out["svd_time"] == pytest.approx(paper["svd_time"]) and out["ttm_time"] != paper["ttm_time"]
    # factor-row reads beyond the cache (8000 bytes): rank 0's tree reads F_1 (1000 rows × K 2 × 8 B:
    # miss 1/2) at its 300 level-1 nodes and F_2 (100 × 5 × 8 B = 4000 B: in cache) at its leaves
    ld.Ks, ld.factor_rows = (2, 2, 5), np.array([[0, 1000, 100], [0, 100, 100]])
    ld.csf_trees = [((0, 1, 2), [60, 300, 6000]), ((0, 1, 2), [50, 100, 4000])]
    more = predict_from_loads([ld], ROUND_MPI, invocations=2)
    assert more["ttm_time"] == pytest.approx(2 * max(rank[0] + 150 * 1e-7, rank[1]))
    with pytest.raises(KeyError, match="older model"):
        predict_from_loads([ld], {k: v for k, v in ROUND_MPI.items() if k not in TTM_COSTS["csf"]})
    predict_from_loads([ld], {k: v for k, v in ROUND_MPI.items() if k not in TTM_COSTS["csf"]}, ttm="paper")


@pytest.mark.parametrize("dims", [(25, 18, 12), (9, 8, 7, 6), (6, 5, 5, 4, 4)])
@pytest.mark.parametrize("name,P", [("lite", 1), ("lite", 3), ("coarse", 4), ("medium", 3)])
def test_rank_trees_equal_built_plans(dims, name, P, make_tensor):
    """The tree shapes the model reads from the counts (level order, nodes per level) are those of
    the CSF plan each rank builds of its elements, per-mode K."""
    from spbench.tucker.hooi.csf import CSFPlan, rank_nodes, tree_work
    from spbench.tucker.model.cost_model import csf_work

    t = make_tensor(3, dims=dims, nnz=900)
    K = [2 + j for j in range(t.nmodes)]
    d = get_scheme(name)(t, P, seed=1)
    counts, _ = mode_counts(t, d, csf=True)
    for n in range(t.nmodes):
        trees = rank_nodes(n, t.nmodes, counts[n]["csf_prefix_p"], counts[n]["r_p"], counts[n]["e_p"], K)
        work, _ = csf_work(counts[n], n, K)
        for p in range(P):
            plan = CSFPlan.build(t, n, np.flatnonzero(d.policy(n) == p), K=K)
            assert (tuple(plan.order), list(plan.nodes)) == (tuple(trees[p][0]), list(trees[p][1])), (n, p)
            assert tuple(work[p]) == tree_work(plan.order, plan.nodes, K)
            leaf, upper, _ = work[p]
            assert leaf + upper == pytest.approx(plan.flops(K))


def test_one_process_lanczos_is_compiled():
    """P = 1: HOOI's Lanczos runs compiled, its per-query constant replaces the oracle's and the
    Python steps' (and the oracle does no index work)."""
    ld = ModeLoad(K=2, Khat=10, L=100, e=_a(600), r=_a(100), x_send=_a(0), x_recv=_a(0), x_peers=_a(0),
                  own=_a(100), fm_send=_a(0), fm_recv=_a(0), fm_peers=_a(0))
    terms = predict_from_loads([ld], ROUND, ttm="paper")["modes"][0]["terms"]
    assert terms["query_calls"] == pytest.approx(8 * 1e-7) and terms["oracle_index"] == 0.0


def test_lanczos_steps_paper_converged_dense():
    p = lanczos_steps(5, 10_000, 400, "paper")
    assert p["Q"] == 20 and list(p["left_j"]) == list(range(10)) and p["restarts"] == 0
    assert lanczos_steps(10, 10_000, 100, "paper")["Q"] == 40                   # Q_n = 4K_n
    d = lanczos_steps(5, 8, 400, "paper")                                       # 2K = 10 ≥ min(L, K̂) = 8
    assert d["dense"] and d["Q"] == 8
    c = lanczos_steps(5, 10_000, 400, "converged", Q=44)                       # ncv 10, keep 5
    assert c["Q"] == 44 and list(c["left_j"]) == list(range(10)) + [5, 6, 7, 8, 9] * 2 + [5, 6]
    assert c["restarts"] == 3
    assert lanczos_steps(5, 10_000, 400, "converged")["Q"] == 20               # one pass when unmeasured
    ld = hand_load()
    assert predict_from_loads([ld], ROUND_MPI, ttm="paper")["modes"][0]["queries"] == 8
    ld.Q = 30
    assert predict_from_loads([ld], ROUND_MPI, lanczos="converged", ttm="paper")["modes"][0]["queries"] == 30


def test_no_per_rank_term_in_L():
    """The distributed SVD: L_n enters only through own^p and R^p (no replicated basis)."""
    base = predict_from_loads([hand_load()], ROUND_MPI, ttm="paper")
    ld = hand_load()
    ld.L = 100_000_000
    assert predict_from_loads([ld], ROUND_MPI, ttm="paper")["hooi_time"] == pytest.approx(base["hooi_time"])
    ld = hand_load()
    ld.own = _a(500, 50)                                       # more owned rows: more Gram–Schmidt
    more = predict_from_loads([ld], ROUND_MPI, ttm="paper")
    assert more["terms"]["lanczos_left"] > base["terms"]["lanczos_left"]
    assert more["terms"]["lanczos_right"] == base["terms"]["lanczos_right"]


def test_comm_zero_at_one_rank_and_no_mpi_costs_needed(make_tensor):
    t = make_tensor(3, dims=(30, 20, 10), nnz=400)
    for name in ("lite", "coarse", "medium"):
        out = predict_hooi(t, get_scheme(name)(t, 1, seed=0), 4, ROUND)
        assert out["comm_time"] == 0.0
        assert all(m["fm_time"] == 0.0 and m["oracle_comm_time"] == 0.0 for m in out["modes"])
        assert out["hooi_time"] > 0 and out["ttm_time"] > 0 and out["svd_time"] > 0
    with pytest.raises(KeyError, match="MPI micro-benchmark was skipped"):
        predict_hooi(t, get_scheme("lite")(t, 2, seed=0), 4, ROUND)
    with pytest.raises(KeyError, match="older model"):
        predict_hooi(t, get_scheme("lite")(t, 1, seed=0), 4, {"ttm_elem": 1.0})


def slow_loads(t, d):
    """Per-rank loads by Python sets (the definition), per mode."""
    N, P = t.nmodes, d.nparts
    m = compute_metrics(t, d, 4)
    out = []
    for n in range(N):
        sig = m.owners[n]
        share, need = {}, {}
        for e in range(t.nnz):
            l = int(t.coords[e, n])
            share.setdefault(l, set()).add(int(d.policy(n)[e]))
            for j in range(N):
                if j != n:
                    need.setdefault(l, set()).add(int(d.policy(j)[e]))
        x_send, x_recv, own = [0] * P, [0] * P, [0] * P
        fm_send, fm_recv = [0] * P, [0] * P
        xp, fp = [set() for _ in range(P)], [set() for _ in range(P)]
        for l, s in share.items():
            o = int(sig[l])
            own[o] += 1
            for p in s - {o}:
                x_send[p] += 1
                x_recv[o] += 1
                xp[p].add(o)
                xp[o].add(p)
            for q in need.get(l, set()) - {o}:
                fm_send[o] += 1
                fm_recv[q] += 1
                fp[o].add(q)
                fp[q].add(o)
        out.append({"x_send_p": x_send, "x_recv_p": x_recv, "own_p": own, "fm_send_p": fm_send,
                    "fm_recv_p": fm_recv, "x_peers_p": [len(s) for s in xp], "fm_peers_p": [len(s) for s in fp]})
    return out


@pytest.mark.parametrize("name", ["lite", "coarse", "medium"])
@pytest.mark.parametrize("P", [1, 3, 7])
def test_rank_loads_equal_slow_path(name, P, make_tensor):
    """One-pass loads (bitmap and sorted-key pair sets alike) equal the definition by Python sets
    and add up to the §4.2 volumes."""
    t = make_tensor(5, dims=(25, 18, 12), nnz=600)
    K = [3, 4, 2]
    d = get_scheme(name)(t, P, seed=1)
    dense, _ = mode_counts(t, d, dense=True)
    keys, _ = mode_counts(t, d, dense=False)
    slow = slow_loads(t, d)
    m = compute_metrics(t, d, K)
    loads = rank_loads(t, d, K, metrics=m)
    for n, ld in enumerate(loads):
        for k, v in dense[n].items():
            assert np.array_equal(v, keys[n][k]), (n, k)
        for k, v in slow[n].items():
            assert list(dense[n][k]) == v, (n, k)
        mm = m.modes[n]
        assert np.array_equal(ld.e, m.details[n]["e_per_rank"]) and np.array_equal(ld.r, m.details[n]["r_per_rank"])
        assert ld.x_send.sum() == ld.x_recv.sum() == mm["r_sum"] - mm["slices"]
        assert ld.own.sum() == mm["slices"] == ld.L
        assert ld.fm_send.sum() == ld.fm_recv.sum() and ld.fm_send.sum() * K[n] == mm["fm_volume"]
        assert ld.Khat == int(np.prod([K[j] for j in range(3) if j != n]))


def test_simulated_point_counts_once(make_tensor, monkeypatch, tmp_path):
    """Per (scheme, P): the scheme and the streamed counts run once, whatever the K values and the
    TTM kernel; the row's metrics and the model's loads come from that pass; the row names the
    TTM it models."""
    import spbench.tucker.stream_metrics as stream_metrics
    from spbench.datasets.tensor_store import read_header, write_store
    from spbench.tucker.experiment import PreparedTensor, TuckerExperiment

    calls = []
    real = stream_metrics.stream_counts
    monkeypatch.setattr(stream_metrics, "stream_counts", lambda *a, **k: calls.append(1) or real(*a, **k))
    t = make_tensor(7, dims=(40, 30, 20), nnz=1500)
    store = tmp_path / "store"
    write_store(store, t.coords, t.values, t.dims, checksum="x", source={})
    loaded = SimpleNamespace(tensor=t, store=store, header=read_header(store))
    prep = PreparedTensor(loaded=loaded, checksum="x", source="synthetic", label="t")
    exp = TuckerExperiment()
    exp.costs = {"costs": ROUND_MPI}
    cfg = SimpleNamespace(params={}, seed=0, invocations=1, lanczos="paper", ttm="csf")
    points = [({"algorithm": "lite", "ranks": 4, "K": K}, ttm) for K in (3, 5) for ttm in ("csf", "paper")]
    rows = [exp.run(SimpleNamespace(axes={**axes, "ttm": ttm}), prep, cfg) for axes, ttm in points]
    assert len(calls) == 1
    d = get_scheme("lite")(t, 4, seed=0)
    for (axes, ttm), row in zip(points, rows):
        K = axes["K"]
        assert row["r_sum"] == pytest.approx(compute_metrics(t, d, K).aggregate["r_sum"])
        assert row["hooi_time"] == pytest.approx(predict_hooi(t, d, K, ROUND_MPI, ttm=ttm)["hooi_time"])
        assert row["ttm"] == ttm and f"ttm: {ttm}" in row["hooi_time_kind"]
    assert rows[0]["ttm_time"] != rows[1]["ttm_time"]


def test_ttm_term_follows_max_rank_load(make_tensor):
    """CoarseG's whole-slice imbalance ⇒ larger predicted TTM than Lite on a skewed tensor at P = 64."""
    t = make_tensor(11, dims=(40, 300, 200), nnz=20000, skew=1.5)
    preds, emax = {}, {}
    for name in ("coarse", "lite"):
        d = get_scheme(name)(t, 64, seed=0)
        loads = rank_loads(t, d, 10)
        preds[name] = {ttm: predict_from_loads(loads, ROUND_MPI, ttm=ttm) for ttm in TTM_COSTS}
        emax[name] = max(int(ld.e.max()) for ld in loads)
    assert emax["coarse"] > 2 * emax["lite"]
    for ttm in TTM_COSTS:
        assert preds["coarse"][ttm]["ttm_time"] > 2 * preds["lite"][ttm]["ttm_time"], ttm


@pytest.mark.slow
def test_calibrate_quick(make_tensor):
    from spbench.tucker.calibration.calibrate import COMPUTE_KEYS, calibrate

    cal = calibrate(quick=True)
    json.dumps(cal)                                       # JSON-serialisable as is
    assert cal["timestamp"] and cal["machine"]["cores"] >= 1
    c = cal["costs"]
    assert set(COMPUTE_KEYS) <= set(c) and all(np.min(c[k]) >= 0 for k in COMPUTE_KEYS)
    assert any(c[k] > 0 for k in TTM_COSTS["csf"]) and cal["fits"]["ttm_csf"]["samples"] > 0
    for k in ("ttm_elem_khat", "oracle_matvec_entry", "oracle_rmatvec_entry", "gemm_madd", "dist_oracle_row"):
        assert np.min(c[k]) > 0, k
    # the left Gram–Schmidt's ladder: each rung a difference of two quick runs, which the suite's other
    # worker can bring to zero at a small basis (seen once in a full run); the ladder as a whole is positive
    assert np.max(c["lanczos_left_word"]) > 0
    assert np.all(np.diff(c["oracle_bytes"]) > 0) and len(c["oracle_matvec_entry"]) == len(c["oracle_bytes"])
    if "skipped" in cal["mpi"]:
        pytest.skip(f"MPI part skipped: {cal['mpi']['skipped']}")
    for k in ("alpha_allreduce", "alpha_alltoallv", "alpha_allgatherv"):
        assert np.min(c[k]) > 0 and len(c[k]) == len(c["alpha_bytes"]), k
    for k in CONTEXT_COSTS:                               # measured on the worker at 2 ranks
        assert np.isfinite(c[k]) and len(cal["fits"]["in_context"][k]) == 3, k
    assert np.all(np.diff(c["lanczos_left_bytes"]) > 0) and len(c["lanczos_left_word"]) == len(c["lanczos_left_bytes"])
    t = make_tensor(3, dims=(30, 20, 10), nnz=400)
    out = predict_hooi(t, get_scheme("medium")(t, 2, seed=0), 4, cal)
    assert out["comm_time"] > 0 and out["hooi_time"] > out["comm_time"]


def test_oracle_index_calibration_leaves_the_messages_out():
    """The oracle's own work is timed outside its message clock: time spent in the clock (HOOI's
    comm_time, the micro-benchmark's part) is not counted again as local work."""
    import time as _time

    from spbench.tucker.calibration.calibrate import _outside_clock
    from spbench.tucker.hooi.loop import _Clock

    clock = _Clock()

    def call():
        with clock:
            _time.sleep(0.003)

    assert _outside_clock(call, clock, 3) < 0.001


@pytest.mark.mpi
@pytest.mark.skipif(not MPIEXEC.exists(), reason=f"no mpiexec beside {sys.executable}")
def test_validate_one_rank_runs_the_worker(make_tensor):
    from spbench.tucker.calibration.model_validation import validate

    t = make_tensor(4, dims=(60, 45, 35), nnz=2500)
    df = validate({"small": t}, ["lite", "coarse"], [1], {"costs": ROUND}, K=4, repeats=1, timeout=120)
    assert list(df["scheme"]) == ["lite", "coarse"] and (df["ranks"] == 1).all()
    assert (df["measured_hooi_time"] > 0).all() and (df["predicted_hooi_time"] > 0).all()
    assert (df["predicted_comm_time"] == 0).all()
    assert (df["queries"].map(lambda q: q == [16, 16, 16])).all()          # paper: 4K per mode
    assert np.isfinite(df["rel_error"]).all()


def test_oracle_cost_per_entry_is_read_from_the_ladder_at_the_rank_s_z():
    """A product's cost per entry is the calibration's at Z's size, log-interpolated, flat past the ends."""
    from spbench.tucker.model.cost_model import entry_cost

    c = {"oracle_bytes": [2.0 ** 20, 2.0 ** 30], "oracle_matvec_entry": [1e-10, 5e-10], "scalar": 3e-10}
    got = entry_cost(c, "oracle_matvec_entry", np.array([2.0 ** 10, 2.0 ** 20, 2.0 ** 25, 2.0 ** 30, 2.0 ** 40]))
    assert np.allclose(got, [1e-10, 1e-10, 3e-10, 5e-10, 5e-10])
    assert np.allclose(entry_cost(c, "scalar", np.array([1.0, 2.0 ** 40])), 3e-10)
