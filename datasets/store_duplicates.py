"""Duplicate coordinates in a store's columns, found and resolved in bounded memory.

Two rules: ``sum`` (FROSTT's reading, and ``read_tns``'s) or ``error``. No key set is ever held
whole. A first phase (``HashSpill``) keeps only a 64-bit hash of each coordinate, spilled chunk
by chunk to 2**k partition files chosen by the hash's top bits, k sized so that one partition
fits the memory budget; the text reader feeds it while each block is in memory, so the common
case (no duplicates) ends with one sort per partition. Only partitions where a hash repeats are
partitioned again from the binary columns with the exact keys (the mode indices in mixed
radix, one int64 word per run of modes whose cell count stays below 2**63), element ids and
values, and each is sorted and checked on its own. With ``sum`` the distinct coordinates keep
the order of their first occurrence, their values summed in file order (the same
floating-point sums as ``read_tns``, whose result lists them in coordinate order instead); a
last pass copies the columns without the later copies. With ``error`` the earliest repeated
element and the first element with its coordinates are reported.
"""
from __future__ import annotations

import math
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .tensor_store import iter_columns

__all__ = ["DUPLICATE_RULES", "DuplicateScan", "HashSpill", "partition_bits", "coord_hash", "key_plan",
           "key_words", "mix64"]

DUPLICATE_RULES = ("sum", "error")
_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(0x165667B19E3779F9))
_MAX_BITS = 12


def key_plan(dims) -> list[list[int]]:
    """Modes grouped into int64 key words: each group's cell count stays below 2**63."""
    groups, current, span = [], [], 1
    for n, length in enumerate(dims):
        length = max(int(length), 1)
        if current and span * length >= 1 << 63:
            groups.append(current)
            current, span = [], 1
        current.append(n)
        span *= length
    groups.append(current)
    return groups


def key_words(cols, dims, plan) -> list[np.ndarray]:
    """The exact key of each coordinate: one int64 array per group of ``key_plan``."""
    words = []
    for group in plan:
        w = cols[group[0]].astype(np.int64)
        for n in group[1:]:
            w *= int(dims[n])
            w += cols[n]
        words.append(w)
    return words


def _has_repeat(hashes: np.ndarray) -> bool:
    """Whether a value repeats among the key hashes (a repeat may be a collision: checked exactly after)."""
    k = hashes.reshape(-1)
    k.sort()                     # in place: callers hand over arrays they no longer need
    return bool(k.size > 1 and (k[1:] == k[:-1]).any())


def mix64(words) -> np.ndarray:
    """A well-spread uint64 hash of the key words (equal keys, equal hashes)."""
    h = words[0].view(np.uint64) * _MIX[0]
    for w in words[1:]:
        h ^= w.view(np.uint64) * _MIX[1]
    h ^= h >> np.uint64(29)
    h *= _MIX[2]
    h ^= h >> np.uint64(32)
    return h


def coord_hash(cols) -> np.ndarray:
    """A well-spread uint64 hash of each coordinate (equal coordinates, equal hashes), from the
    index columns alone (no mode lengths needed: the text reader hashes before it knows them)."""
    h = cols[0].astype(np.uint64)
    for n, c in enumerate(cols[1:]):
        h *= _MIX[n % 2]
        np.add(h, c, out=h, dtype=np.uint64, casting="unsafe")
    h ^= h >> np.uint64(33)
    h *= _MIX[2]
    h ^= h >> np.uint64(29)
    h *= _MIX[0]
    h ^= h >> np.uint64(32)
    return h


