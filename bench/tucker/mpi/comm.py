"""Row-index mapping σ_n (paper §3 "SVD Component", §5 "Row-Index Mapping"), without global gathers.

For mode n under policy π_n, processor p *shares* Slice_n^l when it owns one of its elements.
σ_n(l) must be one of the sharers. Good slices (one sharer) are owned by that sharer. Shared
(bad) slices are assigned greedily to balance the owners' communication load: a shared slice
weighs w_l = s_l − 1 (s_l = number of sharers), the words its owner receives per Lanczos query
(x_out = Z·x) and sends back (y_in).

Each slice l has a home rank h(l) = l mod P, which alone decides σ_n(l) from the slice's sharer
pairs by one greedy (:func:`home_owners`, THE rule): the home's shared slices in decreasing weight
(ties: increasing slice id), each to the sharer with the smallest load so far (load ties: the
sharer p minimizing (p − l − ⌊l/P⌋) mod P, so ties do not pile load on low ranks). The homes run
in a chain (:func:`_chain`) whose state is the P loads:

* sweep 1: homes h = 0, 1, …, P − 1 in turn, each seeded with the loads of the homes before it;
* sweep 2: again in turn, each home withdrawing its sweep-1 choices and redoing its greedy seeded
  with every other home's current loads; its choices are σ_n.

Serially (:func:`row_owners_from_pairs`, simulation at any P) the chain runs the homes one after
the other; under MPI (:class:`RowOwners`) home h runs at rank h and broadcasts the change of its
P loads: one Allreduce of P flags finds the homes with a shared slice, each of which broadcasts
P words per sweep (homes with good slices only decide them alone, vectorized). A rank's memory
is its own sharer pairs, its home's pairs and O(P): the pairs go to their homes by one Alltoallv
and the owners come back the same way.
The balance (largest number of words a rank receives per Z·x) stays within 10% of one global
greedy over all slices on the test tensors (tests/tucker/test_row_owners.py).

Cost: good slices are vectorized; the greedy is a Python loop over the shared slices only, twice
(``stats``: ``good`` and ``shared`` slices decided, greedy ``steps`` = sharers scanned, chain
``rounds`` = broadcasts under MPI).
"""
from __future__ import annotations

import time

import numpy as np

from spbench.tucker.mpi.collectives import Exchange, allreduce, alltoallv, broadcast
from spbench.datasets.sparse_tensor import unique_sorted

__all__ = ["sharer_pairs", "home_owners", "row_owners", "row_owners_from_pairs", "RowOwners"]


def sharer_pairs(index: np.ndarray, policy: np.ndarray, nparts: int) -> tuple[np.ndarray, np.ndarray]:
    """Unique (slice, processor) pairs with p sharing the slice; sorted by slice, then processor."""
    P = int(nparts)
    keys = unique_sorted(np.asarray(index, dtype=np.int64) * P + np.asarray(policy, dtype=np.int64))
    return keys // P, keys % P


