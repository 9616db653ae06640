"""The calibrated HOOI cost model: hand-computed terms, exact per-rank loads, calibration."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from spbench.tucker.metrics import compute_metrics
from spbench.tucker.model import ModeLoad, predict_from_loads, predict_hooi, rank_loads
from spbench.tucker.schemes import get_scheme

MPIEXEC = Path(sys.executable).parent / "mpiexec"

ROUND = {"ttm_elem": 1e-6, "ttm_elem_khat": 1e-8, "ttm_row_khat": 1e-7, "oracle_call": 0.0,
         "oracle_matvec_entry": 1e-9, "oracle_rmatvec_entry": 1e-9, "gemm_madd": 1e-9,
         "lanczos_query": 1e-6, "lanczos_word": 0.0, "dist_oracle_call": 0.0, "dist_oracle_row": 0.0}
ROUND_MPI = {**ROUND, "alpha_allreduce": 1e-5, "beta_allreduce": 1e-8, "alpha_alltoallv": 2e-5,
             "beta_alltoallv": 1e-8, "alpha_allgatherv": 3e-5, "beta_allgatherv": 1e-8}


def _a(*v):
    return np.array(v, dtype=np.int64)


def hand_load():
    """One mode, P = 2: K = 5, K̂ = 10, L = 100, Q = 20; rank 0 sends 10 partial sums to rank 1."""
    return ModeLoad(K=5, Khat=10, L=100, e=_a(600, 400), r=_a(60, 50), x_send=_a(10, 0), x_recv=_a(0, 10),
                    x_peers=_a(1, 1), own=_a(50, 50), fm_send=_a(0, 10), fm_recv=_a(10, 0), fm_peers=_a(1, 1), Q=20)


def test_predict_hand_computed():
    out = predict_from_loads([hand_load()], {"costs": ROUND_MPI}, invocations=2)
    # TTM: max(600e-6 + 600·10e-8 + 60·10e-7, 400e-6 + 400·10e-8 + 50·10e-7) = 7.2e-4
    ttm = 7.2e-4
    # SVD compute: Q/2 · max R·K̂ · (1e-9 + 1e-9) = 10·600·2e-9; Lanczos: 20·1e-6
    oracle, lanczos = 1.2e-5, 2e-5
    a2a = 2e-5 + 1e-8 * 10                     # one peer, 10 words at the busiest rank
    gather = 3e-5 + 1e-8 * 50                  # ⌈log2 2⌉ = 1, each rank receives L − own = 50
    allreduce = 1e-5 + 1e-8 * 10               # 2(P−1)/P = 1 at P = 2, K̂ = 10 words
    oracle_comm = 10 * (a2a + gather) + 10 * (a2a + allreduce)
    fm = 2e-5 + 1e-8 * 10 * 5                  # 10 rows × K = 5 words
    core = 60 * 10 * 5 * 1e-9 + (2e-5 + 1e-8 * 50) + (1e-5 + 1e-8 * 50)
    core_comm = core - 60 * 10 * 5 * 1e-9
    svd = oracle + lanczos + oracle_comm
    assert out["ttm_time"] == pytest.approx(2 * ttm)
    assert out["svd_time"] == pytest.approx(2 * svd)
    assert out["comm_time"] == pytest.approx(2 * (oracle_comm + fm + core_comm))
    assert out["hooi_time"] == pytest.approx(2 * (ttm + svd + fm + core))
    assert out["hooi_time"] == pytest.approx(2 * 1.6145e-3)
    assert out["modes"][0]["queries"] == 20


def test_default_queries_and_measured_queries():
    ld = hand_load()
    ld.Q, ld.Khat = None, 400
    assert predict_from_loads([ld], ROUND_MPI)["modes"][0]["queries"] == 20      # 4·K_n
    ld.L = 8                                                                     # ncv = 10 ≥ min(L, K̂) = 8
    assert predict_from_loads([ld], ROUND_MPI)["modes"][0]["queries"] == 8      # lanczos_svd's dense fallback
    ld.Q = 33                                                                    # measured queries win
    assert predict_from_loads([ld], ROUND_MPI)["modes"][0]["queries"] == 33


def test_comm_zero_at_one_rank_and_no_mpi_costs_needed(make_tensor):
    t = make_tensor(3, dims=(30, 20, 10), nnz=400)
    for name in ("lite", "coarse", "medium"):
        out = predict_hooi(t, get_scheme(name)(t, 1, seed=0), 4, ROUND)
        assert out["comm_time"] == 0.0
        assert all(m["fm_time"] == 0.0 and m["oracle_comm_time"] == 0.0 for m in out["modes"])
        assert out["hooi_time"] > 0 and out["ttm_time"] > 0 and out["svd_time"] > 0
    with pytest.raises(KeyError, match="MPI micro-benchmark was skipped"):
        predict_hooi(t, get_scheme("lite")(t, 2, seed=0), 4, ROUND)


@pytest.mark.parametrize("name", ["lite", "coarse", "medium"])
@pytest.mark.parametrize("P", [1, 3, 7])
def test_rank_loads_match_metrics(name, P, make_tensor):
    """Per-rank words add up to the §4.2 volumes; loads are compute_metrics' per-rank arrays."""
    t = make_tensor(5, dims=(25, 18, 12), nnz=600)
    K = [3, 4, 2]
    d = get_scheme(name)(t, P, seed=1)
    m = compute_metrics(t, d, K)
    loads = rank_loads(t, d, K, metrics=m)
    for n, ld in enumerate(loads):
        mm = m.modes[n]
        assert np.array_equal(ld.e, m.details[n]["e_per_rank"]) and np.array_equal(ld.r, m.details[n]["r_per_rank"])
        assert ld.x_send.sum() == ld.x_recv.sum() == mm["r_sum"] - mm["slices"]
        assert ld.own.sum() == mm["slices"] == ld.L
        assert ld.fm_send.sum() == ld.fm_recv.sum() and ld.fm_send.sum() * K[n] == mm["fm_volume"]
        assert ld.Khat == int(np.prod([K[j] for j in range(3) if j != n]))
        if P == 1:
            assert ld.x_peers.sum() == 0 and ld.fm_peers.sum() == 0
        assert (ld.x_peers <= P - 1).all() and (ld.fm_peers <= P - 1).all()


