"""Downloads into the data cache, all-or-nothing, with sha256 checks.

A file is streamed to ``<dest>.part`` and renamed to ``dest`` only once complete and verified.
When no checksum is published (SuiteSparse, FROSTT), the sha256 of the first download is
recorded in ``checksums.json`` beside the file and enforced on every later download and use.
"""
from __future__ import annotations

import hashlib
import http.client
import json
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Callable

from .errors import DatasetError

CHECKSUMS = "checksums.json"
_CHUNK = 1 << 20

Progress = Callable[[int, "int | None"], None]


def file_sha256(path) -> str:
    """sha256 hex digest of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _checksums_file(path: Path) -> Path:
    return path.parent / CHECKSUMS


def _load_checksums(path: Path) -> dict:
    book = _checksums_file(path)
    if not book.is_file():
        return {}
    try:
        data = json.loads(book.read_text())
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{book}: unreadable checksum record ({exc}); fix or delete it") from None
    if not isinstance(data, dict):
        raise DatasetError(f"{book}: expected a JSON object of file name -> sha256")
    return data


def recorded_checksum(path) -> str | None:
    """The sha256 recorded for ``path`` in the ``checksums.json`` beside it, if any."""
    path = Path(path)
    return _load_checksums(path).get(path.name)


def record_checksum(path, sha256: str) -> None:
    """Record ``sha256`` for ``path`` in the ``checksums.json`` beside it (atomic rewrite)."""
    path = Path(path)
    data = _load_checksums(path)
    data[path.name] = sha256
    book = _checksums_file(path)
    tmp = book.with_name(f"{book.name}.{os.getpid()}.part")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, book)


def _check(path: Path, got: str, sha256: str | None, what: str) -> None:
    """Compare ``got`` with the known or recorded checksum of ``path``; record it when neither exists."""
    expected = sha256 or recorded_checksum(path)
    if expected is None:
        record_checksum(path, got)
    elif got != expected:
        source = "registry" if sha256 else f"recorded in {_checksums_file(path)}"
        raise DatasetError(f"{path.name}: checksum mismatch for {what}: expected {expected} ({source}), got {got}")


def verify_file(path, sha256: str | None = None) -> str:
    """sha256 of a cached file, checked against the known or recorded one (recorded on first use)."""
    path = Path(path)
    got = file_sha256(path)
    _check(path, got, sha256, "the cached file")
    return got


def download(url: str, dest, sha256: str | None = None, *, timeout: float = 60,
             progress: Progress | None = None) -> str:
    """Download ``url`` to ``dest`` atomically and return its sha256.

    Streams to ``dest.part``; on any failure (HTTP error, connection, interruption, checksum
    mismatch) the partial file is removed and DatasetError names the file and the reason.
    ``progress(done_bytes, total_bytes_or_None)`` is called after every chunk.
    """
    dest = Path(dest)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatasetError(f"{dest.parent}: cannot write the download there ({exc.strerror or exc}); point "
                           f"$SPBENCH_DATA at a folder that can be written") from None
    part = dest.with_name(dest.name + ".part")
    digest = hashlib.sha256()
    done = False
    try:
        try:
            with urllib.request.urlopen(url, timeout=timeout) as resp, open(part, "wb") as out:
                length = resp.headers.get("Content-Length")
                total = int(length) if length and length.isdigit() else None
                got_bytes = 0
                if progress:
                    progress(0, total)
                while block := resp.read(_CHUNK):
                    out.write(block)
                    digest.update(block)
                    got_bytes += len(block)
                    if progress:
                        progress(got_bytes, total)
        except urllib.error.HTTPError as exc:
            raise DatasetError(f"{dest.name}: download of {url} failed: HTTP {exc.code} {exc.reason}") from None
        except urllib.error.URLError as exc:
            raise DatasetError(f"{dest.name}: download of {url} failed: {exc.reason}") from None
        except (OSError, ValueError, http.client.HTTPException) as exc:
            raise DatasetError(f"{dest.name}: download of {url} failed: {' '.join(str(exc).split()) or type(exc).__name__}") from None
        if total is not None and got_bytes != total:
            raise DatasetError(f"{dest.name}: download of {url} interrupted: got {got_bytes} of {total} bytes")
        got = digest.hexdigest()
        _check(dest, got, sha256, f"the download from {url}")
        os.replace(part, dest)
        done = True
        return got
    finally:
        if not done:
            part.unlink(missing_ok=True)
