"""FROSTT ``.tns``/``.tns.gz`` text into a tensor store in one streaming pass.

A reader thread reads the file (gunzipped by pyarrow when ``.gz``, the file's own bytes hashed
on the way: the source's sha256) in blocks sized from the memory setting, cuts each at its last
newline and carries the tail to the next one, one block ahead of the parser. Each block is
parsed by pyarrow's CSV reader (``pyarrow.csv.read_csv`` on the block's buffer, space delimited,
C++ parsing on all cores within the block; see docs/performance.md "Tensor store ingestion" for its speed against pandas'
reader), checked, appended column by column to a ``StoreWriter``, and its coordinates hashed
for the duplicate check (``store_duplicates.HashSpill``) while they are in memory. A block the
parser refuses that has comments (``#`` to the end of the line), tabs or repeated, leading or
trailing blanks is rewritten by a filter and parsed again, so the file reads as ``read_tns``
reads it. Peak memory is bounded by ``memory_mb`` whatever the file size: a fixed reserve for
the parser's threads, four blocks of text (being read, waiting, being parsed, being stored) and
two parsed blocks' columns, the duplicate check's partitions and one byte per index of each mode.

Errors are one line naming the file and the line: a bad line is diagnosed by ``frostt``'s line
scanner once pyarrow or the checks on its output refuse a block; a truncated gzip names the
line where the compressed data ends; an index so large that its mode's slice marks would not fit
in the free memory names its line and the estimate before they are allocated. A write that fails
(a full disk) is a ``WriteFailed`` naming the store; nothing is left behind either way.
"""
from __future__ import annotations

import gzip
import hashlib
import queue
import re
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from spbench.store.atomic_files import WriteFailed

from . import conversion_progress
from .errors import DatasetError
from .frostt import count_fields, data_line_numbers, raise_bad_line, tns_stem
from . import resources
from .resources import out_of_memory, require_memory, size_text
from .store_duplicates import DUPLICATE_RULES, DuplicateScan, HashSpill, partition_bits
from .tensor_store import StoreWriter, read_header, store_path_for

__all__ = ["convert_tns", "block_size_for", "MIN_MEMORY_MB"]

MIN_MEMORY_MB = 128
_RESERVE_MB = 80     # the parser's threads and allocator arenas, whatever the block size
_PARSE_CHUNK = 1 << 20   # pyarrow's unit of parallel parsing inside a block

_ODD_SPACE = re.compile(rb"[ \t\r\f\v]+")
_EDGE_SPACE = re.compile(rb"(?m)^ | $")
_GZIP_ERRORS = (EOFError, OSError, zlib.error)


