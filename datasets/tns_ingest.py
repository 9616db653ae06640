"""FROSTT ``.tns``/``.tns.gz`` text into a tensor store in one streaming pass (DESIGN.md §7).

The text is read once, by pyarrow's streaming CSV reader (``pyarrow.csv.open_csv``, space
delimited, multi-threaded C++ parsing: several times pandas' reader here, see README "Tensor
store"), in blocks sized from the memory setting, and appended column by column to a
``StoreWriter``. Between the file and the reader sits a small filter that hashes the raw bytes
(the source's sha256), counts lines, and rewrites only the blocks that need it: comments
(``#`` to the end of the line), tabs, repeated, leading or trailing blanks. Blank lines are
skipped, as ``read_tns`` does. Peak memory is bounded by ``memory_mb`` whatever the file size:
a few blocks in flight (parse threads read ahead), the duplicate check's partitions
(``store_duplicates``) and one byte per index of each mode.

Errors are one line naming the file and the line: a bad line is diagnosed by ``frostt``'s line
scanner once pyarrow or the checks on its output refuse a block; a truncated gzip names the
line where the compressed data ends.
"""
from __future__ import annotations

import gzip
import hashlib
import re
import threading
import time
import zlib
from pathlib import Path

import numpy as np

from .errors import DatasetError
from .frostt import count_fields, data_line_numbers, raise_bad_line, tns_stem
from .store_duplicates import DUPLICATE_RULES, DuplicateScan
from .tensor_store import StoreWriter, read_header, store_path_for

__all__ = ["convert_tns", "block_size_for", "TextSource", "MIN_MEMORY_MB"]

MIN_MEMORY_MB = 128
_RESERVE_MB = 64     # the reader's threads and allocator arenas, whatever the block size
_AHEAD = 3           # blocks the reader may fetch before the converter takes them

_ODD_SPACE = re.compile(rb"[ \t\r\f\v]+")
_EDGE_SPACE = re.compile(rb"(?m)^ | $")


