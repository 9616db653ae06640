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
is vectorized here (cumulative gaps, np.repeat). Since Σ_p g_p = P·limit − |stage-1 elements|
≥ |stage-2 elements|, every element is placed before p reaches P.

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

Cost per mode: one bincount over the elements, a sort of the non-empty slice sizes (radix for
sizes < 2**16), a gather, and a stable radix sort of the stage-2 elements by their (at most P)
stage-2 slice ordinal.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..mpi import allreduce, block_range, exscan, sample_sort
from . import Distribution

__all__ = ["lite", "lite_parallel", "lite_mode", "lite_owners", "lite_plan", "LitePlan"]


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
        s1, p1, c1 = self.order[t1], t1 % P, self.sizes[t1]
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
        return (np.concatenate([s1, self.order[self.t_hat + k]]),
                np.concatenate([p1, p2]).astype(np.int64),
                np.concatenate([c1, seg_hi - seg_lo]).astype(np.int64))


def _round_robin_loads(sizes: np.ndarray, first: int, nparts: int, before: np.ndarray | None = None) -> np.ndarray:
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
    if before is not None:
        after += before[(first + np.arange(cnt)) % P]
    return after


def _bin_bounds(limit: int, loads: np.ndarray) -> np.ndarray:
    """Stage 2's bins in the stream of the remaining elements: processor p takes positions
    [bounds[p], bounds[p+1]), its gap limit − |E_n^p| after stage 1."""
    bounds = np.zeros(loads.size + 1, dtype=np.int64)
    np.cumsum(limit - loads, out=bounds[1:])
    return bounds


def _sort_sizes(sizes: np.ndarray) -> np.ndarray:
    """Stable argsort of positive sizes: radix sort for the (usually many) small ones."""
    small = sizes < (1 << 16) - 1
    if small.all():
        return np.argsort(sizes.astype(np.uint16), kind="stable")
    idx_small = np.flatnonzero(small)
    idx_large = np.flatnonzero(~small)
    o_small = idx_small[np.argsort(sizes[idx_small].astype(np.uint16), kind="stable")]
    o_large = idx_large[np.argsort(sizes[idx_large], kind="stable")]
    return np.concatenate([o_small, o_large])