def partition_bits(nnz: int, nmodes: int, memory_bytes: int) -> int:
    """k of the 2**k partitions: one partition's exact records (at most ``nmodes`` key words, id,
    value) and their sort fit half of ``memory_bytes``."""
    need = nnz * (nmodes + 2) * 8 * 4 / max(memory_bytes // 2, 1)
    return min(_MAX_BITS, max(0, math.ceil(math.log2(need)) if need > 1 else 0))


def _bucket(cols, bits: int) -> np.ndarray:
    if bits == 0:
        return np.zeros(cols[0].shape[0], dtype=np.uint16)
    return (coord_hash(cols) >> np.uint64(64 - bits)).astype(np.uint16)


class HashSpill:
    """Phase 1: the coordinates' hashes, chunk by chunk, sorted and spilled to 2**``bits`` partition
    files by their top bits (kept in memory when there is one partition)."""

    def __init__(self, folder, bits: int):
        self.folder, self.bits = Path(folder), int(bits)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.in_memory: list = []
        self.cuts = np.arange((1 << self.bits) + 1, dtype=np.uint64)
        self.cuts[1:-1] <<= np.uint64(64 - self.bits)
        self.cuts = self.cuts[1:-1]

    def add(self, cols) -> None:
        """Hash one chunk of index columns (any integer dtype) and spill the hashes."""
        h = coord_hash(cols)
        h.sort()
        if self.bits == 0:
            self.in_memory.append(h)
            return
        bounds = [0, *np.searchsorted(h, self.cuts).tolist(), h.size]
        for b in range(1 << self.bits):
            if bounds[b + 1] > bounds[b]:
                with open(self.folder / f"hash{b}", "ab") as fh:
                    h[bounds[b]:bounds[b + 1]].tofile(fh)

    def suspects(self) -> set[int]:
        """Partitions in which a hash repeats (a repeat may be a collision: checked exactly after);
        the partition files are removed as they are read."""
        if self.bits == 0:
            found = self.in_memory and _has_repeat(np.concatenate(self.in_memory))
            self.in_memory = []
            return {0} if found else set()
        out = set()
        for b in range(1 << self.bits):
            part = self.folder / f"hash{b}"
            if part.is_file():
                if _has_repeat(np.fromfile(part, dtype=np.uint64)):
                    out.add(b)
                part.unlink()
        return out


@dataclass
class DuplicateScan:
    """Find (and with ``sum``, resolve) duplicate coordinates among the columns in ``folder``;
    ``bits``: the partitioning of a ``HashSpill`` already filled (default: sized from ``nnz``)."""

    folder: Path
    dtypes: list
    nnz: int
    dims: tuple
    memory_bytes: int
    bits: int | None = None

    def __post_init__(self):
        self.plan = key_plan(self.dims)
        self.width = len(self.plan) + 2                      # key words, id, value bits
        if self.bits is None:
            self.bits = partition_bits(self.nnz, len(self.plan), self.memory_bytes)
        self.chunk = max(1 << 14, self.memory_bytes // (16 * (len(self.dims) + 4 + 3 * self.width)))
        self.spill = Path(self.folder) / "duplicates.part"
        self.removed = 0
        self.first_pair: tuple[int, int] | None = None

    def run(self, rule: str, progress=None, hashes: HashSpill | None = None) -> None:
        """Sets ``removed`` (sum) or ``first_pair`` (error). ``hashes``: phase 1 done while the
        columns were written (else it reads the columns once); partitions where a hash repeats
        are partitioned again with the exact keys, element ids and values, and resolved."""
        self.spill.mkdir(exist_ok=True)
        if hashes is None:
            hashes = HashSpill(self.spill, self.bits)
            for lo, cols, values in iter_columns(self.folder, self.dtypes, self.nnz, self.chunk):
                hashes.add(cols)
                if progress:
                    progress("checking duplicates", lo + values.shape[0], self.nnz)
        suspects = hashes.suspects()
        if not suspects:
            return
        for b, rec in self._partitions(suspects, progress):
            self._check_part(b, rec, rule)

    def _partitions(self, only: set, progress=None):
        """Spill the exact records of the partitions in ``only`` to their files, then yield
        ``(partition, records)`` one at a time."""
        width = self.width
        in_memory: list = []
        for lo, cols, values in iter_columns(self.folder, self.dtypes, self.nnz, self.chunk):
            words = key_words(cols, self.dims, self.plan)
            rec = np.empty((values.shape[0], width), dtype=np.int64)
            for j, w in enumerate(words):
                rec[:, j] = w
            rec[:, -2] = np.arange(lo, lo + values.shape[0], dtype=np.int64)
            rec[:, -1] = values.view(np.int64)
            if self.bits == 0:
                in_memory.append(rec)
            else:                         # element order kept inside each partition
                bucket = _bucket(cols, self.bits)
                order = np.argsort(bucket, kind="stable")
                bounds = np.searchsorted(bucket[order], np.arange((1 << self.bits) + 1))
                rec = rec[order]
                for b in only:
                    if bounds[b + 1] > bounds[b]:
                        with open(self.spill / f"part{b}", "ab") as fh:
                            rec[bounds[b]:bounds[b + 1]].tofile(fh)
            if progress:
                progress("checking duplicates", lo + values.shape[0], self.nnz)
        if self.bits == 0:
            yield 0, np.concatenate(in_memory) if in_memory else np.zeros((0, width), dtype=np.int64)
            return
        for b in sorted(only):
            part = self.spill / f"part{b}"
            if part.is_file():
                rec = np.fromfile(part, dtype=np.int64).reshape(-1, width)
                part.unlink()
                yield b, rec

    def _check_part(self, b: int, rec: np.ndarray, rule: str) -> None:
        nkeys = self.width - 2
        order = np.lexsort(rec[:, nkeys - 1::-1].T) if nkeys > 1 else np.argsort(rec[:, 0], kind="stable")
        keys = rec[order, :nkeys]
        same = np.all(keys[1:] == keys[:-1], axis=1)
        if not same.any():
            return
        ids = rec[order, nkeys]
        starts = np.flatnonzero(np.concatenate([[True], ~same]))
        if rule == "error":
            later = np.flatnonzero(same) + 1
            i = later[np.argmin(ids[later])]
            first = ids[starts[np.searchsorted(starts, i, side="right") - 1]]
            if self.first_pair is None or ids[i] < self.first_pair[1]:
                self.first_pair = (int(first), int(ids[i]))
            return
        sizes = np.diff(np.append(starts, len(ids)))
        multi = sizes > 1
        sums = np.add.reduceat(rec[order, nkeys + 1].view(np.float64), starts)[multi]
        keep_ids = ids[starts[multi]]
        drop_ids = ids[np.flatnonzero(same) + 1]
        fix = np.empty((keep_ids.size + drop_ids.size, 3), dtype=np.int64)
        fix[:, 0] = np.concatenate([keep_ids, drop_ids])
        fix[:keep_ids.size, 1] = 0                              # 0: replace the value by the sum
        fix[:keep_ids.size, 2] = sums.view(np.int64)
        fix[keep_ids.size:, 1] = 1                              # 1: drop this copy
        fix[keep_ids.size:, 2] = 0
        fix[np.argsort(fix[:, 0], kind="stable")].tofile(self.spill / f"fix{b}")
        self.removed += int(drop_ids.size)

    def rewrite(self, writer, progress=None) -> None:
        """Append the columns to ``writer`` without the later copies, first copies holding the sums."""
        readers = [_FixReader(p) for p in sorted(self.spill.glob("fix*"))]
        for lo, cols, values in iter_columns(self.folder, self.dtypes, self.nnz, self.chunk):
            hi = lo + values.shape[0]
            fixes = [r.take_below(hi) for r in readers]
            fix = np.concatenate(fixes) if fixes else np.zeros((0, 3), dtype=np.int64)
            keep = np.ones(values.shape[0], dtype=bool)
            keep[fix[fix[:, 1] == 1, 0] - lo] = False
            sums = fix[fix[:, 1] == 0]
            values[sums[:, 0] - lo] = sums[:, 2].view(np.float64)
            writer.append([c[keep] for c in cols], values[keep])
            if progress:
                progress("removing duplicates", hi, self.nnz)
        shutil.rmtree(self.spill, ignore_errors=True)

    def cleanup(self) -> None:
        shutil.rmtree(self.spill, ignore_errors=True)


class _FixReader:
    """Sequential reader of one partition's fix records (sorted by element id), a block at a time."""

    def __init__(self, path: Path, block: int = 1 << 13):
        self.fh, self.block = open(path, "rb"), block
        self.buf = np.zeros((0, 3), dtype=np.int64)

    def take_below(self, hi: int) -> np.ndarray:
        out = []
        while not self.fh.closed:
            if self.buf.shape[0] == 0:
                self.buf = np.fromfile(self.fh, dtype=np.int64, count=3 * self.block).reshape(-1, 3)
                if self.buf.shape[0] == 0:
                    self.fh.close()
                    break
            k = int(np.searchsorted(self.buf[:, 0], hi))
            out.append(self.buf[:k])
            self.buf = self.buf[k:]
            if self.buf.shape[0]:
                break
        return np.concatenate(out) if out else np.zeros((0, 3), dtype=np.int64)
