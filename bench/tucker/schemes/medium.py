"""MediumG (paper §5; Smith & Karypis [25], SPLATT's medium-grained decomposition).

1. Processor grid q_1 × … × q_N = P (``splatt_grid``, SPLATT ``p_get_best_mpi_dim``): factor P
   into primes; q_n = 1; target = ⌊Σ_n L_n / P⌋; for each prime, largest first, compute
   diff_n = L_n // q_n − target where positive (else 0) and multiply the q_n of the mode with
   the largest diff (ties, or no diff above 0: the lowest mode).
2. Per mode, a seeded random permutation of the indices (stream ``(seed, n)``), then SPLATT's
   1-D greedy cuts (``p_find_layer_boundaries``) of the permuted index sequence into q_n
   layers of balanced nonzero counts (``splatt_layers``; vectorized with searchsorted, since
   the greedy only acts at its q_n − 1 boundaries).
3. Element → block (layer_1, …, layer_N) → processor Σ_n layer_n · Π_{j>n} q_j (row-major).
One policy for all modes (uni-policy). One core, :func:`medium_layers` (slice sizes → the layer of
every index), for the serial form (:func:`medium_policy` on a :class:`..mpi.LocalComm`), the
parallel one (slice sizes by an Allreduce) and the streamed one (:func:`medium_stream`).
"""
from __future__ import annotations

from functools import partial

import numpy as np

from spbench.tucker.mpi.collectives import LocalComm, allreduce
from spbench.pipeline.parameters import Parameter
from .distribution import Distribution, PolicyStream, permuted_cut

__all__ = ["medium", "medium_parallel", "medium_policy", "splatt_grid", "splatt_layers", "prime_factors",
           "MEDIUM_PARAMETERS", "medium_layers", "medium_grid", "medium_stream"]

MEDIUM_PARAMETERS = {
    "grid": Parameter("ints", None, "processor grid q_1 x ... x q_N (one entry per mode, product = ranks); "
                      "default: SPLATT's rule (splatt_grid)"),
}


def prime_factors(n: int) -> list[int]:
    """Prime factors of n in increasing order, with multiplicity (1 → [])."""
    out, d = [], 2
    while d * d <= n:
        while n % d == 0:
            out.append(d)
            n //= d
        d += 1
    if n > 1:
        out.append(n)
    return out


def splatt_grid(dims, nparts: int) -> tuple[int, ...]:
    """SPLATT's medium-grained processor grid for a tensor of size ``dims`` on ``nparts`` ranks."""
    P = int(nparts)
    if P < 1:
        raise ValueError(f"number of processors must be >= 1, got {P}")
    dims = [int(d) for d in dims]
    q = [1] * len(dims)
    target = sum(dims) // P
    for prime in reversed(prime_factors(P)):
        furthest, best = 0, 0
        for m, length in enumerate(dims):
            curr = length // q[m]
            diff = curr - target if curr > target else 0
            if diff > best:
                furthest, best = m, diff
        q[furthest] *= prime
    return tuple(q)


def splatt_layers(sizes_in_order, layers: int) -> np.ndarray:
    """Layer (int64) of every index of a sequence with nonzero counts ``sizes_in_order``.

    SPLATT's greedy: target pnnz = nnz // q; scanning s = 1, 2, ... with nnzcnt = nonzeros of
    indices < s, the first s with nnzcnt >= lastn + pnnz starts the next layer; lastn becomes
    nnzcnt or nnzcnt − size[s−1], whichever is closer to lastn + pnnz (the boundary itself is
    always s); then pnnz = (nnz − lastn) // max(1, q − (layers placed − 1)). If the scan ends
    before q layers are placed, the remaining layers are empty (SPLATT leaves them undefined).
    """
    sizes = np.asarray(sizes_in_order, dtype=np.int64)
    L, q = sizes.size, int(layers)
    if q <= 1 or L == 0:
        return np.zeros(L, dtype=np.int64)
    cum = np.zeros(L + 1, dtype=np.int64)
    np.cumsum(sizes, out=cum[1:])
    nnz = int(cum[-1])
    ptrs = [0]
    pnnz = nnz // q
    lastn = 0
    start = 1
    while start < L:
        target = lastn + pnnz
        s = max(start, int(np.searchsorted(cum, target, side="left")))
        if s >= L:
            break
        thisdist = int(cum[s]) - target
        prevdist = target - int(cum[s - 1])
        lastn = int(cum[s - 1]) if prevdist < thisdist else int(cum[s])
        ptrs.append(s)
        if len(ptrs) == q:
            break
        pnnz = (nnz - lastn) // max(1, q - (len(ptrs) - 1))
        start = s + 1
    ptrs.extend([L] * (q + 1 - len(ptrs)))
    return np.searchsorted(np.asarray(ptrs[:q]), np.arange(L), side="right") - 1


