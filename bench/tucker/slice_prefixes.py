"""Per-slice CSF prefix counts of a tensor, for schemes that place whole slices (tucker-lite §5's
CoarseG; the ``ttm: csf`` model's tree shapes, §8).

For mode n and a set S of other modes, the distinct (i_n, i_S) prefixes of a tensor fall apart by
slice i_n, and under a policy π_n that gives every element of slice l to one rank σ(l)
(:meth:`.schemes.PolicyStream.slice_owners`) rank p's count is the sum of the per-slice counts of
the slices it owns. The per-slice counts do not depend on the scheme's rank count or seed: they
are counted once per tensor (the same compiled spill and count as a point's, one rank, each key
led by mode n: :class:`.stream_prefixes.PrefixSpill` with ``per_slice``) and kept in
``$SPBENCH_DATA/counts/<tensor>-slices-<hash>/``, one ``.npy`` file per set written atomically,
so every later CoarseG point of the tensor, at any rank count, reads sums instead of spilling
its own keys. ``SPBENCH_COUNTS_CACHE=0`` keeps them in memory for one call only.

Equal per rank to the spilled counts of the same policy (``tests/tucker/test_slice_prefixes.py``).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

__all__ = ["SlicePrefixes", "slice_owners", "LAYOUT"]

#: the layout of a cache folder (another layout's files count as absent)
LAYOUT = 1


def slice_owners(stream, modes) -> list | None:
    """σ_n of every mode of ``modes`` when the stream's policy π_n places whole slices, else None."""
    owners = {n: stream.slice_owners(n) for n in modes}
    if any(o is None for o in owners.values()):
        return None
    return [owners.get(n) for n in range(max(modes, default=-1) + 1)]


def _set_name(n: int, S: tuple) -> str:
    return f"m{int(n)}." + "_".join(str(int(j)) for j in S)


class SlicePrefixes:
    """The per-slice prefix counts of one tensor (``dims``, ``nnz``, its elements ``chunks()`` as
    ``(lo, columns)`` and its ``slice_sizes`` per mode), counted on demand and kept under
    ``identity`` (the data set's checksum) in the counts cache when given."""

    def __init__(self, dims, nnz: int, chunks, slice_sizes, identity: str | None = None, label: str = "tensor"):
        self.dims, self.nnz = [int(d) for d in dims], int(nnz)
        self.chunks, self.slice_sizes = chunks, slice_sizes
        self.held: dict = {}
        self.folder = self._folder(identity, label)

    def _folder(self, identity: str | None, label: str) -> Path | None:
        from spbench.tucker.counts_cache import cache_entry, code, enabled

        if identity is None or not enabled():
            return None
        self.identity = {"layout": LAYOUT, "dataset": str(identity), "dims": self.dims, "nnz": self.nnz,
                         "code": code()}
        return cache_entry(self.identity, label, "slices")

    def _stored(self, n: int, S: tuple) -> np.ndarray | None:
        """The set's counts from the cache folder (memory-mapped), or None when absent or not whole."""
        if self.folder is None:
            return None
        try:
            if json.loads((self.folder / "identity.json").read_text()) != self.identity:
                return None
            counts = np.load(self.folder / f"{_set_name(n, S)}.npy", mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError):
            return None
        return counts if counts.shape == (self.dims[n],) and counts.dtype.kind == "i" else None

    def _keep(self, n: int, S: tuple, counts: np.ndarray) -> None:
        """Hold the set's counts (int32 while they fit), and write them to the cache folder; a write
        that fails (full disk) keeps them in memory for this call only."""
        from spbench.store.atomic_files import WriteFailed, atomic_output

        counts = counts.astype(np.int32) if self.nnz < 2**31 else counts
        self.held[(n, S)] = counts
        if self.folder is None:
            return
        try:
            if not self.folder.joinpath("identity.json").is_file():
                with atomic_output(self.folder / "identity.json") as tmp:
                    tmp.write_text(json.dumps(self.identity, sort_keys=True))
            with atomic_output(self.folder / f"{_set_name(n, S)}.npy") as tmp:
                with open(tmp, "wb") as fh:
                    np.save(fh, counts, allow_pickle=False)
        except (WriteFailed, OSError):
            return
        del self.held[(n, S)]

    def per_slice(self, sets) -> dict:
        """{(n, S): distinct (i_n, i_S) prefixes of each slice of mode n} for ``sets``, counting
        those neither held nor cached in passes over the elements (within the spill budget)."""
        from spbench.tucker.stream_prefixes import PrefixSpill, spill_directory, spill_groups

        sets = list(dict.fromkeys((int(n), tuple(int(j) for j in S)) for n, S in sets))
        out = {}
        for s in sets:
            found = self.held.get(s)
            out[s] = found if found is not None else self._stored(*s)
        missing = [s for s in sets if out[s] is None]
        for group in spill_groups(self.nnz, len(self.dims), sets=missing, multi_policy=True) if missing else []:
            spill = PrefixSpill(group, self.dims, self.slice_sizes, self.nnz, 1, True, spill_directory(),
                                per_slice=True)
            try:
                for _, cols in self.chunks():
                    spill.add(cols, np.zeros((1, len(cols[0])), dtype=np.int32))
                counted = spill.counts()
            finally:
                spill.close()
            for s, counts in counted.items():
                self._keep(*s, counts)
                out[s] = self.held.get(s)
                if out[s] is None:
                    out[s] = self._stored(*s)
        return out

    def rank_counts(self, sets, owners: list, P: int) -> dict:
        """{(n, S): distinct prefixes per rank (int64, length P)} of a policy whose π_n gives slice l
        of mode n to ``owners[n][l]``: the per-slice counts summed per owner."""
        out = {}
        for (n, S), counts in self.per_slice(sets).items():
            summed = np.bincount(np.asarray(owners[n]), weights=np.asarray(counts, dtype=np.float64), minlength=int(P))
            out[(n, S)] = np.rint(summed).astype(np.int64)     # exact: every sum is below 2**53
        return out
