"""Metrics and row owners against a brute-force computation with Python sets."""
import importlib
import math

import numpy as np
import pytest

from spbench.tucker.mpi.comm import row_owners, row_owners_from_pairs, sharer_pairs
from spbench.tucker.metrics import AGGREGATE_KEYS, MODE_KEYS, compute_metrics
from spbench.tucker.schemes import SCHEMES, Distribution

hyper_mod = importlib.import_module("spbench.tucker.schemes.hyper")
NAMES = ["lite", "coarse", "medium"] + (["hyper"] if hyper_mod.available() else [])


def brute_force(t, d, Ks, Qs, sigmas, index_bytes=4, value_bytes=8):
    N, P, E = t.nmodes, d.nparts, t.nnz
    coords = [tuple(int(x) for x in row) for row in t.coords]
    pol = [[int(x) for x in d.policy(n)] for n in range(N)]
    Khat = [math.prod(Ks[j] for j in range(N) if j != n) for n in range(N)]
    modes = []
    mem_t, mem_p, mem_f = [0.0] * P, [0.0] * P, [0.0] * P
    for n in range(N):
        Ep = [0] * P
        share = {}
        need = {}
        for e in range(E):
            l, p = coords[e][n], pol[n][e]
            Ep[p] += 1
            share.setdefault(l, set()).add(p)
            for j in range(N):
                if j != n:
                    need.setdefault(l, set()).add(pol[j][e])
        Rp = [sum(1 for s in share.values() if p in s) for p in range(P)]
        r_sum = sum(len(s) for s in share.values())
        L = len(share)
        sigma = sigmas[n]
        for l in range(t.dims[n]):
            if l in share:
                assert int(sigma[l]) in share[l]
                if len(share[l]) == 1:
                    assert int(sigma[l]) == next(iter(share[l]))
            else:
                assert sigma[l] == -1
        fm = Ks[n] * sum(len(need.get(l, set()) - {int(sigma[l])}) for l in share)
        modes.append({"mode": n, "length": t.dims[n], "slices": L, "e_max": max(Ep), "r_sum": r_sum,
                      "r_max": max(Rp), "svd_volume": Qs[n] * (r_sum - L), "fm_volume": fm})
        for p in range(P):
            if d.multi_policy or n == 0:
                mem_t[p] += Ep[p] * (N * index_bytes + value_bytes)
            mem_p[p] += Rp[p] * Khat[n] * 8
            held = {l for l, s in need.items() if p in s} | {l for l in share if int(sigma[l]) == p}
            mem_f[p] += len(held) * Ks[n] * 8
    return modes, mem_t, mem_p, mem_f, Khat


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("P", [1, 3, 8])
def test_metrics_match_brute_force(make_tensor, name, P):
    t = make_tensor(11 + P, dims=(7, 9, 5), nnz=90)
    d = SCHEMES[name](t, P, seed=2, **({"threads": 1} if name == "hyper" else {}))
    Ks = [3, 2, 4]
    m = compute_metrics(t, d, K=Ks)
    Qs = [4 * k for k in Ks]
    modes, mem_t, mem_p, mem_f, Khat = brute_force(t, d, Ks, Qs, m.owners)
    assert m.modes == modes
    assert all(tuple(x) == MODE_KEYS for x in [list(mm) for mm in m.modes])
    agg = m.aggregate
    assert set(AGGREGATE_KEYS) <= set(agg)
    assert agg["mem_tensor_mb"] == pytest.approx(np.mean(mem_t) / 1e6)
    assert agg["mem_tensor_mb_max"] == pytest.approx(max(mem_t) / 1e6)
    assert agg["mem_penultimate_mb"] == pytest.approx(np.mean(mem_p) / 1e6)
    assert agg["mem_penultimate_mb_max"] == pytest.approx(max(mem_p) / 1e6)
    assert agg["mem_factor_mb"] == pytest.approx(np.mean(mem_f) / 1e6)
    assert agg["mem_factor_mb_max"] == pytest.approx(max(mem_f) / 1e6)
    assert agg["svd_volume"] == sum(x["svd_volume"] for x in modes)
    assert agg["fm_volume"] == sum(x["fm_volume"] for x in modes)
    wt = np.array(Khat, float)
    ws = np.array([q * k for q, k in zip(Qs, Khat)], float)
    assert agg["e_max"] == pytest.approx(sum(w * x["e_max"] for w, x in zip(wt, modes)) / wt.sum())
    assert agg["r_sum"] == pytest.approx(sum(w * x["r_sum"] for w, x in zip(ws, modes)) / ws.sum())
    assert agg["ttm_imbalance"] == pytest.approx(
        sum(w * x["e_max"] for w, x in zip(wt, modes)) / (wt.sum() * t.nnz / P))
    assert agg["svd_redundancy"] == pytest.approx(
        sum(w * x["r_sum"] for w, x in zip(ws, modes)) / sum(w * x["slices"] for w, x in zip(ws, modes)))
    if not d.multi_policy:     # §4.2: uni-policy FM volume is K_n (R_sum − L_n)
        for x, k in zip(modes, Ks):
            assert x["fm_volume"] == k * (x["r_sum"] - x["slices"])
    if name == "coarse":
        assert all(x["r_sum"] == x["slices"] and x["svd_volume"] == 0 for x in modes)
    row = m.row()
    assert row["mode_metrics"] == modes and row["e_max"] == agg["e_max"]


