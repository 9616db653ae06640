"""Calibration of the Tucker cost model (:mod:`.model`) on this machine.

:func:`calibrate` times the real code paths of one distributed HOOI, one process, one thread
(the worker's setting: ``OMP_NUM_THREADS=1``, BLAS held at one thread), and fits (the two TTM
fits live in :mod:`.calibrate_ttm`, the fitting helpers in :mod:`.cost_fit`):

* TTM (the Cython kernel :func:`.ttm.ttm` over a :class:`.ttm.TTMPlan`) on generated tensors
  of N = 3 and 4 modes (uniform coordinates, and the power-law stand-ins of nell1, enron,
  delicious: never nell2, the validation tensor), K = 5, 10, 20 (quick: fewer and smaller), and
  one of 2M elements whose factor matrices (1M rows) are far beyond cache, as at the paper's scale,
  every mode, each call cold as in a one-invocation HOOI (caches evicted, a fresh Z), in both
  layouts of the worker: one copy (uni-policy) and N copies with mode n's plan over copy n
  (multi-policy; the worker measures those 1.2–1.5× slower, the copies here do not show it):
  t = ttm_elem·|E| + ttm_elem_khat·|E|·K̂ + ttm_row·R + ttm_row_khat·R·K̂ + ttm_local_khat·(local − |E|)·K̂
  (ttm_row: the kernel's per-row work, one small GEMM per compact row),
  local = the elements the rank holds for all modes (non-negative least squares, relative
  error weighting);
* the CSF TTM (``ttm: csf``, the default; :class:`.csf.CSFPlan` trees built as the worker builds
  them, same tensors and K, each call cold): per tree, from :func:`.csf.tree_work`,
  t = ttm_csf_leaf·(leaf flops) + ttm_csf_flop·(flops above the leaves) + ttm_csf_node·(internal
  nodes) + ttm_csf_row_khat·R·K̂ + ttm_csf_row·R + ttm_csf_miss·(factor-row reads beyond the
  per-core L2 cache, ``ttm_cache_bytes`` read from the system: :func:`.csf.gathers_beyond_cache`)
  (non-negative least squares, relative errors);
* the oracle on compact matrices Z (R × K̂): Z·x and Zᵀ·y, t = oracle_call + c(8·R·K̂)·R·K̂ with
  c = oracle_matvec_entry / oracle_rmatvec_entry measured per entry on a ladder of Z sizes from
  256 KiB to 1 GiB (``oracle_bytes``; :func:`_oracle_ladder`), read at a rank's Z by the model;
* the core's GEMM Zᵀ·Y (Y: R × K), seconds per multiply–add (``gemm_madd``);
* the Lanczos work outside the oracle (:func:`.lanczos.lanczos_svd`, ``lanczos: paper`` with
  several basis sizes ncv, no restart), with the left vectors FAR beyond cache (1–2M rows; quick:
  0.2–0.4M) as a rank's owned rows are at the paper's scale, and right vectors of K̂ up to 50000,
  fitted in turn (the constant from runs of 100 rows, whose bases are too small to count, then the
  left terms, then the right ones, each with the terms already fitted subtracted; each case's median
  over rounds that visit every case in turn): per run, lanczos_query·Q + lanczos_left_word·m·Σ_j j
  (Gram–Schmidt twice over the owned rows) + lanczos_left_row·m·ncv + lanczos_ritz_madd·m·ncv·K (U·P)
  + lanczos_right_word·K̂·Σ_j (j+1) + lanczos_right_row·K̂·ncv; the oracle is a one-nonzero-per-row Z
  (its time subtracted). The left Gram–Schmidt's cost per word is then measured again at bases of
  1 MiB to 64 MiB (``lanczos_left_bytes``, :func:`_left_ladder`: a pass streams the basis from the
  cache level it fits in; here about 0.24 ns per word in L2, 2.3 ns beyond the last-level cache);
* the distributed oracle's own work per query (:class:`.hooi.Oracle` on a one-rank communicator
  whose exchanges are local copies, minus the plain Z·x / Zᵀ·y it wraps: index gathers, the
  partial-sum accumulation, buffers): dist_oracle_call + dist_oracle_row·(R + received rows), at
  1000 to 2M shared rows with none or half of them exchanged;
* MPI α/β of ping-pong, Allreduce, Alltoallv, Allgatherv from :mod:`.mpi_microbench` (the α of the
  three collectives HOOI makes as a ladder over the working set read before the call,
  ``alpha_bytes``: warm in L2 to far beyond the last-level cache) run as
  ``mpiexec -n 2 python -m mpi4py -m spbench.tucker.calibration.mpi_microbench OUT.json`` (the mpiexec
  beside this Python). Two ranks on two cores only: with more ranks than cores the numbers are
  time slices, not latencies, and are refused. No mpiexec: the MPI part is skipped with a
  reason (``mpi.skipped``) and the model then predicts P = 1 only;
* what a message and a Lanczos query cost inside HOOI beyond those pieces timed alone
  (``alpha_allreduce_context``, ``alpha_alltoallv_context``, ``dist_query_context``): the worker at
  2 ranks on the calibration's own random tensor against the model of every cost above
  (:mod:`.in_context`).

The result is a JSON-serialisable dict: ``{"schema_version", "timestamp", "quick", "machine",
"costs": {name: seconds}, "fits": {diagnostics}, "mpi": {...}, "load"}``; :func:`save` / :func:`load`.
``load``: the machine's load over the whole calibration and the spread of the repeated timings
(:mod:`spbench.machine.load`); `spbench calibrate` refuses a busy machine unless ``--force``.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from spbench.machine.timing import interleaved_medians, median_time

from spbench.tucker.calibration.cost_fit import nnls_relative

__all__ = ["calibrate", "save", "load", "calibrate_oracle",
           "calibrate_lanczos", "calibrate_oracle_index", "calibrate_mpi", "COMPUTE_KEYS", "MPI_KEYS",
           "SCHEMA_VERSION"]

#: 4: the oracle's cost per entry is a ladder over Z's size (``oracle_bytes``); 5: the MPI α of each
#: pattern a ladder over the working set before the call (``alpha_bytes``), the left Gram–Schmidt's
#: cost per word a ladder over the left basis' size (``lanczos_left_bytes``); 6: the in-context costs
#: of a message and a query (:mod:`.in_context`), the oracle's buffer packing counted as its own work
SCHEMA_VERSION = 6
COMPUTE_KEYS = ("ttm_csf_leaf", "ttm_csf_flop", "ttm_csf_node", "ttm_csf_row_khat", "ttm_csf_row", "ttm_csf_miss",
                "ttm_cache_bytes",
                "ttm_elem", "ttm_elem_khat", "ttm_row", "ttm_row_khat", "ttm_local_khat", "oracle_call",
                "oracle_bytes", "oracle_matvec_entry", "oracle_rmatvec_entry", "gemm_madd", "lanczos_query",
                "lanczos_left_bytes", "lanczos_left_word",
                "lanczos_left_row", "lanczos_ritz_madd", "lanczos_right_word", "lanczos_right_row",
                "lanczos_local_query", "dist_oracle_call", "dist_oracle_row")
MPI_KEYS = ("alpha_p2p", "beta_p2p", "alpha_bytes", "alpha_allreduce", "beta_allreduce",
            "alpha_alltoallv", "beta_alltoallv", "alpha_allgatherv", "beta_allgatherv",
            "alpha_allreduce_context", "alpha_alltoallv_context", "dist_query_context")


# ---- oracle and GEMM ------------------------------------------------------------------------
#: bytes of Z at which the oracle's products are timed (quick: up to 64 MiB): from L2 to far past
#: the last-level cache; the model reads the cost per entry at a rank's Z from this ladder
ORACLE_LADDER = {False: tuple(2 ** k for k in (18, 20, 22, 24, 26, 27, 28, 30)),
                 True: tuple(2 ** k for k in (18, 20, 22, 24, 26))}
#: columns of the ladder's matrices (between the K̂ = 100 and 1000 of K = 10 on 3 and 4 modes)
ORACLE_LADDER_COLS = 256


def _oracle_ladder(quick: bool, call: float) -> dict:
    """Seconds per entry of Z·x and Zᵀ·y at each size of :data:`ORACLE_LADDER` (the per-call
    constant ``call`` taken off), every size timed once per round right after three untimed products
    of the same Z (a Lanczos run's queries read one Z in turn), the median kept: a product streams
    Z, so its cost per entry is that of the cache level Z stays in (on this VM about 0.28 ns up to
    64 MiB and 0.5 ns from 128 MiB on, though the system reports a 480 MiB L3)."""
    from threadpoolctl import threadpool_limits

    sizes = ORACLE_LADDER[quick]
    mats = []
    for nbytes in sizes:
        Z = np.full((max(1, nbytes // (8 * ORACLE_LADDER_COLS)), ORACLE_LADDER_COLS), 0.5)
        mats.append((Z, np.ones(Z.shape[1]), np.ones(Z.shape[0])))

    def timed(fn):
        def sample() -> float:         # warm, as in a Lanczos run, whose queries read the same Z in turn
            for _ in range(3):         # a Z read once is not yet all in the last-level cache (2-3 reads here)
                fn()
            t0 = time.perf_counter()
            fn()
            return time.perf_counter() - t0
        return sample

    cases = ([timed(lambda Z=Z, x=x: Z @ x) for Z, x, _ in mats]
             + [timed(lambda Z=Z, y=y: Z.T @ y) for Z, _, y in mats])
    with threadpool_limits(limits=1):
        secs = interleaved_medians(cases, 5 if quick else 9, warmup=1)
    entries = np.array([Z.size for Z, _, _ in mats], dtype=float)
    per = np.maximum(np.array(secs) - call, 0.0) / np.concatenate([entries, entries])
    return {"oracle_bytes": [float(8 * e) for e in entries],
            "oracle_matvec_entry": [float(v) for v in per[:len(sizes)]],
            "oracle_rmatvec_entry": [float(v) for v in per[len(sizes):]]}


def calibrate_oracle(quick: bool = False, seed: int = 0) -> dict:
    """Z·x, Zᵀ·y (one query each) on compact matrices: the per-call constant from small shapes,
    the cost per entry on a ladder of Z sizes (:func:`_oracle_ladder`); Zᵀ·Y (the core's GEMM)."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(seed)
    shapes = ([(2000, 100), (500, 400), (10000, 25), (300, 2000), (100, 20)] if quick else
              [(2000, 100), (20000, 100), (500, 400), (5000, 400), (10000, 25), (300, 2000), (2000, 8000),
               (100, 20), (500, 25)])
    reps = 10 if quick else 30
    mv, rmv, gm, feats = [], [], [], []
    with threadpool_limits(limits=1):
        for m, n in shapes:
            Z = rng.standard_normal((m, n))
            x, y = rng.standard_normal(n), rng.standard_normal(m)
            Y = rng.standard_normal((m, 10))
            mv.append(median_time(lambda: Z @ x, reps))
            rmv.append(median_time(lambda: Z.T @ y, reps))
            gm.append(median_time(lambda: Z.T @ Y, max(3, reps // 3)))
            feats.append(m * n)
    X = np.stack([np.ones(len(feats)), np.array(feats, dtype=float)], axis=1)
    c_mv, e_mv = nnls_relative(X, np.array(mv))
    c_rmv, e_rmv = nnls_relative(X, np.array(rmv))
    Xg = np.stack([np.ones(len(feats)), 10.0 * np.array(feats, dtype=float)], axis=1)
    c_g, e_g = nnls_relative(Xg, np.array(gm))
    call = float(0.5 * (c_mv[0] + c_rmv[0]))
    return {"oracle_call": call, **_oracle_ladder(quick, call), "gemm_madd": float(c_g[1]),
            "_fit": {"shapes": shapes, "median_rel_error": {"matvec": e_mv, "rmatvec": e_rmv, "gemm": e_g}}}


# ---- Lanczos ----------------------------------------------------------------------------
class _OneNonzeroPerRow:
    """Z (m × n) with Z[i, i mod n] = d_i: rank n, an O(m) oracle whose seconds are counted."""

    def __init__(self, rng, m: int, n: int):
        self.col = np.arange(m) % n
        self.d = (rng.random(m) + 0.5) / np.sqrt(1.0 + self.col)     # a decaying spectrum
        self.n, self.spent = n, 0.0

    def matvec(self, x):
        t0 = time.perf_counter()
        out = self.d * x[self.col]
        self.spent += time.perf_counter() - t0
        return out

    def rmatvec(self, y):
        t0 = time.perf_counter()
        out = np.bincount(self.col, weights=self.d * y, minlength=self.n)
        self.spent += time.perf_counter() - t0
        return out


def calibrate_lanczos(quick: bool = False, seed: int = 0) -> dict:
    """Seconds of :func:`.lanczos.lanczos_svd` (``paper``, no restart) outside the oracle, left
    vectors beyond cache, fitted per term (module docstring)."""
    from threadpoolctl import threadpool_limits

    from spbench.tucker.hooi.lanczos import lanczos_svd

    rng = np.random.default_rng(seed)
    # (m rows, n = K̂, K, ncv) in three groups fitted in turn: "small" (100 rows: bases too small to
    # count, the per-query constant alone), "left" (owned rows far beyond cache, K̂ small), "right"
    # (large K̂, few rows); then the left Gram–Schmidt's cost per word by basis size (_left_ladder)
    if quick:
        groups = {"small": [(100, 50, 5, 10), (100, 50, 10, 20)],
                  "left": [(200_000, 60, 5, 10), (400_000, 60, 5, 20), (200_000, 60, 10, 20), (200_000, 60, 5, 30)],
                  "right": [(2_000, 8_000, 5, 10), (2_000, 8_000, 5, 30)]}
        reps = 1
    else:
        groups = {"small": [(100, 50, 5, 10), (100, 50, 5, 20), (100, 50, 10, 20), (100, 50, 10, 40)],
                  "left": [(1_000_000, 100, 5, 10), (1_000_000, 100, 5, 30), (2_000_000, 100, 10, 20),
                           (1_000_000, 100, 10, 40), (2_000_000, 100, 5, 20)],
                  "right": [(2_000, 16_000, 5, 10), (2_000, 16_000, 10, 30), (2_000, 50_000, 10, 20),
                            (2_000, 4_000, 10, 40)]}
        reps = 5
    cases = [(g, *c) for g, cs in groups.items() for c in cs]
    queries: dict = {}

    def sampler(case):
        group, m, n, k, ncv = case
        Z = _OneNonzeroPerRow(rng, m, n)

        def sample() -> float:
            Z.spent = 0.0
            t0 = time.perf_counter()
            queries[case] = lanczos_svd(Z.matvec, Z.rmatvec, (m, n), k, mode="paper", ncv=ncv, seed=seed).queries
            return time.perf_counter() - t0 - Z.spent
        return sample

    with threadpool_limits(limits=1):      # every case once per round (rounds: the median is kept)
        secs = interleaved_medians([sampler(c) for c in cases], reps, warmup=0)
    feats, info = [], []
    for (group, m, n, k, ncv), best in zip(cases, secs):
        q = queries[(group, m, n, k, ncv)]
        feats.append([q, m * ncv * (ncv - 1) / 2, m * ncv, m * ncv * k, n * ncv * (ncv + 1) / 2, n * ncv])
        info.append({"group": group, "m": m, "n": n, "K": k, "ncv": ncv, "queries": q, "seconds": best})
    X, t = np.array(feats, dtype=float), np.array(secs)
    g = np.array([c["group"] for c in info])
    coef = np.zeros(X.shape[1])
    coef[0] = float(np.median(t[g == "small"] / X[g == "small", 0]))          # seconds per query
    for group, cols in (("left", [1, 2, 3]), ("right", [4, 5])):
        sel = g == group
        coef[cols], _ = nnls_relative(X[np.ix_(sel, cols)], t[sel] - X[sel] @ coef, scale=t[sel])
    err = float(np.median(np.abs(X @ coef - t) / t))
    names = ("lanczos_query", "lanczos_left_word", "lanczos_left_row", "lanczos_ritz_madd", "lanczos_right_word",
             "lanczos_right_row")
    sizes, words, ladder_info = _left_ladder(quick, coef, groups["left"], seed)
    ladder = {"lanczos_left_bytes": sizes, "lanczos_left_word": words}
    return {**{k: float(v) for k, v in zip(names, coef)}, **ladder,
            "lanczos_local_query": _local_query(groups["small"], coef, ladder, seed),
            "_fit": {"cases": info, "median_rel_error": err, "max_rel_error": float(np.max(np.abs(X @ coef - t) / t)),
                     "left_ladder": ladder_info}}


#: bytes of the left basis (8·m·ncv) at which the left Gram–Schmidt's cost per word is measured again
#: (quick: two): from inside the per-core L2 to beyond the last-level cache's reach (below 1 MiB the
#: Gram–Schmidt's words are too few against the per-query constant to be told apart)
LEFT_LADDER = {False: tuple(2 ** k for k in (20, 21, 22, 23, 24, 26)), True: tuple(2 ** k for k in (21, 24))}
#: the basis sizes ncv of each rung's runs (K = 5, K̂ = 50: the right basis and its work in cache)
LEFT_LADDER_NCV = (20, 40)


def _left_ladder(quick: bool, coef, left_cases, seed: int) -> tuple[list, list, list]:
    """The left Gram–Schmidt's seconds per word at each basis size of :data:`LEFT_LADDER`: per rung,
    two runs whose m·ncv rows fill that many bytes (ncv of :data:`LEFT_LADDER_NCV`), each less the
    fitted per-query constant and right terms (``coef``); their difference over the difference of
    the words the classical Gram–Schmidt reads (m·Σ_j j) is the cost per word (the per-row and Ritz
    work, m·ncv and m·ncv·K, is the same in both and cancels, at whatever cache level it runs); then
    the beyond-cache fit (``coef[1]``, runs of 80 MB and more) as the last rung, at its runs' median
    basis bytes. A classical Gram–Schmidt pass
    streams the basis, so its cost per word is that of the cache level the basis stays in
    (tucker-lite §5: the left vectors live at their rows' owners, a rank's own^p × ncv): the model reads
    it at a rank's own basis (:func:`.model.cost_model.entry_cost`)."""
    from threadpoolctl import threadpool_limits

    from spbench.tucker.hooi.lanczos import lanczos_svd

    rng = np.random.default_rng(seed)
    n, k = 50, 5
    cases = [(nbytes, max(2 * ncv, nbytes // (8 * ncv)), ncv)
             for nbytes in LEFT_LADDER[quick] for ncv in LEFT_LADDER_NCV]

    def sampler(case):
        _, m, ncv = case
        Z = _OneNonzeroPerRow(rng, m, n)

        def sample() -> float:
            Z.spent = 0.0
            t0 = time.perf_counter()
            lanczos_svd(Z.matvec, Z.rmatvec, (m, n), k, mode="paper", ncv=ncv, seed=seed)
            return time.perf_counter() - t0 - Z.spent
        return sample

    with threadpool_limits(limits=1):
        secs = interleaved_medians([sampler(c) for c in cases], 3 if quick else 9, warmup=1)
    per_rung: dict = {}
    info = []
    for (nbytes, m, ncv), t in zip(cases, secs):
        rest = t - coef[0] * 2 * ncv - coef[4] * n * ncv * (ncv + 1) / 2 - coef[5] * n * ncv
        per_rung.setdefault(nbytes, []).append((m * ncv * (ncv - 1) / 2, rest))
        info.append({"bytes": nbytes, "m": m, "ncv": ncv, "seconds": t})
    sizes, words = [], []
    for nbytes, ((g_lo, r_lo), (g_hi, r_hi)) in per_rung.items():
        sizes.append(float(nbytes))
        words.append(max((r_hi - r_lo) / (g_hi - g_lo), 0.0))
    beyond = float(np.median([8.0 * m * ncv for m, _, _, ncv in left_cases]))
    if beyond > sizes[-1]:
        sizes.append(beyond)
        words.append(float(coef[1]))
    return sizes, words, info


def _local_query(cases, coef, ladder: dict, seed: int) -> float:
    """Seconds per query of the compiled one-process steps (``lanczos_svd(local_matrix=Z)``, HOOI
    at P = 1) beyond the products and the fitted basis terms (the left Gram–Schmidt per word read
    from ``ladder`` at the case's basis size, as the model reads it): dense Z of the in-cache cases."""
    from threadpoolctl import threadpool_limits

    from spbench.tucker.hooi.lanczos import lanczos_svd
    from spbench.tucker.model.cost_model import entry_cost

    rng = np.random.default_rng(seed)
    per_query = []
    with threadpool_limits(limits=1):
        for m, n, k, ncv in cases:
            Z = rng.standard_normal((m, n))
            x, y = rng.standard_normal(n), rng.standard_normal(m)
            products = median_time(lambda: Z @ x, 20) + median_time(lambda: Z.T @ y, 20)
            t = median_time(lambda: lanczos_svd(None, None, (m, n), k, mode="paper", ncv=ncv, seed=seed,
                                                 local_matrix=Z), 5)
            word = float(entry_cost(ladder, "lanczos_left_word", 8.0 * m * ncv, "lanczos_left_bytes"))
            basis = np.r_[word, coef[2:]] @ [m * ncv * (ncv - 1) / 2, m * ncv, m * ncv * k, n * ncv * (ncv + 1) / 2,
                                             n * ncv]
            per_query.append((t - ncv * products - basis) / (2 * ncv))
    return max(float(np.median(per_query)), 0.0)


def _outside_clock(fn, clock, reps: int) -> float:
    """Median seconds of ``fn()`` less those ``clock`` timed inside it: what HOOI's partition counts
    as local work when ``clock`` times its messages (:class:`.hooi._Partition`), after one warm-up."""
    fn()
    ts = []
    for _ in range(reps):
        c0 = clock.seconds
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0 - (clock.seconds - c0))
    return float(np.median(ts))


def calibrate_oracle_index(quick: bool = False, seed: int = 0) -> dict:
    """The oracle's own work per query (:class:`.hooi.Oracle` over :class:`.mpi.LocalComm`, whose
    exchanges are local copies: module docstring): R shared rows, own = R (nothing exchanged) or
    R/2 (the other half sent, as many received), K̂ = 2 so the products it wraps are small;
    their time is subtracted, and so is the time inside the oracle's message clock (the exchange
    calls alone; packing their buffers is the oracle's own work), which HOOI counts as communication
    (``comm_time``; the MPI micro-benchmark times those calls)."""
    from types import SimpleNamespace

    from threadpoolctl import threadpool_limits

    from spbench.tucker.hooi.loop import Oracle, _Clock
    from spbench.tucker.mpi.collectives import Exchange, LocalComm

    rng = np.random.default_rng(seed)
    sizes = (1_000, 200_000, 400_000) if quick else (1_000, 10_000, 200_000, 1_000_000, 2_000_000)
    reps = 5 if quick else 9
    feats, secs = [], []
    with threadpool_limits(limits=1):
        for R in sizes:
            Z = rng.standard_normal((R, 2))
            for exchanged in (False, True):
                rows = np.arange(R, dtype=np.int64)
                own = rows[: R // 2] if exchanged else rows
                send = rows[R // 2:] if exchanged else rows[:0]
                recv = rng.choice(own, size=send.size, replace=False) if exchanged else rows[:0]
                plan = SimpleNamespace(m=own.size, r_p=R, rows=rows, own_idx=own, send_idx=send, recv_pos=recv,
                                       reduce_x=Exchange([send.size], [recv.size]),
                                       bcast_y=Exchange([recv.size], [send.size]))
                clock = _Clock()
                orc = Oracle(LocalComm(), Z, plan, clock)
                orc.alone = False                    # a rank of P > 1 (one process alone skips this work)
                x, y = rng.standard_normal(2), rng.standard_normal(own.size)
                yfull = np.zeros(R)
                extra = 0.5 * (_outside_clock(lambda: orc.matvec(x), clock, reps) - median_time(lambda: Z @ x, reps)
                               + _outside_clock(lambda: orc.rmatvec(y), clock, reps)
                               - median_time(lambda: Z.T @ yfull, reps))
                feats.append([1.0, R + recv.size])
                secs.append(max(extra, 1e-9))
    X, t = np.array(feats), np.array(secs)
    coef, err = nnls_relative(X, t)
    return {"dist_oracle_call": float(coef[0]), "dist_oracle_row": float(coef[1]),
            "_fit": {"rows": [int(f[1]) for f in feats], "seconds": secs, "median_rel_error": err}}


# ---- MPI ------------------------------------------------------------------------------------
def calibrate_mpi(quick: bool = False, ranks: int = 2, timeout: float = 120) -> dict:
    """α/β per pattern from :mod:`.mpi_microbench` at ``ranks`` ranks, as ``{"costs": {...},
    "raw": ...}``, or ``{"skipped": reason}`` (no mpiexec, a failed job, or oversubscription)."""
    from spbench.tucker.mpi.launch import mpi_module_command, mpiexec_beside_python

    if mpiexec_beside_python() is None:
        return {"skipped": f"no mpiexec beside {sys.executable} (pip install mpi4py mpich)"}
    try:
        import mpi4py  # noqa: F401
    except Exception as exc:  # pragma: no cover
        return {"skipped": f"mpi4py unavailable: {exc}"}
    with tempfile.TemporaryDirectory(prefix="spbench-mb-") as d:
        out = Path(d) / "mb.json"
        cmd = mpi_module_command("spbench.tucker.calibration.mpi_microbench", [out] + (["--quick"] if quick else []), ranks)
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            return {"skipped": f"MPI micro-benchmark timed out after {timeout:.0f} s"}
        if proc.returncode != 0 or not out.exists():
            tail = (proc.stderr.strip().splitlines() or [""])[-1]
            return {"skipped": f"MPI micro-benchmark failed ({proc.returncode}): {tail}"}
        raw = json.loads(out.read_text())
    if raw.get("oversubscribed"):
        return {"skipped": f"{raw['ranks']} ranks on {raw['cores']} cores (oversubscribed): "
                           f"latencies are time slices, meaningless", "raw": raw}
    pat = raw["patterns"]
    costs = {"alpha_p2p": pat["pingpong"]["alpha"], "beta_p2p": pat["pingpong"]["beta"],
             "alpha_bytes": pat["allreduce"]["alpha_bytes"]}
    for name in ("allreduce", "alltoallv", "allgatherv"):
        costs[f"alpha_{name}"] = pat[name]["alpha_ladder"]        # α by the working set before the call
        costs[f"beta_{name}"] = pat[name]["beta"]
    return {"costs": costs, "ranks": raw["ranks"], "cores": raw["cores"], "library": raw.get("library"),
            "command": f"mpiexec -n {ranks} python -m mpi4py -m spbench.tucker.calibration.mpi_microbench OUT.json"
                       + (" --quick" if quick else ""),
            "raw": raw}


# ---- all ------------------------------------------------------------------------------------
def calibrate(quick: bool = False, *, mpi: bool = True, seed: int = 0) -> dict:
    """Every cost of :mod:`.model` on this machine (quick: ≈ 10–30 s, full: a few minutes)."""
    from spbench.machine.facts import machine_facts
    from spbench.machine.load import LoadWatch, timing_spread
    from spbench.machine.timing import collect_timings

    from spbench.tucker.calibration.calibrate_ttm import calibrate_ttm, calibrate_ttm_csf

    t0 = time.perf_counter()
    watch = LoadWatch()
    costs, fits = {}, {}
    with collect_timings() as timings:
        for name, fn in (("ttm", calibrate_ttm), ("ttm_csf", calibrate_ttm_csf), ("oracle", calibrate_oracle),
                         ("lanczos", calibrate_lanczos), ("oracle_index", calibrate_oracle_index)):
            part = fn(quick=quick, seed=seed)
            fits[name] = part.pop("_fit")
            costs.update(part)
    mpi_part = calibrate_mpi(quick=quick) if mpi else {"skipped": "mpi=False"}
    if "costs" in mpi_part:
        costs.update(mpi_part["costs"])
        from spbench.tucker.calibration.in_context import calibrate_in_context
        try:
            context = calibrate_in_context(costs, quick=quick, seed=seed)
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:   # the worker failed here
            mpi_part = {"skipped": f"in-context run at 2 ranks failed: {str(exc).splitlines()[0]}"}
            costs = {k: v for k, v in costs.items() if k not in MPI_KEYS}
        else:
            fits["in_context"] = context.pop("_fit")
            costs.update(context)
    facts = machine_facts(with_mpi=False)
    return {
        "schema_version": SCHEMA_VERSION,
        "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "quick": bool(quick),
        "threads": 1,
        "machine": facts,
        "costs": costs,
        "fits": fits,
        "mpi": {k: v for k, v in mpi_part.items() if k != "costs"},
        "calibration_seconds": time.perf_counter() - t0,
        "load": watch.figures(timing_spread(timings)),  # `spbench calibrate` refuses a busy machine
    }


def default_calibration_path() -> Path:
    """Where `spbench calibrate --experiment tucker` keeps this machine's costs
    (:func:`spbench.store.calibration_file.default_path`)."""
    from spbench.store.calibration_file import default_path
    return default_path("tucker")


#: the keys of :func:`calibrate`'s dict the calibration file keeps in its envelope (the rest are terms)
_ENVELOPE_KEYS = ("schema_version", "timestamp", "quick", "machine")


def save(cal: dict, path) -> Path:
    """Write :func:`calibrate`'s dict in the calibration format of every experiment
    (:mod:`spbench.store.calibration_file`), atomically."""
    from spbench.store.calibration_file import write_calibration
    terms = {k: v for k, v in cal.items() if k not in _ENVELOPE_KEYS}
    return write_calibration(path, "tucker", terms, machine=cal.get("machine", {}), created=cal.get("timestamp"),
                             quick=cal.get("quick", False), terms_version=SCHEMA_VERSION)


def load_calibration(path) -> dict:
    """The calibration file's envelope (:func:`spbench.store.calibration_file.read_calibration`); ValueError
    with one line when it is no Tucker calibration of this cost model."""
    from spbench.store.calibration_file import read_calibration
    calibration = read_calibration(path, "tucker", "a Tucker calibration", SCHEMA_VERSION)
    check_terms(path, calibration["terms"])
    return calibration


#: each cost read from a ladder over sizes and the key of its sizes (:func:`.model.cost_model.entry_cost`)
LADDERS = {"oracle_matvec_entry": "oracle_bytes", "oracle_rmatvec_entry": "oracle_bytes",
           "lanczos_left_word": "lanczos_left_bytes", "alpha_allreduce": "alpha_bytes",
           "alpha_alltoallv": "alpha_bytes", "alpha_allgatherv": "alpha_bytes"}
#: sizes in bytes (above 0), not seconds: the TTM's cache and each ladder's sizes (a list, increasing)
SIZE_KEYS = ("ttm_cache_bytes", *sorted(set(LADDERS.values())))
#: corrections that may be negative (what a call or a query costs in context beyond the pieces alone)
SIGNED_KEYS = ("alpha_allreduce_context", "alpha_alltoallv_context", "dist_query_context")


def check_terms(path, terms: dict) -> None:
    """ValueError, one line naming ``path`` and the cost, for terms the cost model cannot read (a file
    edited by hand or damaged): ``costs`` not an object, a cost the model reads missing, a cost not a
    finite number (or a ladder of them, as long as its sizes), a cost in seconds below zero, sizes not
    increasing; the MPI costs all or none (none: the model predicts one rank only)."""
    from spbench.tucker.model.cost_model import COMPUTE_COSTS, CONTEXT_COSTS, MPI_COSTS

    costs = terms.get("costs")
    if not isinstance(costs, dict):
        raise ValueError(f"{path}: terms.costs = {str(costs)[:60]!r}, expected a JSON object of costs")
    mpi = any(k in costs for k in MPI_COSTS)
    for key in COMPUTE_COSTS + (MPI_COSTS + CONTEXT_COSTS if mpi else ()):
        if key not in costs:
            raise ValueError(f"{path}: terms.costs has no {key!r} (a calibration edited by hand? rerun "
                             "`spbench calibrate --experiment tucker`)")
    for key in COMPUTE_KEYS + MPI_KEYS:
        if key in costs:
            _check_cost(path, key, costs[key], costs)


def _check_cost(path, key: str, value, costs: dict) -> None:
    """ValueError unless ``value`` is a cost :func:`check_terms` accepts for ``key``: a finite number,
    or a list of them where the key is a ladder (as long as its sizes) or a ladder's sizes (increasing);
    sizes above 0, seconds not below 0 but for :data:`SIGNED_KEYS`."""
    from spbench.store.calibration_file import finite_number

    where = f"{path}: terms.costs.{key} = {str(value)[:60]}"
    listed = isinstance(value, list) and (key in LADDERS or key in SIZE_KEYS[1:])
    values = value if listed else [value]
    if not values or not all(finite_number(v) for v in values):
        raise ValueError(f"{where}, expected {'a list of finite numbers' if listed else 'a finite number'}")
    if key in SIZE_KEYS and min(values) <= 0:
        raise ValueError(f"{where}, expected bytes above 0")
    if key not in SIZE_KEYS + SIGNED_KEYS and min(values) < 0:
        raise ValueError(f"{where}, expected seconds, not below 0")
    if listed and key in SIZE_KEYS and any(b <= a for a, b in zip(values, values[1:])):
        raise ValueError(f"{where}, expected increasing sizes")
    sizes = costs.get(LADDERS.get(key, ""))
    if listed and key in LADDERS and not (isinstance(sizes, list) and len(sizes) == len(value)):
        raise ValueError(f"{where}, expected one cost per size of {LADDERS[key]} "
                         f"({len(sizes) if isinstance(sizes, list) else 'none'})")


def model_costs(calibration: dict) -> dict:
    """A calibration file's envelope as the cost model reads it: :func:`calibrate`'s dict."""
    return {"schema_version": calibration["terms_version"], "timestamp": calibration["created"],
            "quick": calibration["quick"], "machine": calibration["machine"], **calibration["terms"]}


def load(path) -> dict:
    """Read a calibration written by :func:`save`, as :func:`calibrate` returned it."""
    return model_costs(load_calibration(path))
