"""The per-rank counts of a distribution, streamed from the tensor store in bounded memory
(tucker-lite §4 metrics, §5 row-index mapping, §7.3 memory).

What :func:`.metrics.metrics_from_counts` needs of mode n are two sets of distinct pairs: S_n,
(slice l, rank p) when p holds an element of slice l under π_n (SVD redundancy, σ_n, the
partial sums of Z·x), and D_n, (l, q) when q needs row l of F_n for the TTMs of the other modes
(π_j, j ≠ n; D_n = S_n for a uni-policy scheme). Each is an L_n × P bitmap
(``spbench.kernels.tucker._pair_sets``) marked chunk by chunk while the store streams past, so the only
per-element arrays are one chunk's coordinates and policies: memory is O(chunk) + O(Σ L_n) +
the bitmaps of one pass (L_n·⌈P/64⌉·8 bytes each, grouped into passes within a budget). A scheme
that knows S_n from its per-slice decisions (:meth:`PolicyStream.slice_pairs`: CoarseG, Lite)
skips that pass. σ_n is the greedy of :mod:`.comm` run on the bitmap's rows.

:func:`stream_counts` returns exactly what :func:`.metrics.mode_counts` returns for the whole
tensor in memory (the tests compare them element for element).
"""
from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from spbench.tucker.mpi.comm import SWEEPS
from spbench.tucker.stream_prefixes import (PrefixSpill, pair_sets, prefix_sets, spill_directory, spill_groups,
                                          tree_sets)

__all__ = ["stream_counts", "stream_prefix_sets", "store_chunks", "tensor_chunks", "bitmap_bytes", "passes", "BITMAP_BUDGET", "CHUNK",
           "simulated_peak_bytes"]

#: elements per chunk (coordinates and policies of one chunk are the per-element memory)
CHUNK = 1 << 22
#: bitmap bytes marked in one pass over the store (a larger set gets a pass of its own);
#: ``SPBENCH_BITMAP_BUDGET`` (bytes) overrides
BITMAP_BUDGET = 2 << 30


def _budget() -> int:
    value = os.environ.get("SPBENCH_BITMAP_BUDGET")
    return int(value) if value else BITMAP_BUDGET


