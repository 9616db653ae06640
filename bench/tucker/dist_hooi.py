"""HOOI under MPI (tucker-lite-distribution §2.2 Figure 2, §3 Figures 4–5, §4.2).

Per mode n, rank p holds E_n^p (a :class:`~.dist_schemes.DistributedTensor`) and:

1. TTM: the single-process kernel (:func:`.hooi.ttm`) over a :class:`~.hooi.TTMPlan` of its
   elements into the compact local Z_n^p (R_n^p rows = the slices p shares, K̂_n columns).
2. SVD: :func:`.lanczos_svd`, unchanged, with the distributed oracle :class:`DistOracle`
   (Figure 5). ``Z·x``: local products on the compact rows, the partial sums of shared rows sent
   point to point (one precomputed Alltoallv) to their owners σ_n(l) (:mod:`.comm`'s greedy over
   the gathered sharer pairs), where they are accumulated. ``y·Z``: the owner of row l sends y(l)
   to the other sharers of Slice_n^l (the reverse Alltoallv), every rank multiplies its compact
   rows, an Allreduce sums. Each product moves exactly R_n^sum − L_n words (checked at setup).
   The Lanczos bases are replicated on every rank (the same computation everywhere, as
   ``hooi.hooi`` promised: only the plans and the oracle change), so after the reduction the
   owners' rows of Z·x are Allgatherv'd (L_n words per product, the same for every scheme; in
   SLEPc this is the Allreduce of the distributed inner products) and counted apart
   (``gather_words``), never in ``svd_words``.
3. The K_n leading left singular vectors become rows F̃_n[l, :] at their owners σ_n(l) only;
   factor transfer: the owner sends F̃_n[l, :] to every other rank that needs it for the next
   TTMs: ranks owning an element of Slice_n^l under some π_j, j ≠ n (= the sharers for a
   uni-policy scheme). Measured words = ``metrics.compute_metrics``' fm_volume.

Core (after each invocation, as hooi.hooi): G_(N) = F_Nᵀ Z_N by the y·Z path with the K_N
columns of F_N as a batch (owners send F_N[l, :] to the sharers, local products, Allreduce;
``core_words``), fit = 1 − √(‖T‖² − ‖G‖²)/‖T‖ with ‖T‖² by an Allreduce.

Timers (local seconds, the worker takes max over ranks): ``ttm_time``, ``svd_time`` (Lanczos
with its oracle communication), ``fm_time`` (factor transfer), ``core_time``, ``comm_time``
(all communication inside HOOI: oracle exchanges, Allreduces and Allgatherv, factor transfer,
core), ``hooi_time`` (the invocations, core included), ``plan_time`` (TTM plans, σ_n and the
Alltoallv plans, done once before HOOI).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import threadpool_limits

from .comm import row_owners_from_pairs
from .dist_schemes import DistributedTensor, Exchange, _allreduce, allgatherv, alltoallv
from .hooi import init_factors, tucker_fit
from .ttm import TTMPlan, fold, khat, ttm, ttm_scratch_len
from .lanczos import lanczos_svd
from .tensor import SparseTensor, unique_sorted

__all__ = ["ModePlan", "DistOracle", "DistHOOIResult", "build_mode_plans", "dist_hooi", "gather_factors"]


class _Clock:
    """Accumulates the seconds spent in communication calls."""

    def __init__(self):
        self.seconds = 0.0

    def __enter__(self):
        self._t = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds += time.perf_counter() - self._t


@dataclass
class ModePlan:
    """Everything rank p needs for mode n: TTM plan, σ_n, and the Alltoallv plans."""

    mode: int
    ttm: TTMPlan
    m: int                     # L_n: non-empty slices (rows of the global compact Z_n)
    r_sum: int                 # R_n^sum
    r_p: int                   # R_n^p
    sigma: np.ndarray          # σ_n over [0, L), −1 for empty slices
    own_idx: np.ndarray        # local compact rows p owns (increasing slice id)
    own_g: np.ndarray          # their global compact rows
    send_idx: np.ndarray       # local compact rows whose partial sums go to their owner, by (owner, slice)
    send_counts: np.ndarray    # per owner
    recv_pos: np.ndarray       # local compact rows (owned) receiving partials, by (sharer, slice)
    recv_g: np.ndarray         # their global compact rows
    recv_counts: np.ndarray    # per sharer
    gather_pos: np.ndarray     # global compact row of every entry of the Allgatherv of owned rows
    own_counts: np.ndarray     # owned rows per rank
    fm_send_slices: np.ndarray  # slices of F_n this rank (owner) sends, by destination
    fm_send_counts: np.ndarray
    fm_recv_slices: np.ndarray  # slices of F_n this rank receives, by source (owner)
    e_p: int = 0               # |E_n^p|
    reduce_x: Exchange = None  # Z·x partial sums: sharers → owners
    bcast_y: Exchange = None   # y·Z values: owners → sharers
    fm: Exchange = None        # factor rows: owners → ranks that need them
    gather_counts: tuple = ()  # int32 (counts, displacements) of the Allgatherv of owned rows


def _owner_split(sigma_of_rows: np.ndarray, P: int):
    order = np.argsort(sigma_of_rows, kind="stable")
    return order, np.bincount(sigma_of_rows, minlength=P).astype(np.int64)


def build_mode_plans(comm, dt: DistributedTensor):
    """Local tensor(s), TTM plans and the communication plans of every mode."""
    P, p, N = comm.size, comm.rank, dt.nmodes
    # one local tensor holding every set (elements may repeat across modes: no duplicate summing)
    if dt.multi_policy:
        sets = dt.sets
        offs = np.zeros(N + 1, dtype=np.int64)
        np.cumsum([s.size for s in sets], out=offs[1:])
        coords = np.concatenate([s.coords for s in sets]) if offs[-1] else np.zeros((0, N), np.int64)
        values = np.concatenate([s.values for s in sets]) if offs[-1] else np.zeros(0)
        local = SparseTensor(coords, values, dt.dims, sum_duplicates=False, check=False)
        ttm_plans = [TTMPlan.build(local, n, np.arange(offs[n], offs[n + 1])) for n in range(N)]
    else:
        s = dt.sets[0]
        local = SparseTensor(s.coords, s.values, dt.dims, sum_duplicates=False, check=False)
        ttm_plans = [TTMPlan.build(local, n) for n in range(N)]
    plans = []
    for n in range(N):
        L = dt.dims[n]
        tp = ttm_plans[n]
        rows = tp.rows
        # sharer pairs of every slice, gathered everywhere (setup only)
        key_local = rows * P + p
        keys, _ = allgatherv(comm, key_local)
        keys.sort()
        s_all, p_all = keys // P, keys % P
        sigma = row_owners_from_pairs(s_all, p_all, L, P)
        nonempty = unique_sorted(s_all)
        m = int(nonempty.size)
        comp = np.full(L, -1, dtype=np.int64)
        comp[nonempty] = np.arange(m)
        sig_rows = sigma[rows].astype(np.int64)
        own_idx = np.flatnonzero(sig_rows == p)
        own_g = comp[rows[own_idx]]
        nonown = np.flatnonzero(sig_rows != p)
        o, send_counts = _owner_split(sig_rows[nonown], P)
        send_idx = nonown[o]
        # partials p receives: pairs (l, q) with σ(l) = p, q ≠ p, by (q, l)
        mine = (sigma[s_all] == p) & (p_all != p)
        rs, rq = s_all[mine], p_all[mine]
        o = np.lexsort((rs, rq))
        rs, rq = rs[o], rq[o]
        recv_pos = np.searchsorted(rows, rs)
        recv_counts = np.bincount(rq, minlength=P).astype(np.int64)
        # Allgatherv of owned rows: concatenation by rank, then slice id
        sig_ne = sigma[nonempty].astype(np.int64)
        gather_pos = np.argsort(sig_ne, kind="stable")
        own_counts = np.bincount(sig_ne, minlength=P).astype(np.int64)
        # factor transfer: slices of mode n this rank needs for the TTMs of modes j ≠ n
        if dt.multi_policy:
            need = unique_sorted(np.concatenate([dt.sets[j].coords[:, n] for j in range(N) if j != n])
                                 if N > 1 else np.zeros(0, np.int64))
        else:
            need = rows if N > 1 else np.zeros(0, np.int64)
        need = need[sigma[need] != p]
        o, req_counts = _owner_split(sigma[need].astype(np.int64), P)
        fm_recv_slices = need[o]
        fm_send_slices, fm_send_counts = alltoallv(comm, fm_recv_slices, req_counts)
        gdispl = np.zeros_like(own_counts)
        np.cumsum(own_counts[:-1], out=gdispl[1:])
        r_sum = int(keys.size)
        moved = int(comm.allreduce(int(send_idx.size)))
        if moved != r_sum - m or int(comm.allreduce(int(rs.size))) != r_sum - m:
            raise RuntimeError(f"mode {n}: oracle plan moves {moved} words per product, "
                               f"expected R_sum − L_n = {r_sum - m}")
        plans.append(ModePlan(n, tp, m, r_sum, int(rows.size), sigma, own_idx, own_g, send_idx, send_counts,
                              recv_pos, comp[rs], recv_counts, gather_pos, own_counts,
                              np.ascontiguousarray(fm_send_slices), fm_send_counts,
                              np.ascontiguousarray(fm_recv_slices),
                              int(tp.elems.size), Exchange(send_counts, recv_counts),
                              Exchange(recv_counts, send_counts), Exchange(fm_send_counts, req_counts),
                              (own_counts.astype(np.int32), gdispl.astype(np.int32))))
    return local, plans


class DistOracle:
    """Figure 5's oracle over the compact local Z_n^p: ``matvec`` (Z·x, point-to-point reduction
    at the owners, then the owned rows Allgatherv'd) and ``rmatvec`` (owners send y(l) to the
    sharers, local products, Allreduce). Counts queries and words; ``clock`` times the calls."""

    def __init__(self, comm, Z: np.ndarray, plan: ModePlan, clock: _Clock):
        self.comm, self.Z, self.plan, self.clock = comm, Z, plan, clock
        self.queries = 0
        self.words = 0          # words this rank sent in the point-to-point exchanges
        self.gather_words = 0   # words this rank received in the Allgatherv of owned rows
        self.shape = (plan.m, Z.shape[1])

    def matvec(self, x):
        from mpi4py import MPI
        pl = self.plan
        xp = self.Z @ np.asarray(x, dtype=np.float64)
        with self.clock:
            recv = pl.reduce_x(self.comm, xp[pl.send_idx])
        np.add.at(xp, pl.recv_pos, recv)
        owned = np.ascontiguousarray(xp[pl.own_idx])
        out_buf = np.empty(pl.m)
        with self.clock:
            self.comm.Allgatherv([owned, MPI.DOUBLE], [out_buf, pl.gather_counts, MPI.DOUBLE])
        out = np.empty(pl.m)
        out[pl.gather_pos] = out_buf
        self.queries += 1
        self.words += int(pl.send_idx.size)
        self.gather_words += int(pl.m - pl.own_idx.size)
        return out

    def rmatvec(self, y):
        return self.rmatmat(np.asarray(y, dtype=np.float64)[:, None], count_query=True)[:, 0]

    def rmatmat(self, Y, count_query: bool = False):
        """Zᵀ·Y for a (m × k) Y replicated on every rank (owners' rows are the ones used)."""
        from mpi4py import MPI
        pl = self.plan
        Y = np.asarray(Y, dtype=np.float64)
        k = Y.shape[1]
        with self.clock:
            recv = pl.bcast_y(self.comm, Y[pl.recv_g], width=k)
        Yp = np.empty((pl.r_p, k))
        Yp[pl.own_idx] = Y[pl.own_g]
        Yp[pl.send_idx] = recv
        part = np.ascontiguousarray(self.Z.T @ Yp)
        out = np.empty_like(part)
        with self.clock:
            self.comm.Allreduce(part, out, op=MPI.SUM)
        if count_query:
            self.queries += 1
        self.words += int(pl.recv_g.size) * k
        return out


@dataclass
class DistHOOIResult:
    """This rank's view: its factor rows (owned + received), fits, local timers, per-mode counts
    summed over ranks (``svd_words``, ``fm_words``, ``gather_words``) and per-mode metrics."""

    factors: list
    owned_rows: list           # per mode: slice ids whose row this rank owns (σ_n(l) = p)
    core: np.ndarray
    fits: list
    times: dict
    queries: list
    restarts: list             # per mode: Lanczos thick restarts, summed over invocations
    svd_words: list
    fm_words: list
    gather_words: list
    core_words: int
    mode_stats: list = field(default_factory=list)

    @property
    def fit(self) -> float:
        return self.fits[-1]


def dist_hooi(comm, dt: DistributedTensor, K, *, invocations: int = 1, init="random", seed: int = 0,
              threads: int = 1, tol: float = 1e-8, ncv: int | None = None) -> DistHOOIResult:
    """HOOI (Figure 2) on the distributed tensor ``dt``; the same arithmetic as ``hooi.hooi``
    (same init, Lanczos seeds seed + n, Gauss–Seidel order), so fits and factor subspaces agree
    with it to rounding."""
    from mpi4py import MPI

    N = dt.nmodes
    K = [int(K)] * N if np.ndim(K) == 0 else [int(k) for k in K]
    if len(K) != N or min(K) < 1:
        raise ValueError(f"K must be positive, one per mode ({N}), got {K}")
    if not (init == "random" or isinstance(init, (list, tuple))):
        raise ValueError(f"distributed HOOI supports init='random' or a list of matrices, not {init!r}")
    threads = max(1, int(threads))
    times = dict.fromkeys(("plan_time", "init_time", "ttm_time", "svd_time", "fm_time", "core_time",
                           "comm_time", "hooi_time"), 0.0)
    clock = _Clock()
    with threadpool_limits(limits=threads):
        t0 = time.perf_counter()
        local, plans = build_mode_plans(comm, dt)
        Z = [np.empty((plans[n].r_p, khat(K, n))) for n in range(N)]
        scratch = np.empty((threads, max(ttm_scratch_len(K, n) for n in range(N))))
        norm2 = np.empty(1)
        own0 = dt.sets[0].values          # every element once over the ranks (π_0)
        comm.Allreduce(np.array([float(np.dot(own0, own0))]), norm2, op=MPI.SUM)
        norm_t = float(np.sqrt(norm2[0]))
        times["plan_time"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        F = init_factors(local, K, init, seed, tol=tol)
        times["init_time"] = time.perf_counter() - t0
        queries = [0] * N
        restarts = [0] * N
        words = [0] * N
        gwords = [0] * N
        fm_words = [0] * N
        core_words = 0
        fits, core = [], None
        comm.Barrier()
        t_hooi = time.perf_counter()
        for _ in range(int(invocations)):
            for n in range(N):
                pl = plans[n]
                t0 = time.perf_counter()
                ttm(local, pl.ttm, F, out=Z[n], scratch=scratch, threads=threads)
                t1 = time.perf_counter()
                orc = DistOracle(comm, Z[n], pl, clock)
                res = lanczos_svd(orc.matvec, orc.rmatvec, orc.shape, K[n], ncv=ncv, tol=tol, seed=seed + n)
                t2 = time.perf_counter()
                # rows of F̃_n at their owners, then the factor transfer
                Fn = np.zeros((dt.dims[n], K[n]))
                Fn[pl.ttm.rows[pl.own_idx]] = res.U[pl.own_g]
                with clock:
                    recv = pl.fm(comm, Fn[pl.fm_send_slices], width=K[n])
                Fn[pl.fm_recv_slices] = recv
                F[n] = Fn
                t3 = time.perf_counter()
                times["ttm_time"] += t1 - t0
                times["svd_time"] += t2 - t1
                times["fm_time"] += t3 - t2
                queries[n] += orc.queries
                restarts[n] += int(res.restarts)
                words[n] += orc.words
                gwords[n] += orc.gather_words
                fm_words[n] += int(pl.fm_send_slices.size) * K[n]
            # core: G_(N) = F_Nᵀ Z_N through the y·Z path (owners send their rows to the sharers)
            t0 = time.perf_counter()
            pl = plans[N - 1]
            Y = np.zeros((pl.m, K[N - 1]))
            Y[pl.own_g] = F[N - 1][pl.ttm.rows[pl.own_idx]]
            orc = DistOracle(comm, Z[N - 1], pl, clock)
            G_last = orc.rmatmat(Y).T
            core_words += orc.words
            core = fold(G_last, N - 1, tuple(K))
            fits.append(tucker_fit(norm_t, float(np.linalg.norm(G_last))))
            times["core_time"] += time.perf_counter() - t0
        times["hooi_time"] = time.perf_counter() - t_hooi
    times["comm_time"] = clock.seconds
    tot = lambda xs: [int(v) for v in _allreduce(comm, np.array(xs, dtype=np.int64))]  # noqa: E731
    e_p = np.array([pl.e_p for pl in plans], dtype=np.int64)
    r_p = np.array([pl.r_p for pl in plans], dtype=np.int64)
    e_max = _allreduce(comm, e_p, op=MPI.MAX)
    r_max = _allreduce(comm, r_p, op=MPI.MAX)
    stats = [{"mode": n, "length": int(dt.dims[n]), "slices": plans[n].m, "e_max": int(e_max[n]),
              "r_sum": plans[n].r_sum, "r_max": int(r_max[n]),
              "svd_words_per_product": plans[n].r_sum - plans[n].m} for n in range(N)]
    return DistHOOIResult(F, [pl.ttm.rows[pl.own_idx] for pl in plans], core, fits, times, queries, restarts,
                          tot(words), tot(fm_words), tot(gwords), int(comm.allreduce(core_words)), stats)


def gather_factors(comm, dims, result: DistHOOIResult, root: int = 0):
    """The full factor matrices on ``root`` (each row from its owner; empty slices 0), None elsewhere."""
    out = []
    for n, rows in enumerate(result.owned_rows):
        parts = comm.gather((rows, result.factors[n][rows]), root=root)
        if comm.rank == root:
            F = np.zeros((dims[n], result.factors[n].shape[1]))
            for r, v in parts:
                F[r] = v
            out.append(F)
    return out if comm.rank == root else None
