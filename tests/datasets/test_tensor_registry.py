"""The paper's eight tensors: registry facts, stand-ins, download into the cache."""
import http.server
import threading

import numpy as np
import pytest

from spbench.datasets import tensor_registry as tr
from spbench.datasets.errors import DatasetError
from spbench.datasets.fetch import recorded_checksum
from spbench.datasets.frostt import read_tns, write_tns


def test_registry_facts():
    assert list(tr.TENSORS) == ["delicious", "enron", "flickr", "nell1", "nell2", "amazon", "patents", "reddit"]
    e = tr.TENSORS["enron"]
    assert e.dims == (6066, 5699, 244268, 1176) and e.nnz == 54_202_099
    assert e.url(tr.DEFAULT_URL_BASE) == "https://s3.us-east-2.amazonaws.com/frostt/frostt_data/enron/enron.tns.gz"
    assert tr.TENSORS["nell2"].url().endswith("/nell/nell-2.tns.gz")
    assert tr.TENSORS["reddit"].url().endswith("/reddit-2015/reddit-2015.tns.gz")
    for t in tr.TENSORS.values():
        assert t.nmodes == (4 if t.name in ("delicious", "enron", "flickr") else 3)
        assert len(t.max_share) == t.nmodes


def test_powerlaw_exponent():
    assert tr.powerlaw_exponent(100, 0.005) == 0.0
    for L, share in [(1000, 0.1), (50, 0.5), (24427, 0.02)]:
        a = tr.powerlaw_exponent(L, share)
        w = np.arange(1, L + 1, dtype=float) ** -a
        assert w[0] / w.sum() == pytest.approx(share, rel=1e-6)


@pytest.mark.parametrize("name", ["enron", "patents"])
def test_standin_deterministic_and_shaped(name):
    a = tr.standin(name, nnz=20_000, seed=3)
    b = tr.standin(name, nnz=20_000, seed=3)
    c = tr.standin(name, nnz=20_000, seed=4)
    entry = tr.TENSORS[name]
    assert a.nnz == 20_000 and a.nmodes == entry.nmodes and a.dims == tr.standin_dims(entry)
    assert (a.coords == b.coords).all() and (a.values == b.values).all()
    assert not (a.coords == c.coords).all()
    assert len(np.unique(a.coords, axis=0)) == a.nnz
    assert (a.values > 0).all() and (a.values <= 1).all()


def test_enron_standin_has_large_slices():
    t = tr.standin("enron", nnz=50_000)
    shares = [m["largest_share"] for m in t.stats()["modes"]]
    assert 0.07 < max(shares) < 0.13          # ~10%, like enron's 5M of 54M


def test_write_standin_round_trip(tmp_path):
    p = tr.write_standin("nell2", tmp_path / "nell2.tns.gz", nnz=3000, seed=1)
    t = read_tns(p, dims=tr.standin_dims(tr.TENSORS["nell2"]), cache=False)
    s = tr.standin("nell2", nnz=3000, seed=1)
    assert (t.coords == s.coords).all() and (t.values == s.values).all()


def test_unknown_and_uncached():
    with pytest.raises(DatasetError, match="known"):
        tr.standin("nope")
    assert not tr.is_cached("enron")
    with pytest.raises(DatasetError, match="not in the cache"):
        tr.load_tensor("enron")
    with pytest.raises(DatasetError, match="download"):
        tr.fetch_tensor("enron", timeout=2)


def test_download_into_cache(tmp_path, monkeypatch, private_cache):
    small = tr.standin("enron", nnz=500)
    payload = write_tns(tmp_path / "enron.tns.gz", small).read_bytes()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            if self.path != "/frostt/enron/enron.tns.gz":
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        monkeypatch.setenv("SPBENCH_FROSTT_URL", f"http://127.0.0.1:{server.server_address[1]}/frostt")
        monkeypatch.setattr(tr, "TENSORS", {**tr.TENSORS, "enron": tr.TENSORS["enron"]})
        path = tr.fetch_tensor("enron")
        assert path == private_cache / "frostt" / "enron.tns.gz" and tr.is_cached("enron")
        assert recorded_checksum(path) is not None
        # the real dims are far larger than the stand-in's indices: dims is passed through
        t = tr.load_tensor("enron")
        assert t.nnz == small.nnz and t.dims == tr.TENSORS["enron"].dims
        stores = list((private_cache / "stores").glob("enron-*/header.json"))
        assert len(stores) == 1 and tr.load_tensor("enron").nnz == t.nnz   # converted once, then reused
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_load_or_standin_offline():
    t, source, label = tr.load_or_standin("nell2", nnz=1000, seed=2)
    assert source == "synthetic" and t.nnz == 1000
    assert label == "nell2~standin[nnz=1000,scale=0.1,seed=2]"
    # download attempted (closed port) and failed: falls back to the stand-in
    t2, source2, _ = tr.load_or_standin("nell2", download_ok=True, nnz=1000, seed=2)
    assert source2 == "synthetic" and (t2.coords == t.coords).all()