def block_size_for(memory_bytes: int) -> int:
    """Text block size: four blocks of text in flight (being read, waiting, being parsed, being
    stored), two parsed blocks of ~1x their text in Arrow columns and ~0.6x in numpy columns."""
    return int(min(64 << 20, max(1 << 20, memory_bytes // 8)))


class _TextBlocks:
    """Line-aligned blocks of the text of ``path`` (gunzipped when ``.gz``), read one block ahead
    by a thread; the file's own bytes hashed on the way. ``skip``: bytes of leading comment lines."""

    def __init__(self, path: Path, block_bytes: int, hash_source: bool = True, skip: int = 0):
        self.block_bytes, self.skip = block_bytes, skip
        self.raw = _HashingReader(open(path, "rb"), hashlib.sha256() if hash_source else None)
        self.stream = self.raw
        if path.name.endswith(".gz"):            # C++ inflate, no GIL held (Python's gzip holds it between pieces)
            import pyarrow as pa
            self.stream = pa.CompressedInputStream(pa.PythonFile(self.raw, mode="r"), "gzip")
        self.ready: queue.Queue = queue.Queue(maxsize=1)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="tns-reader", daemon=True)
        self.thread.start()

    @property
    def raw_bytes(self) -> int:
        """Bytes of the file read so far (compressed bytes for ``.gz``)."""
        return self.raw.done

    def __iter__(self):
        """``(block, bytes of the file read by then)``: blocks are memoryviews ending with a newline
        (or the file's last line); a read error is raised here as it was raised in the reader."""
        while (item := self.ready.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item

    def _run(self) -> None:
        try:
            while self.skip > 0:
                got = len(self.stream.read(min(self.skip, 1 << 20)))
                self.skip = self.skip - got if got else 0
            carry = b""
            while not self.stop.is_set():
                buf = bytearray(len(carry) + self.block_bytes)
                buf[:len(carry)] = carry
                n = len(carry) + self._fill(memoryview(buf)[len(carry):])
                if n == len(carry):
                    if carry.strip():
                        self._put((memoryview(buf)[:n], self.raw.done))
                    break
                cut = buf.rfind(b"\n", 0, n) + 1
                carry = bytes(buf[cut:n])
                if cut:
                    self._put((memoryview(buf)[:cut], self.raw.done))
            self._put(None)
        except BaseException as exc:        # handed to the parser's thread, raised there
            self._put(exc)

    def _fill(self, view) -> int:
        got = 0
        while got < len(view):
            n = self.stream.readinto(view[got:])
            if not n:
                break
            got += n
        return got

    def _put(self, item) -> None:
        while not self.stop.is_set():
            try:
                self.ready.put(item, timeout=0.2)
                return
            except queue.Full:
                continue

    @staticmethod
    def cleaned(block) -> bytes:
        """The block with comments removed and blanks made single spaces (read_tns's reading)."""
        block = bytes(block)
        if b"#" in block:
            block = re.sub(rb"#[^\n]*", b"", block)
        return _EDGE_SPACE.sub(b"", _ODD_SPACE.sub(b" ", block))

    def sha256(self) -> str | None:
        """Hex digest of the file's bytes (reads what the text reader left, e.g. gzip padding)."""
        self.thread.join()
        if self.raw.digest is None:
            return None
        while self.raw.read(1 << 20):
            pass
        return self.raw.digest.hexdigest()

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
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

    @property
    def closed(self) -> bool:
        return self.fh.closed

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self.fh.close()

    def read(self, n: int = -1) -> bytes:
        data = self.fh.read(n)
        if self.digest is not None:
            self.digest.update(data)
        self.done += len(data)
        return data

    def readinto(self, view) -> int:
        n = self.fh.readinto(view)
        if self.digest is not None and n:
            self.digest.update(view[:n])
        self.done += n or 0
        return n


class _Refused(Exception):
    """The parser or the checks refused a block: parse it again cleaned, or diagnose the line."""


def _block_parser(nmodes: int):
    """``parse(block)`` -> pyarrow Table of the block's lines (index columns int64, values float64)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv
    names = [f"i{n}" for n in range(nmodes)] + ["v"]
    read = pcsv.ReadOptions(block_size=_PARSE_CHUNK, column_names=names, use_threads=True)
    parse = pcsv.ParseOptions(delimiter=" ", quote_char=False, ignore_empty_lines=True)
    convert = pcsv.ConvertOptions(column_types={name: pa.int64() for name in names[:-1]} | {"v": pa.float64()},
                                  strings_can_be_null=False, quoted_strings_can_be_null=False)
    pool = pa.system_memory_pool()   # freed blocks go back to the system (mimalloc keeps them: memory bound)

    def parse_block(block):
        try:
            return pcsv.read_csv(pa.py_buffer(block), read_options=read, parse_options=parse, convert_options=convert,
                                 memory_pool=pool)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise _Refused(" ".join(str(exc).split())) from None
    return parse_block


def _check_table(table, nmodes: int, dtypes) -> tuple[list, np.ndarray, list]:
    """0-based index columns (in the store's dtypes), values and per-mode (min, max) of a block."""
    if any(col.null_count for col in table.columns):
        raise _Refused("an empty field")
    values = table.column(nmodes).to_numpy()
    if not np.isfinite(values).all():
        raise _Refused("a value that is not a finite number")
    cols, ranges = [], []
    for n in range(nmodes):
        c = table.column(n).to_numpy()
        lo, hi = (int(c.min()) - 1, int(c.max()) - 1) if c.size else (0, -1)
        if lo < 0:
            raise _Refused("an index below 1")
        cols.append(np.subtract(c, 1, dtype=dtypes[n] if hi < np.iinfo(dtypes[n]).max else np.int64))
        ranges.append((lo, hi))
    return cols, values, ranges


def _parsed(parse_block, block) -> tuple:
    """``(table or None when nothing is left, cleaned)``: the block parsed as it is, else cleaned."""
    try:
        return parse_block(block), False
    except _Refused:
        text = _TextBlocks.cleaned(block)
        return (parse_block(text) if text.strip() else None), True


def _block_columns(parse_block, block, parsed: tuple, nmodes: int, dtypes) -> tuple[list, np.ndarray, list, bool]:
    """The block's columns (``_check_table``) and whether it had to be cleaned; a block whose
    parsed values the checks refuse is cleaned and parsed again before it is refused."""
    table, cleaned = parsed
    if table is not None:
        try:
            return (*_check_table(table, nmodes, dtypes), cleaned)
        except _Refused:
            if cleaned:
                raise
        text = _TextBlocks.cleaned(block)
        table = parse_block(text) if text.strip() else None
        if table is not None:
            return (*_check_table(table, nmodes, dtypes), True)
    return [np.zeros(0, dtype=dt) for dt in dtypes], np.zeros(0), [(0, -1)] * nmodes, True


def _read_pass(src: Path, writer: StoreWriter, blocks: _TextBlocks, budget: int, progress) -> tuple[HashSpill, bool]:
    """Parse the text into ``writer``, hashing the coordinates for the duplicate check. A second
    thread checks and stores block i (columns written, hashes spilled) while this one parses
    block i+1; the hashes' partitioning is sized from the first block's lines per byte of file.
    Returns the hashes and whether any block was cleaned; _Refused when a block stays refused."""
    size, nmodes = src.stat().st_size, writer.nmodes
    parse_block = _block_parser(nmodes)
    state = {"hashes": None, "cleaned": False}

    def store(block, parsed, raw_done):
        cols, values, ranges, cleaned = _block_columns(parse_block, block, parsed, nmodes,
                                                       [c.dtype for c in writer.columns])
        state["cleaned"] |= cleaned
        if not values.size:
            return
        if writer.dims is None:
            _check_marks(src, writer, cols, ranges, budget)
        try:
            writer.append(cols, values, ranges)
            if state["hashes"] is None:
                estimate = 2 * values.size * size / max(raw_done, 1)
                state["hashes"] = HashSpill(writer.tmp / "duplicates.part",
                                            partition_bits(int(estimate), nmodes, budget))
            state["hashes"].add(cols)
        except OSError as exc:          # a write (a full disk), not the source's read
            raise WriteFailed.from_os_error(writer.tmp, exc) from None
        if progress:
            progress("reading", raw_done, size, lines=writer.nnz)

    try:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="tns-store") as storing:
            stored = None
            for block, raw_done in blocks:
                parsed = _parsed(parse_block, block)
                if stored is not None:
                    stored.result()             # one block in store at a time (memory), errors raised here
                stored = storing.submit(store, block, parsed, raw_done)
                del block, parsed
            if stored is not None:
                stored.result()
    except (DatasetError, WriteFailed):
        raise
    except ValueError as exc:        # the index check of the writer (beyond dims)
        raise _Refused(str(exc)) from None
    except _GZIP_ERRORS as exc:
        if not src.name.endswith(".gz"):
            raise DatasetError(f"{src}: cannot read: {' '.join(str(exc).split())}") from None
        raise DatasetError(f"{src}: line {_gzip_break_line(src)}: the compressed data ends or breaks here "
                           f"({' '.join(str(exc).split())})") from None
    return state["hashes"] or HashSpill(writer.tmp / "duplicates.part", 0), state["cleaned"]


def _check_marks(src: Path, writer: StoreWriter, cols, ranges, budget: int) -> None:
    """DatasetError naming the line whose index would make the slice marks (one byte per index of
    each mode, up to its largest) and the conversion's budget exceed the free memory."""
    marks = writer.marks_after(ranges)
    if marks <= sum(seen.size for seen in writer.seen):
        return
    available, _ = resources.available_memory()
    if available is None or marks + budget <= available:
        return
    mode = max(range(len(ranges)), key=lambda n: ranges[n][1])
    element = writer.nnz + int(np.argmax(cols[mode]))
    line = data_line_numbers(src, [element]).get(element, "?")
    require_memory(marks + budget, f"{src}: line {line}: index {ranges[mode][1] + 1:,} of mode {mode + 1}",
                   f"{size_text(marks)} to mark the slices, one byte per index of each mode up to its largest, "
                   f"beside the conversion's memory budget of {size_text(budget)}")


def convert_tns(src, dst=None, *, memory_mb: float = 1024, duplicates: str = "sum", progress=None,
                dims=None, source_sha256: str | None = None, name: str | None = None) -> Path:
    """Convert ``src`` (``.tns``/``.tns.gz``) into a store and return its folder.

    ``dst``: the store folder (must not exist); default the cache, ``store_path_for(sha256,
    name or the file's stem)``, reused when already there. ``memory_mb`` bounds the peak
    memory of the conversion; ``duplicates``: ``sum`` or ``error`` (module ``store_duplicates``);
    ``dims``: the mode lengths when known (else the largest index per mode);
    ``source_sha256``: the file's checksum when the caller has it (skips hashing);
    ``progress(stage, done, total, lines=...)`` is called as the work advances (reading: bytes
    of the file and lines parsed; the duplicate check: nonzeros); without one, inside
    ``conversion_progress.reporting`` the progress shows on stderr. Bad input raises
    DatasetError naming the file and the line (also an index too large for the free memory, and
    a MemoryError); a failed write a WriteFailed naming the store. Nothing is left behind.
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
    target = Path(dst) if dst is not None else store_path_for("pending", label)
    started = time.monotonic()
    shown = conversion_progress.current(label) if progress is None else None   # inside a sweep: on stderr
    progress = progress or shown
    blocks = _TextBlocks(src, block_size_for(budget), hash_source=source_sha256 is None, skip=_leading_comments(src))
    try:
        with StoreWriter(target, nmodes, dims=dims) as writer:
            try:
                hashes, cleaned = _read_pass(src, writer, blocks, budget, progress)
            except _Refused as exc:
                raise_bad_line(src, nmodes, dims, str(exc))
            sha256 = source_sha256 or blocks.sha256()
            outcome = _resolve_duplicates(src, writer, duplicates, budget, hashes, progress)
            final = outcome or writer
            if dst is None:
                final.dst = store_path_for(sha256, label)
            try:
                header = final.commit(
                    checksum=sha256, duplicates={"rule": duplicates, "removed": int(writer.nnz - final.nnz)},
                    source={"kind": "tns", "path": str(src.resolve()), "size": stat.st_size,
                            "mtime_ns": stat.st_mtime_ns, "sha256": sha256, "cleaned": cleaned,
                            "seconds": round(time.monotonic() - started, 3)})
            finally:
                if outcome is not None:
                    outcome.abort()
            return header.path
    except MemoryError:
        raise out_of_memory(src, "converting it", int(memory_mb * 2**20),
                            "the conversion's memory budget, plus one byte per index of each mode") from None
    except OSError as exc:            # the store's folder (the cache's, for the default)
        cause = exc.cause if isinstance(exc, WriteFailed) else exc.strerror or str(exc) or type(exc).__name__
        raise WriteFailed(target if dst is not None else target.parent, cause, exc.errno) from None
    finally:
        blocks.close()
        if shown is not None:
            shown.end()


def _resolve_duplicates(src: Path, writer: StoreWriter, rule: str, budget: int, hashes: HashSpill, progress):
    """None when there are no duplicates; a second writer holding the summed store otherwise."""
    folder = writer.finish_columns()
    scan = DuplicateScan(folder, [c.dtype for c in writer.columns], writer.nnz, writer.final_dims(), budget,
                         bits=hashes.bits)
    try:
        scan.run(rule, progress, hashes=hashes)
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