def medium_grid(dims, nparts: int, grid=None) -> tuple:
    """``grid`` checked against the modes and P, or SPLATT's grid when None."""
    P = int(nparts)
    q = tuple(int(x) for x in grid) if grid is not None else splatt_grid(dims, P)
    if len(q) != len(dims) or int(np.prod(q)) != P:
        raise ValueError(f"grid {q} does not match {len(dims)} modes and P = {P}")
    return q


def medium_layers(sizes: np.ndarray, mode: int, layers: int, seed: int) -> np.ndarray:
    """The layer (int64) of every index of ``mode`` from the slice sizes (the whole tensor's)."""
    return permuted_cut(sizes, mode, seed, lambda ordered: splatt_layers(ordered, layers), np.int64)


def medium_policy(comm, coords: np.ndarray, dims, nparts: int, seed: int, grid=None) -> tuple[np.ndarray, tuple]:
    """The MediumG policy (int32) of the elements ``coords`` (this rank's share; the union over
    ``comm`` is the tensor) for ``nparts`` processors, and the grid. Slice sizes are an Allreduce
    of local bincounts (a copy on a LocalComm); the rest is computed redundantly."""
    q = medium_grid(dims, nparts, grid)
    owner = np.zeros(coords.shape[0], dtype=np.int64)
    for n, length in enumerate(dims):
        idx = coords[:, n]
        sizes = allreduce(comm, np.bincount(idx, minlength=length).astype(np.int64))
        owner *= q[n]
        owner += medium_layers(sizes, n, q[n], seed)[idx]
    return owner.astype(np.int32), q


class _MediumStream(PolicyStream):
    def __init__(self, slice_sizes: list, nparts: int, seed: int, grid):
        dims = [len(s) for s in slice_sizes]
        self.grid = medium_grid(dims, nparts, grid)
        super().__init__("medium", nparts, len(dims), False, {"grid": list(self.grid), "seed": int(seed)})
        self.layers = [medium_layers(np.asarray(s, dtype=np.int64), n, self.grid[n], seed).astype(np.int32)
                       for n, s in enumerate(slice_sizes)]

    def fill(self, lo: int, cols: list, out: np.ndarray) -> None:
        row = out[0, :len(cols[0])]
        row[:] = 0
        for n, index in enumerate(cols):
            row *= self.grid[n]
            row += self.layers[n][index]

    def fill_jobs(self, lo: int, cols: list, out: np.ndarray) -> list:
        """The chunk's two halves (the policy of an element depends on its coordinates alone)."""
        h = len(cols[0]) // 2
        return [partial(self.fill, lo, [c[:h] for c in cols], out[:, :h]),
                partial(self.fill, lo + h, [c[h:] for c in cols], out[:, h:])]


def medium_stream(slice_sizes: list, nparts: int, *, seed: int = 0, grid=None) -> PolicyStream:
    """MediumG applied chunk by chunk (``slice_sizes``: per mode, the tensor's slice sizes)."""
    return _MediumStream(slice_sizes, int(nparts), seed, grid)


def medium(tensor, nparts: int, *, seed: int = 0, grid=None) -> Distribution:
    """MediumG (uni-policy) for any number of processors. ``grid`` overrides the SPLATT grid (its
    product must be P)."""
    policy, q = medium_policy(LocalComm(), tensor.coords, tensor.dims, nparts, seed, grid)
    return Distribution("medium", int(nparts), (policy,) * tensor.nmodes, False, {"grid": list(q), "seed": int(seed)})


def medium_parallel(comm, block, *, seed: int = 0, grid=None) -> tuple[list, dict]:
    """MediumG of this rank's input block under MPI (P = comm.size): (policies, info)."""
    policy, q = medium_policy(comm, block.coords, block.dims, comm.size, seed, grid)
    return [policy] * len(block.dims), {"grid": list(q)}
