"""Lite (paper §6.1, Figure 8): the multi-policy scheme with Theorem 6.1's guarantees.

Along mode n, with limit = ⌈|E|/P⌉:

* Sort the slices by increasing cardinality (ties: by slice index, i.e. a stable sort).
* Stage 1: t = 1, 2, ...; p = t-th slot of the round robin (p ← (p+1) mod P after each slice).
  If |E_n^p| + |S_t| > limit, go to stage 2 (S_t is not assigned); else S_t goes wholly to p.
* Stage 2: p ← 0; while p < P: gap g = limit − |E_n^p|; if |S_t| ≤ g the whole (rest of)
  S_t goes to p and t advances (p stays); else any g elements of S_t go to p, are removed
  from S_t, and p advances.

Stage 2 is exactly "concatenate the remaining slices, in order, into one stream of elements
and cut the stream into consecutive bins of capacities g_0, g_1, ..., g_{P−1}" — that is how it
is vectorized here (cumulative gaps, a search among the P + 1 bin bounds). Since
Σ_p g_p = P·limit − |stage-1 elements| ≥ |stage-2 elements|, every element is placed before p
reaches P.

One implementation for simulation and MPI (:func:`lite_owners`): the serial form
(:func:`lite_mode`, any P) is the parallel one run on a :class:`..mpi.LocalComm` with ``nparts``
= P, where every Allreduce/Exscan is a copy and the sample sort a local sort; the streamed form
(:func:`lite_stream`) places the store's chunks with the same decisions, the Exscan of earlier
ranks' counts replaced by a running count over earlier chunks.

Choices where Figure 8 leaves room (documented, they do not affect Theorem 6.1):

* Empty slices are left out: Figure 8 sorts all L_n slices, so the empty ones come first and
  are "assigned" in stage 1 with no elements, which only rotates the round robin by
  (#empty mod P). Skipping them makes the round robin start at processor 0 with the first
  non-empty slice, and Theorem 6.1's L_n reads "non-empty slices" (what R_n^p counts).
* "Select any g elements from S_t": the first g remaining elements of the slice in storage
  order (the order of the tensor's coordinate arrays).
* When the rest of S_t exactly fills the gap, Figure 8 assigns it whole and stays on p with
  g = 0; the next slice then gives p zero elements and moves on. A zero-element "assignment"
  does not make p share the slice.
* Figure 8 does not stop stage 1 when the slices run out; here stage 1 ends after the last slice.

Cost per mode: one bincount over the elements, a sort of the non-empty slices by (size, id), and
one compiled pass over the elements (``spbench.kernels.tucker._lite_place``: a gather, and for a stage-2
element a running count of its slice and a binary search among the P + 1 bin bounds).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from spbench.tucker.mpi.collectives import LocalComm, allreduce, block_range, exscan, sample_sort
from .distribution import PAIR_BLOCK, Distribution, PolicyStream

__all__ = ["lite", "lite_parallel", "lite_mode", "lite_owners", "lite_plan", "lite_stream", "LitePlan"]


@dataclass(frozen=True)
class LitePlan:
    """Lite's slice-level decisions for one mode (all arrays over the sorted non-empty slices)."""

    nparts: int
    limit: int                 # ⌈|E|/P⌉
    order: np.ndarray          # slice ids of the non-empty slices, increasing size (S_1..S_L)
    sizes: np.ndarray          # |S_t| in that order
    t_hat: int                 # number of stage-1 slices (0-based index of the first stage-2 slice)
    bounds: np.ndarray         # (P+1,) stage-2 bin boundaries in the stage-2 element stream

    @property
    def stage1_loads(self) -> np.ndarray:
        """|E_n^p| at the end of stage 1."""
        t = np.arange(self.t_hat)
        return np.bincount(t % self.nparts, weights=self.sizes[:self.t_hat],
                           minlength=self.nparts).round().astype(np.int64)

    def pieces(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every (slice id, processor, element count > 0) assignment, stage 1 then stage 2."""
        P = self.nparts
        t1 = np.arange(self.t_hat)
        s2, p2, c2 = self._stage2_pieces()
        return (np.concatenate([self.order[t1], s2]), np.concatenate([t1 % P, p2]).astype(np.int64),
                np.concatenate([self.sizes[t1], c2]).astype(np.int64))

    def pair_blocks(self, block: int = PAIR_BLOCK):
        """The (slice id, processor) pairs of :meth:`pieces` in blocks of at most ``block`` stage-1
        slices, then stage 2's (at most P slices): bounded memory for tens of millions of slices."""
        P = self.nparts
        for lo in range(0, self.t_hat, block):
            hi = min(self.t_hat, lo + block)
            yield self.order[lo:hi], (np.arange(lo, hi, dtype=np.int64) % P).astype(np.int32)
        s2, p2, _ = self._stage2_pieces()
        yield s2, p2.astype(np.int32)

    def _stage2_pieces(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Stage 2's assignments: each slice cut along the bins its elements fall in (§6.3)."""
        rest = self.sizes[self.t_hat:]
        starts = np.zeros(rest.size + 1, dtype=np.int64)
        np.cumsum(rest, out=starts[1:])
        total = int(starts[-1])
        cuts = np.unique(np.concatenate([starts, np.clip(self.bounds, 0, total)]))
        seg_lo, seg_hi = cuts[:-1], cuts[1:]
        keep = seg_hi > seg_lo
        seg_lo, seg_hi = seg_lo[keep], seg_hi[keep]
        k = np.searchsorted(starts, seg_lo, side="right") - 1
        p2 = np.searchsorted(self.bounds, seg_lo, side="right") - 1
        return self.order[self.t_hat + k], p2, seg_hi - seg_lo


def _round_robin_loads(sizes: np.ndarray, first: int, nparts: int, before: np.ndarray) -> np.ndarray:
    """Stage 1's load of processor t mod P right after it receives S_t, for the slices t = first,
    first + 1, ... with cardinalities ``sizes`` (column-wise prefix sums of the round robin),
    plus ``before[p]``: what p received from the slices before ``first``."""
    P = int(nparts)
    shift = int(first) % P
    cnt = sizes.size
    rows = -(-(shift + cnt) // P) if cnt else 0
    padded = np.zeros(rows * P, dtype=np.int64)
    padded[shift:shift + cnt] = sizes
    after = padded.reshape(rows, P).cumsum(axis=0).reshape(-1)[shift:shift + cnt]
    return after + before[(first + np.arange(cnt)) % P]


@dataclass
class _SliceStage:
    """Figure 8 on the slices, this rank's part: the sorted slices S_t, t = first .. first+len−1."""

    ids: np.ndarray            # slice ids
    sizes: np.ndarray          # |S_t|
    first: int
    limit: int
    t_hat: int                 # global number of stage-1 slices
    slices: int                # global number of non-empty slices
    bounds: np.ndarray         # (P+1,) stage-2 bins in the stage-2 element stream


def _slice_stage(comm, sizes: np.ndarray, P: int, rng) -> _SliceStage:
    """Sort the non-empty slices by (size, id) with a sample sort (rank r brings its range of
    slice ids), then stage 1 (column-wise prefix loads by an Exscan of per-residue sums, t̂ by an
    Allreduce(min), the stage-1 loads by an Allreduce) and stage 2's bins. On one process the
    same decisions come from a local sort and one compiled pass (:func:`_slice_stage_serial`)."""
    if comm.size == 1:
        return _slice_stage_serial(sizes, P)
    return _slice_stage_collective(comm, sizes, P, rng)


def _slice_stage_serial(sizes: np.ndarray, P: int) -> _SliceStage:
    """:func:`_slice_stage` on one process: Figure 8's stage 1 as one loop over the sorted slices
    (``spbench.kernels.tucker._lite_place.stage_one``), where the collective form needs prefix sums."""
    from spbench.kernels.tucker._lite_place import stage_one

    L = sizes.size
    limit = -(-int(sizes.sum()) // P)
    ids = np.flatnonzero(sizes > 0)
    span = max(L, 1)
    keys = sizes[ids] * span + ids
    del ids
    keys.sort()
    sz, sl = np.divmod(keys, span)
    del keys
    loads = np.zeros(P, dtype=np.int64)
    t_hat = int(stage_one(sz, P, limit, loads))
    bounds = np.zeros(P + 1, dtype=np.int64)
    np.cumsum(limit - loads, out=bounds[1:])
    return _SliceStage(sl, sz, 0, limit, t_hat, int(sl.size), bounds)


def _slice_stage_collective(comm, sizes: np.ndarray, P: int, rng) -> _SliceStage:
    """:func:`_slice_stage` over the ranks of ``comm`` (each brings its range of slice ids)."""
    L = sizes.size
    limit = -(-int(sizes.sum()) // P)
    a, b = block_range(L, comm.size, comm.rank)
    ids = a + np.flatnonzero(sizes[a:b] > 0)
    span = max(L, 1)
    keys = sample_sort(comm, sizes[ids] * span + ids, rng)
    sl, sz = keys % span, keys // span
    del keys, ids
    cnt = int(sl.size)
    first = int(exscan(comm, np.array([cnt]))[0])
    res = (first + np.arange(cnt, dtype=np.int64)) % P
    before = exscan(comm, np.bincount(res, weights=sz, minlength=P).round().astype(np.int64))
    over = np.flatnonzero(_round_robin_loads(sz, first, P, before) > limit)
    total = int(allreduce(comm, np.array([cnt]))[0])
    t_hat = int(allreduce(comm, np.array([first + int(over[0]) if over.size else total]), op="min")[0])
    s1 = slice(0, max(0, min(cnt, t_hat - first)))
    loads = allreduce(comm, np.bincount(res[s1], weights=sz[s1], minlength=P).round().astype(np.int64))
    bounds = np.zeros(P + 1, dtype=np.int64)
    np.cumsum(limit - loads, out=bounds[1:])
    return _SliceStage(sl, sz, first, limit, t_hat, total, bounds)


def lite_plan(slice_sizes, nparts: int) -> LitePlan:
    """Run Figure 8 on slice cardinalities (index = slice id; zeros are empty slices)."""
    P = int(nparts)
    if P < 1:
        raise ValueError(f"number of processors must be >= 1, got {P}")
    st = _slice_stage(LocalComm(), np.asarray(slice_sizes, dtype=np.int64), P, None)
    return LitePlan(P, st.limit, st.ids, st.sizes, st.t_hat, st.bounds)


@dataclass
class _ModeDecisions:
    """Figure 8's decisions for one mode, enough to place any block of elements given how many
    elements of each stage-2 slice come before the block in storage order."""

    stage: _SliceStage
    stage1_owner: np.ndarray   # int32 per slice: its stage-1 processor, −1 (stage 2 or empty)
    slice_k: np.ndarray        # int32 per slice: the ordinal of a stage-2 slice, −1 otherwise
    start2: np.ndarray         # per stage-2 slice: its first position in the stage-2 element stream


def _decide(comm, sizes: np.ndarray, P: int, rng) -> _ModeDecisions:
    """The slice stage (:func:`_slice_stage`) and one Allreduce spreading its decisions: owner+1
    (stage 1) or −(stream start+1) (stage 2) per slice."""
    L = sizes.shape[0]
    st = _slice_stage(comm, sizes, P, rng)
    if comm.size == 1:
        return _decide_serial(st, L, P)
    return _decide_collective(comm, st, L, P)


def _decide_collective(comm, st: _SliceStage, L: int, P: int) -> _ModeDecisions:
    """:func:`_decide`'s decisions from this rank's part of the slice stage, spread by an Allreduce."""
    t = st.first + np.arange(st.ids.size, dtype=np.int64)
    s1 = t < st.t_hat
    sz2 = np.where(s1, 0, st.sizes)
    stream_start = int(exscan(comm, np.array([int(sz2.sum())]))[0]) + np.cumsum(sz2) - sz2
    code = np.zeros(L, dtype=np.int64)
    code[st.ids[s1]] = t[s1] % P + 1
    code[st.ids[~s1]] = -(stream_start[~s1] + 1)
    code = allreduce(comm, code)
    stage2_ids = np.flatnonzero(code < 0)                             # increasing id, every rank
    slice_k = np.full(L, -1, dtype=np.int32)
    slice_k[stage2_ids] = np.arange(stage2_ids.size, dtype=np.int32)
    return _ModeDecisions(st, (np.maximum(code, 0) - 1).astype(np.int32), slice_k, -code[stage2_ids] - 1)


def _decide_serial(st: _SliceStage, L: int, P: int) -> _ModeDecisions:
    """:func:`_decide` on one process: the decisions written by one compiled pass over the sorted
    slices (``spbench.kernels.tucker._lite_place.stage_two``) instead of a code array spread by an Allreduce."""
    from spbench.kernels.tucker._lite_place import stage_two

    stage1_owner = np.full(L, -1, dtype=np.int32)
    slice_k = np.full(L, -1, dtype=np.int32)
    start2 = np.empty(st.ids.size - st.t_hat, dtype=np.int64)
    stage_two(st.ids, st.sizes, st.t_hat, P, stage1_owner, slice_k, np.empty(L, dtype=np.int64), start2)
    return _ModeDecisions(st, stage1_owner, slice_k, start2)


def _place(dec: _ModeDecisions, index: np.ndarray, seen: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """π_n (int32) of a block of elements (mode-n indices ``index``, in storage order): stage-1
    slices whole; the elements of a stage-2 slice in storage order fill the bins (Figure 8's "any
    g elements"). ``seen``: the elements of each stage-2 slice before this block (an Exscan
    under MPI, a running count when streaming), advanced in place (``spbench.kernels.tucker._lite_place``)."""
    from spbench.kernels.tucker._lite_place import place

    index = np.ascontiguousarray(index) if index.dtype in (np.int32, np.int64) else index.astype(np.int64)
    out = np.empty(index.shape[0], dtype=np.int32) if out is None else out
    place(index, dec.stage1_owner, dec.slice_k, dec.start2, dec.stage.bounds, seen, out)
    return out


def _lite(comm, index: np.ndarray, length: int, P: int, rng) -> tuple[np.ndarray, _SliceStage]:
    index = np.asarray(index)
    dec = _decide(comm, allreduce(comm, np.bincount(index, minlength=int(length)).astype(np.int64)), P, rng)
    k = dec.slice_k[index]
    counts = np.bincount(k[k >= 0], minlength=dec.start2.size)    # this block's stage-2 elements per slice
    return _place(dec, index, exscan(comm, counts)), dec.stage


class _LiteStream(PolicyStream):
    def __init__(self, slice_sizes: list, nparts: int):
        super().__init__("lite", nparts, len(slice_sizes), True)
        self.modes = [_decide(LocalComm(), np.asarray(s, dtype=np.int64), self.nparts, None) for s in slice_sizes]
        for dec in self.modes:
            self.info.setdefault("limit", []).append(dec.stage.limit)
            self.info.setdefault("stage1_slices", []).append(dec.stage.t_hat)
            self.info.setdefault("stage2_slices", []).append(dec.stage.slices - dec.stage.t_hat)
        self.restart()

    def restart(self) -> None:
        self._seen = [np.zeros(dec.start2.size, dtype=np.int64) for dec in self.modes]

    def fill_jobs(self, lo: int, cols: list, out: np.ndarray) -> list:
        """One job per mode: each mode's placement keeps its own running counts."""
        return [partial(_place, self.modes[n], index, self._seen[n], out[n]) for n, index in enumerate(cols)]

    def slice_pairs(self, mode: int):
        """Stage-1 slices whole, stage-2 slices cut along consecutive bins (:meth:`LitePlan.pieces`)."""
        st = self.modes[mode].stage
        return LitePlan(self.nparts, st.limit, st.ids, st.sizes, st.t_hat, st.bounds).pair_blocks()


def lite_stream(slice_sizes: list, nparts: int, *, seed: int = 0) -> PolicyStream:
    """Lite applied chunk by chunk (``slice_sizes``: per mode, the tensor's slice sizes)."""
    return _LiteStream(slice_sizes, int(nparts))


def lite_owners(comm, index: np.ndarray, length: int, *, nparts: int | None = None,
                rng: np.random.Generator | None = None, info: dict | None = None) -> np.ndarray:
    """π_n (int32) of this rank's elements (mode-n indices ``index``; the blocks in rank order are
    the global storage order) for ``nparts`` processors (default comm.size): Figure 8 with the
    slices sorted by a parallel sample sort, the decisions spread by collectives (see
    :func:`_slice_stage`, :func:`_lite`). On a LocalComm this is the serial Lite."""
    P = comm.size if nparts is None else int(nparts)
    owners, st = _lite(comm, index, length, P, rng or np.random.default_rng([0, comm.rank]))
    if info is not None:
        info.setdefault("limit", []).append(st.limit)
        info.setdefault("stage1_slices", []).append(st.t_hat)
        info.setdefault("stage2_slices", []).append(st.slices - st.t_hat)
    return owners


def lite_mode(index: np.ndarray, length: int, nparts: int) -> tuple[np.ndarray, LitePlan]:
    """π_n for one mode from the elements' mode-n indices: (int32 owners, plan), for any P."""
    P = int(nparts)
    if P < 1:
        raise ValueError(f"number of processors must be >= 1, got {P}")
    owners, st = _lite(LocalComm(), index, length, P, None)
    return owners, LitePlan(P, st.limit, st.ids, st.sizes, st.t_hat, st.bounds)


def lite(tensor, nparts: int, *, seed: int = 0) -> Distribution:
    """Lite along every mode (multi-policy). Deterministic: ``seed`` is accepted and unused."""
    info: dict = {}
    policies = [lite_owners(LocalComm(), tensor.coords[:, n], tensor.dims[n], nparts=nparts, info=info)
                for n in range(tensor.nmodes)]
    return Distribution("lite", int(nparts), tuple(policies), True, info)


def lite_parallel(comm, block, *, seed: int = 0) -> tuple[list, dict]:
    """Lite of this rank's input block under MPI (P = comm.size): (policies, info). ``seed`` only
    seeds the sample sort's splitter sample; the policy does not depend on it."""
    rng = np.random.default_rng([int(seed), 0x5A, comm.rank])
    info: dict = {}
    owners = [lite_owners(comm, block.coords[:, n], block.dims[n], rng=rng, info=info)
              for n in range(len(block.dims))]
    return owners, info