def home_owners(slices: np.ndarray, procs: np.ndarray, nparts: int, seed_loads=None,
                stats: dict | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One greedy pass of the rule (module docstring) over one home's sharer pairs, sorted by
    (slice, processor). ``seed_loads``: the P loads to start from (zeros if None). Returns (the
    home's distinct slices, their owners (int32), the loads this pass added (int64, P))."""
    P = int(nparts)
    seed = np.zeros(P, dtype=np.int64) if seed_loads is None else np.asarray(seed_loads, dtype=np.int64)
    if slices.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32), np.zeros(P, dtype=np.int64)
    first = np.empty(slices.size, dtype=bool)
    first[0] = True
    np.not_equal(slices[1:], slices[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    uniq = slices[starts]
    counts = np.diff(np.append(starts, slices.size))
    owner = np.empty(uniq.size, dtype=np.int32)
    good = counts == 1
    owner[good] = procs[starts[good]]
    bad = np.flatnonzero(~good)
    added = np.zeros(P, dtype=np.int64)
    if bad.size:
        bad = bad[np.argsort(-counts[bad], kind="stable")]   # decreasing weight, ties by slice id
        load = seed.tolist()
        plist = procs.tolist()
        rot = ((uniq[bad] + uniq[bad] // P) % P).tolist()
        a_list = starts[bad].tolist()
        c_list = counts[bad].tolist()
        out = np.empty(bad.size, dtype=np.int32)
        for i, (a, c, r) in enumerate(zip(a_list, c_list, rot)):
            best, key = -1, None
            for p in plist[a:a + c]:
                k = (load[p], (p - r) % P)
                if key is None or k < key:
                    best, key = p, k
            load[best] += c - 1
            out[i] = best
        owner[bad] = out
        added = np.asarray(load, dtype=np.int64) - seed
    if stats is not None:
        stats["steps"] = stats.get("steps", 0) + int(counts[bad].sum())
        stats["shared"] = int(bad.size)
        stats["good"] = int(np.count_nonzero(good))
    return uniq, owner, added


SWEEPS = 2


def _has_shared(slices: np.ndarray) -> bool:
    """Whether sorted sharer pairs hold a slice with two or more sharers."""
    return bool(slices.size > 1 and np.any(slices[1:] == slices[:-1]))


def _chain(P: int, homes: dict, active, share, stats: dict) -> dict:
    """Run the homes' greedies in the chain of the module docstring. ``homes``: home -> its sharer
    pairs (slices, procs) for the homes computed here; ``active``: the homes (of all P) with a
    shared slice, the only ones in the chain (the others own only good slices and move no load);
    ``share(delta, h)`` returns active home h's change of the P loads on every participant
    (``delta`` is None where h is not computed here). Returns home -> (its slices, their owners)."""
    total = np.zeros(P, dtype=np.int64)
    mine = {h: np.zeros(P, dtype=np.int64) for h in homes}
    out, per_home = {}, {h: {} for h in homes}
    for h in set(homes) - set(active):
        out[h] = home_owners(*homes[h], P, None, per_home[h])[:2]
    for _ in range(SWEEPS):
        for h in active:
            delta = None
            if h in homes:
                s, q = homes[h]
                uniq, own, add = home_owners(s, q, P, total - mine[h], per_home[h])
                delta = add - mine[h]
                mine[h] = add
                out[h] = (uniq, own)
            total += share(delta, h)
    for h in homes:
        for k, v in per_home[h].items():
            stats[k] = stats.get(k, 0) + v
    stats["rounds"] = SWEEPS * len(active)
    return out


def row_owners_from_pairs(slices: np.ndarray, procs: np.ndarray, length: int, nparts: int,
                          stats: dict | None = None) -> np.ndarray:
    """σ_n from sorted sharer pairs; int32 over [0, length), −1 for empty slices. Exactly what
    :class:`RowOwners` computes under MPI on ``nparts`` ranks (the homes are run here in turn)."""
    P = int(nparts)
    owner = np.full(int(length), -1, dtype=np.int32)
    slices = np.asarray(slices, dtype=np.int64)
    procs = np.asarray(procs, dtype=np.int64)
    if slices.size == 0:
        return owner
    home = slices % P
    order = np.argsort(home, kind="stable")                   # (slice, proc) order kept per home
    bounds = np.searchsorted(home[order], np.arange(P + 1))
    homes = {h: (slices[order[a:b]], procs[order[a:b]]) for h, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))}
    del home, order
    active = [h for h in range(P) if _has_shared(homes[h][0])]
    for uniq, own in _chain(P, homes, active, lambda delta, h: delta, {} if stats is None else stats).values():
        owner[uniq] = own
    return owner


def row_owners(tensor, policy: np.ndarray, mode: int, nparts: int, stats: dict | None = None) -> np.ndarray:
    """σ_mode for ``policy`` (see module docstring); −1 marks empty slices."""
    s, p = sharer_pairs(tensor.coords[:, mode], policy, nparts)
    return row_owners_from_pairs(s, p, tensor.dims[mode], nparts, stats)


def _to_homes(comm, ids: np.ndarray):
    """Order ``ids`` by home rank (stable) and exchange them: (order, send counts, received ids,
    received counts)."""
    P = comm.size
    home = ids % P
    order = np.argsort(home, kind="stable")
    counts = np.bincount(home, minlength=P).astype(np.int64)
    got, recv_counts = alltoallv(comm, ids[order], counts)
    return order, counts, got, recv_counts


class RowOwners:
    """σ_n of the slices this rank shares, computed at the slices' homes (module docstring).

    ``rows``: the sorted slice ids this rank shares (R_n^p); ``owners``: their σ_n (int32).
    The rank also keeps the owners of its home slices, which :meth:`lookup` serves.
    ``stats``: this rank's share of the rule's cost (good and shared slices decided at this
    home, greedy ``steps`` over both sweeps) and ``seconds``."""

    def __init__(self, rows, owners, home_slices, home_owner, stats):
        self.rows = rows
        self.owners = owners
        self.home_slices = home_slices
        self.home_owner = home_owner
        self.stats = stats

    @classmethod
    def compute(cls, comm, rows, length) -> "RowOwners":
        """Collective. ``rows``: sorted unique int64 slice ids of the mode that this rank shares."""
        t0 = time.perf_counter()
        P, p = comm.size, comm.rank
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        if rows.size and (rows[0] < 0 or rows[-1] >= int(length)):
            raise ValueError(f"row ids must lie in [0, {int(length)})")
        order, counts, got, recv_counts = _to_homes(comm, rows)
        src = np.repeat(np.arange(P, dtype=np.int64), recv_counts)
        pairs = np.argsort(got * P + src, kind="stable")            # by (slice, sharer)
        s, q = got[pairs], src[pairs]
        del src
        stats: dict = {}

        def share(delta, h):
            return broadcast(comm, delta if h == p else np.empty(P, dtype=np.int64), root=h)

        flags = np.zeros(P, dtype=np.int64)
        flags[p] = _has_shared(s)
        active = np.flatnonzero(allreduce(comm, flags)).tolist()
        uniq, own = _chain(P, {p: (s, q)}, active, share, stats)[p]
        del s, q
        # answer every received pair (in received order) with its slice's owner
        answer = np.empty(got.size, dtype=np.int32)
        answer[pairs] = own[np.searchsorted(uniq, got[pairs])]
        back = Exchange(recv_counts, counts)(comm, answer)
        owners = np.empty(rows.size, dtype=np.int32)
        owners[order] = back
        stats["seconds"] = time.perf_counter() - t0
        return cls(rows, owners, uniq, own, stats)

    def lookup(self, comm, slices) -> np.ndarray:
        """Collective. σ_n (int32) of sorted unique NON-EMPTY slice ids, asked of their homes."""
        slices = np.ascontiguousarray(slices, dtype=np.int64)
        order, counts, got, recv_counts = _to_homes(comm, slices)
        at = np.searchsorted(self.home_slices, got)
        if got.size and (at.max() >= self.home_slices.size or not np.array_equal(self.home_slices[at], got)):
            raise ValueError("lookup of a slice that no rank shares (an empty slice)")
        back = Exchange(recv_counts, counts)(comm, self.home_owner[at])
        out = np.empty(slices.size, dtype=np.int32)
        out[order] = back
        return out
