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
One policy for all modes (uni-policy).
"""
from __future__ import annotations

import numpy as np

from . import Distribution, mode_rng

__all__ = ["medium", "splatt_grid", "splatt_layers", "prime_factors"]


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


def medium(tensor, nparts: int, *, seed: int = 0, grid=None) -> Distribution:
    """MediumG (uni-policy). ``grid`` overrides the SPLATT grid (its product must be P)."""
    P = int(nparts)
    q = tuple(int(x) for x in grid) if grid is not None else splatt_grid(tensor.dims, P)
    if len(q) != tensor.nmodes or int(np.prod(q)) != P:
        raise ValueError(f"grid {q} does not match {tensor.nmodes} modes and P = {P}")
    owner = np.zeros(tensor.nnz, dtype=np.int64)
    for n in range(tensor.nmodes):
        idx = tensor.coords[:, n]
        length = tensor.dims[n]
        sizes = np.bincount(idx, minlength=length)
        perm = mode_rng(seed, n).permutation(length)
        layer = np.empty(length, dtype=np.int64)
        layer[perm] = splatt_layers(sizes[perm], q[n])
        owner = owner * q[n] + layer[idx]
    policy = owner.astype(np.int32)
    return Distribution("medium", P, (policy,) * tensor.nmodes, False, {"grid": list(q), "seed": int(seed)})
