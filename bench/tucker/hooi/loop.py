"""HOOI, one loop for one rank or many (tucker-lite-distribution §2.2 Figure 2, §3 Figures 4–5,
§4.2). On one process the communicator is :class:`.mpi.LocalComm` and every
exchange is a local copy: the same code path as the MPI run (SPLATT's rule: the serial case is
P = 1 of the distributed one).

Per invocation, for every mode n in turn (Gauss–Seidel order):

1. TTM (:func:`.ttm.ttm`) of this rank's elements of π_n into the compact local Z_n^p
   (R_n^p rows = the slices it shares, K̂_n columns), allocated for the current mode only;
2. the K_n leading left singular vectors by :func:`.lanczos.lanczos_svd` (``lanczos: paper``: 2K_n
   steps, Q_n = 4K_n queries; or ``converged``) through the :class:`Oracle` of Figure 5: ``Z·x``
   = local products, partial sums of shared rows sent to their owners σ_n(l), who keep the answer
   (no rank gathers L_n words); ``y·Z`` = owners send y(l) to the other sharers, local products,
   an Allreduce of K̂_n words. The left vectors live at the owners (:class:`.lanczos.CommRows`);
3. F_n's owned rows = those vectors; the factor transfer sends each to the ranks that need it
   for the next TTMs (:mod:`.mode_plan`).

Core after each invocation: G_(N) = F_Nᵀ Z_N through the y·Z path with K_N columns; fit =
1 − √(‖T‖² − ‖G‖²)/‖T‖ with ‖T‖² by an Allreduce (nan for a zero tensor: 0/0). A tensor whose
‖T‖² overflows double precision is refused before the start (:class:`NormOverflow`, on every
rank alike): its Lanczos norms would be inf and its SVD fail.

Memory per rank (§7.3): beside the trees and the factors, one mode's Z_n and its Lanczos basis.
F_n is read by neither mode n's TTM nor its SVD, so it is dropped before the TTM and rebuilt
from the new vectors; the core is formed right after mode N's SVD, so Z_N is gone before F_N
is rebuilt and transferred (in column blocks, :data:`TRANSFER_WORDS`); the heap's free pages go
back to the system before each TTM (:func:`return_free_memory`).

Counters: ``svd_words``/``fm_words`` per mode (point-to-point words sent, summed over ranks: the
paper's SVD and factor-transfer volumes), ``svd_gather_words`` (0: nothing is gathered),
``words_sent_recv`` (this rank's words sent plus received in HOOI, point to point and collective
payloads, an Allreduce of k words counting 2k; 0 on one process, which sends nothing).

Timers (local seconds). ``hooi_time`` is partitioned (Fig. 11's breakup, §7.2), every second of
it in exactly one of :data:`PARTITION`: ``ttm_time`` (the local TTMs), ``svd_time`` (the
Lanczos runs' local work, the oracle's products included), ``comm_time`` (every message: the
oracle's exchanges and Allreduces, the Lanczos Allreduces, the factor transfers, the core's;
the MPI call alone: packing a send buffer and unpacking the received one are the phase's local work),
``other_time`` (the rest: the core's local product, rebuilding F_n, the fit). Beside them, not
part of the partition: ``fm_time`` (the factor transfers' messages, within ``comm_time``),
``core_time`` (forming the core and the fit, within ``other_time`` and ``comm_time``),
``plan_time`` and ``init_time`` (before HOOI). ``mode_times``: the partition of each mode's share
on this rank; ``messages``: per message term of the cost model, this rank's calls, words and
seconds; ``message_trace`` (``trace_messages``): each call's entry and exit, whose waiting for the
other ranks :func:`split_waits` tells apart from its transfer.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import threadpool_limits

from spbench.tucker.hooi.factor_start import hosvd_rows, orthonormalize_rows, random_rows
from spbench.tucker.hooi.lanczos import LANCZOS_MODES, CommRows, lanczos_svd
from spbench.tucker.mpi.mode_plan import build_plans, release_elements
from spbench.tucker.mpi.collectives import LocalComm, allreduce
from spbench.datasets.sparse_tensor import SparseTensor
from spbench.tucker.hooi.ttm import TTM_KINDS, fold, khat, ttm_scratch_len
from spbench.tucker.hooi.ttm import ttm as local_ttm
from spbench.tucker.row_status import OVERFLOW

__all__ = ["hooi", "hooi_distributed", "HOOIResult", "Oracle", "tucker_fit", "gather_factors", "PARTITION",
           "NormOverflow", "split_waits"]


#: the components that partition ``hooi_time`` (module docstring)
PARTITION = ("ttm_time", "svd_time", "comm_time", "other_time")


class _Clock:
    """Accumulates the seconds spent in communication calls (``seconds``) and tallies them per
    message term of the cost model (:meth:`message`: calls, words, seconds; tucker-lite §4.2's
    volumes). With ``trace`` (the model validation's setting) it also keeps every tagged call's
    (term, mode, entry, exit) times, from which :func:`split_waits` tells the waiting for the
    other ranks apart from the transfer without adding a message."""

    def __init__(self, trace: bool = False):
        self.seconds = 0.0
        self.tally: dict = {}          # term -> [calls, words, seconds]
        self.trace = [] if trace else None
        self.mode = None               # the mode the calls are made for (set by the partition)
        self._term, self._words = None, 0

    def message(self, term: str, words: int) -> "_Clock":
        """Tag the next timed call as one message of ``term`` carrying ``words`` words (this
        rank's larger of sent and received)."""
        self._term, self._words = term, int(words)
        return self

    def __enter__(self):
        self._t = time.perf_counter()
        return self

    def __exit__(self, *exc):
        t = time.perf_counter()
        self.seconds += t - self._t
        if self._term is not None:
            row = self.tally.setdefault(self._term, [0, 0, 0.0])
            row[0] += 1
            row[1] += self._words
            row[2] += t - self._t
            if self.trace is not None:
                self.trace.append((self._term, -1 if self.mode is None else self.mode, self._t, t))
            self._term = None


def split_waits(traces: list) -> list:
    """Per rank, the seconds of each traced call (:class:`_Clock` ``trace`` of every rank, the
    same calls in the same order: collectives) spent waiting for the last rank to enter it:
    min(last entry − own entry, the call's own seconds), ≥ 0. One machine's monotonic clock is
    shared by its processes, so the entries compare; None when the ranks' calls differ."""
    if not traces or len({len(t) for t in traces}) != 1 or any(
            [c[0] for c in t] != [c[0] for c in traces[0]] for t in traces[1:]):
        return None
    enter = np.array([[c[2] for c in t] for t in traces], dtype=float).reshape(len(traces), -1)
    spent = np.array([[c[3] - c[2] for c in t] for t in traces], dtype=float).reshape(len(traces), -1)
    return [row.tolist() for row in np.clip(np.minimum(enter.max(axis=0) - enter, spent), 0.0, None)]


class _Partition:
    """HOOI's time partition on this rank: :meth:`mark` gives the seconds since the previous mark
    to one component, less the messages timed by ``clock`` meanwhile, which go to ``comm_time``;
    so the components add up to :attr:`span`, the time from :meth:`start` to the last mark.
    ``mode`` (set with :meth:`enter`): the mode whose per-mode partition (``modes``) the marks also
    feed (None: none)."""

    def __init__(self, clock: _Clock, times: dict, nmodes: int = 0):
        self.clock, self.times = clock, times
        self.modes = [dict.fromkeys(PARTITION, 0.0) for _ in range(nmodes)]
        self.mode = None

    def enter(self, mode) -> None:
        """The marks from now on are mode ``mode``'s too (None: no mode's)."""
        self.mode = self.clock.mode = mode

    def start(self) -> None:
        self._t, self._c = time.perf_counter(), self.clock.seconds
        self._t0 = self._t

    @property
    def span(self) -> float:
        return self._t - self._t0

    def mark(self, component: str) -> None:
        t, c = time.perf_counter(), self.clock.seconds
        for times in (self.times, *(() if self.mode is None else (self.modes[self.mode],))):
            times[component] += (t - self._t) - (c - self._c)
            times["comm_time"] += c - self._c
        self._t, self._c = t, c


class Oracle:
    """Figure 5's oracle over the compact local Z_n^p: ``matvec`` (Z·x, partial sums reduced at
    the owners, who keep their rows) and ``rmatvec``/``rmatmat`` (owners send y(l) to the sharers,
    local products, Allreduce). Counts queries, point-to-point words sent and all words moved.
    ``terms``: the model's message terms its exchanges and its Allreduce are tallied under
    (:meth:`_Clock.message`; the core's products use ``("core_comm", "core_comm")``)."""

    def __init__(self, comm, Z: np.ndarray, plan, clock: _Clock, terms=("oracle_alltoallv", "svd_allreduce")):
        self.comm, self.Z, self.plan, self.clock = comm, Z, plan, clock
        self.terms = terms
        self._exchanged = max(int(plan.send_idx.size), int(plan.recv_pos.size))
        self.queries = 0
        self.words = 0          # point-to-point words this rank sent (the paper's SVD volume)
        self.moved = 0          # words sent + received, collectives included
        self.shape = (plan.m, Z.shape[1])
        # one process owns every row and exchanges nothing: the products alone (no copies)
        self.alone = comm.size == 1 and plan.send_idx.size == 0 and plan.own_idx.size == Z.shape[0]

    def matvec(self, x):
        pl = self.plan
        if self.alone:
            self.queries += 1
            return self.Z @ x
        xp = self.Z @ np.asarray(x, dtype=np.float64)
        send = xp[pl.send_idx]            # packed before the clock: comm_time holds the message alone
        with self.clock.message(self.terms[0], self._exchanged):
            recv = pl.reduce_x(self.comm, send)
        if recv.size:
            xp += np.bincount(pl.recv_pos, weights=recv, minlength=xp.shape[0])
        self.queries += 1
        self.words += int(pl.send_idx.size)
        self.moved += int(pl.send_idx.size + recv.size)
        return xp[pl.own_idx]

    def rmatvec(self, y_own):
        self.queries += 1
        if self.alone:
            return self.Z.T @ y_own
        return self.rmatmat(np.asarray(y_own, dtype=np.float64)[:, None])[:, 0]

    def count_direct(self, queries: int) -> None:
        """Account the queries a Lanczos run answered on Z itself (one process: compiled steps,
        nothing sent)."""
        self.queries = int(queries)

    def rmatmat(self, Y_own):
        """Zᵀ·Y for Y given by its owned rows (own × k); the result is replicated."""
        pl = self.plan
        Y_own = np.asarray(Y_own, dtype=np.float64)
        if self.alone:
            return self.Z.T @ Y_own
        k = Y_own.shape[1]
        Yp = np.empty((pl.r_p, k))
        Yp[pl.own_idx] = Y_own
        send = Yp[pl.recv_pos]
        with self.clock.message(self.terms[0], self._exchanged * k):
            got = pl.bcast_y(self.comm, send, width=k)
        Yp[pl.send_idx] = got
        part = np.ascontiguousarray(self.Z.T @ Yp)
        out = np.empty_like(part)
        with self.clock.message(self.terms[1], part.size):
            self.comm.Allreduce(part, out)
        self.words += int(pl.recv_pos.size) * k
        self.moved += int(pl.recv_pos.size + pl.send_idx.size) * k + 2 * int(part.size)
        return out


@dataclass
class HOOIResult:
    """This rank's view: its local factor rows, the core, fits, local timers and counters."""

    factors: list               # per mode: (len(factor_ids[n]), K_n) local rows (full size at P = 1 via hooi())
    factor_ids: list            # per mode: global slice ids of those rows
    owned_rows: list            # per mode: slice ids this rank owns (σ_n(l) = p)
    core: np.ndarray
    fits: list
    times: dict
    queries: list               # per mode, this rank's count (the same on every rank)
    restarts: list
    residuals: list             # per mode: largest relative residual of the K_n leading triplets
    sigmas: list
    svd_words: list = field(default_factory=list)    # per mode, summed over ranks
    fm_words: list = field(default_factory=list)
    svd_gather_words: list = field(default_factory=list)
    core_words: int = 0
    words_sent_recv: int = 0    # this rank
    plans: list = field(default_factory=list)
    norm: float | None = None   # ‖T‖ (inf: its squares overflow; 0: a zero tensor, the fit nan)
    mode_times: list = field(default_factory=list)   # per mode: this rank's partition of its share
    messages: dict = field(default_factory=dict)     # model term -> [calls, words, seconds], this rank
    message_trace: list | None = None                # (term, mode, entry, exit) per call (``trace_messages``)

    @property
    def fit(self) -> float:
        return self.fits[-1]


class NormOverflow(ArithmeticError):
    """‖T‖² is not a finite double: HOOI's norms overflow, so it cannot run on these values."""


def tucker_fit(norm_t: float, norm_g: float) -> float:
    """1 − √(‖T‖² − ‖G‖²)/‖T‖ (clamped at 0 inside the root); nan for a zero tensor (0/0)."""
    if norm_t == 0:
        return math.nan
    return float(1.0 - np.sqrt(max(norm_t ** 2 - norm_g ** 2, 0.0)) / norm_t)


def _transfer(comm, pl, F, K, clock) -> int:
    """Factor transfer of mode ``pl.mode``: owners' rows to the ranks that need them, in blocks of
    columns so that the send and receive buffers stay within about ``TRANSFER_WORDS`` words each
    beside F_n (the same block count on every rank). Returns the words this rank sent plus
    received (nothing on one process: every row is its own)."""
    if comm.size == 1:
        return 0
    step = max(1, min(K, TRANSFER_WORDS // max(pl.fm_items_max, 1)))
    for c in range(0, K, step):
        cols = slice(c, min(K, c + step))
        send = F[pl.fm_send_local, cols]   # packed before the clock, unpacked after it
        with clock.message("factor_transfer", max(pl.fm_send_local.size, pl.fm_recv_local.size) * (cols.stop - cols.start)):
            recv = pl.fm(comm, send, width=cols.stop - cols.start)
        F[pl.fm_recv_local, cols] = recv
        del send, recv
    return (int(pl.fm_send_local.size) + int(pl.fm_recv_local.size)) * K


def _updated_factor(nrows: int, pl, U: np.ndarray) -> np.ndarray:
    """F_n's local rows after its SVD: the owned rows are U's, the others zero until the factor
    transfer fills those needed here; U itself when this rank owns every local row."""
    if pl.own_local.size == nrows:
        return np.ascontiguousarray(U, dtype=np.float64)
    F = np.zeros((nrows, U.shape[1]))
    F[pl.own_local] = U
    return F


def return_free_memory() -> None:
    """Hand the heap's free pages back to the system (glibc ``malloc_trim``; nothing elsewhere):
    arrays freed below glibc's mmap threshold otherwise stay resident, and a later phase's peak
    (§7.3 memory per rank) would count them."""
    global _TRIM
    if _TRIM is None:
        try:
            import ctypes
            _TRIM = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _TRIM = False
    if _TRIM:
        _TRIM(0)


_TRIM = None
#: words per send or receive buffer of one factor-transfer call (8 MB)
TRANSFER_WORDS = 1 << 20


def _start(comm, dt, lt, plans, K, init, seed, tol):
    """Owned rows of every starting factor (see :mod:`.factor_start`), as local factor arrays."""
    N = len(plans)
    if init == "hosvd":
        rows = hosvd_rows(comm, dt.sets[0].coords, dt.sets[0].values, dt.dims, K,
                          [pl.own_ids for pl in plans], seed, tol)
    elif init == "random":
        rows = [random_rows(seed, n, plans[n].own_ids, K[n]) for n in range(N)]
    elif isinstance(init, (list, tuple)) and len(init) == N:
        rows = [np.asarray(init[n], dtype=float)[plans[n].own_ids, :K[n]] for n in range(N)]
    else:
        raise ValueError(f"init must be 'random', 'hosvd' or {N} matrices, got {init!r}")
    F = []
    total = (lambda a: allreduce(comm, np.asarray(a, dtype=np.float64)))  # noqa: E731
    for n, pl in enumerate(plans):
        Fn = np.zeros((lt.factor_ids[n].size, K[n]))
        Fn[pl.own_local] = rows[n] if init == "hosvd" else orthonormalize_rows(rows[n], total, pl.m)
        F.append(Fn)
    return F


def hooi_distributed(comm, dt, K, *, invocations: int = 1, init="random", seed: int = 0,
                     threads: int = 1, tol: float = 1e-8, lanczos: str = "paper", ncv: int | None = None,
                     progress=None, release_input: bool = False, ttm: str = "csf",
                     trace_messages: bool = False) -> HOOIResult:
    """HOOI on this rank's share ``dt`` (a :class:`.distribute.DistributedTensor`). ``K``: int or
    per mode; ``lanczos``: "paper" or "converged"; ``progress(event, **fields)`` is called on
    every rank after each invocation; ``release_input``: drop ``dt``'s element arrays once the
    local tensor and the start are built (the worker's setting: one copy of the elements);
    ``ttm``: the local TTM kernel, "csf" (compressed sparse fibers) or "paper" (Appendix A);
    ``trace_messages``: keep every message's entry and exit times (``message_trace``; the model
    validation's :func:`split_waits`)."""
    N = dt.nmodes
    K = [int(K)] * N if np.ndim(K) == 0 else [int(k) for k in K]
    if len(K) != N or min(K) < 1:
        raise ValueError(f"K must be positive, one per mode ({N}), got {K}")
    if lanczos not in LANCZOS_MODES:
        raise ValueError(f"lanczos must be one of {', '.join(LANCZOS_MODES)}, got {lanczos!r}")
    if ttm not in TTM_KINDS:
        raise ValueError(f"ttm must be one of {', '.join(TTM_KINDS)}, got {ttm!r}")
    threads = max(1, int(threads))
    times = dict.fromkeys(("plan_time", "init_time", *PARTITION, "fm_time", "core_time", "hooi_time"), 0.0)
    clock = _Clock(trace=trace_messages)
    part = _Partition(clock, times, N)
    queries, restarts, resid = [0] * N, [0] * N, [0.0] * N
    words, fm_words, sigmas = [0] * N, [0] * N, [None] * N
    moved, core_words = 0, 0
    with threadpool_limits(limits=threads):
        t0 = time.perf_counter()
        v0 = dt.sets[0].values                     # ‖T‖² before the sets are released
        local_sq = float(v0 @ v0)
        del v0
        release = release_input and init != "hosvd"   # HOSVD gathers the elements first
        lt, plans = build_plans(comm, dt, ttm, K, release=release, threads=threads)
        scratch = np.empty((threads, max(ttm_scratch_len(K, n) for n in range(N))))
        norm_t = float(np.sqrt(allreduce(comm, np.array([local_sq]))[0]))
        if not math.isfinite(norm_t):            # the same sum on every rank: all raise
            raise NormOverflow(f"{OVERFLOW} (‖T‖² = {norm_t ** 2})")
        times["plan_time"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        if release:
            release_elements(dt)
        F = _start(comm, dt, lt, plans, K, init, seed, tol)
        if release_input and init == "hosvd":
            release_elements(dt)
        for n, pl in enumerate(plans):
            _transfer(comm, pl, F[n], K[n], clock)     # the starting factors: before HOOI, not counted
        return_free_memory()
        times["init_time"] = time.perf_counter() - t0
        fits, core, G_last = [], None, None
        comm.Barrier()
        clock.tally = {}                               # HOOI's messages only
        clock.trace = [] if trace_messages else None
        part.start()
        for it in range(int(invocations)):
            for n, pl in enumerate(plans):
                # F_n is read by neither its own TTM nor its SVD: it is rebuilt from the new vectors
                F[n] = None
                return_free_memory()
                part.mark("other_time")
                part.enter(n)
                Z = local_ttm(lt.tensor, pl.ttm, F, out=np.empty((pl.r_p, khat(K, n))), scratch=scratch,
                              threads=threads)
                part.mark("ttm_time")
                orc = Oracle(comm, Z, pl, clock)
                rows = CommRows(comm, pl.own_ids, pl.m, clock)
                res = lanczos_svd(orc.matvec, orc.rmatvec, orc.shape, K[n], mode=lanczos, ncv=ncv,
                                  tol=tol, seed=seed + n, rows=rows, local_matrix=Z if orc.alone else None)
                orc.count_direct(res.queries)
                part.mark("svd_time")
                queries[n] += orc.queries
                restarts[n] += int(res.restarts)
                resid[n] = max(resid[n], res.max_residual)
                sigmas[n] = res.s
                words[n] += orc.words
                fm_words[n] += int(pl.fm_send_local.size) * K[n]
                moved += orc.moved + rows.words
                orc = rows = None
                if n == N - 1:
                    # the core from Z_N and the owned rows of F_N (res.U) before F_N is rebuilt and
                    # transferred, so that Z_N is gone when those arrays come
                    tc = time.perf_counter()
                    orc = Oracle(comm, Z, pl, clock, terms=("core_comm", "core_comm"))
                    G_last = orc.rmatmat(res.U).T
                    core_words += orc.words
                    moved += orc.moved
                    orc = None
                    times["core_time"] += time.perf_counter() - tc
                Z = None
                F[n] = _updated_factor(lt.factor_ids[n].size, pl, res.U)
                res = None
                c0 = clock.seconds
                moved += _transfer(comm, pl, F[n], K[n], clock)
                times["fm_time"] += clock.seconds - c0
                part.mark("other_time")
            part.enter(None)
            t0 = time.perf_counter()
            core = fold(G_last, N - 1, tuple(K))
            fits.append(tucker_fit(norm_t, float(np.linalg.norm(G_last))))
            times["core_time"] += time.perf_counter() - t0
            if progress is not None:
                progress("invocation", invocation=it + 1, invocations=int(invocations), fit=fits[-1])
            part.mark("other_time")
        times["hooi_time"] = part.span          # the partition's own span: its parts add up to it
    tot = lambda xs: [int(v) for v in allreduce(comm, np.array(xs, dtype=np.int64))]  # noqa: E731
    return HOOIResult(F, lt.factor_ids, [pl.own_ids for pl in plans], core, fits, times, queries, restarts,
                      resid, sigmas, tot(words), tot(fm_words), [0] * N, int(comm.allreduce(core_words)),
                      int(moved), plans, norm_t, part.modes, clock.tally, clock.trace)


def gather_factors(comm, dims, result: HOOIResult, root: int = 0):
    """The full factor matrices on ``root`` (each row from its owner; others 0), None elsewhere."""
    out = []
    for n, own in enumerate(result.owned_rows):
        loc = np.searchsorted(result.factor_ids[n], own)
        parts = comm.gather((own, result.factors[n][loc]), root=root)
        if comm.rank == root:
            F = np.zeros((dims[n], result.factors[n].shape[1]))
            for r, v in parts:
                F[r] = v
            out.append(F)
    return out if comm.rank == root else None


def hooi(tensor: SparseTensor, K, *, invocations: int = 1, init="random", seed: int = 0, threads: int = 1,
         tol: float = 1e-8, lanczos: str = "paper", ncv: int | None = None, ttm: str = "csf") -> HOOIResult:
    """HOOI of a whole tensor on this process: :func:`hooi_distributed` at P = 1 (LocalComm),
    factors returned at full size (L_n × K_n, rows of empty slices 0)."""
    from spbench.tucker.mpi.distribute import DistributedTensor, LocalElements

    comm = LocalComm()
    gids = np.arange(tensor.nnz, dtype=np.int64)
    elems = LocalElements(gids, tensor.coords, tensor.values)
    dt = DistributedTensor("local", tuple(tensor.dims), int(tensor.nnz), 1, 0, False, [elems] * tensor.nmodes,
                           [np.zeros(tensor.nnz, np.int32)] * tensor.nmodes, 0)
    res = hooi_distributed(comm, dt, K, invocations=invocations, init=init, seed=seed, threads=threads,
                           tol=tol, lanczos=lanczos, ncv=ncv, ttm=ttm)
    res.factors = gather_factors(comm, tensor.dims, res)
    res.factor_ids = [np.arange(d, dtype=np.int64) for d in tensor.dims]
    return res
