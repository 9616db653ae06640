"""Fixtures for the data set tests: a private cache, no internet, a local HTTP server, a tiny registry entry."""
import http.server
import io
import tarfile
import threading
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from spbench.datasets import registry


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """Point the cache at tmp_path and the SuiteSparse and FROSTT URLs at a closed local port (never the
    internet)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("SPBENCH_DATA", str(cache))
    monkeypatch.setenv("SPBENCH_SUITESPARSE_URL", "http://127.0.0.1:9/MM")
    monkeypatch.setenv("SPBENCH_FROSTT_URL", "http://127.0.0.1:9/frostt")
    return cache


class _Handler(http.server.BaseHTTPRequestHandler):
    """Serves ``server.files`` (path -> bytes); ``server.truncated`` paths send half of the promised bytes."""

    def do_GET(self):  # noqa: N802 (http.server's naming)
        body = self.server.files.get(self.path)
        if body is None:
            self.send_error(404, "Not Found")
            return
        self.server.hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.path in self.server.truncated:
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def http_server():
    """A threaded HTTP server on 127.0.0.1 (port 0); add files with ``server.files[path] = bytes``."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.files, server.truncated, server.hits = {}, set(), []
    server.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(5)


def mtx_bytes(A, *, symmetry="AUTO") -> bytes:
    """Matrix Market text of ``A`` as bytes."""
    buf = io.BytesIO()
    scipy.io.mmwrite(buf, sp.coo_matrix(A), symmetry=symmetry)
    return buf.getvalue()


def spd_matrix(n: int) -> sp.csr_matrix:
    """A small SPD tridiagonal-plus-corner matrix with distinct values."""
    main = 4.0 + np.arange(n)
    off = -1.0 - 0.1 * np.arange(n - 1)
    A = sp.diags([off, main, off], [-1, 0, 1], format="lil")
    A[n - 1, 0] = A[0, n - 1] = -0.5
    return sp.csr_matrix(A)


def suitesparse_tarball(name: str, A) -> bytes:
    """A SuiteSparse-style ``<name>.tar.gz``: ``<name>/<name>.mtx`` (symmetric) plus a ``<name>_b.mtx``."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for member, data in [(f"{name}/{name}_b.mtx", mtx_bytes(np.ones((A.shape[0], 1)))),
                             (f"{name}/{name}.mtx", mtx_bytes(A))]:
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.fixture
def tiny_entry(monkeypatch):
    """A registry entry ``Tiny_8`` (group TestGroup, n 8) whose stand-in is lap2d-5pt[grid=3]."""
    m = registry.SuiteSparseMatrix("Tiny_8", "TestGroup", 8, 16, 2, "test matrix", "lap2d-5pt", {"grid": 3})
    monkeypatch.setitem(registry.SUITESPARSE, m.name, m)
    return m


@pytest.fixture
def tiny_server(http_server, tiny_entry, monkeypatch):
    """The HTTP server serving Tiny_8's tarball at <url>/MM/TestGroup/Tiny_8.tar.gz, set as the SuiteSparse URL."""
    A = spd_matrix(8)
    http_server.files["/MM/TestGroup/Tiny_8.tar.gz"] = suitesparse_tarball("Tiny_8", A)
    http_server.matrix = A
    monkeypatch.setenv("SPBENCH_SUITESPARSE_URL", f"{http_server.url}/MM")
    return http_server



@pytest.fixture
def mm():
    """The helpers above, for tests: ``mm.mtx_bytes``, ``mm.spd_matrix``, ``mm.suitesparse_tarball``."""
    return SimpleNamespace(mtx_bytes=mtx_bytes, spd_matrix=spd_matrix, suitesparse_tarball=suitesparse_tarball)
