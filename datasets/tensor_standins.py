"""Deterministic synthetic stand-ins of the FROSTT tensors, drawn chunk by chunk (DESIGN.md §7).

The model (tucker-lite Fig. 9 tensors; recipe per tensor in ``tensor_registry.TENSORS``): the
same number of modes, every mode length scaled by ``dim_scale`` (kept at least min(L_n, 64)),
``nnz`` distinct nonzeros, each mode's index drawn independently from a power law
p_i ∝ i^−α_n over a random relabelling of the indices, α_n tuned (bisection) so the expected
largest slice holds ``max_share[n]`` of the nonzeros; values uniform in (0, 1].

Drawing: rounds of up to 2**23 coordinates; in a round each mode's indices are a multinomial
count per index (the power law) spread in random order by a shuffle (the same law as drawing them
one by one, several times faster than inverting the CDF per draw). A coordinate already drawn
is dropped, keeping the first in draw order, against a set of 64-bit hashes of the accepted
coordinates (a hash collision drops a coordinate too: still distinct, still deterministic), so
memory is ~8 bytes per nonzero plus one round, and a full-size stand-in streams straight into a
tensor store (``tensor_registry.standin_store``) without text. Everything follows from the seed.
"""
from __future__ import annotations

import numpy as np

from .errors import DatasetError
from .store_duplicates import key_plan, key_words, mix64

__all__ = ["powerlaw_exponent", "scaled_dims", "standin_chunks", "collect_chunks", "STANDIN_VERSION"]

STANDIN_VERSION = 2            # 2: chunked multinomial draws (version 1 inverted the CDF per draw)
_ROUND = 1 << 23
_PARTS_BITS = 6


def powerlaw_exponent(length: int, share: float) -> float:
    """α with 1/Σ_{i=1..length} i^−α = share (the largest of ``length`` power-law slices holds
    ``share`` of the mass); 0 when share <= 1/length."""
    if length <= 1 or share <= 1.0 / length:
        return 0.0
    if share >= 1.0:
        raise ValueError("share must be < 1")
    i = np.arange(1, length + 1, dtype=float)
    lo, hi = 0.0, 1.0
    while 1.0 / np.sum(i ** -hi) < share:
        hi *= 2
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if 1.0 / np.sum(i ** -mid) < share:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def scaled_dims(dims, dim_scale: float) -> tuple:
    """Mode lengths ``dims * dim_scale``, each kept at least min(L_n, 64)."""
    return tuple(max(int(round(L * float(dim_scale))), min(L, 64)) for L in dims)


class _AcceptedSet:
    """Sorted hashes of the accepted coordinates, split by their top bits (cheap inserts)."""

    def __init__(self):
        self.parts = [np.zeros(0, dtype=np.uint64) for _ in range(1 << _PARTS_BITS)]
        self.cuts = np.arange(1 << _PARTS_BITS, dtype=np.uint64) << np.uint64(64 - _PARTS_BITS)

    def _split(self, sorted_hashes):
        bounds = np.searchsorted(sorted_hashes, self.cuts)
        return zip(range(len(self.parts)), np.append(bounds, sorted_hashes.size)[:-1],
                   np.append(bounds[1:], sorted_hashes.size))

    def seen(self, sorted_hashes) -> np.ndarray:
        """Which of the (sorted, distinct) hashes were accepted before."""
        out = np.zeros(sorted_hashes.size, dtype=bool)
        for p, lo, hi in self._split(sorted_hashes):
            part = self.parts[p]
            if part.size and hi > lo:
                pos = np.minimum(np.searchsorted(part, sorted_hashes[lo:hi]), part.size - 1)
                out[lo:hi] = part[pos] == sorted_hashes[lo:hi]
        return out

    def add(self, sorted_hashes) -> None:
        for p, lo, hi in self._split(sorted_hashes):
            if hi > lo:
                new = sorted_hashes[lo:hi]
                self.parts[p] = np.insert(self.parts[p], np.searchsorted(self.parts[p], new), new)


def _draw_mode(rng, p: np.ndarray, labels: np.ndarray, m: int) -> np.ndarray:
    counts = rng.multinomial(m, p)
    idx = np.repeat(labels, counts)
    rng.shuffle(idx)
    return idx


def standin_chunks(dims, shares, nnz: int, seed: int, *, label: str = "stand-in"):
    """Yield ``(columns, values)`` chunks (0-based int64 columns, float64) of the stand-in whose
    mode lengths are ``dims``: ``nnz`` distinct coordinates in total."""
    target = int(nnz)
    if target < 1:
        raise DatasetError(f"{label}: stand-in nnz must be >= 1, got {target}")
    cells = float(np.prod([float(d) for d in dims]))
    if target > 0.5 * cells:
        raise DatasetError(f"{label}: stand-in nnz {target} too large for dims {tuple(dims)}")
    rng = np.random.default_rng([int(seed), 0x7E5])
    value_rng = np.random.default_rng([int(seed), 0x7E5, 1])
    laws, labels = [], []
    for L, share in zip(dims, shares):
        w = np.arange(1, L + 1, dtype=float) ** -powerlaw_exponent(L, min(float(share), 0.999))
        laws.append(w / w.sum())
        labels.append(rng.permutation(L).astype(np.int64))
    plan = key_plan(dims)
    accepted = _AcceptedSet()
    done, idle = 0, 0
    while done < target:
        m = min(_ROUND, int((target - done) * 1.1) + 16)
        cols = [_draw_mode(rng, p, lab, m) for p, lab in zip(laws, labels)]
        h = mix64(key_words(cols, dims, plan))
        keep = _first_in_round(h)
        hs = np.sort(h[keep])
        old = hs[accepted.seen(hs)]
        if old.size:
            keep &= ~_member(h, old)
        take = np.flatnonzero(keep)[: target - done]
        if take.size == 0:
            idle += 1
            if idle > 64:
                raise DatasetError(f"{label}: could not draw {target} distinct coordinates in {tuple(dims)}")
            continue
        accepted.add(np.sort(h[take]))
        done += take.size
        yield [c[take] for c in cols], 1.0 - value_rng.random(take.size)


def _member(values: np.ndarray, sorted_keys: np.ndarray) -> np.ndarray:
    pos = np.minimum(np.searchsorted(sorted_keys, values), sorted_keys.size - 1)
    return sorted_keys[pos] == values


def _first_in_round(h: np.ndarray) -> np.ndarray:
    """Mask of the first occurrence of every hash of the round, in draw order."""
    keep = np.ones(h.size, dtype=bool)
    s = np.sort(h)
    repeated = s[1:][s[1:] == s[:-1]]
    if repeated.size:
        at = np.flatnonzero(_member(h, np.unique(repeated)))
        _, first = np.unique(h[at], return_index=True)
        keep[at] = False
        keep[at[first]] = True
    return keep


def collect_chunks(chunks, nmodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate ``standin_chunks`` output into ``(coords (nnz, N) int64, values)`` (small stand-ins)."""
    parts = list(chunks)
    coords = np.empty((sum(v.size for _, v in parts), nmodes), dtype=np.int64)
    at = 0
    for cols, values in parts:
        for n, c in enumerate(cols):
            coords[at:at + values.size, n] = c
        at += values.size
    values = np.concatenate([v for _, v in parts]) if parts else np.zeros(0)
    return coords, values