def bitmap_bytes(length: int, nparts: int) -> int:
    """Bytes of the L × P pair bitmap of one mode (⌈P/64⌉ 64-bit words per slice)."""
    return int(length) * ((int(nparts) + 63) // 64) * 8


def passes(sets: list, dims, nparts: int, budget: int) -> list:
    """``sets`` (("S" or "D", mode) in processing order) grouped into passes whose bitmaps fit in
    ``budget`` together (a set larger than the budget alone); S sets never share a pass with D sets."""
    out: list = []
    for kind in ("S", "D"):
        group, size = [], 0
        for s in (s for s in sets if s[0] == kind):
            b = bitmap_bytes(dims[s[1]], nparts)
            if group and size + b > budget:
                out.append(group)
                group, size = [], 0
            group.append(s)
            size += b
        if group:
            out.append(group)
    return out


def store_chunks(path, chunk: int = CHUNK):
    """A callable giving ``(lo, columns)`` chunks of the store at ``path`` in storage order."""
    from spbench.datasets.tensor_store import iter_chunks

    def chunks():
        for lo, cols, _ in iter_chunks(path, chunk, values=False):
            yield lo, cols
    return chunks


def tensor_chunks(coords: np.ndarray, chunk: int = CHUNK):
    """A callable giving ``(lo, columns)`` chunks of an in-memory (nnz, N) coordinate array."""
    def chunks():
        for lo in range(0, coords.shape[0], chunk):
            yield lo, [np.ascontiguousarray(coords[lo:lo + chunk, n]) for n in range(coords.shape[1])]
    return chunks


def _read_ahead(chunks):
    """``chunks()``'s items, the next one read by a thread while the caller works on this one."""
    import queue
    import threading

    box: queue.Queue = queue.Queue(maxsize=1)
    stop = threading.Event()

    def read():
        try:
            for item in chunks():
                while not stop.is_set():
                    try:
                        box.put(item, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            box.put(None)
        except BaseException as exc:        # handed to the caller, raised there
            box.put(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        while (item := box.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        reader.join()


def _pair_bitmap(length: int, nparts: int) -> np.ndarray:
    """A zeroed L × P bitmap, on transparent huge pages where the kernel offers them: rows are hit
    at random, and a 2 MB page spares the TLB misses of 512 small ones."""
    import mmap

    nbytes = bitmap_bytes(length, nparts)
    if nbytes < 1 << 22 or not hasattr(mmap, "MADV_HUGEPAGE"):
        return np.zeros(nbytes // 8, dtype=np.uint64)
    area = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    area.madvise(mmap.MADV_HUGEPAGE)
    return np.frombuffer(area, dtype=np.uint64)


def _mark_from_pairs(bits: np.ndarray, words: int, slices, procs) -> None:
    from spbench.kernels.tucker._pair_sets import mark_pairs
    mark_pairs(bits, words, np.ascontiguousarray(slices, dtype=np.int64),
               np.ascontiguousarray(procs, dtype=np.int32).reshape(1, -1))


def _peer_counts(peers: np.ndarray, P: int) -> np.ndarray:
    """Distinct partners per rank from a P × P mark matrix (both directions count)."""
    mark = peers.reshape(P, P).astype(bool)
    mark |= mark.T
    return np.count_nonzero(mark, axis=1).astype(np.int64)


def _sharers(bits: np.ndarray, words: int, length: int, P: int, owners) -> dict:
    """From S_n: sharers per slice, R_n^p, σ_n (the chain greedy of :mod:`.comm`, or ``owners``)
    and the partial-sum traffic of one Z·x."""
    from spbench.kernels.tucker import _pair_sets as k

    cnt = np.zeros(length, dtype=np.int32)
    r_p = np.zeros(P, dtype=np.int64)
    k.row_counts(bits, words, cnt, r_p)
    if owners is not None:
        sigma = np.ascontiguousarray(owners, dtype=np.int32)
    else:
        sigma = np.empty(length, dtype=np.int32)
        k.good_owners(bits, words, cnt, sigma)
        shared = int(np.count_nonzero(cnt > 1))
        if shared:
            order, bucket = np.empty(shared, dtype=np.int64), np.zeros(P + 1, dtype=np.int64)
            k.shared_order(cnt, P, np.empty(shared, dtype=np.int64), order, bucket)
            home_start = np.append(bucket[:-1][np.diff(bucket) > 0], shared)
            k.chain_owners(bits, words, P, order, home_start, SWEEPS, sigma, np.empty(shared, dtype=np.int32),
                           np.zeros((home_start.size - 1, P), dtype=np.int64), np.zeros(P, dtype=np.int64),
                           np.zeros(P, dtype=np.int64))
    own_p, x_recv_p = np.zeros(P, dtype=np.int64), np.zeros(P, dtype=np.int64)
    peers = np.zeros(P * P, dtype=np.uint8)
    k.sharer_stats(bits, words, P, cnt, sigma, own_p, x_recv_p, peers)
    return {"cnt": cnt, "sigma": sigma, "r_p": r_p, "own_p": own_p, "x_send_p": r_p - own_p,
            "x_recv_p": x_recv_p, "x_peers_p": _peer_counts(peers, P),
            "slices": int(np.count_nonzero(cnt)), "bad_slices": int(np.count_nonzero(cnt > 1))}


def _needs(bits, words: int, P: int, cnt: np.ndarray, sigma: np.ndarray) -> dict:
    """From D_n and σ_n: factor rows held (needed ∪ owned), sent, received, peers, fm_rows."""
    from spbench.kernels.tucker._pair_sets import need_stats

    held, send, recv = (np.zeros(P, dtype=np.int64) for _ in range(3))
    peers = np.zeros(P * P, dtype=np.uint8)
    if bits is None:            # one mode: nobody needs F_n for another mode's TTM
        held += np.bincount(sigma[cnt > 0], minlength=P)
        size = owned = 0
    else:
        size, owned = need_stats(bits, words, P, cnt, sigma, held, send, recv, peers)
    return {"held_p": held, "fm_send_p": send, "fm_recv_p": recv, "fm_peers_p": _peer_counts(peers, P),
            "fm_rows": int(size - owned)}


class _Pass:
    """One pass over the elements: the policies of each chunk, the per-rank element counts (first
    pass only) and the bitmaps of this pass's sets marked. Pipelined on the pool's threads: a
    chunk's policies are filled (the stream's :meth:`~.schemes.PolicyStream.fill_jobs`, at once)
    while the previous chunk's bitmaps are marked, one job per bitmap, so no bitmap is ever marked
    by two threads at once."""

    def __init__(self, stream, sets, dims, e_p, spill=None):
        self.stream, self.sets, self.e_p, self.spill = stream, sets, e_p, spill
        self.fill_seconds = 0.0
        self.words = (stream.nparts + 63) // 64
        self.bits = {s: _pair_bitmap(dims[s[1]], stream.nparts) for s in sets}

    def _fill(self, job) -> float:
        began = time.thread_time()
        job()
        return time.thread_time() - began

    def _mark_jobs(self, cols, pol) -> list:
        jobs = []
        for kind, n in self.sets:
            index = cols[n] if cols[n].dtype in (np.int32, np.int64) else cols[n].astype(np.int64)
            if kind == "S":   # (l, π_n(e)); a uni-policy scheme has one row for all modes
                rows, skip = pol[n:n + 1] if self.stream.multi_policy else pol[:1], -1
            else:             # (l, π_j(e)) for every j ≠ n
                rows, skip = pol, n
            jobs.append((self.bits[(kind, n)], self.words, index, rows, skip))
        return jobs

    def run(self, chunks, pool, fill_pool) -> None:
        from spbench.kernels.tucker._pair_sets import mark_pairs

        stream, P = self.stream, self.stream.nparts
        stream.restart()
        marking: list = []
        try:
            for lo, cols in _read_ahead(chunks):
                pol = np.empty((stream.rows, len(cols[0])), dtype=np.int32)   # C-contiguous rows for the kernel
                fills = [fill_pool.submit(self._fill, job) for job in stream.fill_jobs(lo, cols, pol)]
                self.fill_seconds += sum(f.result() for f in fills)   # CPU seconds placing the elements
                if self.e_p is not None:
                    for j in range(stream.rows):
                        self.e_p[j] += np.bincount(pol[j], minlength=P)
                for f in marking:
                    f.result()
                marking = [pool.submit(mark_pairs, *job) for job in self._mark_jobs(cols, pol)]
                if self.spill is not None:       # the CSF prefixes' keys, while the bitmaps are marked
                    self.spill.add(cols, pol)
        finally:
            for f in marking:
                f.result()


def stream_counts(dims, nnz: int, chunks, stream, *, owners=None, budget: int | None = None,
                  threads: int = 2, timing: dict | None = None, prefixes=None, prefix_K=None,
                  slice_prefixes=None) -> tuple[list, list]:
    """Per mode the counts of :func:`.metrics.mode_counts` (``e_p``, ``r_p``, ``held_p``,
    ``own_p``, ``x_*``, ``fm_*``, ``slices``, ``fm_rows``, ``bad_slices``) and σ per mode, for the
    policies of ``stream`` (a :class:`.schemes.PolicyStream`) over the elements ``chunks()``
    yields (``(lo, columns)`` in storage order). ``owners``: σ_n per mode (default: the
    :mod:`.comm` rule). ``budget``: bitmap bytes per pass (default :data:`BITMAP_BUDGET`).
    ``timing`` (a dict) receives ``fill_seconds`` (placing every element once: the policies'
    share of the first pass), ``passes`` and ``seconds``. ``prefixes``: the slice sizes of every
    mode, to add each mode's ``csf_prefix_p`` (the ranks' CSF tree shapes,
    :mod:`.stream_prefixes`), spilled during the first pass and in passes of their own beyond
    its spill budget. ``prefix_K``: the core sizes the model will be asked for; then only the
    prefix sets :func:`.csf.rank_nodes` reads for them are counted (every |S| = 1 set, then the
    larger sets of each rank's level order, :func:`.stream_prefixes.tree_sets`, in passes of their
    own), else every set. A scheme placing whole slices (:meth:`~.schemes.PolicyStream.slice_owners`)
    sums per-slice counts instead of spilling: those of ``slice_prefixes`` (a
    :class:`.slice_prefixes.SlicePrefixes` of this tensor, cached), else counted now."""
    began = time.perf_counter()
    N, P = len(dims), int(stream.nparts)
    words = (P + 63) // 64
    budget = _budget() if budget is None else int(budget)
    e_p = [np.zeros(P, dtype=np.int64) for _ in range(stream.rows)]
    sharers, needs = [None] * N, [None] * N
    s_sets = []
    for n in range(N):          # S_n from the scheme's per-slice decisions, one mode at a time
        blocks = stream.slice_pairs(n)
        if blocks is None:
            s_sets.append(("S", n))
            continue
        bits = _pair_bitmap(dims[n], P)
        for slices, procs in blocks:
            _mark_from_pairs(bits, words, slices, procs)
        sharers[n] = _sharers(bits, words, int(dims[n]), P, None if owners is None else owners[n])
        del bits
    d_sets = [("D", n) for n in range(N) if stream.multi_policy and N > 1]
    plan = passes(s_sets + d_sets, dims, P, budget) or [[]]
    spill_sets = prefix_sets(N) if prefix_K is None else pair_sets(N)
    by_slice = _slice_sums(stream, dims, nnz, chunks, prefixes, slice_prefixes) if prefixes is not None else None
    spills = (spill_groups(nnz, N, sets=spill_sets, multi_policy=stream.multi_policy)
              if prefixes is not None and by_slice is None else [])
    plan = [(group, spills[k] if k < len(spills) else None) for k, group in enumerate(plan)]
    plan += [([], sets) for sets in spills[len(plan):]]
    prefix_p: dict = {} if by_slice is None else by_slice(spill_sets)
    first = True
    with ThreadPoolExecutor(max(1, threads)) as pool, ThreadPoolExecutor(max(1, threads)) as fill_pool:
        for group, spill_sets in plan:
            spill = None if spill_sets is None else PrefixSpill(spill_sets, dims, prefixes, nnz, P,
                                                                 stream.multi_policy, spill_directory())
            one = _Pass(stream, group, dims, e_p if first else None, spill)
            try:
                one.run(chunks, pool, fill_pool)
                if spill is not None:
                    prefix_p.update(spill.counts())
            finally:
                if spill is not None:
                    spill.close()
            if first and timing is not None:
                timing["fill_seconds"] = one.fill_seconds
            first = False
            for (kind, n), bits in one.bits.items():
                if kind == "S":
                    sharers[n] = _sharers(bits, words, int(dims[n]), P, None if owners is None else owners[n])
                    if not stream.multi_policy:
                        needs[n] = _needs(bits if N > 1 else None, words, P, sharers[n]["cnt"], sharers[n]["sigma"])
                else:
                    needs[n] = _needs(bits, words, P, sharers[n]["cnt"], sharers[n]["sigma"])
            del one
        if prefix_K is not None and prefixes is not None:
            by_mode = [{"r_p": sharers[n]["r_p"], "e_p": e_p[n if stream.multi_policy else 0],
                        "csf_prefix_p": {S: c for (m, S), c in prefix_p.items() if m == n}} for n in range(N)]
            more = tree_sets(by_mode, prefix_K)
            if by_slice is not None:
                prefix_p.update(by_slice(more))
            else:
                prefix_p.update(_spill_passes(stream, chunks, dims, nnz, more, prefixes, pool, fill_pool))
                plan += [None] * len(spill_groups(nnz, N, sets=more, multi_policy=stream.multi_policy))
    counts, sigmas = [], []
    for n in range(N):
        sh = sharers[n]
        nd = needs[n] if needs[n] is not None else _needs(None, words, P, sh["cnt"], sh["sigma"])
        counts.append({
            "e_p": e_p[n if stream.multi_policy else 0].copy(), "r_p": sh["r_p"], "own_p": sh["own_p"],
            "held_p": nd["held_p"], "x_send_p": sh["x_send_p"], "x_recv_p": sh["x_recv_p"],
            "x_peers_p": sh["x_peers_p"], "fm_send_p": nd["fm_send_p"], "fm_recv_p": nd["fm_recv_p"],
            "fm_peers_p": nd["fm_peers_p"], "slices": sh["slices"], "fm_rows": nd["fm_rows"],
            "bad_slices": sh["bad_slices"],
        })
        if prefixes is not None:
            counts[-1]["csf_prefix_p"] = {S: c for (m, S), c in prefix_p.items() if m == n}
        sigmas.append(sh["sigma"])
    if timing is not None:
        timing.update(passes=len(plan), seconds=time.perf_counter() - began)
    return counts, sigmas


def _slice_sums(stream, dims, nnz: int, chunks, slice_sizes, slice_prefixes=None):
    """A function of prefix sets giving their per-rank counts as sums of per-slice counts, when the
    stream places whole slices along every mode (:mod:`.slice_prefixes`); else None."""
    from spbench.tucker.slice_prefixes import SlicePrefixes, slice_owners

    owned = slice_owners(stream, range(len(dims)))
    if owned is None:
        return None
    source = slice_prefixes if slice_prefixes is not None else SlicePrefixes(dims, nnz, chunks, slice_sizes)
    return lambda sets: source.rank_counts(sets, owned, int(stream.nparts)) if sets else {}


def _spill_passes(stream, chunks, dims, nnz: int, sets, slice_sizes, pool, fill_pool) -> dict:
    """{(n, S): prefixes per rank} of ``sets`` by passes that only place the elements and spill
    (:class:`PrefixSpill`), as many as the spill budget asks."""
    out: dict = {}
    for group in spill_groups(nnz, len(dims), sets=sets, multi_policy=stream.multi_policy):
        spill = PrefixSpill(group, dims, slice_sizes, nnz, int(stream.nparts), stream.multi_policy, spill_directory())
        try:
            _Pass(stream, [], dims, None, spill).run(chunks, pool, fill_pool)
            out.update(spill.counts())
        finally:
            spill.close()
    return out


def stream_prefix_sets(dims, nnz: int, chunks, stream, sets, slice_sizes, *, threads: int = 2,
                       slice_prefixes=None) -> dict:
    """{(n, S): distinct (i_n, i_S) prefixes per rank} of the prefix ``sets`` alone, for the
    policies of ``stream`` over ``chunks()`` (what a point whose counts came without them needs;
    ``slice_prefixes`` as for :func:`stream_counts`)."""
    by_slice = _slice_sums(stream, dims, nnz, chunks, slice_sizes, slice_prefixes)
    if by_slice is not None:
        return by_slice(list(sets))
    with ThreadPoolExecutor(max(1, threads)) as pool, ThreadPoolExecutor(max(1, threads)) as fill_pool:
        return _spill_passes(stream, chunks, dims, nnz, list(sets), slice_sizes, pool, fill_pool)


#: the point's process before its first array (interpreter, numpy, the kernels, the read-ahead thread):
#: 35 MB, measured alone (the docs' point.py) and inside `spbench run` (its forked point)
POINT_BASE_BYTES = 35e6
#: the floor: `spbench run` itself, which forks the point (46 MB on a 768k-nonzero stand-in)
RUN_PROCESS_BYTES = 50e6
#: per slice and per nonempty slice kept while the store streams (slice sizes, the scheme's
#: decisions, sharers, σ), by multi-policy: pages of an empty slice's entries are mostly never
#: touched. Fitted on nell1 at full size (28.2M of its 30.5M slices nonempty) and at 1% of its
#: nonzeros (2.5M nonempty), 32 and 512 ranks (docs/performance.md, "Memory law")
KEPT_BYTES = {False: (16, 16), True: (22, 22)}
#: per element of a chunk while its CSF prefix keys are made, bucketed and counted: counted from the
#: arrays alive at once (two int64 key buffers, one being written, the int32 bucket of each element,
#: and per counting thread a bucket of about a chunk's keys and as many radix scratch keys), not
#: fitted; checked on two calibrated full-size points (docs/performance.md): nell1 Lite 512 and
#: delicious Lite 512
SPILL_CHUNK_BYTES = 52


def simulated_peak_bytes(dims, nnz: int, nparts: int, multi_policy: bool, decision_slice_bytes: int = 80,
                         prefixes: bool = False, nonempty=None, decision_nonempty_bytes: int = 0) -> int:
    """Peak resident bytes of one simulated point, the larger of its two phases above the point's
    base: the scheme's per-slice decisions (``decision_slice_bytes`` per slice and
    ``decision_nonempty_bytes`` per nonempty slice, :attr:`Scheme.slice_bytes`) and the pass
    (per-slice arrays kept, a few chunks in flight, the bitmaps of the largest pass, the P × P peer
    marks; ``prefixes``: a chunk's spilled keys, :mod:`.stream_prefixes`); never below `spbench
    run`'s own process. ``nonempty``: the nonempty slices per mode (a store header's; default
    min(L_n, nnz), an upper bound). Fitted on nell1's stand-ins at full size and at 1% (docs)."""
    dims = [int(d) for d in dims]
    P = int(nparts)
    ne = [min(d, int(nnz)) for d in dims] if nonempty is None else [int(x) for x in nonempty]
    sets = ([("D", n) for n in range(len(dims))] if multi_policy else [("S", n) for n in range(len(dims))])
    largest = max((sum(bitmap_bytes(dims[n], P) for _, n in g) for g in passes(sets, dims, P, _budget())),
                  default=0)
    # two chunks in flight, each its int32 coordinates and its int32 policy rows (one per mode, or one)
    per_chunk = min(int(nnz), CHUNK) * 8 * (len(dims) + (len(dims) if multi_policy else 1))
    per_slice, per_nonempty = KEPT_BYTES[bool(multi_policy)]
    passing = per_slice * sum(dims) + per_nonempty * sum(ne) + per_chunk + largest + 4 * P * P
    if prefixes and len(dims) > 2:
        passing += SPILL_CHUNK_BYTES * min(int(nnz), CHUNK)
    deciding = int(decision_slice_bytes) * sum(dims) + int(decision_nonempty_bytes) * sum(ne)
    return int(max(RUN_PROCESS_BYTES, POINT_BASE_BYTES + max(deciding, passing)))
