"""FROSTT ``.tns``/``.tns.gz`` text into a tensor store in one streaming pass (DESIGN.md §7).

The text is read once, by pyarrow's streaming CSV reader (``pyarrow.csv.open_csv``, space
delimited, multi-threaded C++ parsing, ~1.3x pandas' reader at a tenth of its memory here, see
README "Tensor store"), in blocks sized from the memory setting, and appended column by column
to a ``StoreWriter``. The file's bytes go to the reader as they are (hashed on the way: the
source's sha256). Only a file that the reader refuses, and that has comments (``#`` to the end
of the line), tabs or repeated, leading or trailing blanks, is read again through a filter that
rewrites those lines, so it is read as ``read_tns`` reads it. Peak memory is bounded by
``memory_mb`` whatever the file size: a fixed reserve for the reader's threads, a few blocks in
flight (read-ahead is held back by a semaphore), the duplicate check's partitions
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
_AHEAD = 6           # blocks the reader may fetch before the converter takes them

_ODD_SPACE = re.compile(rb"[ \t\r\f\v]+")
_EDGE_SPACE = re.compile(rb"(?m)^ | $")


def block_size_for(memory_bytes: int) -> int:
    """Reader block size: ``_AHEAD`` blocks read ahead, each ~3x its text once parsed and converted."""
    return int(min(16 << 20, max(1 << 20, memory_bytes // (3 * (_AHEAD + 2)))))


class TextSource:
    """File-like object for pyarrow: the bytes of ``path`` (gunzipped when ``.gz``), hashed on
    the way; with ``clean``, line-aligned and with comments and irregular blanks rewritten."""

    def __init__(self, path: Path, hash_source: bool = True, clean: bool = False, skip: int = 0):
        self.path, self.clean, self.skip = path, clean, skip   # skip: bytes of leading comment lines
        self.permits = threading.Semaphore(_AHEAD)   # pyarrow's read-ahead is not bounded by bytes
        self.raw = _HashingReader(open(path, "rb"), hashlib.sha256() if hash_source else None)
        self.stream = gzip.GzipFile(fileobj=self.raw, mode="rb") if path.name.endswith(".gz") else None
        self.carry = b""
        self.error: BaseException | None = None
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
        while self.skip:
            self.skip -= len(self._pull(min(self.skip, 1 << 20)))
        if not self.clean:
            return self._pull(n)
        while True:
            data = self._pull(n)
            if not data:
                tail, self.carry = self.carry, b""
                return self._cleaned(tail + b"\n") if tail.strip() else b""
            cut = data.rfind(b"\n")
            if cut < 0:
                self.carry += data
                continue
            block = self.carry + data[:cut + 1] if self.carry else data[:cut + 1]
            self.carry = data[cut + 1:]
            block = self._cleaned(block)
            if block:
                return block

    def _pull(self, n: int) -> bytes:
        if self.stream is None:
            return self.raw.read(n)
        try:
            return self.stream.read(n)
        except (EOFError, OSError, zlib.error) as exc:
            self.error = exc
            raise

    @staticmethod
    def _cleaned(block: bytes) -> bytes:
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


def _leading_comments(path: Path) -> int:
    """Bytes of the comment and blank lines before the first data line (a header the fast pass skips)."""
    skipped = 0
    with (gzip.open(path, "rb") if path.name.endswith(".gz") else open(path, "rb")) as fh:
        for line in fh:
            if line.split(b"#", 1)[0].strip():
                break
            skipped += len(line)
    return skipped


def _gzip_break_line(path: Path) -> int:
    """The line where a broken ``.gz`` file's text stops (error path: decompress and count)."""
    lines = 0
    with gzip.open(path, "rb") as fh:
        try:
            while piece := fh.read1(1 << 20):
                lines += piece.count(b"\n")
        except (EOFError, OSError, zlib.error):
            pass
    return lines + 1


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


class _Refused(Exception):
    """The reader or the checks refused a block: read again with cleaning, or diagnose the line."""


def _check_batch(batch, nmodes: int, dtypes) -> tuple[list, np.ndarray, list]:
    """0-based index columns (in the store's dtypes), values and per-mode (min, max) of a batch."""
    if any(col.null_count for col in batch.columns):
        raise _Refused("an empty field")
    values = batch.column(nmodes).to_numpy()
    if not np.isfinite(values).all():
        raise _Refused("a value that is not a finite number")
    cols, ranges = [], []
    for n in range(nmodes):
        c = batch.column(n).to_numpy()
        lo, hi = (int(c.min()) - 1, int(c.max()) - 1) if c.size else (0, -1)
        if lo < 0:
            raise _Refused("an index below 1")
        cols.append(np.subtract(c, 1, dtype=dtypes[n] if hi < np.iinfo(dtypes[n]).max else np.int64))
        ranges.append((lo, hi))
    return cols, values, ranges


def _read_pass(src: Path, writer: StoreWriter, source: TextSource, nmodes: int, block_size: int, progress) -> None:
    """Stream the text into ``writer``; _Refused when pyarrow or the checks refuse a block."""
    size = src.stat().st_size
    try:
        for batch in _batches(src, source, nmodes, block_size):
            writer.append(*_check_batch(batch, nmodes, [c.dtype for c in writer.columns]))
            source.taken()
            if progress:
                progress("reading", source.raw_bytes, size)
    except (_Refused, DatasetError):
        raise
    except ValueError as exc:        # the index check of the writer (beyond dims)
        raise _Refused(str(exc)) from None
    except Exception as exc:         # pyarrow's ArrowInvalid, or the source's own read error
        if source.error is not None:
            raise DatasetError(f"{src}: line {_gzip_break_line(src)}: the compressed data ends or breaks here "
                               f"({' '.join(str(source.error).split())})") from None
        raise _Refused(" ".join(str(exc).split())) from None


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
    lead = _leading_comments(src)
    target = Path(dst) if dst is not None else store_path_for("pending", label)
    started = time.monotonic()
    for clean in (False, True):
        source = TextSource(src, hash_source=source_sha256 is None, clean=clean, skip=0 if clean else lead)
        try:
            with StoreWriter(target, nmodes, dims=dims) as writer:
                try:
                    _read_pass(src, writer, source, nmodes, block_size_for(budget), progress)
                except _Refused as exc:
                    if not clean:
                        continue                # comments or irregular blanks: read once more, cleaned
                    raise_bad_line(src, nmodes, dims, str(exc))
                sha256 = source_sha256 or source.sha256()
                outcome = _resolve_duplicates(src, writer, duplicates, budget, progress)
                final = outcome or writer
                if dst is None:
                    final.dst = store_path_for(sha256, label)
                try:
                    header = final.commit(
                        checksum=sha256, duplicates={"rule": duplicates, "removed": int(writer.nnz - final.nnz)},
                        source={"kind": "tns", "path": str(src.resolve()), "size": stat.st_size,
                                "mtime_ns": stat.st_mtime_ns, "sha256": sha256, "cleaned": clean,
                                "seconds": round(time.monotonic() - started, 3)})
                finally:
                    if outcome is not None:
                        outcome.abort()
                return header.path
        finally:
            source.close()
    raise AssertionError("unreachable: the cleaned pass returns or raises")


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
