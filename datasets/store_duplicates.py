"""Duplicate coordinates in a store's columns, found and resolved in bounded memory.

Two rules: ``sum`` (FROSTT's reading, and ``read_tns``'s) or ``error``. No key set is ever held
whole: one pass over the binary columns packs each coordinate into an exact key (the mode
indices in mixed radix, one int64 word per run of modes whose cell count stays below 2**63) and
spills ``(key words, element id, value)`` to 2**k partition files chosen by a hash of the key,
k sized so that one partition fits the memory budget. Equal coordinates always land in the same
partition, so each partition is sorted and checked on its own. With ``sum`` the distinct
coordinates keep the order of their first occurrence, their values summed in file order (the
same floating-point sums as ``read_tns``, whose result lists them in coordinate order instead);
a last pass copies the columns without the later copies. With ``error`` the earliest repeated
element and the first element with its coordinates are reported.
"""
from __future__ import annotations

import math
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .tensor_store import iter_columns

__all__ = ["DUPLICATE_RULES", "DuplicateScan", "key_plan", "key_words", "mix64"]

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
    k = np.sort(hashes.reshape(-1))
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


def _bucket(words, bits: int) -> np.ndarray:
    if bits == 0:
        return np.zeros(words[0].shape[0], dtype=np.uint16)
    return (mix64(words) >> np.uint64(64 - bits)).astype(np.uint16)


@dataclass
class DuplicateScan:
    """Find (and with ``sum``, resolve) duplicate coordinates among the columns in ``folder``."""

    folder: Path
    dtypes: list
    nnz: int
    dims: tuple
    memory_bytes: int

    def __post_init__(self):
        self.plan = key_plan(self.dims)
        self.width = len(self.plan) + 2                      # key words, id, value bits
        need = self.nnz * self.width * 8 * 4 / max(self.memory_bytes // 2, 1)
        self.bits = min(_MAX_BITS, max(0, math.ceil(math.log2(need)) if need > 1 else 0))
        self.chunk = max(1 << 14, self.memory_bytes // (16 * (len(self.dims) + 4 + 3 * self.width)))
        self.spill = Path(self.folder) / "duplicates.part"
        self.removed = 0
        self.first_pair: tuple[int, int] | None = None

    def run(self, rule: str, progress=None) -> None:
        """Sets ``removed`` (sum) or ``first_pair`` (error). A first partitioning keeps only a
        64-bit hash of each key (the common case, no duplicates, ends there); partitions where a
        hash repeats are partitioned again with the exact keys, element ids and values, and resolved."""
        self.spill.mkdir(exist_ok=True)
        suspects = [b for b, rec in self._partitions(payload=False, progress=progress) if _has_repeat(rec)]
        if not suspects:
            return
        wanted = set(suspects)
        for b, rec in self._partitions(payload=True, progress=progress, only=wanted):
            self._check_part(b, rec, rule)

    def _partitions(self, *, payload: bool, progress=None, only=None):
        """Spill the records to partition files, then yield ``(partition, records)`` one at a time."""
        width = self.width if payload else 1
        in_memory: list = []
        cuts = np.arange((1 << self.bits) + 1, dtype=np.uint64)
        cuts[1:-1] <<= np.uint64(64 - self.bits)
        for lo, cols, values in iter_columns(self.folder, self.dtypes, self.nnz, self.chunk):
            words = key_words(cols, self.dims, self.plan)
            if not payload:               # the keys' hashes only: sorted, so a partition is a slice
                h = mix64(words)
                h.sort()
                parts = [h] if self.bits == 0 else [h[a:b] for a, b in zip(np.searchsorted(h, cuts[:-1]),
                                                                           [*np.searchsorted(h, cuts[1:-1]), h.size])]
                self._spill(parts, in_memory, only)
                if progress:
                    progress("checking duplicates", lo + values.shape[0], self.nnz)
                continue
            rec = np.empty((values.shape[0], width), dtype=np.int64)
            for j, w in enumerate(words):
                rec[:, j] = w
            rec[:, -2] = np.arange(lo, lo + values.shape[0], dtype=np.int64)
            rec[:, -1] = values.view(np.int64)
            parts = [rec]
            if self.bits:                 # element order kept inside each partition
                bucket = _bucket(words, self.bits)
                order = np.argsort(bucket, kind="stable")
                bounds = np.searchsorted(bucket[order], np.arange((1 << self.bits) + 1))
                rec = rec[order]
                parts = [rec[bounds[b]:bounds[b + 1]] for b in range(1 << self.bits)]
            self._spill(parts, in_memory, only)
            if progress:
                progress("checking duplicates", lo + values.shape[0], self.nnz)
        dtype = np.int64 if payload else np.uint64
        if self.bits == 0:
            yield 0, np.concatenate(in_memory).reshape(-1, width) if in_memory else np.zeros((0, width), dtype=dtype)
            return
        for b in range(1 << self.bits):
            part = self.spill / f"part{b}"
            if part.is_file():
                rec = np.fromfile(part, dtype=dtype).reshape(-1, width)
                part.unlink()
                yield b, rec

    def _spill(self, parts, in_memory: list, only) -> None:
        """Partition ``b``'s slice of a chunk to its file (kept in memory when there is one partition)."""
        if self.bits == 0:
            in_memory.append(parts[0])
            return
        for b, piece in enumerate(parts):
            if piece.size and (only is None or b in only):
                with open(self.spill / f"part{b}", "ab") as fh:
                    piece.tofile(fh)

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
