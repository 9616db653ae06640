"""σ_n at home ranks (bench/tucker/mpi/comm.py): the balance against one global greedy, the rule's
cost, and the MPI RowOwners equal to the serial row_owners at 1, 2 and 3 ranks."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from spbench.tucker.mpi.comm import SWEEPS, RowOwners, row_owners, row_owners_from_pairs, sharer_pairs
from spbench.tucker.mpi.collectives import LocalComm
from spbench.tucker.schemes import SCHEMES
from spbench.tucker.schemes.hyper import available as hyper_available

HERE = Path(__file__).parent
MPIEXEC = Path(sys.executable).parent / "mpiexec"


def global_greedy(slices, procs, length, P):
    """One greedy over all shared slices (every rank seeing every pair): decreasing weight
    s_l − 1 (ties: slice id), each to the least loaded sharer (ties: lowest rank)."""
    owner = np.full(length, -1, dtype=np.int32)
    counts = np.bincount(slices, minlength=length)
    starts = np.concatenate([[0], np.cumsum(counts)])
    good = np.flatnonzero(counts == 1)
    owner[good] = procs[starts[good]]
    bad = np.flatnonzero(counts > 1)
    load = [0] * P
    for l in bad[np.argsort(-counts[bad], kind="stable")].tolist():
        best = min(procs[starts[l]:starts[l + 1]].tolist(), key=load.__getitem__)
        load[best] += int(counts[l]) - 1
        owner[l] = best
    return owner


def received_max(slices, owner, length, P):
    """Largest number of words a rank receives per Z·x: Σ over its shared slices of s_l − 1."""
    counts = np.bincount(slices, minlength=length)
    shared = np.flatnonzero(counts > 1)
    return int(np.bincount(owner[shared], weights=counts[shared] - 1, minlength=P).max()) if shared.size else 0


def tensor(make_tensor, nmodes):
    return (make_tensor(1, dims=(60, 45, 35), nnz=2500) if nmodes == 3
            else make_tensor(2, dims=(60, 50, 40, 30), nnz=6000))


SCHEME_NAMES = ["lite", "coarse", "medium"] + (["hyper"] if hyper_available() else [])


@pytest.mark.slow
@pytest.mark.parametrize("nmodes", [3, 4])
@pytest.mark.parametrize("name", SCHEME_NAMES)
def test_balance_within_10_percent_of_global_greedy(make_tensor, name, nmodes):
    t = tensor(make_tensor, nmodes)
    params = {"threads": 1, "preset": "deterministic"} if name == "hyper" else {}
    for P in range(2, 9):
        d = SCHEMES[name](t, P, seed=1, **params)
        for n in range(t.nmodes):
            s, p = sharer_pairs(t.coords[:, n], d.policy(n), P)
            ref = received_max(s, global_greedy(s, p, t.dims[n], P), t.dims[n], P)
            sigma = row_owners_from_pairs(s, p, t.dims[n], P)
            assert all(sigma[s[i]] in p[s == s[i]] for i in range(0, s.size, 7))   # an owner shares its slice
            got = received_max(s, sigma, t.dims[n], P)
            assert got <= 1.1 * ref, f"{name}, P = {P}, mode {n}: {got} words vs {ref} by the global greedy"


def test_rule_cost_counts_shared_slices_only(make_tensor):
    """The greedy scans the sharers of the shared slices, SWEEPS times; good slices are vectorized."""
    t = make_tensor(3, dims=(40, 30, 20), nnz=1500)
    P = 5
    pol = np.random.default_rng(0).integers(0, P, t.nnz)
    s, p = sharer_pairs(t.coords[:, 0], pol, P)
    stats = {}
    row_owners_from_pairs(s, p, t.dims[0], P, stats)
    counts = np.bincount(s)
    assert stats["good"] == np.count_nonzero(counts == 1)
    assert stats["shared"] == np.count_nonzero(counts > 1)
    assert stats["steps"] == SWEEPS * int(counts[counts > 1].sum())
    assert stats["rounds"] == SWEEPS * len(np.unique(s[np.isin(s, np.flatnonzero(counts > 1))] % P))


def test_row_owner_ties_spread_over_ranks():
    """Slices shared by every rank with equal weights: ties do not pile load on low ranks."""
    P, L = 4, 40
    s = np.repeat(np.arange(L), P)
    p = np.tile(np.arange(P), L)
    sigma = row_owners_from_pairs(s, p, L, P)
    assert np.bincount(sigma, minlength=P).tolist() == [L // P] * P


def test_local_comm_row_owners(make_tensor):
    t = make_tensor(4)
    comm = LocalComm()
    rows = np.unique(t.coords[:, 1])
    ro = RowOwners.compute(comm, rows, t.dims[1])
    assert ro.owners.dtype == np.int32 and (ro.owners == 0).all() and ro.stats["shared"] == 0
    assert (ro.lookup(comm, rows[::2]) == 0).all()
    assert (row_owners(t, np.zeros(t.nnz, np.int32), 1, 1)[rows] == 0).all()
    with pytest.raises(ValueError, match="empty slice"):
        ro.lookup(comm, np.array([t.dims[1] + 5]))


@pytest.mark.mpi
@pytest.mark.skipif(not MPIEXEC.exists(), reason=f"no mpiexec beside {sys.executable}")
@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_row_owners_under_mpi_equal_serial(tmp_path, ranks):
    out = tmp_path / "report.json"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.run([str(MPIEXEC), "-n", str(ranks), sys.executable, "-m", "mpi4py",
                           str(HERE / "mpi_scripts" / "check_row_owners.py"), str(out)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(out.read_text())
    assert len(report) == 2 * 4 * (3 + 4)
    bad = [e["check"] for e in report if not e["ok"]]
    assert not bad, bad


def test_no_chain_without_shared_slices(make_tensor):
    """CoarseG shares no slice: every owner is the sole sharer, decided without a chain round."""
    t = make_tensor(5, dims=(30, 20, 10), nnz=800)
    d = SCHEMES["coarse"](t, 4, seed=0)
    for n in range(t.nmodes):
        s, p = sharer_pairs(t.coords[:, n], d.policy(n), 4)
        stats = {}
        sigma = row_owners_from_pairs(s, p, t.dims[n], 4, stats)
        assert stats["rounds"] == 0 and stats["steps"] == 0 and stats["good"] == s.size
        assert np.array_equal(sigma[s], p)