def test_ttm_term_follows_max_rank_load(make_tensor):
    """CoarseG's whole-slice imbalance ⇒ larger predicted TTM than Lite on a skewed tensor at P = 64."""
    t = make_tensor(11, dims=(40, 300, 200), nnz=20000, skew=1.5)
    preds, emax = {}, {}
    for name in ("coarse", "lite"):
        d = get_scheme(name)(t, 64, seed=0)
        loads = rank_loads(t, d, 10)
        preds[name] = predict_from_loads(loads, ROUND_MPI)
        emax[name] = max(int(ld.e.max()) for ld in loads)
    assert emax["coarse"] > 2 * emax["lite"]
    assert preds["coarse"]["ttm_time"] > 2 * preds["lite"]["ttm_time"]
    # monotone in max_p |E_n^p|: moving elements onto one rank raises the term
    ld = rank_loads(t, get_scheme("lite")(t, 64, seed=0), 10)
    base = predict_from_loads(ld, ROUND_MPI)["ttm_time"]
    ld[0].e = ld[0].e.copy()
    ld[0].e[0] += 1000
    assert predict_from_loads(ld, ROUND_MPI)["ttm_time"] > base


def test_calibrate_quick(make_tensor):
    from spbench.tucker.calibrate import COMPUTE_KEYS, calibrate

    cal = calibrate(quick=True)
    json.dumps(cal)                                       # JSON-serialisable as is
    assert cal["timestamp"] and cal["machine"]["cores"] >= 1
    c = cal["costs"]
    assert all(c[k] >= 0 for k in COMPUTE_KEYS)
    for k in ("ttm_elem_khat", "oracle_matvec_entry", "oracle_rmatvec_entry", "gemm_madd"):
        assert c[k] > 0, k
    assert c["ttm_elem"] + c["ttm_row_khat"] > 0 and c["lanczos_query"] + c["lanczos_word"] > 0
    if "skipped" in cal["mpi"]:
        pytest.skip(f"MPI part skipped: {cal['mpi']['skipped']}")
    for k in ("alpha_p2p", "alpha_allreduce", "alpha_alltoallv", "alpha_allgatherv"):
        assert c[k] > 0, k
    t = make_tensor(3, dims=(30, 20, 10), nnz=400)
    out = predict_hooi(t, get_scheme("medium")(t, 2, seed=0), 4, cal)
    assert out["comm_time"] > 0 and out["hooi_time"] > out["comm_time"]


@pytest.mark.skipif(not MPIEXEC.exists(), reason=f"no mpiexec beside {sys.executable}")
def test_validate_one_rank_runs_the_worker(make_tensor):
    from spbench.tucker.model import validate

    t = make_tensor(4, dims=(60, 45, 35), nnz=2500)
    df = validate({"small": t}, ["lite", "coarse"], [1], {"costs": ROUND}, K=4, repeats=1, timeout=120)
    assert list(df["scheme"]) == ["lite", "coarse"] and (df["ranks"] == 1).all()
    assert (df["measured_hooi_time"] > 0).all() and (df["predicted_hooi_time"] > 0).all()
    assert (df["predicted_comm_time"] == 0).all()
    assert np.isfinite(df["rel_error"]).all()