def test_row_owner_greedy():
    # slice 0 shared by {0,1,2} (weight 2), slices 1 and 2 by {0,1} (weight 1), slice 3 good on 2
    index = np.array([0, 0, 0, 1, 1, 2, 2, 3])
    policy = np.array([0, 1, 2, 0, 1, 1, 0, 2])
    s, p = sharer_pairs(index, policy, 3)
    assert list(zip(s.tolist(), p.tolist())) == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (2, 0), (2, 1), (3, 2)]
    sigma = row_owners_from_pairs(s, p, 5, 3)
    assert sigma.tolist() == [0, 1, 1, 2, -1]


def test_row_owners_valid_for_schemes(make_tensor):
    t = make_tensor(9, dims=(20, 15, 10), nnz=400)
    for name in ("lite", "medium"):
        d = SCHEMES[name](t, 6)
        for n in range(3):
            sigma = row_owners(t, d.policy(n), n, 6)
            idx = t.coords[:, n]
            for l in range(t.dims[n]):
                sharers = set(d.policy(n)[idx == l].tolist())
                assert (sigma[l] in sharers) if sharers else sigma[l] == -1


def test_metrics_custom_owners_and_q(make_tensor):
    t = make_tensor(1, dims=(6, 6, 6), nnz=80)
    d = SCHEMES["lite"](t, 4)
    m1 = compute_metrics(t, d, K=5)
    m2 = compute_metrics(t, d, K=5, Q=[1, 1, 1], owners=m1.owners)
    for a, b in zip(m1.modes, m2.modes):
        assert b["svd_volume"] * 20 == a["svd_volume"] and a["fm_volume"] == b["fm_volume"]


def test_metrics_single_rank_is_optimal(make_tensor):
    t = make_tensor(2)
    for name in ("lite", "coarse", "medium"):
        m = compute_metrics(t, SCHEMES[name](t, 1), K=4)
        for x in m.modes:
            assert x["e_max"] == t.nnz and x["r_sum"] == x["slices"] == x["r_max"]
            assert x["svd_volume"] == 0 and x["fm_volume"] == 0
        assert m.aggregate["ttm_imbalance"] == 1 and m.aggregate["svd_redundancy"] == 1


def test_bad_policy_rejected(make_tensor):
    t = make_tensor(0)
    bad = Distribution("x", 2, (np.full(t.nnz, 2, dtype=np.int32),) * 3, False)
    with pytest.raises(ValueError, match="outside"):
        compute_metrics(t, bad)
