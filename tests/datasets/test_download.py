"""Downloads against a local HTTP server: success, checksum mismatch, 404, interruption, recorded checksums."""
import hashlib
import json

import pytest

from spbench.datasets.errors import DatasetError
from spbench.datasets.fetch import download, recorded_checksum, verify_file

PAYLOAD = b"%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 2.0\n" * 50


def _files(folder):
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_success_with_known_checksum_and_progress(http_server, tmp_path):
    http_server.files["/a.mtx"] = PAYLOAD
    seen = []
    dest = tmp_path / "dl" / "a.mtx"
    sha = hashlib.sha256(PAYLOAD).hexdigest()
    assert download(f"{http_server.url}/a.mtx", dest, sha, progress=lambda d, t: seen.append((d, t))) == sha
    assert dest.read_bytes() == PAYLOAD
    assert _files(dest.parent) == ["a.mtx"]
    assert seen[0] == (0, len(PAYLOAD)) and seen[-1] == (len(PAYLOAD), len(PAYLOAD))


def test_known_checksum_mismatch_leaves_nothing(http_server, tmp_path):
    http_server.files["/a.mtx"] = PAYLOAD
    dest = tmp_path / "a.mtx"
    with pytest.raises(DatasetError) as info:
        download(f"{http_server.url}/a.mtx", dest, "0" * 64)
    message = str(info.value)
    assert "a.mtx" in message and "expected " + "0" * 64 in message
    assert "got " + hashlib.sha256(PAYLOAD).hexdigest() in message
    assert _files(tmp_path) == []


def test_404_leaves_nothing(http_server, tmp_path):
    with pytest.raises(DatasetError, match="HTTP 404"):
        download(f"{http_server.url}/missing.mtx", tmp_path / "m.mtx")
    assert _files(tmp_path) == []


def test_interrupted_leaves_nothing(http_server, tmp_path):
    http_server.files["/cut.mtx"] = PAYLOAD
    http_server.truncated.add("/cut.mtx")
    with pytest.raises(DatasetError, match="cut.mtx"):
        download(f"{http_server.url}/cut.mtx", tmp_path / "cut.mtx", timeout=5)
    assert _files(tmp_path) == []


def test_connection_refused_leaves_nothing(tmp_path):
    with pytest.raises(DatasetError, match="download of http://127.0.0.1:9/x failed"):
        download("http://127.0.0.1:9/x", tmp_path / "x.mtx", timeout=5)
    assert _files(tmp_path) == []


def test_first_checksum_recorded_then_enforced(http_server, tmp_path):
    http_server.files["/a.mtx"] = PAYLOAD
    dest = tmp_path / "a.mtx"
    sha = download(f"{http_server.url}/a.mtx", dest)
    book = json.loads((tmp_path / "checksums.json").read_text())
    assert book == {"a.mtx": sha} and recorded_checksum(dest) == sha
    assert download(f"{http_server.url}/a.mtx", dest) == sha
    http_server.files["/a.mtx"] = PAYLOAD + b"% changed upstream\n"
    with pytest.raises(DatasetError, match=f"expected {sha} .recorded in .*checksums.json"):
        download(f"{http_server.url}/a.mtx", dest)
    assert _files(tmp_path) == ["a.mtx", "checksums.json"]
    assert dest.read_bytes() == PAYLOAD
    assert verify_file(dest) == sha
    dest.write_bytes(b"tampered")
    with pytest.raises(DatasetError, match="checksum mismatch for the cached file"):
        verify_file(dest)