def block_size_for(memory_bytes: int) -> int:
    """Reader block size: ``_AHEAD`` blocks read ahead, each ~3x its text once parsed and converted."""
    return int(min(16 << 20, max(1 << 20, memory_bytes // (3 * (_AHEAD + 2)))))


class TextSource:
    """File-like object for pyarrow: raw bytes of ``path`` (gunzipped when ``.gz``), hashed,
    line-counted, and cleaned where a block holds comments or irregular blanks."""

    def __init__(self, path: Path, hash_source: bool = True):
        self.path = path
        self.permits = threading.Semaphore(_AHEAD)   # pyarrow's read-ahead is not bounded by bytes
        self.raw = _HashingReader(open(path, "rb"), hashlib.sha256() if hash_source else None)
        self.stream = gzip.GzipFile(fileobj=self.raw, mode="rb") if path.name.endswith(".gz") else None
        self.carry = b""
        self.lines = 0                 # complete lines handed to the reader
        self.error: BaseException | None = None
        self.error_line = 0
        self.closed = False

    @property
    def raw_bytes(self) -> int:
        """Bytes of the file read so far (compressed bytes for ``.gz``)."""
        return self.raw.done

    def readable(self) -> bool:
        return True

    def taken(self) -> None:
        """The converter took a block: the reader may fetch one more."""
        self.permits.release()

    def read(self, n: int = -1) -> bytes:
        n = 1 << 24 if n is None or n < 0 else max(int(n), 1 << 12)
        self.permits.acquire(timeout=1.0)   # a timeout, never a deadlock, should blocks and batches differ
        while True:
            data = self._pull(n)
            if not data:
                tail, self.carry = self.carry, b""
                if tail:
                    self.lines += 1
                return self._clean(tail + b"\n") if tail.strip() else b""
            cut = data.rfind(b"\n")
            if cut < 0:
                self.carry += data
                continue
            block = self.carry + data[:cut + 1] if self.carry else data[:cut + 1]
            self.carry = data[cut + 1:]
            self.lines += block.count(b"\n")
            block = self._clean(block)
            if block:
                return block

    def _pull(self, n: int) -> bytes:
        """Up to ``n`` bytes of text; gzip in pieces, so a truncated file is located to the line."""
        if self.stream is None:
            return self.raw.read(n)
        pieces, got = [], 0
        while got < n:
            try:
                piece = self.stream.read1(min(n - got, 1 << 18))
            except (EOFError, OSError, zlib.error) as exc:
                self.error = exc
                self.error_line = self.lines + self.carry.count(b"\n") + sum(p.count(b"\n") for p in pieces) + 1
                raise
            if not piece:
                break
            pieces.append(piece)
            got += len(piece)
        return b"".join(pieces)

    @staticmethod
    def _clean(block: bytes) -> bytes:
        if b"#" in block:
            block = re.sub(rb"#[^\n]*", b"", block)
        if b"\t" in block or b"  " in block or b"\r" in block or b"\n " in block or b" \n" in block \
                or block[:1] == b" " or b"\f" in block or b"\v" in block:
            block = _EDGE_SPACE.sub(b"", _ODD_SPACE.sub(b" ", block))
        return block

    def sha256(self) -> str | None:
        """Hex digest of the file's bytes (reads what the text reader left, e.g. gzip padding)."""
        if self.raw.digest is None:
            return None
        while self.raw.read(1 << 20):
            pass
        return self.raw.digest.hexdigest()

    def close(self) -> None:
        self.closed = True
        self.raw.fh.close()


class _HashingReader:
    """The file's own bytes, hashed on the way through and counted (progress)."""

    def __init__(self, fh, digest):
        self.fh, self.digest, self.done = fh, digest, 0

    def read(self, n: int = -1) -> bytes:
        data = self.fh.read(n)
        if self.digest is not None:
            self.digest.update(data)
        self.done += len(data)
        return data


def _batches(path: Path, source: TextSource, nmodes: int, block_size: int):
    import pyarrow as pa
    import pyarrow.csv as pcsv
    names = [f"i{n}" for n in range(nmodes)] + ["v"]
    types = {name: pa.int64() for name in names[:-1]} | {"v": pa.float64()}
    reader = pcsv.open_csv(
        source,
        read_options=pcsv.ReadOptions(block_size=block_size, column_names=names, use_threads=True),
        parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False, ignore_empty_lines=True),
        convert_options=pcsv.ConvertOptions(column_types=types, strings_can_be_null=False,
                                            quoted_strings_can_be_null=False))
    yield from reader


def _check_batch(batch, nmodes: int, dims) -> tuple[list, np.ndarray] | None:
    """0-based index columns and the values of a parsed batch, or None when a line is bad."""
    if any(col.null_count for col in batch.columns):
        return None
    values = batch.column(nmodes).to_numpy()
    if not np.isfinite(values).all():
        return None
    cols = []
    for n in range(nmodes):
        c = batch.column(n).to_numpy()
        if c.size and (c.min() < 1 or (dims is not None and c.max() > dims[n])):
            return None
        cols.append(c - 1)
    return cols, values


def convert_tns(src, dst=None, *, memory_mb: float = 1024, duplicates: str = "sum", progress=None,
                dims=None, source_sha256: str | None = None, name: str | None = None) -> Path:
    """Convert ``src`` (``.tns``/``.tns.gz``) into a store and return its folder.

    ``dst``: the store folder (must not exist); default the cache, ``store_path_for(sha256,
    name or the file's stem)``, reused when already there. ``memory_mb`` bounds the peak
    memory of the conversion; ``duplicates``: ``sum`` or ``error`` (module ``store_duplicates``);
    ``dims``: the mode lengths when known (else the largest index per mode);
    ``source_sha256``: the file's checksum when the caller has it (skips hashing);
    ``progress(stage, done, total)`` is called as the work advances. Bad input raises
    DatasetError naming the file and the line; nothing is left behind.
    """
    src = Path(src)
    if duplicates not in DUPLICATE_RULES:
        raise DatasetError(f"duplicates: expected one of {', '.join(DUPLICATE_RULES)}, got {duplicates!r}")
    if memory_mb < MIN_MEMORY_MB:
        raise DatasetError(f"memory: at least {MIN_MEMORY_MB} MB is needed, got {memory_mb:g} MB")
    if not src.is_file():
        raise DatasetError(f"{src}: no such file")
    if not src.name.endswith((".tns", ".tns.gz")):
        raise DatasetError(f"{src}: expected a FROSTT .tns or .tns.gz file")
    label = name or tns_stem(src)
    if dst is not None and Path(dst).exists():
        raise DatasetError(f"{dst}: already exists; remove it or choose another output folder")
    if dst is None and source_sha256 is not None:
        cached = store_path_for(source_sha256, label)
        if (cached / "header.json").is_file():
            return cached
    budget = int((memory_mb - _RESERVE_MB) * 2**20)
    nmodes = count_fields(src) - 1
    if nmodes < 1:
        raise DatasetError(f"{src}: the first data line has one field; need at least one index and a value")
    stat = src.stat()
    source = TextSource(src, hash_source=source_sha256 is None)
    target = Path(dst) if dst is not None else store_path_for("pending", label)
    started = time.monotonic()
    try:
        with StoreWriter(target, nmodes, dims=dims) as writer:
            try:
                for batch in _batches(src, source, nmodes, block_size_for(budget)):
                    checked = _check_batch(batch, nmodes, dims)
                    if checked is None:
                        raise_bad_line(src, nmodes, dims, "a line the reader accepted failed the checks")
                    writer.append(*checked)
                    source.taken()
                    if progress:
                        progress("reading", source.raw_bytes, stat.st_size)
            except DatasetError:
                raise
            except Exception as exc:   # pyarrow's ArrowInvalid, or the source's own read error
                if source.error is not None:
                    raise DatasetError(f"{src}: line {source.error_line}: the compressed data ends or breaks here "
                                       f"({' '.join(str(source.error).split())})") from None
                raise_bad_line(src, nmodes, dims, " ".join(str(exc).split()))
            sha256 = source_sha256 or source.sha256()
            outcome = _resolve_duplicates(src, writer, duplicates, budget, progress)
            final = outcome or writer
            if dst is None:
                final.dst = store_path_for(sha256, label)
            try:
                header = final.commit(
                    checksum=sha256, duplicates={"rule": duplicates, "removed": int(writer.nnz - final.nnz)},
                    source={"kind": "tns", "path": str(src.resolve()), "size": stat.st_size,
                            "mtime_ns": stat.st_mtime_ns, "sha256": sha256, "lines": source.lines,
                            "seconds": round(time.monotonic() - started, 3)})
            finally:
                if outcome is not None:
                    outcome.abort()
    finally:
        source.close()
    return header.path


def _resolve_duplicates(src: Path, writer: StoreWriter, rule: str, budget: int, progress):
    """None when there are no duplicates; a second writer holding the summed store otherwise."""
    folder = writer.finish_columns()
    scan = DuplicateScan(folder, [c.dtype for c in writer.columns], writer.nnz, writer.final_dims(), budget)
    try:
        scan.run(rule, progress)
        if rule == "error" and scan.first_pair is not None:
            first, later = scan.first_pair
            lines = data_line_numbers(src, [first, later])
            raise DatasetError(f"{src}: line {lines.get(later, '?')}: repeats the coordinates of line "
                               f"{lines.get(first, '?')} (duplicates: error; `--duplicates sum` adds them)")
        if scan.removed == 0:
            return None
        summed = StoreWriter(writer.dst, writer.nmodes, dims=writer.dims)
        try:
            scan.rewrite(summed, progress)
        except BaseException:
            summed.abort()
            raise
        return summed
    finally:
        scan.cleanup()


def stat_line(path) -> str:
    """``nnz, dims, size`` of a store in one line, for command output."""
    h = read_header(path)
    size = sum(f.stat().st_size for f in Path(path).iterdir() if f.is_file())
    return (f"{h.nnz:,} nonzeros, dims {' x '.join(f'{d:,}' for d in h.dims)}, "
            f"{size / 1e6:,.1f} MB on disk, duplicates removed: {h.duplicates.get('removed', 0):,}")