def lite_plan(slice_sizes, nparts: int) -> LitePlan:
    """Run Figure 8 on slice cardinalities (index = slice id; zeros are empty slices)."""
    P = int(nparts)
    if P < 1:
        raise ValueError(f"number of processors must be >= 1, got {P}")
    sizes_all = np.asarray(slice_sizes, dtype=np.int64)
    nonempty = np.flatnonzero(sizes_all > 0)
    nz = sizes_all[nonempty]
    order = nonempty[_sort_sizes(nz)]
    sizes = sizes_all[order]
    total = int(sizes.sum())
    limit = -(-total // P)
    L = sizes.size
    over = _round_robin_loads(sizes, 0, P) > limit
    t_hat = int(np.argmax(over)) if over.any() else L
    loads = np.bincount(np.arange(t_hat) % P, weights=sizes[:t_hat], minlength=P).round().astype(np.int64)
    return LitePlan(P, limit, order, sizes, t_hat, _bin_bounds(limit, loads))


def lite_mode(index: np.ndarray, length: int, nparts: int) -> tuple[np.ndarray, LitePlan]:
    """π_n for one mode from the elements' mode-n indices: (int32 owners, plan)."""
    index = np.asarray(index)
    P = int(nparts)
    sizes = np.bincount(index, minlength=length)
    plan = lite_plan(sizes, P)
    L = plan.order.size
    n2 = L - plan.t_hat
    slice_owner = np.zeros(sizes.size, dtype=np.int32)
    slice_owner[plan.order[:plan.t_hat]] = np.arange(plan.t_hat, dtype=np.int32) % np.int32(P)
    owners = slice_owner[index]
    if n2:
        kd = np.int16 if n2 < (1 << 15) - 1 else np.int64
        slice_k = np.full(sizes.size, -1, dtype=kd)          # stage-2 ordinal, −1 for stage 1
        slice_k[plan.order[plan.t_hat:]] = np.arange(n2, dtype=kd)
        k = slice_k[index]
        stage2 = np.flatnonzero(k >= 0)
        stream = stage2[np.argsort(k[stage2], kind="stable")]   # slice by slice, storage order
        proc = np.repeat(np.arange(P, dtype=np.int32), np.diff(plan.bounds))
        owners[stream] = proc[:stream.size]
    return owners, plan


def lite(tensor, nparts: int, *, seed: int = 0) -> Distribution:
    """Lite along every mode (multi-policy). Deterministic: ``seed`` is accepted and unused."""
    policies, info = [], {"limit": [], "stage1_slices": [], "stage2_slices": []}
    for n in range(tensor.nmodes):
        owners, plan = lite_mode(np.ascontiguousarray(tensor.coords[:, n]), tensor.dims[n], nparts)
        policies.append(owners)
        info["limit"].append(plan.limit)
        info["stage1_slices"].append(plan.t_hat)
        info["stage2_slices"].append(int(plan.order.size - plan.t_hat))
    return Distribution("lite", int(nparts), tuple(policies), True, info)


def lite_owners(comm, index: np.ndarray, length: int, *, rng: np.random.Generator | None = None,
                info: dict | None = None) -> np.ndarray:
    """π_n (int32) of this rank's block elements under MPI (mode-n indices ``index``; the blocks
    in rank order are the global storage order), identical to :func:`lite_mode` on the whole
    tensor with P = comm.size (tests gather and compare).

    Slice sizes by an Allreduce of local bincounts; the non-empty slices, keyed by (size, slice id)
    (the serial stable sort's order), sorted by a parallel sample sort; stage 1's column-wise
    prefix loads by an Exscan of per-residue sums and t̂ by an Allreduce(min); stage-1 loads by an
    Allreduce; stage-2 stream offsets by an Exscan. The slice decisions (stage-1 owner or stage-2
    stream start) are spread by one Allreduce over L_n; the rank of an element inside its stage-2
    slice (storage order, Figure 8's "any g elements") by an Exscan of the per-slice local counts.
    """
    P, r = comm.size, comm.rank
    L = int(length)
    index = np.asarray(index, dtype=np.int64)
    rng = rng or np.random.default_rng([0, r])
    sizes = allreduce(comm, np.bincount(index, minlength=L).astype(np.int64))   # |Slice_n^l|
    limit = -(-int(sizes.sum()) // P)
    # sample sort of the non-empty slices by (size, id): rank r brings its range of slice ids
    a, b = block_range(L, P, r)
    ids = a + np.flatnonzero(sizes[a:b] > 0)
    span = max(L, 1)
    keys = sample_sort(comm, sizes[ids] * span + ids, rng)
    sl = keys % span                                      # slice ids S_t, t = start .. start+cnt−1
    sz = keys // span                                     # |S_t|
    del keys, sizes
    cnt = int(sl.size)
    start = int(exscan(comm, np.array([cnt]))[0])
    t = start + np.arange(cnt, dtype=np.int64)
    res = t % P
    # stage 1: load of processor t mod P right after S_t
    before = exscan(comm, np.bincount(res, weights=sz, minlength=P).round().astype(np.int64))
    over = np.flatnonzero(_round_robin_loads(sz, start, P, before) > limit)
    Lnz = int(allreduce(comm, np.array([cnt]))[0])
    t_hat = int(allreduce(comm, np.array([int(t[over[0]]) if over.size else Lnz]), op="min")[0])
    s1 = t < t_hat
    loads = allreduce(comm, np.bincount(res[s1], weights=sz[s1], minlength=P).round().astype(np.int64))
    bounds = _bin_bounds(limit, loads)
    # stage 2: stream offsets of the remaining slices (in sorted order)
    sz2 = np.where(s1, 0, sz)
    off = int(exscan(comm, np.array([int(sz2.sum())]))[0])
    stream_start = off + np.cumsum(sz2) - sz2
    # one Allreduce spreads the decisions: owner+1 (stage 1) or −(stream start+1) (stage 2)
    code = np.zeros(L, dtype=np.int64)
    code[sl[s1]] = res[s1] + 1
    code[sl[~s1]] = -(stream_start[~s1] + 1)
    code = allreduce(comm, code)
    owners = np.empty(index.size, dtype=np.int32)
    c = code[index]
    st1 = c > 0
    owners[st1] = (c[st1] - 1).astype(np.int32)
    e2 = np.flatnonzero(~st1)
    del c, st1
    if info is not None:
        info.setdefault("limit", []).append(limit)
        info.setdefault("stage1_slices", []).append(t_hat)
        info.setdefault("stage2_slices", []).append(Lnz - t_hat)
    stage2_ids = np.flatnonzero(code < 0)                  # increasing slice id, same on every rank
    if stage2_ids.size == 0:
        return owners
    # rank of each element inside its stage-2 slice, in global storage order
    k2 = np.searchsorted(stage2_ids, index[e2])
    prior = exscan(comm, np.bincount(k2, minlength=stage2_ids.size))
    order = np.argsort(k2, kind="stable")
    ks = k2[order]
    grp_start = np.searchsorted(ks, ks, side="left")
    within = np.empty(e2.size, dtype=np.int64)
    within[order] = np.arange(e2.size) - grp_start
    pos = -code[index[e2]] - 1 + prior[k2] + within
    owners[e2] = (np.searchsorted(bounds, pos, side="right") - 1).astype(np.int32)
    return owners


def lite_parallel(comm, block, *, seed: int = 0) -> tuple[list, dict]:
    """Lite of this rank's input block under MPI (P = comm.size): (policies, info). ``seed`` only
    seeds the sample sort's splitter sample; the policy does not depend on it."""
    rng = np.random.default_rng([int(seed), 0x5A, comm.rank])
    info: dict = {}
    owners = [lite_owners(comm, block.coords[:, n], block.dims[n], rng=rng, info=info)
              for n in range(len(block.dims))]
    return owners, info
